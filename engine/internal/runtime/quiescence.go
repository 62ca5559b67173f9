package runtime

import (
	"context"
	"sync"
	"sync/atomic"
)

// quiescence counts the work that can still move without outside input:
// running tracks, commands on their way to a loop, and records on their way
// to an observer. Settle waits for the count to reach zero.
//
// The rule that keeps the count honest: whoever makes work runnable adds
// before handing it over, and whoever finishes it subtracts only after
// adding for the work it created. The count therefore never touches zero
// while anything can still move.
//
// The count has two halves in one word: the engine's own work (tracks,
// commands) in the low 32 bits, records waiting for observers in the high
// ones. A store's commit waits for the engine's work only (waitWork): an
// observer may give the engine a command and wait for its commit, which
// must not wait for that observer. One word keeps both halves a single
// atomic add, so the whole count still reads zero only when both are.
type quiescence struct {
	n  atomic.Int64
	mu sync.Mutex
	// idle is closed when n reaches zero while someone waits, then dropped;
	// without a waiter nothing is allocated (an engine that nobody settles
	// reaches zero once per finished instance). workIdle is the same for
	// the low half.
	idle, workIdle chan struct{}
}

// observerUnit is one record waiting for an observer, in the high half.
const observerUnit = 1 << 32

func newQuiescence() *quiescence { return &quiescence{} }

// add counts d units of the engine's own work.
func (q *quiescence) add(d int64) { q.change(d) }

// addObserved counts d records waiting for an observer.
func (q *quiescence) addObserved(d int64) { q.change(d * observerUnit) }

func (q *quiescence) change(d int64) {
	n := q.n.Add(d)
	if uint32(n) != 0 {
		return
	}
	q.mu.Lock()
	if n == 0 && q.idle != nil {
		close(q.idle)
		q.idle = nil
	}
	if q.workIdle != nil {
		close(q.workIdle)
		q.workIdle = nil
	}
	q.mu.Unlock()
}

// wait returns once the whole count is zero.
func (q *quiescence) wait(ctx context.Context) error {
	return q.waitFor(ctx, func(n int64) bool { return n == 0 }, &q.idle)
}

// waitWork returns once the engine's own work is zero, whatever records
// observers still have to handle.
func (q *quiescence) waitWork(ctx context.Context) error {
	return q.waitFor(ctx, func(n int64) bool { return uint32(n) == 0 }, &q.workIdle)
}

func (q *quiescence) waitFor(ctx context.Context, zero func(int64) bool, ch *chan struct{}) error {
	for {
		q.mu.Lock()
		if zero(q.n.Load()) {
			q.mu.Unlock()
			return nil
		}
		if *ch == nil {
			*ch = make(chan struct{})
		}
		idle := *ch
		q.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
