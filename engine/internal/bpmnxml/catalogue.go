package bpmnxml

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// This file checks the extended constraints of the BPMN constraint
// catalogue (EXT rules, RULES.md) that are about the shape of the document
// rather than about what flowtrack runs: data inputs and outputs, loop
// markers, compensation, gateway directions, formal expressions. They are
// checked on the XML tree, so they hold for elements flowtrack does not
// import (a transaction, a multi-instance marker, an ioSpecification) as
// much as for those it does: a modeller whose model breaks the standard
// hears which rule, not only that flowtrack lacks a feature.

// nsXSI is the XML Schema instance namespace of xsi:type.
const nsXSI = "http://www.w3.org/2001/XMLSchema-instance"

// activityElements are the BPMN activities (the catalogue's $activities).
var activityElements = []string{"task", "sendTask", "receiveTask", "serviceTask", "userTask", "manualTask",
	"scriptTask", "businessRuleTask", "callActivity", "subProcess", "transaction", "adHocSubProcess"}

// choreographyActivities may appear in choreographies only.
var choreographyActivities = []string{"choreographyTask", "subChoreography", "callChoreography"}

// catalogue walks the document and checks the catalogue's structural
// rules.
func (imp *importer) catalogue(root *element) {
	c := &catalogueCheck{imp: imp, out: map[string]int{}, in: map[string]int{}, processOf: map[string]string{}, pools: map[string]string{},
		processData: map[string]string{}, flowEnds: map[string][2]string{}, definitionRefs: map[string]bool{}}
	c.survey(root, "")
	c.walk(root, nil, nil, "")
}

// catalogueCheck holds the state of one catalogue walk.
type catalogueCheck struct {
	imp *importer
	// out and in count the sequence flows leaving and entering each
	// element, by id.
	out, in map[string]int
	// processOf maps element ids to the id of their process; pools maps
	// process ids to the participant that stands for them.
	processOf, pools map[string]string
	// processData maps the ids of the data inputs and outputs of processes
	// (not of their activities) to their kind, dataInput or dataOutput.
	processData map[string]string
	// flowEnds maps sequence flow ids to their source and target ids.
	flowEnds map[string][2]string
	// definitionRefs holds the ids eventDefinitionRef elements name.
	definitionRefs map[string]bool
	// linkRefs is set when a link event definition of the document
	// names a source or a target.
	linkRefs bool
	// services is set when the document declares a service interface.
	services bool
	// lists is set when the document lists flow nodes' incoming or
	// outgoing flows as child elements anywhere (flowlists.go).
	lists bool
	// owner is the id of the nearest ancestor with one of the element
	// being checked.
	owner string
	// warning makes problem record a warning rather than an error.
	warning bool
	// descriptive makes problem record the problem of a process that is
	// not executable (model.Definitions.Descriptive).
	descriptive bool
}

// survey counts the sequence flows of the document per end and notes
// which process each element is in and which participant (pool) stands
// for each process.
func (c *catalogueCheck) survey(e *element, process string) {
	id := e.get("id")
	switch {
	case e.is("process"):
		process = id
		if io := e.child(nsBPMN, "ioSpecification"); io != nil {
			for _, d := range io.children {
				if d.is("dataInput") || d.is("dataOutput") {
					c.processData[d.get("id")] = d.local
				}
			}
		}
	case e.is("sequenceFlow"):
		src, dst := localID(e.get("sourceRef")), localID(e.get("targetRef"))
		c.out[src]++
		c.in[dst]++
		c.flowEnds[id] = [2]string{src, dst}
	case e.is("interface"):
		c.services = true
	case e.is("eventDefinitionRef"):
		c.definitionRefs[localID(e.content())] = true
	case e.is("linkEventDefinition"):
		c.linkRefs = c.linkRefs || countChildren(e, "source") > 0 || countChildren(e, "target") > 0
	case e.is("participant"):
		if ref := localID(e.get("processRef")); ref != "" {
			c.pools[ref] = id
		}
	}
	if id != "" && process != "" {
		c.processOf[id] = process
	}
	if e.is("incoming") || e.is("outgoing") {
		c.lists = true
	}
	for _, ch := range e.children {
		if ch.space == nsBPMN {
			c.survey(ch, process)
		}
	}
}

// pool returns the pool an end of a message flow is in: the participant
// itself, or the participant of the process the element is in ("" when
// unknown).
func (c *catalogueCheck) pool(ref string) string {
	ref = localID(ref)
	if e, ok := c.imp.elements[ref]; ok && e.is("participant") {
		return ref
	}
	return c.pools[c.processOf[ref]]
}

// messageFlow checks that a message flow connects two pools (EXT.031),
// does not end at an end event (EXT.108) nor start at a start event
// (EXT.102), reaches a start event or leaves an end event only when it
// has a message definition (EXT.103, EXT.109), and never runs against a
// message event's direction (EXT.119). Flowtrack correlates messages by
// name and never follows message flows, but a file with a collaboration
// is deployed whole, so its collaboration is held to the standard too.
func (c *catalogueCheck) messageFlow(e *element) {
	src, dst := localID(e.get("sourceRef")), localID(e.get("targetRef"))
	if sp, dp := c.pool(src), c.pool(dst); src == dst || sp != "" && sp == dp {
		c.problem(e, nil, "EXT.031", "message flow %s connects %s and %s in the same pool: message flows connect different pools", e.get("id"), src, dst)
	}
	if s, ok := c.imp.elements[src]; ok {
		switch {
		case s.is("startEvent"):
			c.problem(e, nil, "EXT.102", "message flow %s starts at start event %s, which cannot send messages: start it at a sending element", e.get("id"), src)
		case s.is("endEvent") && s.child(nsBPMN, "messageEventDefinition") == nil && !c.refersToMessageDefinition(s):
			c.problem(e, nil, "EXT.109", "message flow %s starts at end event %s, which has no message event definition: add one", e.get("id"), src)
		case s.is("intermediateCatchEvent") && c.catchesMessage(s):
			c.problem(e, nil, "EXT.119", "message flow %s starts at message catch event %s, which receives messages: start it at a sending element", e.get("id"), src)
		}
	}
	t, ok := c.imp.elements[dst]
	if ok && t.is("intermediateThrowEvent") && c.catchesMessage(t) {
		c.problem(e, nil, "EXT.119", "message flow %s ends at message throw event %s, which sends messages: end it at a receiving element", e.get("id"), dst)
	}
	switch {
	case !ok:
	case t.is("endEvent"):
		c.problem(e, nil, "EXT.108", "message flow %s ends at end event %s, which cannot receive messages: connect it to a catching element", e.get("id"), dst)
	case t.is("startEvent") && t.child(nsBPMN, "messageEventDefinition") == nil && !c.refersToMessageDefinition(t):
		c.problem(e, nil, "EXT.103", "message flow %s ends at start event %s, which has no message event definition: add one", e.get("id"), dst)
	}
}

// catchesMessage reports whether event e has a message event definition,
// inline or by reference.
func (c *catalogueCheck) catchesMessage(e *element) bool {
	return e.child(nsBPMN, "messageEventDefinition") != nil || c.refersToMessageDefinition(e)
}

// refersToMessageDefinition reports whether event e uses a
// definitions-level message event definition.
func (c *catalogueCheck) refersToMessageDefinition(e *element) bool {
	for _, r := range e.children {
		if d, ok := lookup(c.imp.eventDefs, r.content()); ok && r.is("eventDefinitionRef") && d.local == "messageEventDefinition" {
			return true
		}
	}
	return false
}

// localID strips a QName prefix from a reference.
func localID(ref string) string {
	ref = strings.TrimSpace(ref)
	if i := strings.LastIndexByte(ref, ':'); i >= 0 {
		return ref[i+1:]
	}
	return ref
}

// walk checks e and its descendants; process is the enclosing process
// element (nil outside processes), parent e's parent, owner the id of e's
// nearest ancestor with one.
func (c *catalogueCheck) walk(e, process, parent *element, owner string) {
	if e.space != nsBPMN {
		return
	}
	if e.local == "process" {
		process = e
	}
	c.owner = owner
	// A process that is not executable is not deployed (a warning says
	// so): what its content breaks is descriptive (model.Definitions),
	// unless a validator asked for every process (Options.AllProcesses).
	c.descriptive = process != nil && !executable(process) && !c.imp.opts.AllProcesses
	c.check(e, process, parent)
	if id := e.get("id"); id != "" {
		owner = id
	}
	for _, ch := range e.children {
		c.walk(ch, process, e, owner)
	}
}

// problem reports the broken rule at e, on e's id or, for an element
// without one (loop characteristics, data associations), on its nearest
// ancestor's.
func (c *catalogueCheck) problem(e, process *element, rule, format string, args ...any) {
	pid := ""
	if process != nil {
		pid = process.get("id")
	}
	id := e.get("id")
	if id == "" {
		id = c.owner
	}
	p := &model.Problem{RuleID: rule, ProcessID: pid, ElementID: id, Pos: e.pos, Rule: fmt.Sprintf(format, args...)}
	switch {
	case c.warning:
		c.imp.defs.Warnings = append(c.imp.defs.Warnings, p)
		return
	case c.descriptive:
		c.imp.defs.Descriptive = append(c.imp.defs.Descriptive, p)
		return
	}
	c.imp.problems = append(c.imp.problems, p)
}

// executable reports whether process is an executable process.
func executable(process *element) bool {
	return process != nil && process.get("isExecutable") != "false"
}

// check applies the rules whose context is e.
func (c *catalogueCheck) check(e, process, parent *element) {
	switch {
	case slices.Contains(activityElements, e.local):
		c.activity(e, process, parent)
	case strings.HasSuffix(e.local, "Gateway"):
		c.gatewayDirection(e, process)
	case e.local == "multiInstanceLoopCharacteristics":
		c.multiInstance(e, process, parent)
	case e.local == "inputSet" || e.local == "outputSet":
		c.ioSet(e, process, parent)
	case e.local == "dataOutput":
		c.dataOutput(e, process, parent)
	case e.local == "dataInputAssociation" || e.local == "dataOutputAssociation":
		if e.child(nsBPMN, "transformation") == nil && countChildren(e, "sourceRef") > 1 {
			c.problem(e, process, "EXT.092", "a data association without transformation has one sourceRef at most: remove the others or add a transformation")
		}
	case e.local == "boundaryEvent":
		c.boundary(e, process)
	case e.local == "messageFlow":
		c.messageFlow(e)
	case e.local == "dataInput":
		c.dataInput(e, process, parent)
	case e.local == "messageEventDefinition" && c.services && executable(process) && e.child(nsBPMN, "operationRef") == nil:
		// Why only with interfaces: BPMN's default technology is web
		// services, where a message event names the operation it serves
		// or calls; a document that declares interfaces uses it. Without
		// any, messages are correlated by name and key (Zeebe, Camunda),
		// and no operation exists to name.
		c.problem(e, process, "EXT.128", "a message event of an executable process that declares service interfaces names its operation: add an operationRef")
	case e.local == "startEvent" && parent != nil && parent.local == "transaction" && eventDefinitions(e) > 0:
		c.problem(e, process, "EXT.100", "the start event of a transaction must be a none start event: remove its event definition")
	case e.local == "property" && parent != nil && !canHoldProperties(parent):
		c.problem(e, process, "EXT.078", "bpmn:property %s is inside a bpmn:%s: only processes, activities and events have properties; move it into one", e.get("id"), parent.local)
	case e.local == "sequenceFlow" && e.child(nsBPMN, "conditionExpression") != nil:
		c.conditionalFlow(e, process)
	case e.local == "resourceParameterBinding":
		c.resourceParameter(e, process, parent)
	case e.local == "choreography" || e.local == "globalConversation" || e.local == "participantMultiplicity":
		c.collaboration(e)
	case e.local == "collaboration":
		c.closed(e)
	case e.local == "linkEventDefinition":
		c.linkElements(e, process, parent)
	case e.local == "conditionalEventDefinition" && parent != nil && executable(process):
		if cond := e.child(nsBPMN, "condition"); cond != nil && cond.nsAttr(nsXSI, "type") == "" && !marked(cond.content()) {
			c.untyped(parent.get("id"), "EXT.123")
		}
	}
	if parent != nil && (parent.local == "intermediateThrowEvent" || parent.local == "endEvent") && e.space == nsBPMN &&
		strings.HasSuffix(e.local, "EventDefinition") && e.get("id") != "" && c.definitionRefs[e.get("id")] {
		c.problem(e, process, "EXT.095", "event definition %s belongs to the throw event %s and cannot be used elsewhere (an eventDefinitionRef names it): declare it at the top level to share it", e.get("id"), parent.get("id"))
	}
	c.itemTypes(e, process)
	c.booleanCondition(e, process, parent)
	c.implicitEnd(e, process, parent)
	switch e.local {
	case "intermediateThrowEvent", "endEvent":
		if n := countChildren(e, "dataInput"); n > 0 && n != eventDefinitions(e) {
			c.problem(e, process, "EXT.093", "bpmn:%s has %d data inputs for %d event definitions: give each event definition one data input", e.local, n, eventDefinitions(e))
		}
	case "startEvent", "intermediateCatchEvent", "boundaryEvent":
		if n := countChildren(e, "dataOutput"); n > 0 && n != eventDefinitions(e) {
			c.problem(e, process, "EXT.093", "bpmn:%s has %d data outputs for %d event definitions: give each event definition one data output", e.local, n, eventDefinitions(e))
		}
	}
	if e.child(nsBPMN, "supportedInterfaceRef") != nil && e.child(nsBPMN, "ioBinding") == nil {
		c.problem(e, process, "EXT.064", "bpmn:%s is exposed as a service (supportedInterfaceRef) but has no ioBinding: add one or remove the interface", e.local)
	}
	if f, ok := e.attr("textFormat"); ok && !mimeType.MatchString(f) {
		rule := "EXT.010"
		if e.local == "documentation" {
			rule = "EXT.004"
		}
		c.problem(e, process, rule, "textFormat %q is not a MIME type: write one such as text/plain", f)
	}
	c.formalExpression(e, process, parent)
	c.naturalLanguage(e, process, parent)
	c.flowLists(e, process)
}

// mimeType matches a MIME type (RFC 2045: type/subtype, parameters
// allowed). Compiled at package initialisation, which the wasm module runs
// at build time (pre-initialisation, RATIONALE.md): compiled on first use
// instead, it cost every module instance's first deploy.
var mimeType = regexp.MustCompile(`^[A-Za-z0-9][\w!#$&^.+-]*/[A-Za-z0-9][\w!#$&^.+-]*(\s*;.*)?$`)

// activity checks the rules about one activity.
func (c *catalogueCheck) activity(e, process, parent *element) {
	for _, attr := range []struct{ name, rule string }{{"startQuantity", "EXT.037"}, {"completionQuantity", "EXT.038"}} {
		v, ok := e.attr(attr.name)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 1 {
			c.problem(e, process, attr.rule, "%s %q must be a whole number of at least 1: set it to 1 or remove it", attr.name, v)
		}
	}
	if e.child(nsBPMN, "standardLoopCharacteristics") != nil && e.child(nsBPMN, "multiInstanceLoopCharacteristics") != nil {
		c.problem(e, process, "EXT.055", "an activity has one loop marker at most: keep either the standard loop or the multi-instance characteristics")
	}
	switch e.local {
	case "subProcess", "transaction", "adHocSubProcess":
		for _, ch := range e.children {
			if ch.space == nsBPMN && slices.Contains(choreographyActivities, ch.local) {
				c.problem(ch, process, "EXT.056", "bpmn:%s is a choreography activity and cannot be inside a bpmn:%s: move it into a choreography", ch.local, e.local)
			}
		}
		// The method of a transaction is a URI: ##Compensate, ##Store,
		// ##Image or one of the modeller's own.
		if m, ok := e.attr("method"); ok && e.local == "transaction" {
			if _, err := url.Parse(m); err != nil || strings.TrimSpace(m) == "" {
				c.problem(e, process, "EXT.060", "transaction method %q is not a URI: use ##Compensate, ##Store, ##Image or a URI", m)
			}
		}
		if e.child(nsBPMN, "ioSpecification") != nil {
			c.problem(e, process, "EXT.079", "a bpmn:%s cannot have an ioSpecification: remove it (sub-processes see the data of their parent)", e.local)
		}
	case "scriptTask":
		// A warning: the schema makes scriptFormat optional and betsy's
		// conformance models, written to run, omit it; flowtrack runs a
		// script as a job or a zeebe:script expression, never by it.
		if e.child(nsBPMN, "script") != nil && strings.TrimSpace(e.get("scriptFormat")) == "" {
			c.warn(e, process, "EXT.053", "script task %s has a bpmn:script but no scriptFormat: say which language the script is in", e.get("id"))
		}
	case "serviceTask":
		// A service task that calls an operation passes it the one input
		// message and receives one output message at most.
		if _, ok := e.attr("operationRef"); ok {
			var in, out int
			if io := e.child(nsBPMN, "ioSpecification"); io != nil {
				in, out = countChildren(io, "inputSet"), countChildren(io, "outputSet")
			}
			if in != 1 {
				c.problem(e, process, "EXT.042", "a service task that calls an operation (operationRef) has exactly one inputSet, not %d: define it in an ioSpecification", in)
			}
			if out > 1 {
				c.problem(e, process, "EXT.043", "a service task that calls an operation (operationRef) has one outputSet at most, not %d: remove the others", out)
			}
		}
	}
	for _, m := range messageTaskData {
		if _, ok := e.attr("messageRef"); !ok || e.local != m.task {
			continue
		}
		if io := e.child(nsBPMN, "ioSpecification"); io != nil {
			if countChildren(io, m.set) > 1 {
				c.problem(e, process, m.setRule, "a bpmn:%s with a messageRef has one %s at most: remove the others", e.local, m.set)
			}
			if countChildren(io, m.data) > 1 {
				c.problem(e, process, m.dataRule, "a bpmn:%s with a messageRef has one %s at most (the message it %s): remove the others", e.local, m.data, m.verb)
			}
		}
	}
	if e.local == "adHocSubProcess" && !slices.ContainsFunc(e.children, func(ch *element) bool {
		return ch.space == nsBPMN && slices.Contains(activityElements, ch.local)
	}) {
		c.problem(e, process, "EXT.061", "an ad-hoc sub-process needs at least one activity: add one")
	}
	if e.local == "adHocSubProcess" {
		for _, ch := range e.children {
			if ch.space == nsBPMN && (ch.local == "startEvent" || ch.local == "endEvent") {
				c.problem(ch, process, "EXT.062", "bpmn:%s cannot be inside an ad-hoc sub-process: remove it (the sub-process activates its inner elements itself)", ch.local)
			}
		}
	}
}

// messageTaskData are the rules that a task with a message has one set
// and one data element for it: a send task sends one message, a receive
// task receives one.
var messageTaskData = []struct{ task, set, data, verb, setRule, dataRule string }{
	{"sendTask", "inputSet", "dataInput", "sends", "EXT.046", "EXT.047"},
	{"receiveTask", "outputSet", "dataOutput", "receives", "EXT.050", "EXT.051"},
}

// gatewayDirection checks a gateway's gatewayDirection against its flows
// (EXT.017–019). A mismatch is a warning: flowtrack routes by the flows,
// never by the direction, and tools (Yaoqiang) write a converging gateway
// with a default flow beside its other outgoing flow. A gateway that
// neither splits nor joins is a warning too (EXT.135): it does no harm,
// and tests use one to stop a token on a condition.
func (c *catalogueCheck) gatewayDirection(e, process *element) {
	id := e.get("id")
	in, out := c.in[id], c.out[id]
	if (e.local == "parallelGateway" || e.local == "exclusiveGateway") && in == 1 && out == 1 {
		c.warn(e, process, "EXT.135", "bpmn:%s %s has one incoming and one outgoing flow, so it neither splits nor joins: remove it or add flows", e.local, id)
	}
	switch e.get("gatewayDirection") {
	case "Converging":
		if out > 1 {
			c.warn(e, process, "EXT.017", "a converging gateway has one outgoing flow at most, not %d: set gatewayDirection to Mixed or Unspecified, or remove flows", out)
		}
	case "Diverging":
		if in > 1 {
			c.warn(e, process, "EXT.018", "a diverging gateway has one incoming flow at most, not %d: set gatewayDirection to Mixed or Unspecified, or merge the flows first", in)
		}
	case "Mixed":
		if in < 2 || out < 2 {
			c.warn(e, process, "EXT.019", "a mixed gateway needs at least two incoming and two outgoing flows (has %d and %d): set gatewayDirection to match its flows", in, out)
		}
	}
}

// multiInstance checks multi-instance loop characteristics in processes
// marked isExecutable="true" (EXT.067, EXT.068). An extension (Zeebe's
// inputCollection, Camunda 7's collection) says what the instances are
// in the vendor's terms instead.
func (c *catalogueCheck) multiInstance(e, process, parent *element) {
	if process == nil || process.get("isExecutable") != "true" || e.child(nsBPMN, "extensionElements") != nil ||
		slices.ContainsFunc(e.attrs, func(a xml.Attr) bool { return a.Name.Space != "" && a.Name.Space != nsBPMN }) {
		return
	}
	input := e.child(nsBPMN, "loopDataInputRef")
	if e.child(nsBPMN, "loopCardinality") == nil && input == nil {
		c.problem(e, process, "EXT.067", "a multi-instance activity of an executable process needs a loopCardinality or a loopDataInputRef: add one")
	}
	if input == nil || parent == nil || parent.local == "subProcess" {
		return
	}
	ref := localID(input.content())
	if io := parent.child(nsBPMN, "ioSpecification"); io == nil || !slices.ContainsFunc(io.children, func(d *element) bool {
		return d.is("dataInput") && d.get("id") == ref
	}) {
		c.problem(e, process, "EXT.068", "loopDataInputRef %s must name a dataInput of the activity's ioSpecification: declare it there", ref)
	}
}

// ioSet checks an inputSet or outputSet against the data inputs and
// outputs it lists (EXT.085, EXT.087, EXT.089, EXT.090).
func (c *catalogueCheck) ioSet(e, process, parent *element) {
	listed := func(name string) []string {
		var out []string
		for _, ch := range e.children {
			if ch.is(name) {
				out = append(out, localID(ch.content()))
			}
		}
		return out
	}
	subset := func(part, whole, rule, what string) {
		all := listed(whole)
		for _, ref := range listed(part) {
			if !slices.Contains(all, ref) {
				c.problem(e, process, rule, "%s %s must also be listed as %s: add it there", what, ref, whole)
			}
		}
	}
	if e.local == "inputSet" {
		subset("optionalInputRefs", "dataInputRefs", "EXT.085", "optionalInputRef")
		subset("whileExecutingInputRefs", "dataInputRefs", "EXT.086", "whileExecutingInputRef")
	} else {
		subset("optionalOutputRefs", "dataOutputRefs", "EXT.089", "optionalOutputRef")
		subset("whileExecutingOutputRefs", "dataOutputRefs", "EXT.090", "whileExecutingOutputRef")
	}
	// EXT.087: an inputSet and an outputSet that name each other do so
	// both ways.
	refs, back, other := "outputSetRefs", "inputSetRefs", "outputSet"
	if e.local == "outputSet" {
		refs, back, other = "inputSetRefs", "outputSetRefs", "inputSet"
	}
	if parent == nil {
		return
	}
	for _, ref := range listed(refs) {
		for _, o := range parent.children {
			if !o.is(other) || o.get("id") != ref {
				continue
			}
			if !slices.ContainsFunc(o.children, func(b *element) bool { return b.is(back) && localID(b.content()) == e.get("id") }) {
				c.problem(e, process, "EXT.087", "bpmn:%s names %s %s in %s, which does not name it back in %s: add the reference to both", e.local, other, ref, refs, back)
			}
		}
	}
}

// dataOutput checks that an output set lists a data output (EXT.088):
// the output sets are its siblings, in an ioSpecification or an event.
func (c *catalogueCheck) dataOutput(e, process, parent *element) {
	if parent == nil {
		return
	}
	id := e.get("id")
	for _, s := range parent.children {
		if s.is("outputSet") && slices.ContainsFunc(s.children, func(r *element) bool { return r.is("dataOutputRefs") && localID(r.content()) == id }) {
			return
		}
	}
	c.problem(e, process, "EXT.088", "data output %s is in no outputSet: list it in a dataOutputRefs of an outputSet", id)
}

// dataInput checks that an input set lists a data input (EXT.084): the
// input sets are its siblings, in an ioSpecification or an event.
func (c *catalogueCheck) dataInput(e, process, parent *element) {
	if parent == nil {
		return
	}
	id := e.get("id")
	for _, s := range parent.children {
		if s.is("inputSet") && slices.ContainsFunc(s.children, func(r *element) bool { return r.is("dataInputRefs") && localID(r.content()) == id }) {
			return
		}
	}
	c.problem(e, process, "EXT.084", "data input %s is in no inputSet: list it in a dataInputRefs of an inputSet", id)
}

// boundary checks compensation and cancel boundary events (EXT.114,
// EXT.120, EXT.144).
func (c *catalogueCheck) boundary(e, process *element) {
	id := e.get("id")
	if e.child(nsBPMN, "compensateEventDefinition") != nil {
		if c.out[id] > 0 {
			c.problem(e, process, "EXT.114", "a compensation boundary event has no outgoing sequence flow (its handler is connected by an association): remove the flow")
		}
		for _, a := range c.imp.elements {
			if !a.is("association") || localID(a.get("sourceRef")) != id {
				continue
			}
			if h, ok := c.imp.elements[localID(a.get("targetRef"))]; ok && h.space == nsBPMN && slices.Contains(activityElements, h.local) && h.get("isForCompensation") != "true" {
				c.problem(e, process, "EXT.144", "compensation handler %s must be marked isForCompensation=\"true\"", h.get("id"))
			}
		}
	}
	if e.child(nsBPMN, "cancelEventDefinition") != nil {
		if a, ok := c.imp.elements[localID(e.get("attachedToRef"))]; ok && !a.is("transaction") {
			c.problem(e, process, "EXT.120", "a cancel boundary event must be attached to a transaction, not a bpmn:%s: use another trigger", a.local)
		}
	}
}

// formalExpression checks that a formal expression has a body (EXT.013):
// an element typed tFormalExpression, and the condition of a complex
// behaviour definition. The importer reports the empty timer values of
// executable processes.
func (c *catalogueCheck) formalExpression(e, process, parent *element) {
	switch e.local {
	case "timeDate", "timeDuration", "timeCycle":
		if executable(process) {
			return // the importer reports an executable timer's empty value
		}
	}
	formal := strings.HasSuffix(e.nsAttr(nsXSI, "type"), "tFormalExpression") ||
		e.local == "condition" && parent != nil && parent.local == "complexBehaviorDefinition" ||
		slices.Contains(formalExpressionElements, e.local)
	if formal && e.content() == "" && !slices.ContainsFunc(e.children, func(ch *element) bool { return ch.space != nsBPMN }) {
		c.problem(e, process, "EXT.013", "bpmn:%s is an empty formal expression: write the expression or remove the element", e.local)
	}
}

// naturalLanguageContexts are the expressions that must be formal in an
// executable process (EXT.012), by element and parent.
var naturalLanguageContexts = map[string][]string{
	"completionCondition": {"adHocSubProcess", "multiInstanceLoopCharacteristics"},
	"from":                {"assignment"},
	"to":                  {"assignment"},
	"activationCondition": {"complexGateway"},
	"loopCardinality":     {"multiInstanceLoopCharacteristics"},
	"conditionExpression": {"sequenceFlow"},
	"loopCondition":       {"standardLoopCharacteristics"},
	"timeDate":            {"timerEventDefinition"},
	"timeDuration":        {"timerEventDefinition"},
	"timeCycle":           {"timerEventDefinition"},
}

// naturalLanguage checks that the expressions an executable process
// evaluates are not declared natural language (EXT.012): an expression
// typed xsi:type="tExpression" is prose for a reader, which no engine
// evaluates. An untyped expression is read as a formal one in the
// document's expression language, as hand-written and Camunda 7 models
// write them; if it is not one, compiling it reports so (FT.expression).
func (c *catalogueCheck) naturalLanguage(e, process, parent *element) {
	if !executable(process) || parent == nil || !slices.Contains(naturalLanguageContexts[e.local], parent.local) {
		return
	}
	t := e.nsAttr(nsXSI, "type")
	if t == "" && e.local == "conditionExpression" && !marked(e.content()) {
		c.untyped(parent.get("id"), "EXT.012")
	}
	if t == "tExpression" || strings.HasSuffix(t, ":tExpression") {
		c.problem(e, process, "EXT.012", "bpmn:%s is a natural-language expression (xsi:type=%q), which an executable process cannot evaluate: write a tFormalExpression or mark the process isExecutable=\"false\"", e.local, t)
	}
}

// marked reports whether an expression's text says its dialect: FEEL's
// leading "=", JUEL's ${...} or #{...}. Such a text that does not compile
// is a formal expression with a mistake (FT.expression), whatever its
// xsi:type.
func marked(text string) bool {
	return strings.HasPrefix(text, "=") || strings.HasPrefix(text, "${") || strings.HasPrefix(text, "#{")
}

// untyped notes that element id has an untyped condition without a
// dialect marker, which, if it does not compile, is natural language and
// breaks rule (model.Definitions.Untyped).
func (c *catalogueCheck) untyped(id, rule string) {
	if id == "" {
		return
	}
	if c.imp.defs.Untyped == nil {
		c.imp.defs.Untyped = map[string]string{}
	}
	c.imp.defs.Untyped[id] = rule
}

// formalExpressionElements are the elements the schema types as formal
// expressions, typed or not in the document.
var formalExpressionElements = []string{"messagePath", "dataPath", "transformation"}

// implicitEnd warns where a level of a process with end events also ends
// without one, or has a start event but no end event, or an end event but
// no start event (EXT.151, EXT.105, EXT.097).
// The standard requires end events to be used throughout once they are
// used; flowtrack, like Zeebe, ends a path at an activity without outgoing
// flow, and Camunda Modeler exports rely on it, so these deploy. A gateway
// without outgoing flow is refused (model, EXT.151); intermediate events
// have their own rules (EXT.115, EXT.116).
func (c *catalogueCheck) implicitEnd(e, process, parent *element) {
	if process == nil || parent == nil {
		return
	}
	ends := slices.ContainsFunc(parent.children, func(ch *element) bool { return ch.is("endEvent") })
	starts := slices.ContainsFunc(parent.children, func(ch *element) bool {
		// An instantiating event-based gateway starts a process as much
		// as the receive task the text names (BPMN 2.0 §10.6.6).
		return ch.is("startEvent") || (ch.is("receiveTask") || ch.is("eventBasedGateway")) && isTrue(ch.get("instantiate"))
	})
	switch {
	case e.local == "endEvent" && !starts && parent.local != "adHocSubProcess":
		c.warn(e, process, "EXT.097", "this level has an end event but no start event (nor an instantiating receive task): its paths start implicitly; add a start event")
	case e.local == "startEvent" && !ends:
		c.warn(e, process, "EXT.105", "this level has a start event but no end event: its paths end implicitly; add an end event")
	case ends && slices.Contains(activityElements, e.local) && c.out[e.get("id")] == 0 &&
		!isTrue(e.get("isForCompensation")) && !isTrue(e.get("triggeredByEvent")):
		c.warn(e, process, "EXT.151", "bpmn:%s %s has no outgoing flow beside end events, so its path ends here without one: connect it to the node that follows or to an end event", e.local, e.get("id"))
	}
}

// warn reports the rule at e as a warning.
func (c *catalogueCheck) warn(e, process *element, rule, format string, args ...any) {
	c.warning = true
	defer func() { c.warning = false }()
	c.problem(e, process, rule, format, args...)
}

// conditionalFlow checks that a sequence flow with a condition leaves a
// gateway or an activity with other outgoing flows (EXT.025): out of an
// event, or as an activity's only flow, the condition chooses nothing, and
// a false one strands the token.
func (c *catalogueCheck) conditionalFlow(e, process *element) {
	id := localID(e.get("sourceRef"))
	src, ok := c.imp.elements[id]
	if !ok || src.space != nsBPMN || strings.HasSuffix(src.local, "Gateway") {
		return
	}
	switch {
	case !slices.Contains(activityElements, src.local):
		c.problem(e, process, "EXT.025", "sequence flow %s out of bpmn:%s %s has a condition: only gateways and activities choose among conditional flows; remove the condition or route through a gateway", e.get("id"), src.local, id)
	case c.out[id] < 2:
		c.problem(e, process, "EXT.025", "sequence flow %s is the only outgoing flow of bpmn:%s %s and has a condition: remove the condition or add another outgoing flow", e.get("id"), src.local, id)
	}
}

// eventElements are the BPMN events.
var eventElements = []string{"startEvent", "endEvent", "intermediateCatchEvent", "intermediateThrowEvent", "boundaryEvent", "implicitThrowEvent"}

// canHoldProperties reports whether e may contain properties: processes,
// activities and events do (EXT.078).
func canHoldProperties(e *element) bool {
	return e.space == nsBPMN && (e.local == "process" || slices.Contains(activityElements, e.local) || slices.Contains(eventElements, e.local))
}

// resourceParameter checks that a resource parameter binding binds a
// parameter of the resource its resource role (performer, potential
// owner...) names (EXT.040).
func (c *catalogueCheck) resourceParameter(e, process, role *element) {
	param := localID(e.get("parameterRef"))
	if role == nil || param == "" {
		return
	}
	r := role.child(nsBPMN, "resourceRef")
	if r == nil {
		c.problem(e, process, "EXT.040", "parameter %s is bound, but bpmn:%s names no resource: add a resourceRef to the resource that declares the parameter", param, role.local)
		return
	}
	res, ok := lookup(c.imp.elements, r.content())
	if !ok || !res.is("resource") {
		return // a REF problem
	}
	if !slices.ContainsFunc(res.children, func(p *element) bool { return p.is("resourceParameter") && p.get("id") == param }) {
		c.problem(e, process, "EXT.040", "parameter %s is not a parameter of resource %s: bind one of the resource's resourceParameters", param, res.get("id"))
	}
}

// conversationContent is what a global conversation cannot contain
// (EXT.032): conversation nodes, associations and artifacts.
var conversationContent = []string{"conversation", "subConversation", "callConversation", "participantAssociation",
	"messageFlowAssociation", "conversationAssociation", "association", "group", "textAnnotation"}

// collaboration checks the rules of choreographies, global conversations
// and participant multiplicities (EXT.027, EXT.029, EXT.030, EXT.032).
// flowtrack executes none of them, but they are deployed with their file.
func (c *catalogueCheck) collaboration(e *element) {
	if e.local == "participantMultiplicity" {
		bound := func(name string, def int) (int, bool) {
			v, ok := e.attr(name)
			if !ok {
				return def, true
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				c.problem(e, nil, "XSD.integer", "participantMultiplicity %s %q is not a whole number: write one", name, v)
				return 0, false
			}
			return n, true
		}
		lo, okLo := bound("minimum", 0)
		hi, okHi := bound("maximum", 1)
		if okLo && lo < 0 {
			c.problem(e, nil, "EXT.029", "participantMultiplicity minimum %d is negative: use 0 or more", lo)
		}
		if okLo && okHi && (hi < 1 || hi < lo) {
			c.problem(e, nil, "EXT.030", "participantMultiplicity maximum %d must be at least 1 and at least the minimum %d: raise it", hi, lo)
		}
		return
	}
	if r := e.child(nsBPMN, "choreographyRef"); r != nil {
		c.problem(e, nil, "EXT.027", "a bpmn:%s cannot reference a choreography (choreographyRef %s): remove the reference", e.local, r.content())
	}
	if e.local != "globalConversation" {
		return
	}
	for _, ch := range e.children {
		if ch.space == nsBPMN && slices.Contains(conversationContent, ch.local) {
			c.problem(ch, nil, "EXT.032", "a global conversation contains no conversation nodes, associations or artifacts: remove bpmn:%s %s or use a collaboration", ch.local, ch.get("id"))
		}
	}
}

// booleanConditions are the conditions of the document, by element and
// parent, with the rule that says they are boolean: the catalogue's for
// multi-instance completion (EXT.071) and complex behaviour (EXT.072),
// flowtrack's for the others, which the standard types as boolean too.
var booleanConditions = []struct{ element, parent, rule string }{
	{"completionCondition", "multiInstanceLoopCharacteristics", "EXT.071"},
	{"condition", "complexBehaviorDefinition", "EXT.072"},
	{"conditionExpression", "sequenceFlow", "FT.boolean"},
	{"loopCondition", "standardLoopCharacteristics", "FT.boolean"},
	{"condition", "conditionalEventDefinition", "FT.boolean"},
	{"activationCondition", "complexGateway", "FT.boolean"},
}

// booleanCondition checks that a condition can be true or false: a
// literal number or string never is, and would stop the instance at run
// time.
func (c *catalogueCheck) booleanCondition(e, process, parent *element) {
	if parent == nil {
		return
	}
	for _, b := range booleanConditions {
		if e.local != b.element || parent.local != b.parent {
			continue
		}
		if kind := literalKind(e.content()); kind != "" {
			c.problem(e, process, b.rule, "bpmn:%s %q is a %s, not a boolean: write a condition that is true or false", e.local, e.content(), kind)
		}
	}
}

// literalKind says whether an expression is a literal number or string,
// with or without FEEL's leading "=" or JUEL's ${...}, and "" otherwise.
func literalKind(text string) string {
	text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "="))
	for _, open := range []string{"${", "#{"} {
		if strings.HasPrefix(text, open) && strings.HasSuffix(text, "}") {
			text = strings.TrimSpace(text[len(open) : len(text)-1])
		}
	}
	switch {
	case numberLiteral.MatchString(text):
		return "number"
	case len(text) >= 2 && (text[0] == '"' || text[0] == '\'') && text[len(text)-1] == text[0] && !strings.ContainsRune(text[1:len(text)-1], rune(text[0])):
		return "string"
	}
	return ""
}

// numberLiteral matches a decimal number (compiled at package
// initialisation, like mimeType).
var numberLiteral = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$`)

// countChildren counts e's BPMN children named local.
func countChildren(e *element, local string) int {
	n := 0
	for _, ch := range e.children {
		if ch.is(local) {
			n++
		}
	}
	return n
}

// eventDefinitions counts an event's event definitions, inline or by
// reference.
func eventDefinitions(e *element) int {
	n := 0
	for _, ch := range e.children {
		if _, ok := eventDefinitionKinds[ch.local]; ch.space == nsBPMN && (ok || ch.local == "eventDefinitionRef") {
			n++
		}
	}
	return n
}

// closed checks that a collaboration that references a choreography
// agrees with it on isClosed (EXT.033; false when not written).
func (c *catalogueCheck) closed(e *element) {
	for _, r := range e.children {
		ch, ok := lookup(c.imp.elements, r.content())
		if !r.is("choreographyRef") || !ok || !ch.is("choreography") {
			continue
		}
		if isTrue(e.get("isClosed")) != isTrue(ch.get("isClosed")) {
			c.problem(e, nil, "EXT.033", "collaboration %s has isClosed=%t, but choreography %s it references has isClosed=%t: make them agree",
				e.get("id"), isTrue(e.get("isClosed")), ch.get("id"), isTrue(ch.get("isClosed")))
		}
	}
}

// linkElements checks the source and target elements a link event
// definition may carry (EXT.118, EXT.124, EXT.125): in a document that
// pairs links by them, a throw names exactly one target, which lists it
// back as a source, and a catch names at least one source. A document
// that writes none pairs links by name, as Zeebe and Camunda Modeler
// do, and is not held to them.
func (c *catalogueCheck) linkElements(e, process, event *element) {
	if event == nil || !c.linkRefs {
		return
	}
	if event.is("intermediateCatchEvent") && countChildren(e, "source") == 0 {
		c.problem(e, process, "EXT.124", "link event definition of catch event %s names no source, though this document pairs links by source and target: list the link throw events that go to it", event.get("id"))
	}
	if !event.is("intermediateThrowEvent") {
		return
	}
	if n := countChildren(e, "target"); n != 1 {
		c.problem(e, process, "EXT.125", "link event definition of throw event %s names %d targets: a link throw event goes to exactly one link catch event", event.get("id"), n)
	}
	for _, t := range e.children {
		if !t.is("target") {
			continue
		}
		d, ok := lookup(c.imp.elements, t.content())
		if !ok || !d.is("linkEventDefinition") {
			continue // a REF problem
		}
		if !slices.ContainsFunc(d.children, func(s *element) bool { return s.is("source") && localID(s.content()) == e.get("id") }) {
			c.problem(e, process, "EXT.118", "link event definition %s names target %s, which does not list it as a source: add <source>%s</source> to %s", e.get("id"), d.get("id"), e.get("id"), d.get("id"))
		}
	}
}
