package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// track is one token's path. Its position is data, a continuation: the
// node it is at, the flow it came by, what it waits for there and the
// counters of a loop activity. next is the one implementation of node
// semantics: it runs the token one element on, or hands a parked token
// what the loop delivered, and says whether the token then runs on, parks
// or has exited. It reads only the immutable plan and the published
// variable snapshot, and reports every step to its instance's loop.
//
// Who calls next depends on the instance's resumption mode (RATIONALE.md,
// "Why are tokens continuations?"):
//
//   - goroutine tracks (native default): each track runs on a goroutine of
//     its own (run), which parks on ch, a one-slot channel only the loop
//     sends to or closes, and uses no CPU until then (SRD-027, SRD-028);
//   - direct resumption (the WebAssembly build's default): the loop calls
//     next itself, one step at a time, while the track has the turn. There
//     is no goroutine and no channel; a delivery is handed to next as an
//     argument by the loop, the only caller, so the guarantees hold by
//     construction.
//
// Track states: running → parked (after reporting a wait) → running (a
// delivery) … → exited (end event, merged, or told to exit). The loop's
// tokenView mirrors this from the reports alone.
type track struct {
	inst  *Instance
	id    int
	ch    chan notice // a track on a goroutine of its own only; nil when the loop drives it
	scope *scope      // read-only here: the track reads its published view

	// The continuation.
	node *model.Node
	via  *model.Flow
	at   waitPoint // what the parked track waits for; atNothing while it runs
	// report is the report the track parked with: a retry delivery to a
	// track parked at a join, a throw or a job makes it report the same
	// wait again.
	report report
	// iter is the iteration a loop activity is in, counted from 0.
	iter int
	// steps counts elements passed since the last wait, to bound cycles
	// that never wait.
	steps int
}

// waitPoint says where in a node's semantics a parked track goes on when
// a delivery comes.
type waitPoint uint8

const (
	atNothing    waitPoint = iota // running: next executes node
	atWaitState                   // blocked at a wait state the loop set up on entry
	atHeld                        // parked under a budget incident before executing node
	atStepBudget                  // parked on the steps-per-token incident before executing node
	atJoin                        // arrived at a synchronising join
	atRaise                       // at an error or escalation throw
	atThrow                       // at a throw or an element with output mappings
	atLeave                       // on an incident choosing node's outgoing flows
	atLoopCond                    // on an incident evaluating a loop condition
	atLoopBudget                  // on the steps-per-token incident between iterations
	atLoopJob                     // on the job of a loop iteration
	atLoopThrow                   // at the throw of a loop iteration
	atCompleting                  // an inner instance of a multi-instance activity, done with its work
	atStarted                     // at an activity started by its start quantity of tokens, waiting for what the loop set up
	atChoice                      // at a diverging exclusive or inclusive gateway, before it routes, waiting for a choice (choice.go)
)

// repeats reports whether a retry delivery makes a track parked at w
// report the same wait again (the loop re-executes the node), rather than
// go on (an incident it parked on was resolved).
func (w waitPoint) repeats() bool {
	switch w {
	case atJoin, atRaise, atThrow, atLoopJob, atLoopThrow, atCompleting, atStarted:
		return true
	}
	return false
}

// outcome is what a call of next left the track doing.
type outcome uint8

const (
	running outcome = iota + 1 // it has more to do without a delivery
	parked                     // it waits for a delivery
	exited                     // it has gone
)

// newTrack makes the track of token tv, about to execute n reached
// through via, or, when the loop has set up a wait there, parked at n.
func newTrack(inst *Instance, tv *tokenView, n *model.Node, via *model.Flow) *track {
	t := &track{inst: inst, id: tv.id, ch: tv.ch, scope: tv.scope, node: n, via: via}
	if inst.plan.nodes[n.Index].waitsIn(tv.scope) {
		t.at = atWaitState
	}
	return t
}

func (t *track) emit(m report) {
	m.token = t.id
	if t.ch == nil { // the loop drives it (turns.go, give)
		t.inst.reports = append(t.inst.reports, m)
		return
	}
	t.inst.intake <- m
}

// run is a goroutine track: it calls next until the track exits, parking
// on its channel whenever the track waits.
func (t *track) run() {
	o := running
	if t.at != atNothing {
		o = parked // it starts at a wait state
	}
	for o != exited {
		d := notice{}
		if o == parked {
			var ok bool
			if d, ok = <-t.ch; !ok {
				d = notice{kind: exit}
			}
			switch d.kind {
			case capture:
				d.capture <- *t // a checkpoint reads the continuation; the track stays parked
				continue
			case retire:
				d.capture <- *t // the loop keeps the continuation; the goroutine ends (dehydrate.go)
				return
			}
		}
		o = t.safeNext(d)
	}
}

// safeNext is next, turning a panic (a bug, never bad input) into a
// failure the track reports as its exit.
func (t *track) safeNext(d notice) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			t.emit(report{kind: evFailed, node: t.node, more: &reportMore{err: fmt.Errorf("internal error at element %s: %v", t.node.ID, r)}})
			o = exited
		}
	}()
	return t.next(d)
}

// next runs the track one element on, or, when it is parked, hands it d,
// what the loop delivered.
func (t *track) next(d notice) outcome {
	if t.at == atNothing {
		return t.step()
	}
	at := t.at
	t.at = atNothing
	t.steps = 0
	if d.kind == exit || d.kind == merged {
		t.emit(report{kind: evExited})
		return exited
	}
	if d.kind == retry && at.repeats() {
		return t.park(at, t.report) // execute the node again: report the same wait
	}
	n := t.node
	switch at {
	case atJoin:
		if n.Kind.IsActivity() {
			return t.started() // its start quantity of tokens arrived
		}
	case atWaitState, atStarted:
		if d.arm != nil {
			n = d.arm // the event-based gateway arm or boundary event that fired
		}
		return t.leave(n)
	case atHeld:
		return t.count()
	case atStepBudget:
		return t.execute()
	case atRaise, atThrow:
		if n.Kind == model.KindEndEvent {
			kind := evEnded
			if n.HasEvent(model.EventTerminate) {
				kind = evTerminate // a multiple end event, once it threw the rest
			}
			t.emit(report{kind: kind, node: n})
			return exited
		}
	case atLoopCond:
		return t.iterate()
	case atLoopBudget:
		if o := t.iteration(); o != running {
			return o
		}
		t.iter++
		return t.iterate()
	case atLoopJob:
		if d.arm != nil {
			return t.leave(d.arm) // an interrupting boundary event ended the loop
		}
		t.iter++
		return t.iterate()
	case atLoopThrow:
		t.iter++
		return t.iterate()
	case atCompleting:
		t.emit(report{kind: evEnded, node: n})
		return exited
	case atChoice:
		if d.flows != nil {
			return t.take(n, d.flows) // the flows chosen
		}
		return t.route(n) // the gateway's own conditions
	}
	return t.leave(n) // atJoin, atLeave, and a raise or throw that is no end event
}

// park reports m, which parks the track at w.
func (t *track) park(w waitPoint, m report) outcome {
	t.at = w
	t.report = m
	t.emit(m)
	return parked
}

// step executes the node the track is at. A wait state is never stepped:
// the track parks as it moves onto one.
func (t *track) step() outcome {
	if t.inst.stopping.Load() {
		t.emit(report{kind: evExited})
		return exited
	}
	if t.inst.hold.Load() {
		return t.park(atHeld, report{kind: evIncident, node: t.node, more: &reportMore{err: errHeld}})
	}
	return t.count()
}

// count counts the step against the steps-per-token budget.
func (t *track) count() outcome {
	if t.steps++; t.steps > t.inst.eng.opts.MaxSteps {
		t.steps = 0
		err := fmt.Errorf("budget %q exceeded at element %s: the token passed %d elements without waiting, limit %d (limits.maxSteps)",
			"steps per token", t.node.ID, t.inst.eng.opts.MaxSteps+1, t.inst.eng.opts.MaxSteps)
		return t.park(atStepBudget, report{kind: evIncident, node: t.node, more: &reportMore{err: err}})
	}
	return t.execute()
}

// execute applies the semantics of the node the track is at.
func (t *track) execute() outcome {
	n := t.node
	np := &t.inst.plan.nodes[n.Index]
	if np.loop != nil {
		t.iter = 0
		return t.iterate()
	}
	switch {
	case np.join:
		return t.park(atJoin, report{kind: evArrive, node: n, flow: t.via})
	case np.raise != nil:
		return t.park(atRaise, report{kind: evRaise, node: n})
	case np.writes(), np.comp.throws():
		// A throw, or an element whose output mappings the loop must
		// evaluate (it alone writes variables) before the token leaves.
		return t.park(atThrow, report{kind: evThrow, node: n})
	case n.Kind == model.KindEndEvent:
		kind := evEnded
		if len(n.Events) > 0 && n.Events[0].Kind == model.EventTerminate {
			kind = evTerminate
		}
		t.emit(report{kind: kind, node: n})
		return exited
	}
	return t.leave(n)
}

// leave takes n's outgoing flows and moves the track onto the first; a
// track that moves onto a wait state parks there.
func (t *track) leave(n *model.Node) outcome {
	if t.scope.instanceOf(n) {
		// An inner instance of a multi-instance activity leaves through
		// its body, not n's flows: the loop collects its output first.
		return t.park(atCompleting, report{kind: evInnerDone, node: n})
	}
	if link := t.inst.plan.nodes[n.Index].link; link != nil {
		// A link throw continues at its catch, with no flow between.
		t.emit(report{kind: evLinked, node: n})
		t.node, t.via = link, nil
		return running
	}
	t.node = n
	if t.inst.eng.choices.Load() && choosable(n) {
		// Gateway choices are on: the token stops before the gateway
		// routes, until someone chooses its flows (choice.go).
		return t.park(atChoice, report{kind: evChoice, node: n})
	}
	return t.route(n)
}

// route takes the flows n's conditions select, or parks on an incident
// saying why none can be taken.
func (t *track) route(n *model.Node) outcome {
	flows, err := t.outgoing(n)
	if err != nil {
		return t.park(atLeave, report{kind: evIncident, node: n, more: &reportMore{err: err}})
	}
	return t.take(n, flows)
}

// take moves the track out of n through flows onto the first; a track
// that moves onto a wait state parks there.
func (t *track) take(n *model.Node, flows []*model.Flow) outcome {
	flows = completionTokens(n, flows)
	switch len(flows) {
	case 0:
		// No outgoing flow: the token ends here (implicit end).
		t.emit(report{kind: evEnded, node: n})
		return exited
	case 1:
		t.emit(report{kind: evMoved, node: n, flow: flows[0]})
	default:
		t.emit(report{kind: evFork, node: n, more: &reportMore{flows: flows}})
	}
	t.node, t.via = flows[0].Target, flows[0]
	if t.inst.plan.nodes[t.node.Index].waits {
		// The loop sets up the wait when it records the entry (SRD-027
		// FR-5 in one loop step): the track reports nothing more, only
		// parks. Not even a stop is reported: the token no longer has the
		// turn, and the loop tells it to exit when it stops the instance.
		t.at = atWaitState
		return parked
	}
	return running
}

// outgoing selects the flows a token leaves n through.
func (t *track) outgoing(n *model.Node) ([]*model.Flow, error) {
	return selectFlows(&t.inst.plan.nodes[n.Index], t.scope.visible)
}

// iterate runs a loop activity (standard loop characteristics) from
// iteration t.iter: one iteration after another while the loop condition
// holds (tested after each iteration, or before it with testBefore), up to
// the loop maximum. Every iteration after the first is recorded as the
// element left and entered again.
func (t *track) iterate() outcome {
	n := t.node
	l := t.inst.plan.nodes[n.Index].loop
	for ; l.max < 0 || t.iter < l.max; t.iter++ {
		if (t.iter > 0 || l.testBefore) && l.cond != nil {
			ok, err := l.cond.EvalBool(t.scope.visible())
			if err != nil {
				// Once resolved, the condition is evaluated again.
				return t.park(atLoopCond, report{kind: evIncident, node: n, more: &reportMore{err: fmt.Errorf("loop condition: %w", err)}})
			}
			if !ok {
				break
			}
		}
		if t.iter > 0 {
			if t.steps++; t.steps > t.inst.eng.opts.MaxSteps {
				t.steps = 0
				err := fmt.Errorf("budget %q exceeded at element %s: the loop ran %d iterations without waiting, limit %d (limits.maxSteps)",
					"steps per token", n.ID, t.inst.eng.opts.MaxSteps+1, t.inst.eng.opts.MaxSteps)
				return t.park(atLoopBudget, report{kind: evIncident, node: n, more: &reportMore{err: err}})
			}
		}
		if o := t.iteration(); o != running {
			return o
		}
	}
	return t.leave(n)
}

// iteration starts iteration t.iter of a loop activity: it parks on the
// iteration's job or throw, or reports running when the iteration has
// nothing to wait for.
func (t *track) iteration() outcome {
	n := t.node
	np := &t.inst.plan.nodes[n.Index]
	if t.iter > 0 {
		t.emit(report{kind: evIteration, node: n})
	}
	switch {
	case np.jobTypeName != "", n.Kind == model.KindSubProcess, n.Kind == model.KindCallActivity:
		// The loop sets up the iteration's job, sub-process or called
		// instance.
		return t.park(atLoopJob, report{kind: evJob, node: n})
	case np.writes():
		// Every iteration sends its message and applies its outputs.
		return t.park(atLoopThrow, report{kind: evThrow, node: n})
	}
	return running
}
