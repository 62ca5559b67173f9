package runtime

import (
	"fmt"
	"time"

	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// subRef is the loop's record of one open subscription of a parked token:
// which token it wakes and which node (the token's own, or an event-based
// gateway's arm) its event belongs to.
type subRef struct {
	token int
	spec  *catchSpec
	// handler is set for a boundary event or event sub-process start;
	// scope for the latter.
	handler *handlerSpec
	scope   *scope
	// left counts the firings a timer cycle has left, this one included.
	left   int
	period time.Duration
	// due is a timer's due time and key a message's correlation key: with
	// a signal's name, they say which handlers one occurrence reaches.
	due time.Time
	key string
}

// Deliver makes the instance the hub's receiver for message subscriptions
// (correlation is instance state, SRD-027 FR-8). It only enqueues; the loop
// resolves the token through its subscription index.
func (inst *Instance) Deliver(d eventhub.Delivery) bool {
	return inst.post(deliveryReport(0, d))
}

// trackReceiver is the hub's receiver for a token's signal and timer
// subscriptions (SRD-027 FR-2): it too only enqueues to the loop.
type trackReceiver struct {
	inst  *Instance
	token int
}

func (r trackReceiver) Deliver(d eventhub.Delivery) bool {
	return r.inst.post(deliveryReport(r.token, d))
}

// deliveryReport is the loop's report of delivery d to token (0: to the
// instance), its details and the delivery in one allocation.
func deliveryReport(token int, d eventhub.Delivery) report {
	x := &struct {
		more reportMore
		d    eventhub.Delivery
	}{d: d}
	x.more.ev = &x.d
	return report{kind: evDeliver, token: token, more: &x.more}
}

// post hands m to the loop without blocking: producers outside the
// instance (the hub, timers, other instances' loops) must never wait on
// this loop, or two loops posting to each other could deadlock. It reports
// false when the instance has ended.
func (inst *Instance) post(m report) bool {
	if inst.eng.posted != nil {
		inst.eng.posted(inst, m)
	}
	inst.eng.busy.add(1)
	inst.mailMu.Lock()
	if inst.mailClosed {
		inst.mailMu.Unlock()
		inst.eng.busy.add(-1)
		return false
	}
	inst.mail = append(inst.mail, m)
	wake, rehydrate := inst.wake, inst.dry != nil && !inst.waking
	if rehydrate {
		inst.waking = true // the first post to a dry instance wakes it, once
	}
	inst.mailMu.Unlock()
	if inst.direct {
		inst.eng.schedule(inst) // drive rehydrates it
		return true
	}
	if rehydrate {
		go inst.wakeDry()
		return true
	}
	select {
	case wake <- struct{}{}: // nil while dry: nobody waits
	default:
	}
	return true
}

// takeMail returns the posted messages, oldest first, and empties the box.
// With closing set the box is closed too: later posts fail.
func (inst *Instance) takeMail(closing bool) []report {
	inst.mailMu.Lock()
	defer inst.mailMu.Unlock()
	mail := inst.mail
	inst.mail = nil
	inst.mailClosed = inst.mailClosed || closing
	return mail
}

// waitAt parks tv at a catch node and opens its subscriptions. Parking
// comes first, so a subscription that fires at once (a buffered message)
// always finds the token parked (SRD-027 FR-5).
func (inst *Instance) waitAt(tv *tokenView, n *model.Node) {
	np := &inst.plan.nodes[n.Index]
	reason := WaitEvent
	if len(np.catches) == 1 {
		reason = waitReasonOf(np.catches[0].def.Kind)
	}
	inst.park(tv, reason)
	for i := range np.catches {
		if err := inst.subscribe(tv, &np.catches[i]); err != nil {
			inst.unsubscribeAll(tv)
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, err.Error())
			return
		}
	}
	if err := inst.openBoundaries(tv, n); err != nil {
		inst.unsubscribeAll(tv)
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, err.Error())
	}
}

func waitReasonOf(k model.EventKind) WaitReason {
	switch k {
	case model.EventMessage:
		return WaitMessage
	case model.EventSignal:
		return WaitSignal
	case model.EventTimer:
		return WaitTimer
	}
	return WaitEvent
}

// subscribe opens one subscription for tv at a catch node.
func (inst *Instance) subscribe(tv *tokenView, c *catchSpec) error {
	id, ref, err := inst.subscribeSpec(tv.scope, tv.id, c)
	if err != nil {
		return err
	}
	inst.subs[id] = ref
	tv.subs = append(tv.subs, id)
	return nil
}

// subscribeSpec opens the hub subscription c describes, evaluating its
// correlation key or timer in scope sc, and returns its id and the loop's
// record of it (the caller adds a handler's details). Message
// subscriptions are held by the instance, signal and timer subscriptions
// by token (0 for a scope's event sub-process start).
func (inst *Instance) subscribeSpec(sc *scope, token int, c *catchSpec) (int64, subRef, error) {
	hub := inst.eng.hub
	ev := Event{ElementID: c.arm.ID, TokenID: token}
	ref := subRef{token: token, spec: c}
	if inst.subs == nil {
		inst.subs = make(map[int64]subRef)
	}
	switch c.def.Kind {
	case model.EventMessage:
		key := ""
		if c.key != nil {
			k, err := c.key.EvalString(sc.visible())
			if err != nil {
				return 0, ref, fmt.Errorf("message %q correlation key: %w", c.name(), err)
			}
			key = k
		}
		// Subscribe before recording: an observer that reacts to the
		// record by publishing must find the subscription open.
		id := hub.SubscribeMessage(c.name(), key, inst.plan.Process.ID, inst)
		ev.Type, ev.Name, ev.CorrelationKey = MessageSubscribed, c.name(), key
		inst.record(ev)
		ref.key = key
		return id, ref, nil
	case model.EventSignal:
		id := hub.SubscribeSignal(c.name(), trackReceiver{inst, token})
		ev.Type, ev.Name = SignalSubscribed, c.name()
		inst.record(ev)
		return id, ref, nil
	case model.EventConditional:
		// Conditions are the instance's own: no hub. The subscription starts
		// as "not holding", so recheckConditions, which runs right after the
		// message being handled, fires it at once if it holds already, and
		// later whenever it turns from false to true.
		id := inst.eng.NextKey()
		if inst.condLast == nil {
			inst.condLast = make(map[int64]bool)
		}
		inst.condLast[id] = false
		return id, ref, nil
	default:
		s, err := c.timer.evaluate(sc.visible(), inst.eng.clock.Now())
		if err != nil {
			return 0, ref, fmt.Errorf("timer: %w", err)
		}
		if s.times < 0 || s.times > MaxCycleFirings {
			s.times = MaxCycleFirings
		}
		ref.left, ref.period, ref.due = s.times, s.period, s.first
		return inst.schedule(token, c, s.first), ref, nil
	}
}

// recheckConditions fires the conditional subscriptions whose condition
// has turned true since it was last evaluated (an evaluation error counts
// as false). The loop calls it after every message while any is open, and
// fires synchronously: variables change only while a message is handled,
// so the event happens before anything else moves. Firing may open new
// conditional subscriptions (a sub-process entered, a boundary re-armed),
// so it repeats until a pass fires nothing.
func (inst *Instance) recheckConditions() {
	for pass := 0; pass <= len(inst.condLast); pass++ {
		fired := false
		for _, id := range sortedKeys(inst.condLast) {
			ref, ok := inst.subs[id]
			if !ok || inst.stopping.Load() {
				continue
			}
			sc := ref.scope
			if sc == nil {
				tv := inst.tokens[ref.token]
				if tv == nil {
					continue
				}
				sc = tv.scope
			}
			holds, _ := ref.spec.cond.EvalBool(sc.visible())
			was := inst.condLast[id]
			inst.condLast[id] = holds
			if holds && !was {
				inst.fired(report{kind: evDeliver, token: ref.token, more: &reportMore{ev: &eventhub.Delivery{Sub: id, Kind: eventhub.Conditional}}})
				fired = true
			}
		}
		if !fired {
			return
		}
	}
}

// schedule opens a timer subscription due at due.
func (inst *Instance) schedule(token int, c *catchSpec, due time.Time) int64 {
	id := inst.eng.hub.Schedule(due, trackReceiver{inst, token})
	inst.record(Event{Type: TimerScheduled, ElementID: c.arm.ID, TokenID: token, Due: timeOf(due)})
	return id
}

// dropSub closes one subscription, whatever its kind.
func (inst *Instance) dropSub(id int64) {
	inst.eng.hub.Unsubscribe(id)
	delete(inst.subs, id)
	delete(inst.condLast, id)
}

// unsubscribeAll closes every subscription tv holds.
func (inst *Instance) unsubscribeAll(tv *tokenView) {
	for _, id := range tv.subs {
		inst.dropSub(id)
	}
	tv.subs = nil
}

// fired applies a delivery from the hub. The first delivery to a parked
// token wins; any other is dropped, and a dropped message goes back to the
// hub so it can serve another subscription (SRD-027 FR-4, FR-8).
func (inst *Instance) fired(m report) {
	d := m.more.ev
	ref, open := inst.subs[d.Sub]
	if open && ref.handler != nil {
		inst.handlerFired(ref, d)
		return
	}
	var tv *tokenView
	if open {
		tv = inst.tokens[ref.token]
	}
	if !open || tv == nil || !tv.parked || tv.closed || tv.doomed || (m.token != 0 && m.token != ref.token) {
		if d.Kind == eventhub.Message {
			inst.eng.hub.Reject(*d)
		}
		return
	}
	arm := ref.spec.arm
	if arm.ParallelMultiple && tv.node == arm && len(tv.subs) > 1 {
		inst.firedOneOfAll(tv, arm, d)
		return
	}
	inst.unsubscribeAll(tv)
	inst.closeBoundaries(tv)
	inst.recordTrigger(arm, tv.id, d)
	update, err := inst.outputs(tv, arm, d.Variables)
	if err != nil {
		// The token stays at the catch; resolving the incident makes it
		// wait for its event again.
		tv.wait = WaitIncident
		inst.openIncident(tv, arm, 0, err.Error())
		return
	}
	tv.scope.set(update)
	if gate := tv.node; gate != arm {
		// An event-based gateway: the token leaves the gate onto the arm
		// that fired; the other arms never held a token (SRD-024).
		inst.recordStep(codeLeft, gate, nil, tv.id)
		inst.enter(tv, flowBetween(gate, arm))
	}
	inst.notify(tv, notice{kind: resume, arm: arm})
}

// firedOneOfAll applies delivery d to tv waiting at parallel multiple
// catch event n (parallelMultiple="true": it waits for every one of its
// triggers) while other triggers are still to come: the trigger is
// recorded, its subscription closed and its outputs applied, and the
// token waits on. The subscriptions still open are what it waits for, so
// a checkpoint needs nothing more. A failing output mapping holds the
// token with an incident; resolving it subscribes to every trigger again.
func (inst *Instance) firedOneOfAll(tv *tokenView, n *model.Node, d *eventhub.Delivery) {
	inst.dropSub(d.Sub)
	for i, id := range tv.subs {
		if id == d.Sub {
			tv.subs = append(tv.subs[:i:i], tv.subs[i+1:]...)
			break
		}
	}
	inst.recordTrigger(n, tv.id, d)
	update, err := inst.outputs(tv, n, d.Variables)
	if err != nil {
		inst.unsubscribeAll(tv)
		inst.closeBoundaries(tv)
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, err.Error())
		return
	}
	tv.scope.set(update)
}

func flowBetween(from, to *model.Node) *model.Flow {
	for _, f := range from.Outgoing {
		if f.Target == to {
			return f
		}
	}
	panic(fmt.Sprintf("no flow from %s to %s", from.ID, to.ID))
}

// throw publishes the message or signal of throw node n for tv, if it has
// one, applies n's output mappings, then lets the token go on.
func (inst *Instance) throw(tv *tokenView, n *model.Node) {
	inst.park(tv, WaitEvent)
	np := &inst.plan.nodes[n.Index]
	if update, err := inst.evaluate(tv, np); err != nil {
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, err.Error())
		return
	} else if len(update) > 0 {
		tv.scope.set(update)
	}
	if np.comp.throws() {
		inst.throwCompensation(tv, n)
		return
	}
	if len(np.throws) > 0 {
		inst.throwAll(tv, n, np.throws)
		return
	}
	c := np.throw
	if c == nil {
		inst.notify(tv, notice{kind: resume})
		return
	}
	key, ok := inst.throwKey(tv, n, c)
	if !ok || !inst.throwOne(tv, n, c, key) {
		return
	}
	inst.deliverOwn()
	inst.notify(tv, notice{kind: resume})
}

// deliverOwn handles the mail of this instance at once: what it throws
// reaches its own subscriptions before the thrower moves on, or the
// thrower's next report (an end event completing the sub-process whose
// boundary catches the signal) could overtake it.
func (inst *Instance) deliverOwn() {
	for _, m := range inst.takeMail(false) {
		inst.handle(m)
	}
}

// throwKey evaluates the correlation key of message c thrown by tv at n
// ("" for a signal, or a message without one); on failure it holds tv
// with an incident and returns false.
func (inst *Instance) throwKey(tv *tokenView, n *model.Node, c *catchSpec) (string, bool) {
	if c.def.Kind != model.EventMessage || c.key == nil {
		return "", true
	}
	k, err := c.key.EvalString(tv.scope.visible())
	if err != nil {
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, fmt.Sprintf("message %q correlation key: %v", c.name(), err))
		return "", false
	}
	return k, true
}

// throwOne publishes message c (with correlation key) or broadcasts
// signal c, thrown by tv at n; on failure it holds tv with an incident
// and returns false.
func (inst *Instance) throwOne(tv *tokenView, n *model.Node, c *catchSpec, key string) bool {
	switch c.def.Kind {
	case model.EventMessage:
		if _, err := inst.eng.publishMessage(c.name(), key, nil, 0, "", inst.causeOf()); err != nil {
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, fmt.Sprintf("message thrown at element %s: %v", n.ID, err))
			return false
		}
		inst.record(Event{Type: MessagePublished, ElementID: n.ID, TokenID: tv.id, Name: c.name(), CorrelationKey: key})
	case model.EventSignal:
		if err := inst.eng.broadcastSignal(c.name(), nil, inst.causeOf()); err != nil {
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, fmt.Sprintf("signal thrown at element %s: %v", n.ID, err))
			return false
		}
		inst.record(Event{Type: SignalBroadcast, ElementID: n.ID, TokenID: tv.id, Name: c.name()})
	}
	return true
}

// throwAll throws every event definition of multiple throw or end event n
// for tv, in document order (BPMN 2.0 §10.5: all of a multiple event's
// consequences happen), then lets the token go on: to its link catch, or,
// at an end event, to its end (of the scope, for a terminate definition).
//
// Every correlation key is evaluated first, so a key that fails holds the
// token with an incident before anything is thrown, and resolving it
// throws the event whole. Each message or signal reaches this instance's
// own subscriptions before the next definition is thrown. An error, or an
// escalation an interrupting handler catches, withdraws the thrower: the
// messages and signals after it are still thrown (they need no thrower),
// the errors and escalations after it are not (there is no token left to
// raise them from, and the scope they would rise through is being
// withdrawn). An unhandled error holds the thrower with an incident
// instead, and nothing after it is thrown: resolving the incident throws
// the event again, from its first definition.
func (inst *Instance) throwAll(tv *tokenView, n *model.Node, steps []throwStep) {
	keys := make([]string, len(steps))
	for i, s := range steps {
		if s.publish == nil {
			continue
		}
		k, ok := inst.throwKey(tv, n, s.publish)
		if !ok {
			return
		}
		keys[i] = k
	}
	withdrawn := false
	for i, s := range steps {
		switch {
		case s.publish != nil:
			if !inst.throwOne(tv, n, s.publish, keys[i]) {
				return
			}
			inst.deliverOwn()
		case !withdrawn:
			inst.record(Event{Type: thrownType(s.raise.kind), ElementID: n.ID, TokenID: tv.id, Name: s.raise.code})
			if !inst.raise(tv, n, s.raise.kind, s.raise.code, "", false, nil) || tv.doomed {
				if tv.wait == WaitIncident {
					return
				}
				withdrawn = true
			}
		}
	}
	if !withdrawn {
		inst.notify(tv, notice{kind: resume})
	}
}

// timeOf formats a due time for records.
func timeOf(t time.Time) *time.Time {
	u := t.UTC()
	return &u
}
