package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// handlerSpec is a boundary event, or an event sub-process start event,
// with what it catches.
type handlerSpec struct {
	// node is the boundary event or the event sub-process start event.
	node *model.Node
	// sub is the event sub-process (nil for a boundary event).
	sub  *model.Node
	kind model.EventKind
	// code is the error or escalation code caught; empty catches all.
	code string
	// spec is the subscription of a message, signal or timer handler.
	spec         *catchSpec
	interrupting bool
}

func (h *handlerSpec) catches(kind model.EventKind, code string) bool {
	return h.kind == kind && (h.code == "" || h.code == code)
}

// compileHandler compiles a boundary event or event sub-process start.
func compileHandler(n, sub *model.Node, opts CompileOptions) (handlerSpec, error) {
	h := handlerSpec{node: n, sub: sub, interrupting: n.CancelActivity}
	if len(n.Events) != 1 {
		return h, broke("FT.unsupported", "bpmn:%s needs exactly one event definition", n.Kind)
	}
	d := n.Events[0]
	h.kind = d.Kind
	switch d.Kind {
	case model.EventError:
		if d.Error != nil {
			h.code = d.Error.Code
		}
		h.interrupting = true // an error always interrupts
	case model.EventEscalation:
		if d.Escalation != nil {
			h.code = d.Escalation.Code
		}
	case model.EventCompensation:
		// Nothing to subscribe: compensation reaches the boundary event,
		// or the event sub-process, from a throw (compensation.go).
	case model.EventCancel:
		h.interrupting = true // a cancellation ends the transaction
	case model.EventMessage, model.EventSignal, model.EventTimer, model.EventConditional:
		c, err := compileCatch(n, d, opts.Expr)
		if err != nil {
			return h, err
		}
		h.spec = &c
	default:
		return h, broke("FT.unsupported", "unsupported %s trigger on bpmn:%s", d.Kind, n.Kind)
	}
	return h, nil
}

// openBoundaries subscribes the message, signal and timer boundary events
// of activity n for tv, which waits in it.
func (inst *Instance) openBoundaries(tv *tokenView, n *model.Node) error {
	if tv.scope.instanceOf(n) {
		return nil // an inner instance of a multi-instance activity: they are its body's
	}
	for i := range inst.plan.nodes[n.Index].boundaries {
		h := &inst.plan.nodes[n.Index].boundaries[i]
		if h.spec == nil {
			continue
		}
		id, ref, err := inst.subscribeSpec(tv.scope, tv.id, h.spec)
		if err != nil {
			inst.closeBoundaries(tv)
			return err
		}
		ref.handler = h
		inst.subs[id] = ref
		tv.boundary = append(tv.boundary, id)
	}
	return nil
}

// closeBoundaries closes the boundary subscriptions of tv's activity.
func (inst *Instance) closeBoundaries(tv *tokenView) {
	for _, id := range tv.boundary {
		inst.dropSub(id)
	}
	tv.boundary = nil
}

// openEventSubprocesses subscribes the message, signal and timer starts of
// the event sub-processes directly in scope sc.
func (inst *Instance) openEventSubprocesses(sc *scope) {
	starts := inst.plan.eventStarts[scopeIndex(sc)]
	for i := range starts {
		inst.openEventStart(sc, &starts[i])
	}
}

// scopeIndex is the key of sc's event sub-process starts in the plan: its
// sub-process's node index, -1 for the process.
func scopeIndex(sc *scope) int {
	if sc.node == nil {
		return -1
	}
	return sc.node.Index
}

func (inst *Instance) openEventStart(sc *scope, h *handlerSpec) {
	if h.spec == nil || sc.done {
		return
	}
	id, ref, err := inst.subscribeSpec(sc, 0, h.spec)
	if err != nil {
		// An event sub-process whose subscription cannot be opened (a bad
		// correlation key) cannot start; say so in the stream.
		inst.record(Event{Type: IncidentCreated, ElementID: h.node.ID, Message: err.Error()})
		return
	}
	ref.handler, ref.scope = h, sc
	inst.subs[id] = ref
	sc.subs = append(sc.subs, id)
}

// rearm re-opens a non-interrupting handler's subscription after it fired
// for d: a message waits for the next message, a timer cycle schedules its
// next repetition while it has some left; a timer date or duration and a
// signal (whose subscription stays open) need nothing. It returns the new
// subscription id, or 0.
func (inst *Instance) rearm(ref subRef, d *eventhub.Delivery, sc *scope, token int) int64 {
	h := ref.handler
	switch {
	case d.Kind == eventhub.Message:
		id, next, err := inst.subscribeSpec(sc, token, h.spec)
		if err != nil {
			return 0
		}
		next.handler, next.scope = h, ref.scope
		inst.subs[id] = next
		return id
	case d.Kind == eventhub.Timer && h.spec.timer.cycle != nil && ref.left > 1:
		due, ok := h.spec.timer.following(sc.visible(), d.Due, ref.period)
		if !ok {
			return 0
		}
		id := inst.schedule(token, h.spec, due)
		inst.subs[id] = subRef{token: token, spec: h.spec, handler: h, scope: ref.scope, left: ref.left - 1, period: ref.period, due: due}
		return id
	}
	return 0
}

func (inst *Instance) closeScopeSubs(sc *scope) {
	for _, id := range sc.subs {
		inst.dropSub(id)
	}
	sc.subs = nil
}

// enterScope starts a sub-process for tv, which waits at its node until the
// sub-process completes.
func (inst *Instance) enterScope(tv *tokenView, n *model.Node) {
	sc := inst.openScope(tv, n)
	if sc == nil {
		return
	}
	np := &inst.plan.nodes[n.Index]
	if np.adhoc != nil {
		inst.activateAdHoc(tv, sc, np.adhoc)
		return
	}
	if np.subStart == nil {
		inst.completeScope(sc) // an empty sub-process completes at once
		return
	}
	inst.spawn(np.subStart, nil, true, sc)
}

// openScope parks tv at sub-process n and opens its scope: input
// mappings, boundary events, event sub-processes; it starts nothing
// inside. It returns nil when a mapping or boundary fails, with an
// incident open on tv.
func (inst *Instance) openScope(tv *tokenView, n *model.Node) *scope {
	inst.park(tv, WaitScope)
	np := &inst.plan.nodes[n.Index]
	inst.nextScope++
	sc := newScope(inst.nextScope, n, tv.scope, nil)
	if len(np.inputs) > 0 {
		locals, err := applyMappings(np.inputs, tv.scope.visible())
		if err != nil {
			sc.close()
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, err.Error())
			return nil
		}
		sc.setLocal(locals)
	}
	sc.token = tv.id
	tv.inner = sc
	if err := inst.openBoundaries(tv, n); err != nil {
		sc.close()
		tv.inner = nil
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, err.Error())
		return nil
	}
	inst.openEventSubprocesses(sc)
	return sc
}

// completeScope ends a scope whose last token has gone: the process scope
// needs nothing (the instance ends), a sub-process hands its outputs to the
// parent and lets its waiting token go on, an event sub-process lets its
// parent scope complete if nothing else is left there.
func (inst *Instance) completeScope(sc *scope) {
	if sc.parent == nil || sc.done {
		return
	}
	if sc.revived {
		inst.revivedDone(sc)
		return
	}
	if sc.inner {
		inst.instanceDone(sc)
		return
	}
	if sc.adhoc != nil && !inst.adHocDone(sc) {
		return
	}
	inst.closeScopeSubs(sc)
	sc.close()
	parent := sc.parent
	if sc.node.TriggeredByEvent {
		inst.recordNode(ElementLeft, sc.node, 0)
		parent.live--
		if parent.live == 0 && parent != inst.root {
			inst.completeScope(parent)
		}
		return
	}
	tv := inst.tokens[sc.token]
	tv.inner = nil
	inst.closeBoundaries(tv)
	np := &inst.plan.nodes[sc.node.Index]
	if len(np.outputs) > 0 {
		update, err := applyMappings(np.outputs, sc.visible())
		if err != nil {
			tv.wait = WaitIncident
			inst.openIncident(tv, sc.node, 0, err.Error())
			return
		}
		tv.scope.set(update)
	}
	inst.keepCompensable(tv, sc)
	inst.notify(tv, notice{kind: resume})
}

// withdraw takes tv out of the instance because an interrupt ended the
// scope or activity it was in: its job, subscriptions and incidents go,
// its element is recorded as terminated, and its track exits.
func (inst *Instance) withdraw(tv *tokenView) {
	if tv.doomed {
		return
	}
	tv.doomed = true
	inst.cancelWork(tv)
	if tv.inner != nil {
		inst.terminateScope(tv.inner)
		tv.inner = nil
	}
	if tv.node != nil && !tv.atJoin {
		inst.recordNode(ElementTerminated, tv.node, tv.id)
	}
	tv.node = nil
	inst.closeToken(tv)
}

// cancelWork cancels what tv's activity waits on: its job, its incident,
// its event and boundary subscriptions.
func (inst *Instance) cancelWork(tv *tokenView) {
	if tv.jobKey != 0 {
		if js := inst.jobs[tv.jobKey]; js != nil {
			inst.endJob(js)
			inst.record(Event{Type: JobCanceled, ElementID: js.job.ElementID, JobKey: js.job.Key, JobType: js.job.Type, TokenID: tv.id})
		}
		tv.jobKey = 0
	}
	if tv.incident != 0 && tv.incident != inst.heldBy { // a budget incident stays for the other held tokens
		delete(inst.incidents, tv.incident)
		inst.eng.unindexIncident(tv.incident)
	}
	tv.incident = 0
	inst.unsubscribeAll(tv)
	inst.closeBoundaries(tv)
	inst.cancelChild(tv)
}

// terminateScope withdraws everything running in sc and closes it.
func (inst *Instance) terminateScope(sc *scope) {
	inst.terminateIn(sc, nil)
	inst.closeScopeSubs(sc)
	sc.close()
}

// terminateIn withdraws everything running in sc except keep (a
// terminate end event's own token), innermost first: each token directly
// in sc, by id, after what runs inside its activity; then each event
// sub-process running in sc, by start, whose element is recorded
// terminated after its content. Every element entered in sc is thus left
// or terminated.
func (inst *Instance) terminateIn(sc *scope, keep *tokenView) {
	if sc.multi != nil {
		inst.cancelInstances(sc, nil)
	}
	for _, id := range sortedKeys(inst.tokens) {
		tv := inst.tokens[id]
		if tv != keep && !tv.doomed && tv.scope == sc {
			inst.withdraw(tv)
		}
	}
	for _, id := range sortedKeys(sc.children) {
		esc := sc.children[id]
		if esc.revived && !esc.done {
			inst.terminateScope(esc) // a compensation running in sc
			sc.live--                // it held sc open
			continue
		}
		if !esc.node.TriggeredByEvent || esc.done {
			continue // a sub-process's scope goes with the token waiting at it
		}
		inst.terminateScope(esc)
		sc.live-- // it held its parent scope open
		inst.recordNode(ElementTerminated, esc.node, 0)
	}
}

// interruptActivity ends the activity tv waits in (an interrupting
// boundary fired) and moves tv onto the boundary event.
func (inst *Instance) interruptActivity(tv *tokenView, boundary *model.Node) {
	activity := tv.node
	inst.cancelWork(tv)
	if tv.inner != nil {
		inst.terminateScope(tv.inner)
		tv.inner = nil
	}
	inst.recordNode(ElementTerminated, activity, tv.id)
	inst.recordNode(ElementEntered, boundary, tv.id)
	tv.node = boundary
	inst.notify(tv, notice{kind: resume, arm: boundary})
}

// handlerFired applies a message, signal or timer boundary event or event
// sub-process start that fired for delivery d.
func (inst *Instance) handlerFired(ref subRef, d *eventhub.Delivery) {
	if ref.scope != nil {
		sc := ref.scope
		if sc.done {
			return
		}
		ref, d = inst.interrupter(inst.plan.eventStarts[scopeIndex(sc)], sc.subs, ref, d, sc)
		h := ref.handler
		inst.recordTrigger(h.node, 0, d)
		if h.interrupting {
			inst.interruptScope(sc)
		} else if d.Kind != eventhub.Signal && d.Kind != eventhub.Conditional {
			inst.forget(sc, d.Sub)
			if id := inst.rearm(ref, d, sc, 0); id != 0 {
				sc.subs = append(sc.subs, id)
			}
		}
		inst.startEventSubprocess(sc, h, d.Variables)
		return
	}
	tv := inst.tokens[ref.token]
	if tv == nil || !tv.parked || tv.closed || tv.doomed {
		if d.Kind == eventhub.Message {
			inst.eng.hub.Reject(*d)
		}
		return
	}
	ref, d = inst.interrupter(inst.plan.nodes[tv.node.Index].boundaries, tv.boundary, ref, d, tv.scope)
	h := ref.handler
	inst.recordTrigger(h.node, tv.id, d)
	tv.scope.set(d.Variables)
	if h.interrupting {
		inst.interruptActivity(tv, h.node)
		return
	}
	if d.Kind != eventhub.Signal && d.Kind != eventhub.Conditional { // those stay subscribed
		for i, id := range tv.boundary {
			if id == d.Sub {
				tv.boundary = append(tv.boundary[:i:i], tv.boundary[i+1:]...)
				inst.dropSub(id)
				break
			}
		}
		if id := inst.rearm(ref, d, tv.scope, tv.id); id != 0 {
			tv.boundary = append(tv.boundary, id)
		}
	}
	inst.spawn(h.node, nil, true, tv.scope)
}

// interrupter returns the handler that takes occurrence d, which fired
// ref, and the delivery to apply. hs are the handlers ref is one of (the
// event sub-process starts of a scope, or the boundary events of an
// activity) and peers their open subscriptions. When the same occurrence
// (one signal broadcast, one message, one due instant, one change of
// variables) reaches an interrupting handler among them, the first such
// in document order takes it, and the non-interrupting ones do not start
// for it: the result does not depend on which delivery the loop handles
// first (RATIONALE: simultaneous handlers).
func (inst *Instance) interrupter(hs []handlerSpec, peers []int64, ref subRef, d *eventhub.Delivery, sc *scope) (subRef, *eventhub.Delivery) {
	for i := range hs {
		h := &hs[i]
		if !h.interrupting || h.kind != ref.handler.kind {
			continue
		}
		if h == ref.handler {
			return ref, d
		}
		for _, id := range peers {
			if p, ok := inst.subs[id]; ok && p.handler == h && sameOccurrence(p, d, sc) {
				taken := *d
				taken.Sub = id
				return p, &taken
			}
		}
	}
	return ref, d
}

// sameOccurrence reports whether occurrence d, delivered to another
// handler, reaches subscription p too.
func sameOccurrence(p subRef, d *eventhub.Delivery, sc *scope) bool {
	switch d.Kind {
	case eventhub.Signal:
		return p.spec.name() == d.Name
	case eventhub.Message:
		return p.spec.name() == d.Name && p.key == d.CorrelationKey
	case eventhub.Timer:
		return p.due.Equal(d.Due)
	case eventhub.Conditional:
		holds, _ := p.spec.cond.EvalBool(sc.visible())
		return holds
	}
	return false
}

// forget drops a fired subscription from a scope's list.
func (inst *Instance) forget(sc *scope, id int64) {
	inst.dropSub(id)
	for i, s := range sc.subs {
		if s == id {
			sc.subs = append(sc.subs[:i:i], sc.subs[i+1:]...)
			return
		}
	}
}

// recordTrigger records that delivery d triggered element n.
func (inst *Instance) recordTrigger(n *model.Node, token int, d *eventhub.Delivery) {
	rec := Event{ElementID: n.ID, TokenID: token, Variables: cloneVars(d.Variables)}
	switch d.Kind {
	case eventhub.Message:
		rec.Type, rec.Name, rec.CorrelationKey = MessageCorrelated, d.Name, d.CorrelationKey
	case eventhub.Signal:
		rec.Type, rec.Name = SignalReceived, d.Name
	case eventhub.Timer:
		rec.Type, rec.Due = TimerFired, timeOf(d.Due)
	case eventhub.Conditional:
		rec.Type = ConditionSatisfied
	}
	inst.record(rec)
}

// interruptScope withdraws everything running in sc (an interrupting event
// sub-process starts in it) and closes its other start subscriptions.
func (inst *Instance) interruptScope(sc *scope) {
	inst.terminateIn(sc, nil)
	inst.closeScopeSubs(sc)
	sc.interrupted = true
}

// startEventSubprocess starts event sub-process h.sub inside scope sc.
func (inst *Instance) startEventSubprocess(sc *scope, h *handlerSpec, vars map[string]any) {
	inst.nextScope++
	esc := newScope(inst.nextScope, h.sub, sc, nil)
	sc.live++ // the event sub-process holds its parent scope open
	sc.set(vars)
	inst.recordNode(ElementEntered, h.sub, 0)
	inst.spawn(h.node, nil, true, esc)
}

// raise throws an error or escalation with code from tv at element n. It
// is caught by the nearest handler: a boundary event of the activity
// itself (for a job), then, scope by scope outwards, an event
// sub-process of the scope or a boundary event of the sub-process, then,
// in a called instance, the call activity that started it and so on up
// the call tree (raiseToCaller). It reports whether tv goes on now: false
// when tv was consumed by the handling, waits for the calling instance's
// answer, or, for an error nobody catches, holds an incident.
func (inst *Instance) raise(tv *tokenView, n *model.Node, kind model.EventKind, code, message string, fromActivity bool, vars map[string]any) bool {
	if caught, goesOn := inst.catch(tv, n, kind, code, message, fromActivity, nil); caught {
		return goesOn
	}
	if inst.parent != nil {
		inst.raiseToCaller(tv, kind, code, message, vars)
		return false
	}
	return inst.unhandled(tv, n, kind, code, message)
}

// unhandled applies an error or escalation that no handler anywhere up
// the call tree catches, at tv's element n: an escalation has no effect
// (tv goes on), an error holds tv with an incident (Zeebe's "unhandled
// error event").
func (inst *Instance) unhandled(tv *tokenView, n *model.Node, kind model.EventKind, code, message string) bool {
	if kind == model.EventEscalation {
		return true
	}
	tv.wait = WaitIncident
	inst.openIncident(tv, n, 0, fmt.Sprintf("unhandled BPMN error %q thrown at %s: %s", code, n.ID, message))
	return false
}

// catch hands an error or escalation thrown by tv at n to the nearest
// handler in this instance (see raise); thrown are variables the thrower
// gave with it, set where it is caught. caught reports whether one took
// it; goesOn whether tv goes on (a non-interrupting handler) rather than
// being withdrawn by the interrupt.
func (inst *Instance) catch(tv *tokenView, n *model.Node, kind model.EventKind, code, message string, fromActivity bool, thrown map[string]any) (caught, goesOn bool) {
	vars := cloneVars(thrown)
	if vars == nil {
		vars = map[string]any{}
	}
	if kind == model.EventError {
		vars["errorCode"], vars["errorMessage"] = code, message
	} else {
		vars["escalationCode"] = code
	}
	if fromActivity && !tv.scope.instanceOf(n) {
		if h := pick(inst.plan.nodes[n.Index].boundaries, kind, code); h != nil {
			tv.scope.set(vars)
			inst.record(Event{Type: caughtType(kind), ElementID: h.node.ID, Name: code, Message: message})
			if h.interrupting {
				inst.interruptActivity(tv, h.node)
				return true, false
			}
			inst.spawn(h.node, nil, true, tv.scope)
			return true, true
		}
	}
	for sc := tv.scope; sc != nil; sc = sc.parent {
		// A scope that an interrupting event sub-process already runs in
		// starts no other event sub-process (BPMN 2.0 §10.3.5): what that
		// one throws goes to the scope's boundary events and upwards,
		// never back into the scope it interrupted.
		starts, boundaries := inst.handlersAt(sc)
		if h := pick(inst.plan.eventStarts[scopeIndex(sc)], kind, code); starts && h != nil && !sc.done && !sc.interrupted {
			sc.set(vars)
			inst.record(Event{Type: caughtType(kind), ElementID: h.node.ID, Name: code, Message: message})
			if h.interrupting {
				inst.interruptScope(sc)
				inst.startEventSubprocess(sc, h, nil)
				return true, false
			}
			inst.startEventSubprocess(sc, h, nil)
			return true, true
		}
		if !boundaries {
			continue
		}
		if h := pick(inst.plan.nodes[sc.node.Index].boundaries, kind, code); h != nil {
			owner := inst.tokens[sc.token]
			owner.scope.set(vars)
			inst.record(Event{Type: caughtType(kind), ElementID: h.node.ID, Name: code, Message: message})
			if h.interrupting {
				inst.interruptActivity(owner, h.node)
				return true, false
			}
			inst.spawn(h.node, nil, true, owner.scope)
			return true, true
		}
	}
	return false, false
}

func caughtType(k model.EventKind) EventType {
	if k == model.EventError {
		return ErrorCaught
	}
	return EscalationCaught
}

// pick returns the handler among hs that catches kind and code: one naming
// the code wins over a catch-all.
func pick(hs []handlerSpec, kind model.EventKind, code string) *handlerSpec {
	var all *handlerSpec
	for i := range hs {
		h := &hs[i]
		if !h.catches(kind, code) {
			continue
		}
		if h.code != "" {
			return h
		}
		if all == nil {
			all = h
		}
	}
	return all
}

// raiseAt applies an error or escalation end or throw event reached by tv.
func (inst *Instance) raiseAt(tv *tokenView, n *model.Node) {
	inst.park(tv, WaitEvent)
	r := inst.plan.nodes[n.Index].raise
	inst.record(Event{Type: thrownType(r.kind), ElementID: n.ID, TokenID: tv.id, Name: r.code})
	if inst.raise(tv, n, r.kind, r.code, "", false, nil) && !tv.doomed {
		inst.notify(tv, notice{kind: resume})
	}
}

func thrownType(k model.EventKind) EventType {
	if k == model.EventError {
		return ErrorThrown
	}
	return EscalationThrown
}
