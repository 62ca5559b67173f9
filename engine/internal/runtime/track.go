package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// track is one token's path, run on a goroutine of its own. It executes
// nodes and reports every step to its instance's loop; it reads only the
// immutable plan and the published variable snapshot. When it must wait it
// parks on ch, a one-slot channel only the loop sends to or closes, and
// uses no CPU until then.
//
// Track states: running → parked (after reporting evJob, evArrive or
// evIncident) → running (a delivery) … → exited (end event, merged, or ch
// closed). The loop's tokenView mirrors this from the reports alone.
type track struct {
	inst  *Instance
	id    int
	ch    chan delivery
	scope *scope // read-only here: the track reads its published view
	// steps counts elements passed since the last wait, to bound cycles
	// that never wait.
	steps int
}

func (t *track) emit(m message) {
	m.token = t.id
	t.inst.intake <- m
}

// run executes from node n, reached through via, until the track exits.
func (t *track) run(n *model.Node, via *model.Flow) {
	defer func() {
		if r := recover(); r != nil {
			t.emit(message{kind: evFailed, node: n, more: &messageMore{err: fmt.Errorf("internal error at element %s: %v", n.ID, r)}})
		}
	}()
	for n != nil {
		n, via = t.step(n, via)
	}
}

// step executes node n and returns the next node and the flow to it, or a
// nil node when the track has exited.
func (t *track) step(n *model.Node, via *model.Flow) (*model.Node, *model.Flow) {
	np := &t.inst.plan.nodes[n.Index]
	if np.waits {
		// The loop set up the wait when it recorded the entry (SRD-027
		// FR-5 in one loop step): report nothing, only block. Not even a
		// stop is reported here: the token no longer has the turn, and the
		// loop closes its channel when it stops the instance.
		d, ok := t.receive()
		if !ok {
			return nil, nil
		}
		if d.arm != nil {
			n = d.arm // the event-based gateway arm or boundary event that fired
		}
		return t.leave(n)
	}
	if t.inst.stopping.Load() {
		t.emit(message{kind: evExited})
		return nil, nil
	}
	if t.inst.hold.Load() && !t.waitOn(message{kind: evIncident, node: n, more: &messageMore{err: errHeld}}) {
		return nil, nil
	}
	t.steps++
	if t.steps > t.inst.eng.opts.MaxSteps {
		t.steps = 0
		err := fmt.Errorf("budget %q exceeded at element %s: the token passed %d elements without waiting, limit %d (engine option WithMaxSteps)",
			"steps per token", n.ID, t.inst.eng.opts.MaxSteps+1, t.inst.eng.opts.MaxSteps)
		if !t.waitOn(message{kind: evIncident, node: n, more: &messageMore{err: err}}) {
			return nil, nil
		}
	}
	if np.loop != nil {
		return t.loopActivity(n, np)
	}
	switch {
	case np.join:
		if !t.waitOn(message{kind: evArrive, node: n, flow: via}) {
			return nil, nil
		}
	case np.raise != nil:
		if !t.waitOn(message{kind: evRaise, node: n}) {
			return nil, nil
		}
		if n.Kind == model.KindEndEvent {
			t.emit(message{kind: evEnded, node: n})
			return nil, nil
		}
	case np.writes():
		// A throw, or an element whose output mappings the loop must
		// evaluate (it alone writes variables) before the token leaves.
		if !t.waitOn(message{kind: evThrow, node: n}) {
			return nil, nil
		}
		if n.Kind == model.KindEndEvent {
			t.emit(message{kind: evEnded, node: n})
			return nil, nil
		}
	case n.Kind == model.KindEndEvent:
		kind := evEnded
		if len(n.Events) > 0 && n.Events[0].Kind == model.EventTerminate {
			kind = evTerminate
		}
		t.emit(message{kind: kind, node: n})
		return nil, nil
	}
	return t.leave(n)
}

// waitOn reports m, which parks the track, and blocks until the loop
// delivers. It reports whether the track goes on past the node.
func (t *track) waitOn(m message) bool {
	_, ok := t.await(m)
	return ok
}

// await is waitOn that also returns what was delivered.
func (t *track) await(m message) (delivery, bool) {
	for {
		t.emit(m)
		d, ok := t.receive()
		if ok && d.kind == retry && m.kind != evIncident {
			continue // execute the node again: report the same wait
		}
		return d, ok
	}
}

// receive blocks until the loop delivers to the parked track. It reports
// false, after reporting the exit, when the track was merged away or its
// channel closed.
func (t *track) receive() (delivery, bool) {
	d, ok := <-t.ch
	t.steps = 0
	if !ok || d.kind == merged {
		t.emit(message{kind: evExited})
		return d, false
	}
	return d, true
}

// leave takes n's outgoing flows and returns where the track goes next.
func (t *track) leave(n *model.Node) (*model.Node, *model.Flow) {
	if link := t.inst.plan.nodes[n.Index].link; link != nil {
		t.emit(message{kind: evLinked, node: n})
		return link, nil
	}
	for {
		flows, err := t.outgoing(n)
		if err != nil {
			if !t.waitOn(message{kind: evIncident, node: n, more: &messageMore{err: err}}) {
				return nil, nil
			}
			continue
		}
		switch len(flows) {
		case 0:
			// No outgoing flow: the token ends here (implicit end).
			t.emit(message{kind: evEnded, node: n})
			return nil, nil
		case 1:
			t.emit(message{kind: evMoved, node: n, flow: flows[0]})
		default:
			t.emit(message{kind: evFork, node: n, more: &messageMore{flows: flows}})
		}
		return flows[0].Target, flows[0]
	}
}

// outgoing selects the flows a token leaves n through (see selectFlows).
func (t *track) outgoing(n *model.Node) ([]*model.Flow, error) {
	return selectFlows(&t.inst.plan.nodes[n.Index], t.scope.visible)
}

// loopActivity runs an activity with standard loop characteristics: one
// iteration after another while the loop condition holds (tested after
// each iteration, or before it with testBefore), up to the loop maximum.
// Every iteration after the first is recorded as the element left and
// entered again.
func (t *track) loopActivity(n *model.Node, np *nodePlan) (*model.Node, *model.Flow) {
	l := np.loop
	for i := 0; l.max < 0 || i < l.max; i++ {
		if (i > 0 || l.testBefore) && l.cond != nil {
			ok, err := l.cond.EvalBool(t.scope.visible())
			if err != nil {
				if !t.waitOn(message{kind: evIncident, node: n, more: &messageMore{err: fmt.Errorf("loop condition: %w", err)}}) {
					return nil, nil
				}
				i-- // resolved: evaluate again
				continue
			}
			if !ok {
				break
			}
		}
		if i > 0 {
			if t.steps++; t.steps > t.inst.eng.opts.MaxSteps {
				t.steps = 0
				err := fmt.Errorf("budget %q exceeded at element %s: the loop ran %d iterations without waiting, limit %d (engine option WithMaxSteps)",
					"steps per token", n.ID, t.inst.eng.opts.MaxSteps+1, t.inst.eng.opts.MaxSteps)
				if !t.waitOn(message{kind: evIncident, node: n, more: &messageMore{err: err}}) {
					return nil, nil
				}
			}
			t.emit(message{kind: evIteration, node: n})
		}
		switch {
		case np.jobTypeName != "":
			d, ok := t.await(message{kind: evJob, node: n})
			if !ok {
				return nil, nil
			}
			if d.arm != nil {
				return t.leave(d.arm) // an interrupting boundary event ended the loop
			}
		case np.writes():
			// Every iteration sends its message and applies its outputs.
			if !t.waitOn(message{kind: evThrow, node: n}) {
				return nil, nil
			}
		}
	}
	return t.leave(n)
}
