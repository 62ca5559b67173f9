package runtime

import (
	"fmt"
	"regexp"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// A multi-instance activity runs as Zeebe runs it: a body, and inner
// instances of the activity inside it. The token that reaches the activity
// waits at it while the body runs (the body is a scope, like a
// sub-process's); each inner instance is a token of its own at the same
// node, in a scope of its own below the body's that holds its locals
// (loopCounter, the input element). The body starts one inner instance per
// element of the input collection (or loopCardinality times), all at once
// or one after another. As an inner instance finishes its work its track
// reports evInnerDone; the loop then collects its output element and
// evaluates the completion condition, which, when it holds, terminates the
// other inner instances. When the last one has gone the body hands the
// output collection to the waiting token, which leaves the activity.
//
// History reads as Zeebe's does: the activity entered (the body), each
// inner instance entered and left, the activity left (the body).
//
// Boundary events belong to the body: they are opened for the waiting
// token only, an interrupting one terminates every inner instance, and an
// error or escalation thrown inside an inner instance is caught there.
//
// Why nrOfActiveInstances and nrOfCompletedInstances are not variables of
// the body: every variable change republishes the view of each scope
// below it, so counters that change at each completion would cost work
// in proportion to the instances still running, at every completion (a
// large parallel activity would be quadratic). Zeebe exposes its counters
// to the completion condition only; flowtrack does the same, under both
// Zeebe's names and the BPMN (Camunda 7) ones, and keeps the output
// collection out of the scopes until the body completes.

// multiSpec is a compiled multi-instance activity.
type multiSpec struct {
	sequential bool
	// collection yields the list iterated over; cardinality, when it is
	// nil, the number of instances.
	collection  *expr.Program
	cardinality *expr.Program
	// element is the local variable that holds an instance's element.
	element    string
	completion *expr.Program
	// outputCollection receives the values of outputElement, in instance
	// order. outputLocal is the variable outputElement names, when it is
	// just a variable: each instance gets it as a local set to null, so
	// that what the instance writes there stays its own (as in Zeebe).
	outputCollection string
	outputElement    *expr.Program
	outputLocal      string
	// behavior is what the activity throws as instances complete
	// (multi_behavior.go).
	behavior behaviorSpec
}

// multiBody is the loop's state of one running multi-instance body.
type multiBody struct {
	spec  *multiSpec
	items []any // the input collection; nil with a cardinality
	count int   // instances in all
	// started, active and completed count the inner instances.
	started, active, completed int
	results                    []any // by instance index, with an output collection
	// met is set once the completion condition held: no instance starts
	// any more, and the body completes when the active ones have gone.
	met bool
	// thrownOne is set once behavior One has thrown its event.
	thrownOne bool
}

// variableName matches an output element that is just a variable, in
// FEEL ("= result") or as a bare name ("result"). It is compiled at
// package initialisation, which the wasm module runs at build time
// (pre-initialisation, RATIONALE.md), so no module instance compiles it.
var variableName = regexp.MustCompile(`^=?\s*([A-Za-z_][A-Za-z0-9_]*)\s*$`)

// compileMulti compiles the multi-instance characteristics of np's node.
func compileMulti(np *nodePlan, opts CompileOptions) error {
	n := np.node
	mi := n.Multi
	switch {
	case n.Kind == model.KindSubProcess && n.TriggeredByEvent:
		return broke("FT.multi-instance", "an event sub-process cannot be a multi-instance activity: remove its multiInstanceLoopCharacteristics")
	case !n.Kind.IsActivity():
		return broke("FT.multi-instance", "bpmn:%s cannot be a multi-instance activity", n.Kind)
	case n.Loop != nil:
		return broke("FT.multi-instance", "an activity has standard or multi-instance loop characteristics, not both: remove one")
	case mi.Collection.IsZero() && mi.Cardinality.IsZero():
		return broke("FT.multi-instance", "a multi-instance activity needs an input collection (zeebe:loopCharacteristics inputCollection, camunda:collection) or a loopCardinality: add one")
	case !mi.Collection.IsZero() && !mi.Cardinality.IsZero():
		return broke("FT.multi-instance", "a multi-instance activity takes an input collection or a loopCardinality, not both: remove one")
	case mi.Element != "" && mi.Collection.IsZero():
		return broke("FT.multi-instance", "input element %q needs an input collection to take its elements from: add one, or remove the input element", mi.Element)
	case mi.OutputCollection == "" && !mi.OutputElement.IsZero():
		return broke("FT.multi-instance", "output element %q needs an output collection to collect into: add one", mi.OutputElement.Text)
	case mi.OutputCollection != "" && mi.OutputElement.IsZero():
		return broke("FT.multi-instance", "output collection %q needs an output element saying what each instance adds: add one", mi.OutputCollection)
	}
	ms := &multiSpec{sequential: mi.Sequential, element: mi.Element, outputCollection: mi.OutputCollection}
	compile := func(what string, e model.Expression, mode expr.Mode) (*expr.Program, error) {
		if e.IsZero() {
			return nil, nil
		}
		p, err := expr.Compile(e, mode, opts.Expr)
		if err != nil {
			return nil, fmt.Errorf("multi-instance %s: %w", what, err)
		}
		return p, nil
	}
	var err error
	if ms.collection, err = compile("input collection", mi.Collection, expr.Value); err != nil {
		return err
	}
	if ms.cardinality, err = compile("loopCardinality", mi.Cardinality, expr.Value); err != nil {
		return err
	}
	if ms.completion, err = compile("completion condition", mi.CompletionCondition, expr.Condition); err != nil {
		return err
	}
	if ms.outputElement, err = compile("output element", mi.OutputElement, expr.Value); err != nil {
		return err
	}
	if m := variableName.FindStringSubmatch(mi.OutputElement.Text); m != nil {
		ms.outputLocal = m[1]
	}
	if ms.behavior, err = compileBehavior(mi, opts); err != nil {
		return err
	}
	np.multi = ms
	return nil
}

// instances evaluates what the body iterates over: the input collection,
// or the number of instances.
func (ms *multiSpec) instances(vars map[string]any) ([]any, int, error) {
	if ms.collection != nil {
		v, err := ms.collection.Eval(vars)
		if err != nil {
			return nil, 0, fmt.Errorf("multi-instance input collection: %w", err)
		}
		items, ok := v.([]any)
		if !ok {
			return nil, 0, fmt.Errorf("multi-instance input collection %q yielded %s, not a list", ms.collection.Text(), describeValue(v))
		}
		return items, len(items), nil
	}
	v, err := ms.cardinality.Eval(vars)
	if err != nil {
		return nil, 0, fmt.Errorf("multi-instance loopCardinality: %w", err)
	}
	switch c := v.(type) {
	case float64:
		if c >= 0 && c == float64(int(c)) {
			return nil, int(c), nil
		}
	case int:
		if c >= 0 {
			return nil, c, nil
		}
	}
	return nil, 0, fmt.Errorf("multi-instance loopCardinality %q yielded %s, not a non-negative whole number", ms.cardinality.Text(), describeValue(v))
}

// describeValue names a value and its type for an error message.
func describeValue(v any) string {
	if v == nil {
		return "null"
	}
	s := fmt.Sprintf("%v", v)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%s (%T)", s, v)
}

// instanceOf reports whether sc is the scope of an inner instance of
// multi-instance activity n.
func (sc *scope) instanceOf(n *model.Node) bool { return sc.inner && sc.node == n }

// waitsIn reports whether a token entering np's node in scope sc waits
// there for something the loop sets up: the body of a multi-instance
// activity always does; an inner instance of it as the activity alone
// would.
func (np *nodePlan) waitsIn(sc *scope) bool {
	if np.multi != nil && sc.instanceOf(np.node) {
		return np.innerWaits
	}
	return np.waits
}

// enterMulti starts the body of multi-instance activity n for tv, which
// waits at n until the body completes.
func (inst *Instance) enterMulti(tv *tokenView, n *model.Node) {
	inst.park(tv, WaitScope)
	ms := inst.plan.nodes[n.Index].multi
	items, count, err := ms.instances(tv.scope.visible())
	if err == nil {
		err = inst.openBoundaries(tv, n)
	}
	if err != nil {
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, err.Error())
		return
	}
	inst.nextScope++
	body := newScope(inst.nextScope, n, tv.scope, nil)
	body.token = tv.id
	body.multi = &multiBody{spec: ms, items: items, count: count}
	if ms.outputCollection != "" {
		body.multi.results = make([]any, count)
	}
	tv.inner = body
	if count == 0 {
		inst.completeBody(body) // nothing to do: the activity completes at once
		return
	}
	if ms.sequential {
		inst.startInstance(body)
		return
	}
	for range count {
		inst.startInstance(body)
	}
}

// startInstance starts the body's next inner instance.
func (inst *Instance) startInstance(body *scope) {
	mb := body.multi
	i := mb.started
	mb.started++
	mb.active++
	locals := map[string]any{"loopCounter": float64(i + 1)}
	if mb.spec.outputLocal != "" {
		locals[mb.spec.outputLocal] = nil
	}
	if mb.spec.element != "" {
		locals[mb.spec.element] = mb.items[i]
	}
	inst.nextScope++
	sc := newScope(inst.nextScope, body.node, body, locals)
	sc.inner = true
	sc.index = i
	sc.token = inst.nextToken + 1 // the token spawn makes next
	inst.spawn(body.node, nil, true, sc)
}

// counters are the body's counters as the completion condition sees
// them, with the instance completing counted as completed.
func (mb *multiBody) counters() map[string]any {
	total, active, completed := float64(mb.count), float64(mb.active-1), float64(mb.completed+1)
	return map[string]any{
		"nrOfInstances": total, "nrOfActiveInstances": active, "nrOfCompletedInstances": completed,
		"numberOfInstances": total, "numberOfActiveInstances": active, "numberOfCompletedInstances": completed,
		"numberOfTerminatedInstances": float64(0),
	}
}

// completing applies the end of inner instance tv's work: its output
// element is collected and the completion condition evaluated, which,
// when it holds, terminates the other inner instances. An expression that
// fails holds tv with an incident; resolving it evaluates both again.
func (inst *Instance) completing(tv *tokenView, n *model.Node) {
	inst.park(tv, WaitScope)
	sc := tv.scope
	mb := sc.parent.multi
	ms := mb.spec
	fail := func(err error) {
		tv.wait = WaitIncident
		key := inst.openIncident(tv, n, 0, err.Error())
		inst.incidents[key].reported = true
	}
	vars := overlay(sc.visible(), mb.counters())
	if ms.outputElement != nil {
		v, err := ms.outputElement.Eval(vars)
		if err != nil {
			fail(fmt.Errorf("multi-instance output element: %w", err))
			return
		}
		mb.results[sc.index] = v
	}
	if ms.completion != nil && !mb.met {
		ok, err := ms.completion.EvalBool(vars)
		if err != nil {
			fail(fmt.Errorf("multi-instance completion condition: %w", err))
			return
		}
		if ok {
			mb.met = true
			inst.cancelInstances(sc.parent, sc)
		}
	}
	if err := inst.throwBehavior(tv, n, vars); err != nil {
		fail(err)
		return
	}
	inst.instanceCompleted(tv, sc, n)
	if tv.doomed {
		return // what it threw interrupted the activity
	}
	inst.notify(tv, notice{kind: resume})
}

// cancelInstances terminates the body's inner instances, except keep's,
// in the order they started. An inner instance's scope holds its token
// and nothing else, so the token is withdrawn directly: terminateScope
// would look for it among all of the instance's tokens, once per inner
// instance.
func (inst *Instance) cancelInstances(body *scope, keep *scope) {
	for _, id := range sortedKeys(body.children) {
		sc := body.children[id]
		if sc == keep || sc.done {
			continue
		}
		if tv := inst.tokens[sc.token]; tv != nil {
			inst.withdraw(tv)
		}
		sc.close()
		body.multi.active--
	}
}

// instanceDone applies the end of inner instance sc, whose token has
// gone: the next instance of a sequential body starts, or the body
// completes once no instance is left to run.
func (inst *Instance) instanceDone(sc *scope) {
	body := sc.parent
	mb := body.multi
	sc.close()
	mb.active--
	mb.completed++
	if body.done {
		return
	}
	switch {
	case mb.active > 0:
	case !mb.met && mb.started < mb.count:
		inst.startInstance(body)
	default:
		inst.completeBody(body)
	}
}

// completeBody ends a body all of whose inner instances have completed
// (or been cancelled by the completion condition): the output collection
// goes to the waiting token's scope and the token leaves the activity.
func (inst *Instance) completeBody(body *scope) {
	tv := inst.tokens[body.token]
	tv.inner = nil
	inst.closeBoundaries(tv)
	inst.keepCompensable(tv, body)
	body.close()
	if oc := body.multi.spec.outputCollection; oc != "" {
		tv.scope.set(map[string]any{oc: body.multi.results})
	}
	inst.notify(tv, notice{kind: resume})
}

// handlersAt says which handlers an error or escalation thrown inside
// scope sc meets there: the event sub-processes of sc, and the boundary
// events of the activity sc belongs to. An inner instance of a
// multi-instance activity has neither (its activity's boundary events are
// the body's); a body has its activity's boundary events; a sub-process
// that is an inner instance has its event sub-processes only.
func (inst *Instance) handlersAt(sc *scope) (starts, boundaries bool) {
	switch {
	case sc.inner, sc.revived:
		// A revived scope runs a compensation only: what its handlers
		// throw goes to the scope it was revived in.
		return false, false
	case sc.multi != nil:
		return false, true
	case sc.node == nil || sc.node.TriggeredByEvent:
		return true, false
	}
	owner := inst.tokens[sc.token]
	return true, owner != nil && !owner.scope.instanceOf(sc.node)
}
