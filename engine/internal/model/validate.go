package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Validate checks the structural rules a model must meet before it can run,
// and returns every broken rule as a *Problem, joined with errors.Join and
// sorted by position, or nil when the model is valid. RULES.md lists the
// rules with their ids; Check also returns the warnings.
//
// Rules, each reported on the element that breaks it:
//
//   - ids are unique across the document (processes, nodes, flows);
//   - an executable process has a top-level none, message, signal, timer or
//     conditional start event, and every node is reachable from one (start
//     events, boundary events and event sub-process content are entered by
//     their own triggers);
//   - sequence flows connect two nodes of the same scope;
//   - start events have no incoming flows, end events no outgoing flows;
//   - gateways have incoming and outgoing flows (an instantiating
//     event-based gateway needs no incoming flow);
//   - a diverging exclusive or inclusive gateway that uses conditions or a
//     default flow gives every other outgoing flow a condition;
//   - a default flow is an outgoing flow of its node, has no condition, and
//     sits on an exclusive, inclusive or complex gateway or an activity;
//   - a boundary event is attached to an activity, has no incoming flow and
//     at least one outgoing flow (compensation boundaries excepted);
//   - catch events have an event definition; message catches (and receive
//     tasks) name a message; a timer has exactly one of date, duration or
//     cycle;
//   - event-based gateways follow SRD-024 FR-6/FR-7 (see eventGateway);
//   - compensation handlers, compensation throws and cancel end events
//     follow BPMN 2.0 §10.6 and §10.7 (see compensation).
//
// Activities and intermediate events without outgoing flows are allowed:
// BPMN treats them as implicit ends.
//
// Non-executable processes (isExecutable="false") describe rather than run,
// so the rules about running (start events, reachability, gateway
// conditions, message references and timer values) are not applied to them.
func Validate(d *Definitions) error {
	errs, _ := Check(d)
	if len(errs) == 0 {
		return nil
	}
	joined := make([]error, len(errs))
	for i, p := range errs {
		joined[i] = p
	}
	return errors.Join(joined...)
}

// Check applies the rules of Validate and returns the problems, located
// (Definitions.Locate) and sorted (SortProblems): errors, which make a
// model undeployable, and warnings, which describe what deploys but is
// probably not what the modeller meant.
func Check(d *Definitions) (errs, warnings []*Problem) {
	if d == nil {
		return []*Problem{{RuleID: "FT.document", Rule: "no definitions"}}, nil
	}
	v := &validator{loose: map[*Node]bool{}}
	v.duplicateIDs(d)
	v.executableNeighbours(d)
	for _, p := range d.Processes {
		v.process(p)
		v.calls(d, p)
	}
	v.warnings = append(v.warnings, d.Warnings...)
	d.Descriptive = append(d.Descriptive, v.descriptive...)
	d.Locate(d.Descriptive)
	d.Locate(v.problems)
	d.Locate(v.warnings)
	return SortProblems(v.problems), SortProblems(v.warnings)
}

// validator collects the problems of one Validate call.
type validator struct {
	problems []*Problem
	warnings []*Problem
	// descriptive holds the problems of processes that are not
	// executable (Definitions.Descriptive).
	descriptive []*Problem
	current     *Process
	// loose holds the nodes at the resolved end of a sequence flow whose
	// other end did not import: rules about missing flows skip them.
	loose map[*Node]bool
}

// report records a problem on an element of the current process.
func (v *validator) report(elementID, ruleID, format string, args ...any) {
	pid := ""
	if v.current != nil {
		pid = v.current.ID
	}
	v.problems = append(v.problems, &Problem{RuleID: ruleID, ProcessID: pid, ElementID: elementID, Rule: fmt.Sprintf(format, args...)})
}

// warn records a warning on an element of the current process.
func (v *validator) warn(elementID, ruleID, format string, args ...any) {
	pid := ""
	if v.current != nil {
		pid = v.current.ID
	}
	v.warnings = append(v.warnings, &Problem{RuleID: ruleID, ProcessID: pid, ElementID: elementID, Rule: fmt.Sprintf(format, args...)})
}

// executableNeighbours warns about non-executable processes in a document
// that also has executable ones: Deploy registers only the executable
// ones, and a forgotten isExecutable="true" is a common slip.
func (v *validator) executableNeighbours(d *Definitions) {
	executable := false
	for _, p := range d.Processes {
		executable = executable || p != nil && p.Executable
	}
	if !executable {
		return
	}
	for _, p := range d.Processes {
		if p != nil && !p.Executable {
			v.warnings = append(v.warnings, &Problem{RuleID: "FT.non-executable", ProcessID: p.ID, ElementID: p.ID,
				Rule: "process is not executable and is not deployed: set isExecutable=\"true\" if it should run"})
		}
	}
}

// duplicateIDs reports ids used more than once in the document.
func (v *validator) duplicateIDs(d *Definitions) {
	processes := map[string]bool{}
	owner := map[string]string{} // node or flow id → process id
	check := func(p *Process, id string) {
		if id == "" {
			return
		}
		prev, dup := owner[id]
		switch {
		case !dup:
			owner[id] = p.ID
		case prev == p.ID:
			v.problems = append(v.problems, &Problem{ProcessID: p.ID, ElementID: id, RuleID: "XSD.id", Rule: "duplicate id: give every element its own id"})
		default:
			v.problems = append(v.problems, &Problem{ProcessID: p.ID, ElementID: id, RuleID: "XSD.id", Rule: fmt.Sprintf("duplicate id: also used in process %s; give every element its own id", prev)})
		}
	}
	for _, p := range d.Processes {
		if p == nil {
			continue
		}
		if processes[p.ID] {
			v.problems = append(v.problems, &Problem{ProcessID: p.ID, ElementID: p.ID, RuleID: "XSD.id", Rule: "duplicate process id: give every process its own id"})
		}
		processes[p.ID] = true
		for _, n := range p.Nodes {
			check(p, n.ID)
		}
		for _, f := range p.Flows {
			check(p, f.ID)
		}
	}
}

// process checks one process.
func (v *validator) process(p *Process) {
	if p == nil {
		return
	}
	v.current = p
	defer func() { v.current = nil }()
	for _, f := range p.Flows {
		v.flow(f)
	}
	for _, n := range p.Nodes {
		v.node(n)
		if p.Executable {
			v.execution(n)
		}
	}
	if p.Executable {
		v.reachability(p)
	} else {
		v.incoming(p)
	}
}

// incoming applies EXT.150 to a process that is not executable, as its
// text says: where a level has a start event, every flow node but start
// events, boundary events, event sub-processes, compensation handlers and
// link catch events has an incoming flow. (An executable process gets
// the stronger reachability check.) The problems are descriptive
// (Definitions.Descriptive): the process is not deployed.
func (v *validator) incoming(p *Process) {
	started := map[*Node]bool{} // levels with a start event, by parent
	for _, n := range p.Nodes {
		if n.Kind == KindStartEvent {
			started[n.Parent] = true
		}
	}
	for _, n := range p.Nodes {
		if !started[n.Parent] || len(n.Incoming) > 0 || v.loose[n] || n.ForCompensation || n.TriggeredByEvent ||
			n.Parent != nil && n.Parent.AdHoc != nil {
			continue
		}
		switch n.Kind {
		case KindStartEvent, KindBoundaryEvent, KindEndEvent:
			continue // EXT.107 says it of end events
		case KindIntermediateCatchEvent:
			if n.HasEvent(EventLink) {
				continue
			}
		}
		if n.Kind.IsGateway() {
			continue // node() reports gateways in every process
		}
		v.descriptive = append(v.descriptive, &Problem{RuleID: "EXT.150", ProcessID: p.ID, ElementID: n.ID,
			Rule: "has no incoming flow though its level has a start event: connect a flow to it or remove it"})
	}
}

// flow checks one sequence flow's ends. A flow with an end missing was
// reported by the importer (the reference is absent, dangling, names an
// element of another process or one flowtrack does not execute); the end
// that is there is marked loose, so that the node is not also reported as
// unconnected.
func (v *validator) flow(f *Flow) {
	switch {
	case f.Source == nil || f.Target == nil:
		v.loose[f.Source] = true
		v.loose[f.Target] = true
	case f.Source.Parent != f.Target.Parent:
		v.report(f.ID, "EXT.152", "sequence flow %s crosses a sub-process boundary (from %s to %s): connect nodes of the same scope only", f.ID, f.Source.ID, f.Target.ID)
	}
}

// node checks the rules of one node.
func (v *validator) node(n *Node) {
	switch n.Kind {
	case KindStartEvent:
		if len(n.Incoming) > 0 {
			v.report(n.ID, "EXT.096", "start event must not have incoming flows: remove them or use an intermediate event")
		}
	case KindEndEvent:
		if len(n.Outgoing) > 0 {
			v.report(n.ID, "EXT.104", "end event must not have outgoing flows: remove them or use an intermediate event")
		}
		if v.none(n, n.Incoming) {
			v.report(n.ID, "EXT.107", "end event has no incoming flow: connect the node it ends to it, or remove it")
		}
	case KindIntermediateCatchEvent:
		if len(n.Events) == 0 {
			v.report(n.ID, "EXT.148", "intermediate catch event needs an event definition: add a message, timer, signal, conditional or link definition")
		}
		if v.none(n, n.Incoming) && !n.HasEvent(EventLink) && (n.Parent == nil || n.Parent.AdHoc == nil) {
			// In an ad-hoc sub-process it is one of the elements to activate.
			v.report(n.ID, "EXT.115", "intermediate event has no incoming flow: connect a flow to it")
		}
		if v.none(n, n.Outgoing) {
			v.report(n.ID, "EXT.116", "intermediate event has no outgoing flow: connect it to the node that follows")
		}
		if n.HasEvent(EventLink) && len(n.Incoming) > 0 {
			v.report(n.ID, "EXT.117", "link catch event is entered from its link throw events, not by a sequence flow: remove the incoming flow")
		}
	case KindIntermediateThrowEvent:
		if n.HasEvent(EventLink) && len(n.Outgoing) > 0 {
			v.report(n.ID, "EXT.117", "link throw event continues at its link catch event, not along a sequence flow: remove the outgoing flow")
		}
		if n.HasEvent(EventLink) && (linkNamed(n) || linkPaired(v.current, n)) {
			v.linkTarget(n)
		}
		if v.none(n, n.Incoming) {
			v.report(n.ID, "EXT.115", "intermediate event has no incoming flow: connect a flow to it")
		}
		if v.none(n, n.Outgoing) && !n.HasEvent(EventLink) {
			v.report(n.ID, "EXT.116", "intermediate event has no outgoing flow: connect it to the node that follows")
		}
	case KindSubProcess:
		if n.TriggeredByEvent {
			v.eventSubProcess(n)
		}
	case KindBoundaryEvent:
		v.boundary(n)
	case KindEventBasedGateway:
		v.eventGateway(n)
	}
	v.triggers(n)
	v.link(n)
	v.compensation(n)
	v.instantiation(n)
	if n.Kind.IsGateway() {
		if v.none(n, n.Outgoing) {
			v.report(n.ID, "EXT.151", "gateway has no outgoing flow: connect it to the node that follows")
		}
		if v.none(n, n.Incoming) && !(n.Kind == KindEventBasedGateway && n.Instantiate) {
			v.report(n.ID, "EXT.150", "gateway has no incoming flow: connect a flow to it")
		}
	}
	v.defaultFlow(n)
}

// instantiation checks that instantiate="true" and
// eventGatewayType="Parallel" stand where they mean something: an
// instantiating receive task (EXT.049) or event-based gateway (EXT.142)
// has no incoming flow. BPMN 2.0
// lets a receive task start a process only from the process's top level
// and without incoming flows (§10.4.2, §13.2.2), and allows
// the Parallel type only on an instantiating gateway (§10.6.6, "the
// attribute can only be used if the instantiate attribute is set to
// true"). flowtrack would otherwise run such an element as an ordinary
// one, silently dropping what the modeller asked for.
func (v *validator) instantiation(n *Node) {
	if n.Kind == KindEventBasedGateway && n.Instantiate && (len(n.Incoming) > 0 || v.loose[n]) {
		v.report(n.ID, "EXT.142", "event-based gateway has instantiate=\"true\" and an incoming flow: a gateway that starts the process has no incoming flow; remove the flow or the attribute")
	}
	if n.Kind == KindEventBasedGateway && n.ParallelEvents && !n.Instantiate {
		v.report(n.ID, "FT.instantiate", "event-based gateway has eventGatewayType=\"Parallel\" without instantiate=\"true\": the Parallel type only applies to a gateway that starts the process; use eventGatewayType=\"Exclusive\"")
	}
	if !n.Instantiate || n.Kind != KindReceiveTask {
		return
	}
	switch {
	case n.Parent != nil:
		v.report(n.ID, "FT.instantiate", "receive task has instantiate=\"true\" inside a sub-process: only an element at the top of a process starts it; remove the attribute or use a message start event")
	case len(n.Incoming) > 0 || v.loose[n]:
		v.report(n.ID, "EXT.049", "receive task has instantiate=\"true\" and an incoming flow: an element that starts the process has no incoming flow; remove the flow or the attribute")
	}
}

// none reports whether n has none of the flows fs (its incoming or its
// outgoing flows), counting as one a flow that failed to import.
func (v *validator) none(n *Node, fs []*Flow) bool { return len(fs) == 0 && !v.loose[n] }

// Event triggers BPMN allows, by where the event is (BPMN 2.0 tables
// 10.84 to 10.93).
var (
	topStartTriggers       = []EventKind{EventMessage, EventTimer, EventConditional, EventSignal}
	eventSubStartTriggers  = []EventKind{EventMessage, EventTimer, EventEscalation, EventError, EventCompensation, EventConditional, EventSignal}
	endTriggers            = []EventKind{EventMessage, EventEscalation, EventError, EventCancel, EventCompensation, EventSignal, EventTerminate}
	catchTriggers          = []EventKind{EventMessage, EventTimer, EventConditional, EventLink, EventSignal}
	throwTriggers          = []EventKind{EventMessage, EventEscalation, EventCompensation, EventLink, EventSignal}
	boundaryTriggers       = []EventKind{EventMessage, EventTimer, EventEscalation, EventConditional, EventError, EventCancel, EventCompensation, EventSignal}
	nonInterruptingDropped = []EventKind{EventError, EventCancel, EventCompensation}
)

// triggers checks that each event definition of an event is one BPMN
// allows where the event is: a top-level start event cannot catch an
// error, an end event cannot wait for a timer, a non-interrupting boundary
// event cannot catch an error. Whether flowtrack executes an allowed
// trigger is a separate question, answered at compilation.
func (v *validator) triggers(n *Node) {
	var allowed []EventKind
	var rule, where string
	interrupting := n.CancelActivity
	switch {
	case n.Kind == KindStartEvent && n.Parent == nil:
		allowed, rule, where = topStartTriggers, "EXT.098", "a process-level start event"
	case n.Kind == KindStartEvent && n.Parent.TriggeredByEvent:
		allowed, rule, where = eventSubStartTriggers, "EXT.059", "the start event of an event sub-process"
		if !interrupting {
			where = "a non-interrupting start event of an event sub-process"
		}
	case n.Kind == KindStartEvent:
		allowed, rule, where = nil, "EXT.100", "the start event of a sub-process"
	case n.Kind == KindEndEvent:
		allowed, rule, where = endTriggers, "EXT.146", "an end event"
	case n.Kind == KindIntermediateCatchEvent:
		allowed, rule, where = catchTriggers, "EXT.148", "an intermediate catch event"
	case n.Kind == KindIntermediateThrowEvent:
		allowed, rule, where = throwTriggers, "EXT.149", "an intermediate throw event"
	case n.Kind == KindBoundaryEvent:
		allowed, rule, where = boundaryTriggers, "EXT.110", "a boundary event"
		if !interrupting {
			where = "a non-interrupting boundary event"
		}
	default:
		return
	}
	for _, e := range n.Events {
		ok := slices.Contains(allowed, e.Kind)
		if !interrupting && (n.Kind == KindBoundaryEvent || n.Kind == KindStartEvent) && slices.Contains(nonInterruptingDropped, e.Kind) {
			ok = false
		}
		if ok {
			continue
		}
		v.report(n.ID, rule, "%s cannot have the %s trigger: use another event type or trigger", where, e.Kind)
		// The catalogue also states the compensation cases as rules of
		// their own: a modeller looking either up finds it.
		switch {
		case e.Kind != EventCompensation:
		case n.Kind == KindStartEvent && (n.Parent == nil || !n.Parent.TriggeredByEvent):
			v.report(n.ID, "EXT.121", "only the start event of an event sub-process can catch compensation: move it into one")
		case n.Kind == KindIntermediateCatchEvent:
			v.report(n.ID, "EXT.122", "compensation is never caught in normal flow: attach a compensation boundary event to the activity instead")
		}
	}
}

// eventSubProcess checks an event sub-process: it is entered by its start
// event's trigger, never by a sequence flow, and has exactly one start
// event, which has a trigger.
func (v *validator) eventSubProcess(n *Node) {
	if len(n.Incoming) > 0 || len(n.Outgoing) > 0 {
		v.report(n.ID, "EXT.057", "an event sub-process must not have incoming or outgoing flows: remove them")
	}
	var starts []*Node
	for _, c := range n.Children {
		if c.Kind == KindStartEvent {
			starts = append(starts, c)
		}
	}
	if len(starts) != 1 {
		v.report(n.ID, "EXT.058", "an event sub-process needs exactly one start event, not %d", len(starts))
	}
	for _, s := range starts {
		if len(s.Events) == 0 {
			v.report(s.ID, "EXT.059", "the start event of an event sub-process needs a trigger: add a message, timer, signal, error, escalation or conditional definition")
		}
	}
}

// calls checks the call activities of p whose calledElement is a literal
// naming a process of the same document: that process must have a none
// start event, where the call begins (EXT.099). Calls to processes
// deployed separately are checked when they happen.
func (v *validator) calls(d *Definitions, p *Process) {
	if p == nil {
		return
	}
	v.current = p
	defer func() { v.current = nil }()
	if !p.Executable {
		// A process that is not deployed calls nothing: what its calls
		// break is descriptive.
		saved := v.problems
		v.problems = nil
		defer func() { v.descriptive, v.problems = append(v.descriptive, v.problems...), saved }()
	}
	for _, n := range p.Nodes {
		text := strings.TrimSpace(n.CalledElement.Text)
		if n.Kind != KindCallActivity || text == "" || strings.HasPrefix(text, "=") || strings.Contains(text, "${") {
			continue
		}
		callee := d.Process(text)
		if callee == nil {
			continue
		}
		none := false
		for _, s := range callee.StartEvents() {
			none = none || len(s.Events) == 0
		}
		if !none {
			v.report(n.ID, "EXT.099", "call activity calls process %s, which has no none start event: add one to %s", text, text)
		}
	}
}

// throwCode checks an escalation or error thrown by an end or throw
// event: it must name an escalation (EXT.011) or error (FT.error-code)
// with a code, which is what catches match. An error without a code would
// reach only catch-all boundaries; Zeebe refuses it at deploy too.
func (v *validator) throwCode(n *Node) {
	if n.Kind != KindEndEvent && n.Kind != KindIntermediateThrowEvent {
		return
	}
	for _, e := range n.Events {
		switch {
		case e.Kind == EventEscalation && e.Escalation == nil:
			v.report(n.ID, "EXT.011", "escalation event needs an escalation: set escalationRef to a bpmn:escalation with an escalationCode")
		case e.Kind == EventEscalation && e.Escalation.Code == "":
			v.report(n.ID, "EXT.011", "escalation %s has no escalationCode: give it one", e.Escalation.ID)
		case e.Kind == EventError && e.Error == nil:
			v.report(n.ID, "FT.error-code", "error end event needs an error: set errorRef to a bpmn:error with an errorCode")
		case e.Kind == EventError && e.Error.Code == "":
			v.report(n.ID, "FT.error-code", "error %s has no errorCode: give it one, which error catches match", e.Error.ID)
		}
	}
}

// execution checks what a node needs to run: conditions to choose a path,
// messages to wait for, timer values.
func (v *validator) execution(n *Node) {
	if n.Kind == KindExclusiveGateway || n.Kind == KindInclusiveGateway {
		v.conditions(n)
	}
	v.eventDefinitions(n)
	v.throwCode(n)
}

// isCatch reports whether n waits for its event definitions to happen.
func (n *Node) isCatch() bool {
	switch n.Kind {
	case KindStartEvent, KindIntermediateCatchEvent, KindBoundaryEvent, KindReceiveTask:
		return true
	}
	return false
}

// HasEvent reports whether one of the node's event definitions is of kind k.
func (n *Node) HasEvent(k EventKind) bool {
	for _, e := range n.Events {
		if e.Kind == k {
			return true
		}
	}
	return false
}

// eventDefinitions checks timers and message references.
func (v *validator) eventDefinitions(n *Node) {
	for _, e := range n.Events {
		switch e.Kind {
		case EventTimer:
			set := 0
			if e.Timer != nil {
				for _, x := range []Expression{e.Timer.Date, e.Timer.Duration, e.Timer.Cycle} {
					if !x.IsZero() {
						set++
					}
				}
			}
			if set != 1 {
				v.report(n.ID, "EXT.131", "timer event definition needs exactly one of timeDate, timeDuration or timeCycle: keep one, with a value")
			}
		case EventMessage:
			switch {
			case e.Message != nil:
			case n.Kind == KindReceiveTask:
				v.report(n.ID, "EXT.127", "receive task needs a message: set messageRef to a bpmn:message")
			case n.isCatch():
				v.report(n.ID, "EXT.127", "message catch event needs a message: set messageRef to a bpmn:message")
			case n.Job == nil || n.Job.Type.IsZero():
				// Without a job type the engine publishes the message itself;
				// with one a worker sends it, as in Zeebe.
				v.report(n.ID, "EXT.127", "message throw event needs a message: set messageRef to a bpmn:message, or give it a job type for a worker to send it")
			}
		}
	}
}

// boundary checks a boundary event.
func (v *validator) boundary(n *Node) {
	if n.AttachedTo == nil || !n.AttachedTo.Kind.IsActivity() {
		v.report(n.ID, "REF.87", "boundary event must be attached to an activity: set attachedToRef to a task, sub-process or call activity")
	}
	if len(n.Events) == 0 {
		v.report(n.ID, "EXT.110", "boundary event needs an event definition: add a message, timer, signal, error, escalation or conditional definition")
	}
	if len(n.Incoming) > 0 {
		v.report(n.ID, "EXT.112", "boundary event must not have incoming flows: remove them")
	}
	// A compensation boundary event reaches its handler through an
	// association, not a sequence flow.
	if v.none(n, n.Outgoing) && !n.HasEvent(EventCompensation) {
		v.report(n.ID, "EXT.113", "boundary event needs an outgoing flow: connect it to the node that handles the event")
	}
}

// conditions checks a diverging exclusive or inclusive gateway: once it
// routes by condition (or has a default flow), every other outgoing flow
// needs a condition, or the choice is ambiguous.
func (v *validator) conditions(n *Node) {
	if len(n.Outgoing) < 2 {
		return
	}
	conditioned := n.Default != nil
	for _, f := range n.Outgoing {
		conditioned = conditioned || !f.Condition.IsZero()
	}
	if !conditioned {
		return
	}
	kind := "exclusive gateway"
	if n.Kind == KindInclusiveGateway {
		kind = "inclusive gateway"
	}
	for _, f := range n.Outgoing {
		switch {
		case f == n.Default || !f.Condition.IsZero():
		case n.Default != nil:
			// Well defined (a flow without condition is taken when it is
			// reached, so the default never is), but rarely what the
			// modeller meant.
			v.warn(n.ID, "FT.unconditioned-flow", "%s: flow %s has no condition, so the default flow %s is never taken: add a condition to %s", kind, f.ID, n.Default.ID, f.ID)
		default:
			v.report(n.ID, "FT.condition", "%s: flow %s has no condition and is not the default flow: add a condition or make it the default", kind, f.ID)
		}
	}
}

// defaultFlow checks a node's default flow.
func (v *validator) defaultFlow(n *Node) {
	f := n.Default
	if f == nil {
		return
	}
	switch {
	case n.Kind == KindExclusiveGateway, n.Kind == KindInclusiveGateway, n.Kind == KindComplexGateway, n.Kind.IsActivity():
	default:
		v.report(n.ID, "XSD.default", "default flow %s is not allowed on a %s: remove the default attribute", f.ID, n.Kind)
	}
	if f.Source != n {
		v.report(n.ID, "EXT.026", "default flow %s is not an outgoing flow of the element: name one of its outgoing flows", f.ID)
	}
	if !f.Condition.IsZero() {
		v.report(n.ID, "FT.default-condition", "default flow %s must not have a condition: remove its condition expression", f.ID)
	}
}

// eventGateway checks an event-based gateway (SRD-024 FR-6, FR-7): at least
// two arms; every arm a single message, timer or signal intermediate catch
// event or a receive task, entered only from this gateway; no conditions on
// the gateway's flows; no boundary events on a receive-task arm; message
// catch events and receive tasks not mixed.
func (v *validator) eventGateway(n *Node) {
	if len(n.Outgoing) < 2 {
		v.report(n.ID, "EXT.136", "event-based gateway needs at least two outgoing flows: add an arm or use a catch event alone")
	}
	var messageCatch, receiveTask bool
	for _, f := range n.Outgoing {
		if !f.Condition.IsZero() {
			v.report(n.ID, "EXT.137", "event-based gateway: flow %s must not have a condition: remove the condition expression", f.ID)
		}
		t := f.Target
		if t == nil {
			continue
		}
		switch {
		case t.Kind == KindReceiveTask:
			receiveTask = true
			if len(t.Boundaries) > 0 {
				v.report(n.ID, "EXT.140", "event-based gateway: receive task %s must not have boundary events: remove them", t.ID)
			}
		case t.Kind == KindIntermediateCatchEvent && len(t.Events) == 1 &&
			(t.Events[0].Kind == EventMessage || t.Events[0].Kind == EventTimer || t.Events[0].Kind == EventSignal):
			messageCatch = messageCatch || t.Events[0].Kind == EventMessage
		default:
			v.report(n.ID, "EXT.138", "event-based gateway: flow %s leads to %s, which is not an intermediate message, timer or signal catch event or a receive task: put such an event after the gateway", f.ID, t.ID)
		}
		if len(t.Incoming) != 1 {
			v.report(n.ID, "EXT.141", "event-based gateway: %s must have exactly one incoming flow (from the gateway): move the other flows after it", t.ID)
		}
	}
	if messageCatch && receiveTask {
		v.report(n.ID, "EXT.139", "event-based gateway: message catch events and receive tasks must not be mixed: use one kind for every message arm")
	}
}

// reachability checks that an executable process can start and that every
// node can be reached from a start.
func (v *validator) reachability(p *Process) {
	starts := 0
	startable := false
	for _, n := range p.Top {
		if n.Kind == KindStartEvent {
			starts++
			startable = startable || isStartable(n)
		}
		if n.Instantiate && len(n.Incoming) == 0 {
			startable = true
		}
	}
	switch {
	case starts == 0 && !startable:
		v.report(p.ID, "FT.start", "process has no start event: add a none, message, signal or timer start event")
		return
	case !startable:
		v.report(p.ID, "EXT.098", "process has no none, message, signal, timer or conditional start event: only these can start a process")
		return
	}

	reached := make(map[*Node]bool, len(p.Nodes))
	var queue []*Node
	reach := func(ns ...*Node) {
		for _, n := range ns {
			if n != nil && !reached[n] {
				reached[n] = true
				queue = append(queue, n)
			}
		}
	}
	reach(entries(p.Top, nil)...)
	// A flow that failed to import was reported; what it connects is
	// taken as reached rather than reported again.
	for _, n := range p.Nodes {
		if v.loose[n] {
			reach(n)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, f := range n.Outgoing {
			reach(f.Target)
		}
		reach(n.Boundaries...)
		if n.Kind == KindSubProcess {
			reach(entries(n.Children, n)...)
		}
		if n.Kind == KindIntermediateThrowEvent {
			reach(LinkTargets(p, n)...)
		}
	}
	for _, n := range p.Nodes {
		// A node whose id an earlier node holds is reported as XSD.id;
		// the flows naming that id went to the other node.
		if reached[n] || n.Kind == KindStartEvent || n.Kind == KindBoundaryEvent || n.ForCompensation || p.Node(n.ID) != nil && p.Node(n.ID) != n {
			continue
		}
		// Report a node only where its scope runs: an unreachable
		// sub-process is reported, not each node inside it.
		if n.Parent == nil || reached[n.Parent] {
			switch {
			case len(n.Incoming) == 0 && n.Kind == KindEndEvent:
				// EXT.107 says it.
			case len(n.Incoming) == 0:
				v.report(n.ID, "EXT.150", "not reachable from any start event: connect a flow to it or remove it")
			default:
				v.report(n.ID, "FT.reachable", "not reachable from any start event: every flow into it comes from nodes no start event reaches; connect it to the main flow or remove it")
			}
		}
	}
}

// isStartable reports whether a top-level start event can start a process:
// a none start, or one triggered by a message, signal, timer or condition.
func isStartable(n *Node) bool {
	for _, e := range n.Events {
		switch e.Kind {
		case EventMessage, EventSignal, EventTimer, EventConditional:
		default:
			return false
		}
	}
	return true
}

// entries returns the nodes that run when a scope (the process, or the
// sub-process parent) is entered: its start events and event sub-processes;
// in a sub-process without start events, every node without incoming flows
// (BPMN 10.3.5); at process level, instantiating receive tasks and
// event-based gateways; and, where the scope has compensation boundary
// events, activities without incoming flows (compensation handlers, which
// are connected by association).
func entries(scope []*Node, parent *Node) []*Node {
	var out, free []*Node
	starts, compensation := false, false
	for _, n := range scope {
		switch {
		case n.Kind == KindStartEvent:
			starts = true
			out = append(out, n)
		case n.Kind == KindSubProcess && n.TriggeredByEvent:
			out = append(out, n)
		case n.Kind == KindBoundaryEvent:
			compensation = compensation || n.HasEvent(EventCompensation)
		case len(n.Incoming) == 0:
			free = append(free, n)
		}
	}
	for _, n := range free {
		switch {
		case parent != nil && !starts && !parent.TriggeredByEvent,
			parent == nil && n.Instantiate,
			compensation && n.Kind.IsActivity():
			out = append(out, n)
		}
	}
	return out
}

// link checks that a link event is named, unless it is paired by
// reference, and that a link catch event's name is its scope's only one
// among the catches paired by name: a throw jumps to the catch of its
// name, so two catches of one name leave the jump undecided (Zeebe
// refuses them too).
func (v *validator) link(n *Node) {
	if !n.HasEvent(EventLink) || n.Kind != KindIntermediateCatchEvent && n.Kind != KindIntermediateThrowEvent {
		return
	}
	if !linkNamed(n) && !linkPaired(v.current, n) {
		v.report(n.ID, "FT.link-name", "link event has no name: give the bpmn:linkEventDefinition the name its throw and catch share, or pair them by bpmn:target and bpmn:source")
		return
	}
	if n.Kind != KindIntermediateCatchEvent {
		return
	}
	for _, d := range n.Events {
		if d.Kind != EventLink || len(d.LinkSources) > 0 {
			continue
		}
		for _, other := range v.current.Nodes {
			if other == n {
				break // only an earlier catch is reported, once
			}
			if other.Kind == KindIntermediateCatchEvent && other.Parent == n.Parent && slices.ContainsFunc(other.Events, func(o *EventDefinition) bool {
				return o.Kind == EventLink && o.LinkName == d.LinkName && len(o.LinkSources) == 0
			}) {
				v.report(n.ID, "FT.link-name", "link catch event %q is defined twice in its scope (also %s): rename one, so each throw has one place to go", d.LinkName, other.ID)
				break
			}
		}
	}
}

// linkTarget checks that link throw event n jumps to exactly one link
// catch event, of its own scope: BPMN 2.0 pairs a throw with its catch by
// the definitions' target and source references (EXT.118: a throw's
// target exists), and Camunda-style models by name; either way a link
// stays in one process level (EXT.126).
func (v *validator) linkTarget(n *Node) {
	targets := LinkTargets(v.current, n)
	var here []*Node
	for _, c := range targets {
		if c.Parent == n.Parent {
			here = append(here, c)
		}
	}
	switch {
	case len(here) > 1 && slices.ContainsFunc(here, pairedBySource):
		// Catches paired by name alone are reported as a name defined
		// twice (link); one that lists its throws is reported here.
		v.report(n.ID, "FT.link-name", "link throw event jumps to %d link catch events (%s and %s): pair it with one, by bpmn:target or by a name no other catch of its scope has", len(here), here[0].ID, here[1].ID)
	case len(targets) > len(here):
		v.report(n.ID, "EXT.126", "link throw event jumps to link catch event %s, outside its scope (links stay in one process level): move one of them, or link to a catch of the same scope", targets[0].ID)
	case len(targets) == 0 && linkNamedElsewhere(v.current, n):
		v.report(n.ID, "EXT.126", "link throw event has no link catch event of the same name in its scope (links stay in one process level): add one, or rename the link")
	case len(targets) == 0:
		v.report(n.ID, "EXT.118", "link throw event has no link catch event to jump to (none is its bpmn:target, lists it as bpmn:source, or has its name): add one")
	}
}

// pairedBySource reports whether link catch event c lists the throws
// that jump to it (bpmn:source).
func pairedBySource(c *Node) bool {
	return slices.ContainsFunc(c.Events, func(d *EventDefinition) bool { return d.Kind == EventLink && len(d.LinkSources) > 0 })
}

// linkNamedElsewhere reports whether a link catch event of another scope
// has the name of link throw event n.
func linkNamedElsewhere(p *Process, n *Node) bool {
	for _, c := range p.Nodes {
		if c.Kind == KindIntermediateCatchEvent && c.Parent != n.Parent && slices.ContainsFunc(c.Events, func(o *EventDefinition) bool {
			return o.Kind == EventLink && slices.ContainsFunc(n.Events, func(d *EventDefinition) bool { return d.Kind == EventLink && d.LinkName == o.LinkName })
		}) {
			return true
		}
	}
	return false
}

// linkPaired reports whether link event n has a partner without a name:
// a throw a catch to jump to, a catch a throw that jumps to it.
func linkPaired(p *Process, n *Node) bool {
	if n.Kind == KindIntermediateThrowEvent {
		return len(LinkTargets(p, n)) > 0
	}
	for _, t := range p.Nodes {
		if t.Kind == KindIntermediateThrowEvent && t.HasEvent(EventLink) && slices.Contains(LinkTargets(p, t), n) {
			return true
		}
	}
	return false
}

// linkNamed reports whether every link definition of n has a name or is
// paired by reference (bpmn:target on a throw, bpmn:source on a catch).
func linkNamed(n *Node) bool {
	for _, d := range n.Events {
		if d.Kind == EventLink && d.LinkName == "" && d.LinkTarget == "" && len(d.LinkSources) == 0 {
			return false
		}
	}
	return true
}

// LinkTargets returns the link catch events a link throw event jumps to,
// at any level (Validate refuses a jump out of the throw's scope). A link
// definition paired by reference goes to the catch its bpmn:target names,
// or else to the catches that list it as a bpmn:source; one paired by
// name only goes to the catches of its own scope with its name.
func LinkTargets(p *Process, throw *Node) []*Node {
	var out []*Node
	add := func(n *Node) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, d := range throw.Events {
		if d.Kind != EventLink {
			continue
		}
		byRef := false
		for _, n := range p.Nodes {
			if n.Kind != KindIntermediateCatchEvent {
				continue
			}
			for _, c := range n.Events {
				if c.Kind != EventLink {
					continue
				}
				if d.LinkTarget != "" && c.ID == d.LinkTarget || d.LinkTarget == "" && d.ID != "" && slices.Contains(c.LinkSources, d.ID) {
					add(n)
					byRef = true
				}
			}
		}
		if byRef || d.LinkTarget != "" {
			continue // a target that names no catch pairs with none
		}
		for _, n := range p.Nodes {
			if n.Kind != KindIntermediateCatchEvent || n.Parent != throw.Parent {
				continue
			}
			for _, c := range n.Events {
				if c.Kind == EventLink && d.LinkName != "" && c.LinkName == d.LinkName {
					add(n)
				}
			}
		}
	}
	return out
}
