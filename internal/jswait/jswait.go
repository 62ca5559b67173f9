// Package jswait waits out JetStream's transient states: the moments in
// which a NATS cluster answers a request with an error that a later try,
// a fraction of a second on, does not give. They are
//
//   - no responders (a stream, consumer or the JetStream API without a
//     leader while one is elected, or a server restarting);
//   - "no suitable peers for placement" (a replicated stream or bucket
//     created while the servers it needs are still joining);
//   - "JetStream system temporarily unavailable", a stream or consumer
//     offline, an expected last sequence not ready (a leader taking
//     over);
//   - a request timing out (its server died, or a leader changed under
//     it), a pull consumer's missed heartbeat or its server's shutdown;
//   - the client's outbound buffer full or the connection reconnecting.
//
// Do calls a function again, with capped and jittered back-off, while it
// returns one of these, until it succeeds, returns another error (no
// permission, a bad configuration, bad data: returned at once) or the
// caller's context ends. The stores (engine/jetstore), the server's job
// stream and the cluster's buckets, setup and leases all wait through
// it, so that a cluster started all at once, a store opened during a
// leader election or a commit during a failover waits for the election
// (well under a second) instead of failing.
//
// Whoever retries must make a second try harmless when the first one
// landed and only its answer was lost: the store's commits rewrite the
// same subjects (rollups), and KeyValue recognises its own create or
// update.
package jswait

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStream error codes of transient states.
const (
	codeNoPeers         = 10005 // no suitable peers for placement
	codeNotAvailable    = 10008 // JetStream system temporarily unavailable
	codeIncomplete      = 10004 // incomplete results
	codeStreamOffline   = 10118
	codeConsumerOffline = 10119
	codeStreamOfflineF  = 10194
	codeConsumerOffF    = 10195
	codeLastSeqNotReady = 10163 // expected last sequence per subject temporarily unavailable
	codeTooManyBatches  = 10211 // batch publish: too many in flight
)

// Transient reports whether err is one of JetStream's transient states
// (see the package doc), or was marked as one with Again.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var again *againError
	if errors.As(err, &again) {
		return true
	}
	switch {
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, nats.ErrTimeout),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, nats.ErrReconnectBufExceeded), errors.Is(err, nats.ErrConnectionReconnecting),
		errors.Is(err, nats.ErrDisconnected), errors.Is(err, nats.ErrNoStreamResponse),
		errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, jetstream.ErrNoHeartbeat),
		errors.Is(err, jetstream.ErrServerShutdown):
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case codeNoPeers, codeNotAvailable, codeIncomplete, codeStreamOffline, codeConsumerOffline,
			codeStreamOfflineF, codeConsumerOffF, codeLastSeqNotReady, codeTooManyBatches:
			return true
		}
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// Again marks err, a state the caller knows to pass (a stream without a
// leader yet, fewer replicas than asked for), as transient: Do tries
// again after it. Its text should say what is missing, since it is what
// Do's error reports when the context ends first.
func Again(err error) error { return &againError{err} }

type againError struct{ err error }

func (e *againError) Error() string { return e.err.Error() }
func (e *againError) Unwrap() error { return e.err }

// Back-off between tries: from firstWait, doubled each try up to maxWait,
// each wait a random fraction (half to all) of it, so that the nodes of a
// cluster started together do not try in step.
const (
	firstWait = 20 * time.Millisecond
	maxWait   = time.Second
)

// Error is Do's error when ctx ended while the state was still
// transient: the last error, for how long and how many tries it lasted.
// It unwraps to both the last error and the context's, so errors.Is(err,
// context.DeadlineExceeded) holds.
type Error struct {
	Last  error
	For   time.Duration
	Tries int
	Ctx   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v, for %.1f s (%d tries): %v", e.Last, e.For.Seconds(), e.Tries, e.Ctx)
}

// Unwrap returns the last error and the context's.
func (e *Error) Unwrap() []error { return []error{e.Last, e.Ctx} }

// Do calls fn until it returns nil or an error that is not Transient,
// waiting between tries, and returns that. When ctx ends first it
// returns an *Error holding the last error. fn is given ctx; a request it
// sends should have a deadline of its own shorter than ctx's, so that
// one lost answer leaves time to try again.
func Do(ctx context.Context, fn func(ctx context.Context) error) error {
	start := time.Now()
	wait := firstWait
	var prev error
	for tries := 1; ; tries++ {
		err := fn(ctx)
		if err == nil || !Transient(err) {
			return err
		}
		if ctx.Err() != nil && prev != nil && errors.Is(err, ctx.Err()) {
			// The context ended during this try, which says only that:
			// the try before says what was missing.
			err = prev
		}
		prev = err
		if ctx.Err() == nil {
			// Half to all of wait.
			t := time.NewTimer(wait/2 + rand.N(wait/2+1))
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			wait = min(2*wait, maxWait)
		}
		if ctx.Err() != nil {
			return &Error{Last: err, For: time.Since(start), Tries: tries, Ctx: ctx.Err()}
		}
	}
}

// Bound returns ctx with a deadline of at most d from now, for callers
// whose context may have none (an engine commits with a background
// context): the wait still ends.
func Bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
