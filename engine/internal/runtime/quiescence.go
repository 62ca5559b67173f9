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
type quiescence struct {
	n  atomic.Int64
	mu sync.Mutex
	// idle is closed when n reaches zero while someone waits, then dropped;
	// without a waiter nothing is allocated (an engine that nobody settles
	// reaches zero once per finished instance).
	idle chan struct{}
}

func newQuiescence() *quiescence { return &quiescence{} }

func (q *quiescence) add(d int64) {
	if q.n.Add(d) == 0 {
		q.mu.Lock()
		if q.idle != nil {
			close(q.idle)
			q.idle = nil
		}
		q.mu.Unlock()
	}
}

// wait returns once the count is zero.
func (q *quiescence) wait(ctx context.Context) error {
	for {
		q.mu.Lock()
		if q.n.Load() == 0 {
			q.mu.Unlock()
			return nil
		}
		if q.idle == nil {
			q.idle = make(chan struct{})
		}
		idle := q.idle
		q.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
