package model

import "slices"

// compensation checks the compensation and transaction rules of one node
// (BPMN 2.0 §10.6, §10.7):
//
//   - a compensation boundary event is associated with its handler
//     (EXT.143), an activity of its own scope, entered only by
//     compensation: no sequence flow in or out, and some compensation
//     boundary event runs it (FT.compensation-handler; not EXT.150, which
//     would tell the modeller to connect a flow to it);
//   - a compensation throw or end event that names an activity
//     (activityRef) names one of its scope that can be compensated: it has
//     a compensation boundary event, or is a sub-process whose content
//     can be (FT.compensation-activity); a throw in an event sub-process
//     compensates the scope the event sub-process is in;
//   - isForCompensation="true" on a compensation event sub-process, or on
//     an activity inside one or inside a compensation handler, marks part
//     of a handler that runs by its own start or its enclosing handler,
//     not one a boundary event starts: it needs no association and may
//     have sequence flows (partOfHandler);
//   - a compensation event sub-process is inside a sub-process, which it
//     compensates: a process is never compensated
//     (FT.compensation-event-subprocess);
//   - a cancel end event is inside a transaction (EXT.106), and that
//     transaction has a cancel boundary event, where the token goes on
//     once the transaction is cancelled (FT.cancel-boundary).
func (v *validator) compensation(n *Node) {
	switch {
	case n.Kind == KindBoundaryEvent && n.HasEvent(EventCompensation):
		h := n.Compensation
		switch {
		case h == nil:
			v.report(n.ID, "EXT.143", "compensation boundary event has no compensation handler: connect it by an association to an activity marked isForCompensation=\"true\"")
		case !h.Kind.IsActivity():
			v.report(n.ID, "FT.compensation-handler", "compensation boundary event is associated with %s, a %s: associate it with an activity marked isForCompensation=\"true\"", h.ID, h.Kind)
		case h.Parent != n.Parent:
			v.report(n.ID, "FT.compensation-handler", "compensation handler %s is not in the scope of the activity it compensates: move it beside %s", h.ID, n.AttachedTo.ID)
		}
	case n.ForCompensation && n.Kind.IsActivity() && !partOfHandler(n):
		if len(n.Incoming) > 0 || len(n.Outgoing) > 0 {
			v.report(n.ID, "FT.compensation-handler", "compensation handler must not have sequence flows (compensation alone starts it, and it ends the compensation): remove them")
		}
		if len(n.Boundaries) > 0 {
			v.report(n.ID, "FT.compensation-handler", "compensation handler must not have boundary events: remove them")
		}
		if !slices.ContainsFunc(v.current.Nodes, func(b *Node) bool { return b.Compensation == n }) {
			v.report(n.ID, "FT.compensation-handler", "compensation handler is associated with no compensation boundary event, so nothing runs it: connect one to it by an association")
		}
	case n.Kind == KindStartEvent && n.HasEvent(EventCompensation) && n.Parent != nil && n.Parent.TriggeredByEvent && n.Parent.Parent == nil:
		v.report(n.ID, "FT.compensation-event-subprocess", "a compensation event sub-process compensates the sub-process it is in, and a process is never compensated: move it into a sub-process")
	case n.Kind == KindEndEvent && n.HasEvent(EventCancel):
		tx := n.Parent
		for tx != nil && !tx.Transaction {
			tx = tx.Parent
		}
		if tx == nil {
			v.report(n.ID, "EXT.106", "a cancel end event is only allowed inside a transaction: use a terminate or error end event, or put it in a bpmn:transaction")
			return
		}
		if tx.Multi != nil || tx.Loop != nil {
			v.report(n.ID, "FT.unsupported", "unsupported: a cancel end event in a looping or multi-instance transaction (%s): cancel from a transaction inside the loop instead", tx.ID)
			return
		}
		for _, b := range tx.Boundaries {
			if b.HasEvent(EventCancel) {
				return
			}
		}
		v.report(n.ID, "FT.cancel-boundary", "transaction %s has no cancel boundary event for this cancel end event: attach one, where the token goes on after the cancellation", tx.ID)
	}
	if n.Kind != KindEndEvent && n.Kind != KindIntermediateThrowEvent {
		return
	}
	for _, d := range n.Events {
		if d.Kind != EventCompensation || d.Activity == "" {
			continue
		}
		scope := n.Parent
		if scope != nil && scope.TriggeredByEvent {
			scope = scope.Parent
		}
		a := v.current.Node(d.Activity)
		switch {
		case a == nil || !a.Kind.IsActivity():
			v.report(n.ID, "FT.compensation-activity", "activityRef %s names no activity of the process: name the activity to compensate, or remove activityRef to compensate them all", d.Activity)
		case a.Parent != scope:
			v.report(n.ID, "FT.compensation-activity", "activityRef %s names an activity outside the scope of this event: compensation reaches the activities of its own scope only", d.Activity)
		case !Compensable(a):
			v.report(n.ID, "FT.compensation-activity", "activity %s cannot be compensated: it has no compensation boundary event (and is no sub-process with compensable content)", d.Activity)
		}
	}
}

// partOfHandler reports whether activity n, marked isForCompensation, is
// a compensation handler's own content rather than a handler a
// compensation boundary event starts: a compensation event sub-process
// (its compensation start event starts it; BPMN 2.0 counts it among the
// compensation handlers, and modellers mark it so), or an activity inside
// one, or inside a handler sub-process, which runs in that handler's flow.
func partOfHandler(n *Node) bool {
	if n.TriggeredByEvent && compensationEventSubProcess(n) {
		return true
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.ForCompensation || p.TriggeredByEvent && compensationEventSubProcess(p) {
			return true
		}
	}
	return false
}

// compensationEventSubProcess reports whether event sub-process esp
// starts with a compensation start event.
func compensationEventSubProcess(esp *Node) bool {
	return slices.ContainsFunc(esp.Children, func(s *Node) bool { return s.Kind == KindStartEvent && s.HasEvent(EventCompensation) })
}

// Compensable reports whether completing activity a leaves something to
// compensate: it has a compensation boundary event with a handler, or it
// is a sub-process with a compensation event sub-process or a compensable
// activity inside (at any depth).
func Compensable(a *Node) bool {
	for _, b := range a.Boundaries {
		if b.HasEvent(EventCompensation) && b.Compensation != nil {
			return true
		}
	}
	if a.Kind != KindSubProcess || a.TriggeredByEvent {
		return false
	}
	if CompensationStart(a) != nil {
		return true
	}
	for _, c := range a.Children {
		if c.Kind.IsActivity() && !c.TriggeredByEvent && Compensable(c) {
			return true
		}
	}
	return false
}

// CompensationStart returns the start event of sub-process a's
// compensation event sub-process, or nil.
func CompensationStart(a *Node) *Node {
	for _, c := range a.Children {
		if !c.TriggeredByEvent {
			continue
		}
		for _, s := range c.Children {
			if s.Kind == KindStartEvent && s.HasEvent(EventCompensation) {
				return s
			}
		}
	}
	return nil
}
