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
//
// An observer that settles (Settle called from its own callback) cannot
// wait for its own records: they wait for it to return. While it waits it
// is parked ([subscriber.settle]): its records move from n to parked, so
// they hold no observer's Settle (observers that settle at once park
// together and none waits for another), while an outside Settle still
// waits for them (n and parked both zero): it returns only once every
// observer has returned from every record.
type quiescence struct {
	n  atomic.Int64
	mu sync.Mutex
	// parked counts the records of observers parked in a Settle; under mu.
	parked int64
	// idle is closed when n and parked reach zero while someone waits,
	// then dropped; without a waiter nothing is allocated (an engine that
	// nobody settles reaches zero once per finished instance). workIdle is
	// the same for the low half, quiet for n alone (what a parked
	// observer waits for).
	idle, workIdle, quiet chan struct{}
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
	q.notify(n)
	q.mu.Unlock()
}

// notify closes the channels of the waits that count n (and parked)
// satisfies. Called with mu held.
func (q *quiescence) notify(n int64) {
	if uint32(n) != 0 {
		return
	}
	if q.workIdle != nil {
		close(q.workIdle)
		q.workIdle = nil
	}
	if n != 0 {
		return
	}
	if q.quiet != nil {
		close(q.quiet)
		q.quiet = nil
	}
	if q.parked == 0 && q.idle != nil {
		close(q.idle)
		q.idle = nil
	}
}

// park moves k records of an observer that settles from n to parked.
func (q *quiescence) park(k int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.parked += k
	q.notify(q.n.Add(-k * observerUnit))
}

// unpark moves k records of an observer whose Settle returned back from
// parked to n.
func (q *quiescence) unpark(k int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.parked -= k
	q.notify(q.n.Add(k * observerUnit))
}

// addParked counts d records of a parked observer: pushed to it, or
// discarded when it is dropped.
func (q *quiescence) addParked(d int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.parked += d
	q.notify(q.n.Load())
}

// wait returns once the whole count is zero, parked records included.
func (q *quiescence) wait(ctx context.Context) error {
	return q.waitFor(ctx, func(n, parked int64) bool { return n == 0 && parked == 0 }, &q.idle)
}

// waitQuiet returns once the whole count is zero but for the records of
// parked observers: what an observer that settles waits for.
func (q *quiescence) waitQuiet(ctx context.Context) error {
	return q.waitFor(ctx, func(n, _ int64) bool { return n == 0 }, &q.quiet)
}

// waitWork returns once the engine's own work is zero, whatever records
// observers still have to handle.
func (q *quiescence) waitWork(ctx context.Context) error {
	return q.waitFor(ctx, func(n, _ int64) bool { return uint32(n) == 0 }, &q.workIdle)
}

func (q *quiescence) waitFor(ctx context.Context, zero func(n, parked int64) bool, ch *chan struct{}) error {
	for {
		q.mu.Lock()
		if zero(q.n.Load(), q.parked) {
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
