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

// ReaderServer makes the reader read makes for subject and returns the
// server it landed on ("" for a stream without followers), deleting it.
func (s *Store) ReaderServer(ctx context.Context, subject string) (string, error) {
	cons, _, err := s.reader(ctx, subject)
	if err != nil || cons == nil {
		return "", err
	}
	ci := cons.CachedInfo()
	defer func() { _ = s.stream.DeleteConsumer(ctx, ci.Name) }()
	if ci.Cluster == nil {
		return "", nil
	}
	return ci.Cluster.Leader, nil
}
