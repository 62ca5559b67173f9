package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// An ad-hoc sub-process runs as Camunda 8 runs one: it is a sub-process
// (a scope, with its boundary events, mappings and event sub-processes)
// whose content has no start or end events. On entry it activates the
// inner elements that its activeElementsCollection names (all elements
// without incoming flows when it names none, the BPMN reading: the
// performers may do any of them): each gets a token of its own, which
// follows the element's outgoing flows inside the sub-process, if any.
// With ordering Sequential one activated element runs at a time, in the
// order named, the next once the tokens of the previous one have gone.
//
// Each time an inner element completes, the completion condition is
// evaluated; once it holds, no further element is activated and, with
// cancelRemainingInstances (the default), the inner elements still
// active are terminated and the completed element's outgoing flows are
// not taken (what they lead to is never entered). The sub-process completes when no token is left
// inside it and the completion condition held, or, without one, as soon
// as no token is left. When the condition does not hold with nothing left
// to run, the sub-process stays active, as in Zeebe (where only its API
// could activate more); its boundary events can still end it.
//
// A completion condition that fails to evaluate holds the token waiting
// at the sub-process with an incident; resolving it evaluates the
// condition again. An activeElementsCollection that fails, or names
// something that is no inner element without incoming flows, is an
// incident too; resolving it enters the sub-process again.

// adHocSpec is a compiled ad-hoc sub-process.
type adHocSpec struct {
	sequential      bool
	cancelRemaining bool
	// active yields the ids of the elements to activate; nil activates
	// every candidate.
	active     *expr.Program
	completion *expr.Program
	// candidates are the inner elements that can be activated, in
	// document order: those without incoming flows (boundary events,
	// event sub-processes, start events, link catch events and
	// compensation handlers are not activities to pick).
	candidates []*model.Node
}

// adHocState is the loop's state of one running ad-hoc sub-process.
type adHocState struct {
	// pending are the elements a sequential sub-process still has to
	// activate, in order.
	pending []*model.Node
	// met is set once the completion condition held.
	met bool
}

// compileAdHoc compiles the ad-hoc characteristics of np's node.
func compileAdHoc(np *nodePlan, opts CompileOptions) error {
	n := np.node
	ah := n.AdHoc
	switch {
	case n.TriggeredByEvent:
		return broke("FT.ad-hoc", "an event sub-process cannot be ad-hoc: use a bpmn:subProcess")
	case n.Job != nil && !n.Job.Type.IsZero():
		// Zeebe's job worker implementation: a job decides what to
		// activate. Running the sub-process without that job would
		// silently do something else.
		return broke("FT.unsupported", "unsupported: an ad-hoc sub-process run by a job worker (zeebe:taskDefinition): remove the task definition to let the engine run it by its activeElementsCollection and completion condition")
	}
	spec := &adHocSpec{sequential: ah.Sequential, cancelRemaining: ah.CancelRemaining}
	for _, c := range n.Children {
		// Start and end events are refused at import (EXT.062). A link
		// catch event is entered from its throw and a compensation
		// handler by compensation, not activated.
		switch {
		case c.Kind == model.KindStartEvent, c.Kind == model.KindBoundaryEvent, c.Kind == model.KindSubProcess && c.TriggeredByEvent,
			c.Kind == model.KindIntermediateCatchEvent && c.HasEvent(model.EventLink), c.ForCompensation:
		case len(c.Incoming) == 0:
			spec.candidates = append(spec.candidates, c)
		}
	}
	var err error
	if !ah.ActiveElements.IsZero() {
		if spec.active, err = expr.Compile(ah.ActiveElements, expr.Value, opts.Expr); err != nil {
			return fmt.Errorf("ad-hoc activeElementsCollection: %w", err)
		}
	}
	if !ah.CompletionCondition.IsZero() {
		if spec.completion, err = expr.Compile(ah.CompletionCondition, expr.Condition, opts.Expr); err != nil {
			return fmt.Errorf("ad-hoc completion condition: %w", err)
		}
	}
	np.adhoc = spec
	return nil
}

// activation returns the inner elements to activate, in order: those the
// activeElementsCollection names over vars, or every candidate.
func (spec *adHocSpec) activation(vars map[string]any) ([]*model.Node, error) {
	if spec.active == nil {
		return spec.candidates, nil
	}
	v, err := spec.active.Eval(vars)
	if err != nil {
		return nil, fmt.Errorf("ad-hoc activeElementsCollection: %w", err)
	}
	if v == nil {
		return nil, nil // Zeebe: nothing is activated
	}
	ids, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("ad-hoc activeElementsCollection %q yielded %s, not a list of element ids", spec.active.Text(), describeValue(v))
	}
	out := make([]*model.Node, 0, len(ids))
	for _, id := range ids {
		s, ok := id.(string)
		if !ok {
			return nil, fmt.Errorf("ad-hoc activeElementsCollection %q yielded %s in its list, not an element id", spec.active.Text(), describeValue(id))
		}
		n := spec.candidate(s)
		if n == nil {
			return nil, fmt.Errorf("ad-hoc activeElementsCollection %q names %q, which the sub-process cannot activate: it activates its inner elements without incoming flows (%s)", spec.active.Text(), s, spec.names())
		}
		out = append(out, n)
	}
	return out, nil
}

func (spec *adHocSpec) candidate(id string) *model.Node {
	for _, c := range spec.candidates {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// names lists the candidates' ids for an error message.
func (spec *adHocSpec) names() string {
	ids := make([]string, len(spec.candidates))
	for i, c := range spec.candidates {
		ids[i] = c.ID
	}
	return strings.Join(ids, ", ")
}

// activateAdHoc starts ad-hoc sub-process sc, entered by tv: it activates
// the inner elements, all at once or, sequential, the first of them. A
// failing activation closes sc again and holds tv with an incident, whose
// resolution enters the sub-process again.
func (inst *Instance) activateAdHoc(tv *tokenView, sc *scope, spec *adHocSpec) {
	nodes, err := spec.activation(sc.visible())
	if err != nil {
		inst.closeScopeSubs(sc)
		sc.close()
		tv.inner = nil
		tv.wait = WaitIncident
		inst.openIncident(tv, sc.node, 0, err.Error())
		return
	}
	sc.adhoc = &adHocState{}
	if spec.sequential && len(nodes) > 1 {
		sc.adhoc.pending = append([]*model.Node(nil), nodes[1:]...)
		nodes = nodes[:1]
	}
	for _, n := range nodes {
		inst.spawn(n, nil, true, sc)
	}
}

// adHocChildDone applies the completion of an inner element of sc, if sc
// is an ad-hoc sub-process: its completion condition is evaluated, and
// once it holds no further element is activated and, with
// cancelRemainingInstances, every token in sc but keep (the one that
// completed, if it goes no further) is withdrawn.
func (inst *Instance) adHocChildDone(sc *scope, keep *tokenView) {
	ah := sc.adhoc
	if ah == nil || ah.met || sc.done {
		return
	}
	spec := inst.plan.nodes[sc.node.Index].adhoc
	owner := inst.tokens[sc.token]
	if spec.completion == nil || owner == nil || owner.incident != 0 {
		return // nothing to evaluate, or an incident waits for its resolution
	}
	ok, err := spec.completion.EvalBool(sc.visible())
	if err != nil {
		owner.wait = WaitIncident
		inst.openIncident(owner, sc.node, 0, fmt.Sprintf("ad-hoc completion condition: %v", err))
		return
	}
	if !ok {
		return
	}
	ah.met = true
	ah.pending = nil
	if spec.cancelRemaining {
		inst.terminateIn(sc, keep)
	}
}

// adHocCut applies the completion of an inner element that tv has just
// left towards its outgoing flows, if tv is in an ad-hoc sub-process, and
// reports whether tv's path ends there: the completion condition now
// holds with cancelRemainingInstances, which cancels everything still to
// run inside, so the sub-process completes without activating what the
// flows lead to (entering it only to terminate it at once would run its
// entry: a script, a job, input mappings). tv is withdrawn
// without entering it; its track, already on its way, is wound down as
// a withdrawn token's is.
func (inst *Instance) adHocCut(tv *tokenView) bool {
	sc := tv.scope
	if sc.adhoc == nil {
		return false
	}
	inst.adHocChildDone(sc, tv)
	if !sc.adhoc.met || !inst.plan.nodes[sc.node.Index].adhoc.cancelRemaining || tv.doomed {
		return false
	}
	tv.node = nil // left: the withdrawal records no termination
	inst.withdraw(tv)
	return true
}

// adHocDone reports whether ad-hoc sub-process sc, in which no token is
// left, completes now. If not, it activates the next element of a
// sequential one, or leaves sc active: its completion condition does
// not hold, or an incident on it waits for its resolution.
func (inst *Instance) adHocDone(sc *scope) bool {
	ah := sc.adhoc
	if owner := inst.tokens[sc.token]; owner != nil && owner.incident != 0 {
		return false
	}
	if !ah.met && len(ah.pending) > 0 {
		next := ah.pending[0]
		ah.pending = ah.pending[1:]
		inst.spawn(next, nil, true, sc)
		return false
	}
	return ah.met || inst.plan.nodes[sc.node.Index].adhoc.completion == nil
}

// adHocResolved goes on after the incident of a completion condition
// that failed on ad-hoc sub-process sc is resolved: the condition is
// evaluated again, and sc completes if nothing is left in it.
func (inst *Instance) adHocResolved(tv *tokenView, sc *scope) {
	tv.wait = WaitScope
	inst.adHocChildDone(sc, nil)
	if sc.live == 0 && !sc.done && tv.incident == 0 {
		inst.completeScope(sc)
	}
}

// adHocOf rebuilds the state of the ad-hoc sub-process scope sd of
// element n from its document.
func adHocOf(inst *Instance, nm names, n *model.Node, sd ScopeDoc) (*adHocState, error) {
	if n == nil || inst.plan.nodes[n.Index].adhoc == nil || sd.Multi != nil || sd.Inner || sd.Revived {
		return nil, fmt.Errorf("scope %d: element %q is no ad-hoc sub-process", sd.ID, sd.Element)
	}
	ah := &adHocState{met: sd.AdHoc.Met}
	for _, id := range sd.AdHoc.Pending {
		p, err := nm.node(id)
		if err != nil || p == nil || p.Parent != n {
			return nil, fmt.Errorf("scope %d: pending element %q is not inside ad-hoc sub-process %q", sd.ID, id, n.ID)
		}
		ah.pending = append(ah.pending, p)
	}
	return ah, nil
}

// AdHocError is the error of an ActivateAdHoc call that names no active
// ad-hoc sub-process or an element it cannot activate: a bad argument,
// which the engine reports as such.
type AdHocError struct{ msg string }

func (e *AdHocError) Error() string { return e.msg }

func adHocErrorf(format string, args ...any) error {
	return &AdHocError{fmt.Sprintf(format, args...)}
}

// ActivateAdHoc activates the inner elements ids of the instance's active
// ad-hoc sub-process element, as Zeebe's ad-hoc activation API does: each
// gets a token of its own (a sequential one runs them one after another,
// after the elements it already runs). Each id must name an inner element
// without incoming flows; an element may be activated again while it
// runs. An *AdHocError when the instance has no active activation of
// element, several (a multi-instance ad-hoc sub-process), or an id names
// something else; ErrInstanceEnded once the instance has ended.
func (inst *Instance) ActivateAdHoc(ctx context.Context, element string, ids []string) error {
	return inst.call(ctx, &command{op: cmdActivateAdHoc, msg: element, ids: append([]string(nil), ids...)})
}

// activateAdHocCmd applies ActivateAdHoc in the loop.
func (inst *Instance) activateAdHocCmd(element string, ids []string) error {
	var active []*scope
	for _, id := range sortedKeys(inst.tokens) {
		if sc := inst.tokens[id].inner; sc != nil && sc.adhoc != nil && !sc.done && sc.node.ID == element {
			active = append(active, sc)
		}
	}
	switch {
	case len(active) == 0:
		return adHocErrorf("instance %d has no active ad-hoc sub-process %q", inst.key, element)
	case len(active) > 1:
		return adHocErrorf("instance %d runs ad-hoc sub-process %q %d times (a multi-instance activity): which one to activate in is not said", inst.key, element, len(active))
	case len(ids) == 0:
		return adHocErrorf("activate in ad-hoc sub-process %q: name at least one element", element)
	}
	sc := active[0]
	spec := inst.plan.nodes[sc.node.Index].adhoc
	nodes := make([]*model.Node, len(ids))
	for i, id := range ids {
		if nodes[i] = spec.candidate(id); nodes[i] == nil {
			return adHocErrorf("ad-hoc sub-process %q cannot activate %q: it activates its inner elements without incoming flows (%s)", element, id, spec.names())
		}
	}
	if spec.sequential && inst.runsIn(sc) {
		sc.adhoc.pending = append(sc.adhoc.pending, nodes...)
		return nil
	}
	if spec.sequential {
		sc.adhoc.pending = append(sc.adhoc.pending, nodes[1:]...)
		nodes = nodes[:1]
	}
	for _, n := range nodes {
		inst.spawn(n, nil, true, sc)
	}
	return nil
}

// runsIn reports whether a token is in scope sc (its event
// sub-processes do not count: they are no activated elements).
func (inst *Instance) runsIn(sc *scope) bool {
	for _, tv := range inst.tokens {
		if tv.scope == sc {
			return true
		}
	}
	return false
}
