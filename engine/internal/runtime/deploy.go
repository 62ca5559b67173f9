// Deployments: installing plans, their start events, the latest version.

package runtime

import (
	"errors"
	"fmt"
	"time"

	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Install compiles and registers every process of d as a new version. It
// is all or nothing: on error nothing is registered.
func (e *Engine) Install(d *model.Definitions, opts CompileOptions) ([]*Plan, error) {
	plans := make([]*Plan, 0, len(d.Processes))
	var errs []error
	for _, p := range d.Processes {
		if !p.Executable {
			continue
		}
		plan, err := Compile(p, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, plan)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	for _, plan := range plans {
		plan.Deployment = opts.Deployment
		plan.Key = e.NextKey()
		plan.Version = len(e.plans[plan.Process.ID]) + 1
		e.plans[plan.Process.ID] = append(e.plans[plan.Process.ID], plan)
		e.registerStarts(plan)
	}
	return plans, nil
}

// registerStarts makes plan's event start events the ones that create
// instances of its process, replacing those of older versions (as Zeebe
// does). Called with e.mu held.
func (e *Engine) registerStarts(plan *Plan) {
	id := plan.Process.ID
	drop := func(m map[string][]startTarget) {
		for name, ts := range m {
			kept := ts[:0]
			for _, t := range ts {
				if t.plan.Process.ID != id {
					kept = append(kept, t)
				}
			}
			m[name] = kept
		}
	}
	drop(e.messageStarts)
	drop(e.signalStarts)
	for _, sub := range e.timerStarts[id] {
		e.hub.Unsubscribe(sub)
	}
	delete(e.timerStarts, id)
	for _, n := range plan.Process.Top {
		// Event start events, instantiating receive tasks and the arms of
		// an instantiating event-based gateway (instantiate.go).
		c := plan.nodes[n.Index].startCatch
		if c == nil {
			continue // Compile reports a start trigger it cannot compile
		}
		t := startTarget{plan: plan, node: n}
		switch c.def.Kind {
		case model.EventMessage:
			e.messageStarts[c.name()] = append(e.messageStarts[c.name()], t)
		case model.EventSignal:
			if e.opts.NoTimerSignalStarts {
				continue
			}
			e.signalStarts[c.name()] = append(e.signalStarts[c.name()], t)
		case model.EventTimer:
			if e.opts.NoTimerSignalStarts {
				continue
			}
			s, err := c.timer.evaluate(nil, e.clock.Now())
			if err != nil {
				continue // a timer start that cannot be evaluated never fires; Validate reports bad values
			}
			r := &timerStart{eng: e, target: t, period: s.period, left: s.times}
			if r.left < 0 || r.left > MaxCycleFirings {
				r.left = MaxCycleFirings
			}
			e.timerStarts[id] = append(e.timerStarts[id], e.hub.Schedule(s.first, r))
		}
	}
}

// timerStart is the hub receiver of a timer start event: each firing
// starts an instance and schedules the next repetition of a cycle.
type timerStart struct {
	eng    *Engine
	target startTarget
	period time.Duration
	left   int // firings left, this one included
}

func (r *timerStart) Deliver(d eventhub.Delivery) bool {
	e := r.eng
	_, _ = e.startAt(r.target, nil, &Event{Type: TimerFired, Due: timeOf(d.Due)}, "", new(cause))
	r.left--
	// A cycle ends at the last repetition the engine can represent.
	if r.left <= 0 {
		return true
	}
	if next, ok := r.target.plan.nodes[r.target.node.Index].startCatch.timer.following(nil, d.Due, r.period); ok {
		e.mu.Lock()
		id := r.target.plan.Process.ID
		e.timerStarts[id] = append(e.timerStarts[id], e.hub.Schedule(next, r))
		e.mu.Unlock()
	}
	return true
}

// Latest returns the newest version of a process.
func (e *Engine) Latest(processID string) (*Plan, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	versions := e.plans[processID]
	if len(versions) == 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknownProcess, processID)
	}
	return versions[len(versions)-1], nil
}
