// Starting instances: by a call, a start event or a restore.

package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// startTarget is a start event that creates instances when its event
// happens.
type startTarget struct {
	plan *Plan
	node *model.Node
}

// Start creates an instance of plan at its none start event with vars
// (already normalized) and sets it running. It returns at once; the
// instance moves on its own goroutines.
func (e *Engine) Start(plan *Plan, vars map[string]any) (*Instance, error) {
	if plan.start == nil {
		return nil, fmt.Errorf("start %s: %w", plan.Process.ID, ErrNoNoneStart)
	}
	return e.startAt(startTarget{plan: plan, node: plan.start}, vars, nil, "", new(cause))
}

// startAt creates an instance beginning at the start event of t. trigger,
// if set, is recorded as what started it (a message or signal); c is the
// outside input its first work is done for.
func (e *Engine) startAt(t startTarget, vars map[string]any, trigger *Event, startKey string, c *cause) (*Instance, error) {
	inst := newInstance(e, t.plan, vars)
	inst.startKey = startKey
	inst.cause = c
	return e.launch(inst, t, trigger)
}

// launch registers inst and sets it running at the start event of t.
func (e *Engine) launch(inst *Instance, t startTarget, trigger *Event) (*Instance, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, ErrClosed
	}
	e.live[inst.key] = inst
	e.mu.Unlock()
	inst.markDirty()
	e.busy.add(1) // the first token
	if inst.direct {
		inst.startAt, inst.trigger = t.node, trigger
		e.schedule(inst)
		return inst, nil
	}
	go inst.loop(t.node, trigger)
	return inst, nil
}

// resume registers inst, restored from a state document with its tokens
// parked where they were (restore.go), and sets its loop going. Nothing
// runs until input comes, so nothing is counted as running.
func (e *Engine) resume(inst *Instance) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.live[inst.key] = inst
	e.mu.Unlock()
	if inst.direct {
		e.schedule(inst) // nothing to begin: drive finds its tokens parked
		return nil
	}
	go inst.loop(nil, nil)
	return nil
}
