// Package bpmnxml imports BPMN 2.0 XML documents into model definitions.
//
// The importer matches elements by the BPMN model namespace
// (http://www.omg.org/spec/BPMN/20100524/MODEL), whatever prefix a tool
// chose: bpmn:, bpmn2:, semantic:, or the default namespace. It reads the
// Camunda 8 (zeebe:) and Camunda 7 (camunda:) extensions flowtrack uses and
// ignores every other extension, the diagram interchange and all artifacts.
// Flow elements flowtrack does not execute are rejected, never dropped: the
// list lives in elements.go.
package bpmnxml

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Import reads one BPMN document and returns its definitions, with every
// process indexed (model.Process.Index). name is the document's file name;
// it appears in document-level problems only.
//
// Import does not validate the model's structure beyond what it needs to
// build it (references must resolve); call model.Validate for that.
//
// Every error is a *model.Problem, or several joined with errors.Join;
// unwrap with errors.As. With problems, Import still returns the
// definitions as far as it could build them (what failed to import is
// left out), so that the later checks can report their problems too; the
// definitions are nil only when the document is not BPMN XML. Import never
// panics, whatever the input.
func Import(name string, data []byte) (*model.Definitions, error) {
	return ImportWith(name, data, Options{})
}

// Options say how ImportWith reads a document. The zero value is how
// Deploy reads one.
type Options struct {
	// AllProcesses holds every process to the catalogue's rules, as a
	// validator does; by default, processes that are not executable are
	// not, because they are not deployed.
	AllProcesses bool
	// Resolve reads the document an import's location names (relative
	// to the importing document), so that its namespace and ids are
	// checked (EXT.001, EXT.002). Nil: imports are checked for their
	// attributes only, as a single document is all Deploy has.
	Resolve func(location string) ([]byte, error)
}

// ImportWith is Import with options.
func ImportWith(name string, data []byte, opts Options) (*model.Definitions, error) {
	root, err := parse(name, data)
	if err != nil {
		return nil, err
	}
	if !root.is("definitions") {
		return nil, &model.Problem{RuleID: "FT.document", Pos: root.pos, Rule: fmt.Sprintf("%s: root element is {%s}%s, not a BPMN 2.0 definitions element", name, root.space, root.local)}
	}
	elements, positions := index(root)
	imp := &importer{
		name:        name,
		opts:        opts,
		elements:    elements,
		positions:   positions,
		exprLang:    root.get("expressionLanguage"),
		defs:        &model.Definitions{ID: root.get("id")},
		messages:    map[string]*model.Message{},
		signals:     map[string]*model.Signal{},
		errors:      map[string]*model.Error{},
		escalations: map[string]*model.Escalation{},
		eventDefs:   map[string]*element{},
		globalTasks: map[string]*element{},
	}
	imp.defs.Positions = imp.positions
	imp.references(root)
	imp.catalogue(root)
	imp.imports(root)
	imp.globals(root)
	for _, c := range root.children {
		switch {
		case c.is("process"):
			imp.process(c)
		case c.space == nsBPMN && ignoredRootElements[c.local]:
			// Valid BPMN beside the processes, which flowtrack does not
			// run: the processes deploy, the modeller is told.
			imp.defs.Warnings = append(imp.defs.Warnings, &model.Problem{RuleID: "FT.ignored", ElementID: c.get("id"), Pos: c.pos,
				Rule: fmt.Sprintf("bpmn:%s is not executed: flowtrack runs processes and ignores it", c.local)})
		}
	}
	return imp.defs, imp.err()
}

// importer holds the state of one Import call.
type importer struct {
	name     string
	opts     Options
	exprLang string
	// elements and positions hold the document's elements by id, and
	// where they start.
	elements  map[string]*element
	positions map[string]model.Position
	defs      *model.Definitions
	problems  []*model.Problem

	messages    map[string]*model.Message
	signals     map[string]*model.Signal
	errors      map[string]*model.Error
	escalations map[string]*model.Escalation
	// eventDefs are definitions-level event definitions, which events can
	// use through eventDefinitionRef.
	eventDefs map[string]*element
	// globalTasks are the global tasks call activities may call, by id
	// (global.go).
	globalTasks map[string]*element
}

// problem records a Problem on the element with id elementID.
func (imp *importer) problem(processID, elementID, ruleID, format string, args ...any) {
	imp.problems = append(imp.problems, &model.Problem{RuleID: ruleID, ProcessID: processID, ElementID: elementID,
		Pos: imp.positions[elementID], Rule: fmt.Sprintf(format, args...)})
}

// problemAt records a Problem on element e, which may have no id.
func (imp *importer) problemAt(e *element, processID, ruleID, format string, args ...any) {
	imp.problems = append(imp.problems, &model.Problem{RuleID: ruleID, ProcessID: processID, ElementID: e.get("id"),
		Pos: e.pos, Rule: fmt.Sprintf(format, args...)})
}

// err returns the recorded problems, sorted, as one error, or nil.
func (imp *importer) err() error {
	ps := model.SortProblems(imp.problems)
	switch len(ps) {
	case 0:
		return nil
	case 1:
		return ps[0]
	}
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// globals reads the definitions-level declarations that processes refer to.
func (imp *importer) globals(root *element) {
	for _, c := range root.children {
		if c.space != nsBPMN {
			continue
		}
		id := c.get("id")
		switch c.local {
		case "message":
			m := &model.Message{ID: id, Name: c.get("name")}
			if ext := c.child(nsBPMN, "extensionElements"); ext != nil {
				if sub := ext.child(nsZeebe, "subscription"); sub != nil {
					m.CorrelationKey = model.Expression{Text: sub.get("correlationKey")}
				}
			}
			imp.defs.Messages = append(imp.defs.Messages, m)
			putFirst(imp.messages, id, m)
		case "signal":
			s := &model.Signal{ID: id, Name: c.get("name")}
			imp.defs.Signals = append(imp.defs.Signals, s)
			putFirst(imp.signals, id, s)
		case "error":
			e := &model.Error{ID: id, Name: c.get("name"), Code: c.get("errorCode")}
			imp.defs.Errors = append(imp.defs.Errors, e)
			putFirst(imp.errors, id, e)
		case "escalation":
			e := &model.Escalation{ID: id, Name: c.get("name"), Code: c.get("escalationCode")}
			imp.defs.Escalations = append(imp.defs.Escalations, e)
			putFirst(imp.escalations, id, e)
		case "globalTask", "globalUserTask", "globalManualTask", "globalScriptTask", "globalBusinessRuleTask":
			if id != "" {
				imp.globalTasks[id] = c
			}
		default:
			if _, ok := eventDefinitionKinds[c.local]; ok && id != "" {
				imp.eventDefs[id] = c
			}
		}
	}
	for _, c := range root.children {
		if c.space == nsBPMN && c.local == "correlationProperty" {
			imp.correlationProperty(c)
		}
	}
}

// correlationProperty reads BPMN's own correlation form: each retrieval
// expression gives the correlation key of one message, unless a
// zeebe:subscription already did. The messagePath is an expression (a
// path such as "order.id" reads the same in FEEL and JUEL), so plain text
// is read as FEEL rather than as a literal.
func (imp *importer) correlationProperty(c *element) {
	for _, r := range c.children {
		if r.space != nsBPMN || r.local != "correlationPropertyRetrievalExpression" {
			continue
		}
		m, ok := lookup(imp.messages, r.get("messageRef"))
		if !ok || !m.CorrelationKey.IsZero() {
			continue
		}
		x := imp.expression(r.child(nsBPMN, "messagePath"))
		if x.IsZero() {
			continue
		}
		if t := strings.TrimSpace(x.Text); !strings.HasPrefix(t, "=") && !strings.HasPrefix(t, "${") {
			x.Text = "= " + t
		}
		m.CorrelationKey = x
	}
}

// putFirst stores v under a non-empty id unless the id is already taken.
func putFirst[T any](m map[string]T, id string, v T) {
	if _, dup := m[id]; id != "" && !dup {
		m[id] = v
	}
}

// lookup resolves a reference. References are QNames: "tns:Message_1" and
// "Message_1" both name the element with id Message_1.
func lookup[T any](m map[string]T, ref string) (T, bool) {
	ref = strings.TrimSpace(ref)
	if v, ok := m[ref]; ok {
		return v, true
	}
	if i := strings.LastIndexByte(ref, ':'); i >= 0 {
		v, ok := m[ref[i+1:]]
		return v, ok
	}
	var zero T
	return zero, false
}

// expression reads a formal expression element: its text, and its language
// or else the document's expressionLanguage.
func (imp *importer) expression(e *element) model.Expression {
	if e == nil {
		return model.Expression{}
	}
	x := model.Expression{Text: e.content()}
	if x.Text == "" {
		return model.Expression{}
	}
	x.Language = e.get("language")
	if x.Language == "" && !isXPath(imp.exprLang) {
		// XPath is BPMN's default language, and tools such as Yaoqiang
		// write it on every document whatever the expressions are; only
		// an expression that itself says XPath is held to it.
		x.Language = imp.exprLang
	}
	return x
}

func isXPath(lang string) bool { return strings.EqualFold(lang, "http://www.w3.org/1999/XPath") }

// builder builds one process. References between nodes and flows are
// collected while walking and resolved at the end, because BPMN allows them
// to point forward.
type builder struct {
	imp   *importer
	p     *model.Process
	nodes map[string]*model.Node
	flows map[string]*model.Flow
	// unsupported holds the ids of rejected elements: references to them
	// are not reported again.
	unsupported map[string]bool

	flowRefs     []flowRef
	defaultRefs  []nodeRef
	attachedRefs []nodeRef
	// associations connect compensation boundary events to their
	// handlers (compensation.go).
	associations []association
}

// flowRef is a sequence flow waiting for its source and target.
type flowRef struct {
	flow           *model.Flow
	source, target string
}

// nodeRef is a node waiting for a reference to resolve.
type nodeRef struct {
	node *model.Node
	ref  string
}

// process builds one bpmn:process and adds it to the definitions.
func (imp *importer) process(e *element) {
	p := &model.Process{
		ID:   e.get("id"),
		Name: e.get("name"),
		// Why absent means executable: hand-written and older tools' models
		// omit isExecutable; only an explicit "false" marks a process as
		// descriptive.
		Executable: e.get("isExecutable") != "false",
	}
	if p.ID == "" {
		imp.problemAt(e, "", "EXT.003", "bpmn:process has no id: give it a unique id")
	}
	if p.Executable && e.get("processType") == "Public" {
		imp.problemAt(e, p.ID, "EXT.035", `a public process must not be executable: set processType="Private" or isExecutable="false"`)
	}
	b := &builder{imp: imp, p: p, nodes: map[string]*model.Node{}, flows: map[string]*model.Flow{}, unsupported: map[string]bool{}}
	b.flowElements(e, nil)
	b.resolve()
	if err := p.Index(); err != nil {
		var pr *model.Problem
		if !errors.As(err, &pr) {
			pr = &model.Problem{RuleID: "XSD.id", ProcessID: p.ID, Rule: err.Error()}
		}
		pr.Pos = imp.positions[pr.ElementID]
		imp.problems = append(imp.problems, pr)
	}
	imp.defs.Processes = append(imp.defs.Processes, p)
}

// problem records a Problem in the process being built.
func (b *builder) problem(elementID, ruleID, format string, args ...any) {
	b.imp.problem(b.p.ID, elementID, ruleID, format, args...)
}

// flowElements reads the flow elements of a process or sub-process; parent
// is the sub-process node, or nil at process level.
func (b *builder) flowElements(container *element, parent *model.Node) {
	for _, c := range container.children {
		if c.space != nsBPMN {
			continue
		}
		if loopCharacteristics[c.local] && parent != nil || c.local == "completionCondition" && parent != nil && parent.AdHoc != nil {
			continue // read for the sub-process by node
		}
		switch flowElementRoles[c.local] {
		case roleUnsupported:
			if parent == nil && slices.Contains(choreographyActivities, c.local) {
				// Not only unsupported: the standard forbids it (EXT.036).
				b.imp.problemAt(c, b.p.ID, "EXT.036", "unsupported element bpmn:%s: a process must not contain choreography activities, which belong in choreographies; remove it", c.local)
			} else {
				b.imp.problemAt(c, b.p.ID, "FT.unsupported", "unsupported element bpmn:%s: flowtrack does not execute it; remove it", c.local)
			}
			if id := c.get("id"); id != "" {
				b.unsupported[id] = true
			}
		case roleNode:
			b.node(c, parent)
		case roleFlow:
			b.flow(c)
		case roleIgnored:
			if c.local == "association" {
				b.associations = append(b.associations, association{source: c.get("sourceRef"), target: c.get("targetRef")})
			}
		}
	}
}

// flow reads a bpmn:sequenceFlow.
func (b *builder) flow(e *element) {
	f := &model.Flow{ID: e.get("id"), Name: e.get("name")}
	if f.ID == "" {
		b.imp.problemAt(e, b.p.ID, "EXT.003", "bpmn:sequenceFlow has no id: give it a unique id")
	}
	f.Condition = b.imp.expression(e.child(nsBPMN, "conditionExpression"))
	if b.p.Executable && e.get("isImmediate") == "false" {
		b.imp.problemAt(e, b.p.ID, "EXT.024", `isImmediate="false" is not allowed in an executable process: remove the attribute`)
	}
	b.p.Flows = append(b.p.Flows, f)
	putFirst(b.flows, f.ID, f)
	b.flowRefs = append(b.flowRefs, flowRef{flow: f, source: e.get("sourceRef"), target: e.get("targetRef")})
}

// node reads one flow node and, for a sub-process, its content.
func (b *builder) node(e *element, parent *model.Node) {
	call := e
	e = b.callsGlobalTask(e)
	kind, _ := model.KindByName(e.local)
	if e.local == "adHocSubProcess" || e.local == "transaction" {
		kind = model.KindSubProcess
	}
	n := &model.Node{ID: e.get("id"), Name: e.get("name"), Kind: kind, Parent: parent}
	if e != call {
		n.GlobalTask = call.get("calledElement")
	}
	if n.ID == "" {
		b.imp.problemAt(e, b.p.ID, "EXT.003", "bpmn:%s has no id: give it a unique id", e.local)
	}
	b.p.Nodes = append(b.p.Nodes, n)
	if parent == nil {
		b.p.Top = append(b.p.Top, n)
	} else {
		parent.Children = append(parent.Children, n)
	}
	putFirst(b.nodes, n.ID, n)

	b.attributes(n, e)
	if e.local == "adHocSubProcess" {
		b.adHoc(n, e)
	}
	var docs []string
	for _, c := range e.children {
		if c.space != nsBPMN {
			continue
		}
		switch c.local {
		case "standardLoopCharacteristics":
			if kind.IsActivity() {
				b.standardLoop(n, c)
			}
		case "multiInstanceLoopCharacteristics":
			if kind.IsActivity() {
				b.multiInstance(n, c)
			}
		case "documentation":
			if t := c.content(); t != "" {
				docs = append(docs, t)
			}
		case "extensionElements":
			b.extensions(n, c)
		case "eventDefinitionRef":
			// The reference check reports one that points nowhere.
			if def, ok := lookup(b.imp.eventDefs, c.content()); ok {
				b.eventDefinition(n, def)
			}
		case "script":
			if kind == model.KindScriptTask {
				n.Script = c.content()
			}
		case "activationCondition":
			if kind == model.KindComplexGateway {
				n.ActivationCondition = b.imp.expression(c)
			}
		default:
			if _, ok := eventDefinitionKinds[c.local]; ok && isEvent(kind) {
				b.eventDefinition(n, c)
			}
		}
	}
	n.Documentation = strings.Join(docs, "\n")
	if kind == model.KindSubProcess {
		b.flowElements(e, n)
	}
}

// isEvent reports whether nodes of kind k carry event definitions.
func isEvent(k model.Kind) bool {
	switch k {
	case model.KindStartEvent, model.KindEndEvent, model.KindIntermediateCatchEvent,
		model.KindIntermediateThrowEvent, model.KindBoundaryEvent:
		return true
	}
	return false
}

// attributes reads the BPMN and Camunda 7 attributes of a node.
func (b *builder) attributes(n *model.Node, e *element) {
	n.ParallelMultiple = e.get("parallelMultiple") == "true"
	n.Instantiate = e.get("instantiate") == "true"
	n.ParallelEvents = n.Kind == model.KindEventBasedGateway && e.get("eventGatewayType") == "Parallel"
	n.TriggeredByEvent = e.get("triggeredByEvent") == "true"
	n.Transaction = e.local == "transaction"
	n.ForCompensation = e.get("isForCompensation") == "true"
	switch n.Kind {
	case model.KindBoundaryEvent:
		n.CancelActivity = e.get("cancelActivity") != "false"
		if ref, ok := e.attr("attachedToRef"); ok {
			b.attachedRefs = append(b.attachedRefs, nodeRef{node: n, ref: ref})
		}
	case model.KindStartEvent:
		n.CancelActivity = e.get("isInterrupting") != "false"
	case model.KindReceiveTask:
		// A receive task waits for one message: model it as the message
		// event it catches. A missing messageRef leaves Message nil, which
		// Validate reports.
		def := &model.EventDefinition{Kind: model.EventMessage}
		if ref := e.get("messageRef"); ref != "" {
			def.Message = resolveRef(b.imp.messages, ref)
		}
		n.Events = append(n.Events, def)
	case model.KindSendTask:
		// A send task sends one message: model it as the message event it
		// throws, so that without a job type it is sent like a message
		// throw event's. Without a messageRef it is a plain job.
		if ref := e.get("messageRef"); ref != "" {
			n.Events = append(n.Events, &model.EventDefinition{Kind: model.EventMessage, Message: resolveRef(b.imp.messages, ref)})
		}
	case model.KindScriptTask:
		n.ScriptFormat = e.get("scriptFormat")
	case model.KindCallActivity:
		if ce := e.get("calledElement"); ce != "" {
			n.CalledElement = model.Expression{Text: ce}
		}
	}
	if n.Kind.IsActivity() {
		// Values below 1 are the catalogue's (EXT.037, EXT.038).
		for _, q := range []struct {
			attr string
			to   *int
		}{{"startQuantity", &n.StartQuantity}, {"completionQuantity", &n.CompletionQuantity}} {
			if v, err := strconv.Atoi(strings.TrimSpace(e.get(q.attr))); err == nil && v > 1 {
				*q.to = v
			}
		}
	}
	if ref, ok := e.attr("default"); ok && ref != "" {
		b.defaultRefs = append(b.defaultRefs, nodeRef{node: n, ref: ref})
	}
	if n.Kind.IsJobTask() {
		if topic := e.nsAttr(nsCamunda, "topic"); topic != "" && e.nsAttr(nsCamunda, "type") == "external" {
			b.job(n).Type = model.Expression{Text: topic}
		}
	}
	if ref := e.nsAttr(nsCamunda, "decisionRef"); ref != "" && n.Kind == model.KindBusinessRuleTask {
		call := &model.DecisionCall{DecisionID: ref, ResultVariable: e.nsAttr(nsCamunda, "resultVariable"),
			Binding: e.nsAttr(nsCamunda, "decisionRefBinding"), VersionTag: e.nsAttr(nsCamunda, "decisionRefVersionTag"),
			MapResult: e.nsAttr(nsCamunda, "mapDecisionResult"), Camunda7: true}
		if call.MapResult == "" {
			call.MapResult = "resultList"
		}
		if v := strings.TrimSpace(e.nsAttr(nsCamunda, "decisionRefVersion")); v != "" {
			call.Version, _ = strconv.Atoi(v)
		}
		n.CalledDecision = ref
		n.Decision = call
	}
}

// job returns the node's job definition, creating it.
func (b *builder) job(n *model.Node) *model.JobDefinition {
	if n.Job == nil {
		n.Job = &model.JobDefinition{}
	}
	return n.Job
}

// standardLoop reads standardLoopCharacteristics. A loopMaximum that is
// not a non-negative whole number is a Problem.
func (b *builder) standardLoop(n *model.Node, e *element) {
	l := &model.StandardLoop{
		Condition:  b.imp.expression(e.child(nsBPMN, "loopCondition")),
		TestBefore: e.get("testBefore") == "true",
		Maximum:    -1,
	}
	if m := strings.TrimSpace(e.get("loopMaximum")); m != "" {
		v, err := strconv.Atoi(m)
		if err != nil || v < 0 {
			b.problem(n.ID, "XSD.integer", "loopMaximum %q is not a non-negative whole number: write one, or remove it", m)
		}
		l.Maximum = v
	}
	n.Loop = l
}

// resolveRef looks up the declaration a reference attribute of n names,
// or returns the zero T: the reference check (references) reports a
// reference that points nowhere or to an element of the wrong type.
func resolveRef[T any](m map[string]T, ref string) T {
	v, _ := lookup(m, ref)
	return v
}

// eventDefinition reads one event definition of an event node.
func (b *builder) eventDefinition(n *model.Node, e *element) {
	def := &model.EventDefinition{ID: e.get("id"), Kind: eventDefinitionKinds[e.local]}
	switch def.Kind {
	case model.EventMessage:
		if ref := e.get("messageRef"); ref != "" {
			def.Message = resolveRef(b.imp.messages, ref)
		}
	case model.EventSignal:
		if ref := e.get("signalRef"); ref != "" {
			def.Signal = resolveRef(b.imp.signals, ref)
		}
	case model.EventError:
		if ref := e.get("errorRef"); ref != "" {
			def.Error = resolveRef(b.imp.errors, ref)
		}
	case model.EventEscalation:
		if ref := e.get("escalationRef"); ref != "" {
			def.Escalation = resolveRef(b.imp.escalations, ref)
		}
	case model.EventTimer:
		for _, c := range e.children {
			if b.p.Executable && c.space == nsBPMN && (c.local == "timeDate" || c.local == "timeDuration" || c.local == "timeCycle") && c.content() == "" {
				b.imp.problems = append(b.imp.problems, &model.Problem{RuleID: "EXT.013", ProcessID: b.p.ID, ElementID: n.ID, Pos: c.pos,
					Rule: "bpmn:" + c.local + " is empty: a formal expression needs a body; write the value or remove the element"})
			}
		}
		def.Timer = &model.Timer{
			Date:     b.imp.expression(e.child(nsBPMN, "timeDate")),
			Duration: b.imp.expression(e.child(nsBPMN, "timeDuration")),
			Cycle:    b.imp.expression(e.child(nsBPMN, "timeCycle")),
		}
	case model.EventConditional:
		def.Condition = b.imp.expression(e.child(nsBPMN, "condition"))
	case model.EventLink:
		def.LinkName = e.get("name")
		for _, c := range e.children {
			switch {
			case c.space != nsBPMN:
			case c.local == "target":
				def.LinkTarget = localID(c.content())
			case c.local == "source":
				def.LinkSources = append(def.LinkSources, localID(c.content()))
			}
		}
	case model.EventCompensation:
		def.Activity = localID(e.get("activityRef"))
		def.WaitForCompletion = e.get("waitForCompletion") != "false"
	}
	n.Events = append(n.Events, def)
}

// resolve connects flows, default flows and boundary events once every node
// of the process is known.
func (b *builder) resolve() {
	for _, r := range b.flowRefs {
		src := b.endpoint(r.flow, "sourceRef", r.source)
		dst := b.endpoint(r.flow, "targetRef", r.target)
		r.flow.Source, r.flow.Target = src, dst
		if src == nil || dst == nil {
			// Half a flow: the end that resolved keeps it, so validation
			// knows the node is connected in the document, but no node
			// lists it and nothing runs it.
			continue
		}
		src.Outgoing = append(src.Outgoing, r.flow)
		dst.Incoming = append(dst.Incoming, r.flow)
	}
	for _, r := range b.defaultRefs {
		f, ok := lookup(b.flows, r.ref)
		if !ok {
			b.outside(r.node.ID, "default", r.ref)
			continue
		}
		r.node.Default = f
		// A default that is not one of the node's outgoing flows stays
		// recorded on the node (not the flow) for Validate to report.
		f.IsDefault = f.IsDefault || f.Source == r.node
	}
	for _, r := range b.attachedRefs {
		a, ok := lookup(b.nodes, r.ref)
		if !ok {
			if !b.isUnsupported(r.ref) {
				b.outside(r.node.ID, "attachedToRef", r.ref)
			}
			continue
		}
		r.node.AttachedTo = a
		a.Boundaries = append(a.Boundaries, r.node)
	}
	b.compensationHandlers()
}

// endpoint resolves one end of a sequence flow.
func (b *builder) endpoint(f *model.Flow, attr, ref string) *model.Node {
	if strings.TrimSpace(ref) == "" {
		b.problem(f.ID, "XSD.required", "sequence flow %s has no %s: set it to the id of a flow node", f.ID, attr)
		return nil
	}
	n, ok := lookup(b.nodes, ref)
	if !ok && !b.isUnsupported(ref) {
		b.outside(f.ID, attr, ref)
	}
	return n
}

// outside reports a reference from the process being built that names an
// element of the document outside it, such as a node of another process
// (EXT.028: sequence flows stay inside their pool). A reference that names
// no element at all is reported by the reference check.
func (b *builder) outside(elementID, attr, ref string) {
	if e, ok := lookup(b.imp.elements, ref); ok && e.space == nsBPMN && isA(e.local, "flowElement") {
		b.problem(elementID, "EXT.028", "%s %s names an element outside process %s: connect elements of the same process only", attr, ref, b.p.ID)
	}
}

// isUnsupported reports whether ref names an element rejected as
// unsupported.
func (b *builder) isUnsupported(ref string) bool {
	_, ok := lookup(b.unsupported, ref)
	return ok
}
