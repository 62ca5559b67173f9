// The instance table: live instances, the ring of finished ones, settling.

package runtime

import (
	"context"
	"sort"
)

// Instance finds a live or recently finished instance.
func (e *Engine) Instance(key int64) (*Instance, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if inst, ok := e.live[key]; ok {
		return inst, true
	}
	inst, ok := e.byKey[key]
	return inst, ok
}

// Instances returns the live instances ordered by key.
func (e *Engine) Instances() []*Instance {
	e.mu.Lock()
	out := make([]*Instance, 0, len(e.live))
	for _, inst := range e.live {
		out = append(out, inst)
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// finish moves inst from the live set to the finished ring. Called by the
// instance's loop as its last act.
func (e *Engine) finish(inst *Instance) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.live, inst.key)
	e.countFinished(inst)
	if inst.startKey != "" {
		k := [2]string{inst.plan.Process.ID, inst.startKey}
		if e.keyedStarts[k]--; e.keyedStarts[k] <= 0 {
			delete(e.keyedStarts, k)
		}
	}
	if len(e.finished) == 0 {
		return
	}
	if old := e.finished[e.finNext]; old != nil {
		delete(e.byKey, old.key)
		if e.opts.Durable {
			e.evicted = append(e.evicted, old.key)
		}
	}
	e.finished[e.finNext] = inst
	e.byKey[inst.key] = inst
	e.finNext = (e.finNext + 1) % len(e.finished)
}

// Settle returns when nothing in the engine can move without outside input.
// Called by an observer from its callback, it does not wait for that
// observer's records, nor for those of other observers waiting in Settle
// (subscriber.settle).
// After Close it returns ErrClosed: nothing is left to settle, and a caller
// that settles to see the effect of a call must learn that there was none.
func (e *Engine) Settle(ctx context.Context) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	e.drive()
	if s := e.callingObserver(); s != nil {
		return s.settle(ctx)
	}
	return e.busy.wait(ctx)
}

// OnTimerFired makes the engine call f after each timer the clock fired
// has been handed to its instance (or has started one): input that comes
// through no command, which a store commits on. f must not block.
func (e *Engine) OnTimerFired(f func()) { e.hub.SetOnFire(f) }

// settleWork returns when nothing but observers can move without outside
// input: records may still wait for an observer. A store's commit settles
// so, since an observer may give a command that waits for that commit.
func (e *Engine) settleWork(ctx context.Context) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	e.drive()
	return e.busy.waitWork(ctx)
}
