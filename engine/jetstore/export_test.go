package jetstore

import (
	"context"

	"github.com/nats-io/nats.go"
)

// OpenFaulty opens the store with a fault hook: fault is called before
// each step of a commit through a record and of settling one (Open
// settles too), and an error it returns stops there, as a crash would.
func OpenFaulty(ctx context.Context, nc *nats.Conn, opts *Options, fault func(step string) error) (*Store, error) {
	return open(ctx, nc, opts, fault)
}
