package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// A call activity starts an instance of another process (the child) and
// waits for it, as Zeebe does: the child gets every variable visible at the
// call activity plus the activity's input mappings; when it completes, its
// variables come back through the output mappings, or all of them without
// mappings. Cancelling or interrupting the call activity cancels the child.
// An error or escalation the child does not catch goes on to the call
// activity's boundary events and the parent's scopes, and so up the call
// tree (raiseToCaller).
// The parent and the child are separate instances with separate loops; they
// talk only through each other's non-blocking mailbox.

// MaxCallDepth bounds how deep call activities may nest (a process that
// calls itself would otherwise create instances without end).
const MaxCallDepth = 64

// enterCall starts the child instance for tv, which waits at call activity
// n until the child ends.
func (inst *Instance) enterCall(tv *tokenView, n *model.Node) {
	inst.park(tv, WaitCall)
	np := &inst.plan.nodes[n.Index]
	fail := func(err error) {
		inst.closeBoundaries(tv)
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, err.Error())
	}
	if inst.depth >= MaxCallDepth {
		fail(fmt.Errorf("call activities nest deeper than %d levels: does the process call itself?", MaxCallDepth))
		return
	}
	id, err := np.calledElement.EvalString(tv.scope.visible())
	if err != nil {
		fail(fmt.Errorf("called element: %w", err))
		return
	}
	plan, err := inst.eng.Latest(id)
	if err != nil {
		fail(fmt.Errorf("called element %q: %w", id, err))
		return
	}
	if plan.start == nil {
		fail(fmt.Errorf("called element %q: %w", id, ErrNoNoneStart))
		return
	}
	vars := cloneVars(tv.scope.visible())
	if len(np.inputs) > 0 {
		locals, err := applyMappings(np.inputs, tv.scope.visible())
		if err != nil {
			fail(err)
			return
		}
		vars = overlay(vars, locals)
	}
	c := inst.causeOf()
	if err := c.reserve(1, inst.eng.opts.MaxStartsPerInput, fmt.Sprintf("call activity %s", n.ID)); err != nil {
		fail(err)
		return
	}
	if err := inst.openBoundaries(tv, n); err != nil {
		fail(err)
		return
	}
	child := newInstance(inst.eng, plan, vars)
	child.parent, child.parentToken, child.depth, child.cause = inst, tv.id, inst.depth+1, c
	tv.child = child
	inst.record(Event{Type: CallStarted, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: tv.id,
		Name: plan.Process.ID, Message: fmt.Sprintf("called instance %d", child.key)})
	if _, err := inst.eng.launch(child, startTarget{plan: plan, node: plan.start}, nil); err != nil {
		tv.child = nil
		fail(err)
	}
}

// callEnded applies the end of a child instance to the token waiting for
// it. A child that completed hands back its variables and lets the token
// go on; one that was terminated or failed holds the token with an incident.
func (inst *Instance) callEnded(m report) {
	child := m.more.child
	tv := inst.tokens[m.token]
	if tv == nil || tv.child != child || !tv.parked || tv.closed || tv.doomed {
		return // the call activity was interrupted meanwhile; the child was cancelled with it
	}
	tv.child = nil
	n := tv.node
	state := child.State()
	if state != Completed {
		inst.closeBoundaries(tv)
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, fmt.Sprintf("called instance %d of %s ended %s: %s", child.key, child.plan.Process.ID, state, child.Message()))
		return
	}
	update, err := inst.outputs(tv, n, child.root.visible())
	if err != nil {
		inst.closeBoundaries(tv)
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, err.Error())
		return
	}
	inst.closeBoundaries(tv)
	tv.scope.set(update)
	inst.notify(tv, notice{kind: resume})
}

// cancelChild asks the child instance a token waits for to terminate.
func (inst *Instance) cancelChild(tv *tokenView) {
	if tv.child == nil {
		return
	}
	tv.child.post(report{kind: evCancel})
	tv.child = nil
}

// raised is an error or escalation on its way up the call tree: what was
// raised, and the token that raised it (in the instance origin), which
// waits for the answer.
type raised struct {
	kind          model.EventKind
	code, message string
	// vars are the variables the thrower gave (a job's error variables),
	// set where the event is caught.
	vars   map[string]any
	origin *Instance
	token  int
	// caught is set on an answer when a non-interrupting handler took it.
	caught bool
}

// raiseToCaller hands an error or escalation that no handler in this
// called instance catches to the calling instance, whose call activity's
// boundary events and enclosing scopes are next in line (Zeebe and
// BPMN 2.0 §10.4.3: a throw propagates to the parent of its call
// activity). tv waits for the answer, so that what it does next does not
// depend on how fast the caller is: it goes on when a non-interrupting
// handler took the event or nobody caught an escalation, holds an
// incident when nobody caught an error, and is withdrawn with its
// instance when an interrupting handler up the tree ended the call.
func (inst *Instance) raiseToCaller(tv *tokenView, kind model.EventKind, code, msg string, vars map[string]any) {
	tv.raising = true
	if tv.wait == WaitJob {
		tv.wait = WaitEvent // its job is over: it waits for the call tree
	}
	inst.postRaise(kind, code, msg, vars, tv.id)
}

// postRaise hands an error or escalation raised by token (0: by no token,
// which waits for no answer), with the variables the thrower gave, to the
// calling instance.
func (inst *Instance) postRaise(kind model.EventKind, code, msg string, vars map[string]any, token int) {
	r := &raised{kind: kind, code: code, message: msg, vars: cloneVars(vars), origin: inst, token: token}
	inst.parent.post(report{kind: evRaisedUp, token: inst.parentToken, more: &reportMore{child: inst, raised: r}})
}

// raisedInTree applies a message about an error or escalation travelling
// the call tree: one a child raised (try this instance's handlers for its
// call activity, then pass it up or answer it) or the answer to one this
// instance raised.
func (inst *Instance) raisedInTree(m report) {
	r := m.more.raised
	tv := inst.tokens[m.token]
	if m.kind == evAnswered {
		if tv == nil || !tv.raising || !tv.parked || tv.closed || tv.doomed {
			return // withdrawn meanwhile
		}
		tv.raising = false
		if r.caught || inst.unhandled(tv, tv.node, r.kind, r.code, r.message) {
			inst.notify(tv, notice{kind: resume})
		}
		return
	}
	if tv == nil || tv.child != m.more.child || !tv.parked || tv.closed || tv.doomed {
		return // the call activity ended meanwhile: its child is cancelled with it
	}
	caught, goesOn := inst.catch(tv, tv.node, r.kind, r.code, r.message, true, r.vars)
	switch {
	case caught && goesOn:
		answer := *r
		answer.caught = true
		r.origin.post(report{kind: evAnswered, token: r.token, more: &reportMore{raised: &answer}})
	case caught:
		// An interrupting handler withdrew the call activity, and so
		// cancelled the child, the thrower's instance or its ancestor.
	case inst.parent != nil:
		inst.parent.post(report{kind: evRaisedUp, token: inst.parentToken, more: &reportMore{child: inst, raised: r}})
	default:
		r.origin.post(report{kind: evAnswered, token: r.token, more: &reportMore{raised: r}})
	}
}
