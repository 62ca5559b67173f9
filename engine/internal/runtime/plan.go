package runtime

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// DefaultRetries is the retries of a job whose task does not say.
const DefaultRetries = 3

// Plan is a deployed process compiled for execution: every expression
// compiled, and per-node execution data kept in slices indexed by
// model.Node.Index. A Plan is immutable and shared by all its instances.
type Plan struct {
	Process *model.Process
	// Key identifies this version of the process; Version counts the
	// deployments of the same process id from 1.
	Key     int64
	Version int
	// Deployment identifies the deployment the plan came with, which a
	// business rule task's binding "deployment" looks decisions up in.
	Deployment int64
	// DeploymentInferred is set on a plan restored from a state document
	// written before deployments were recorded (version < 3): which
	// documents were deployed together is not known, so binding
	// "deployment" takes the newest version of the decision deployed up
	// to the plan's document (DeployResources deploys the DMN models
	// before the processes).
	DeploymentInferred bool

	nodes []nodePlan
	// start is the none start event instances begin at, or nil when the
	// process can only be started by an event.
	start *model.Node
	// eventStarts are the start events of the event sub-processes directly
	// in each scope, by the scope's node index (-1: the process).
	eventStarts map[int][]handlerSpec
	// index names the plan's catches and handlers for state documents,
	// made once, when an instance of the plan is first dehydrated.
	index     *planIndex
	indexOnce sync.Once
}

// names returns the plan's index for state documents.
func (p *Plan) names() *planIndex {
	p.indexOnce.Do(func() { p.index = indexPlan(p) })
	return p.index
}

// nodePlan is what a track needs to execute one node.
type nodePlan struct {
	node *model.Node
	// decides marks a business rule task whose decision the engine
	// evaluates itself (decisions.go).
	decides bool
	// conds holds the compiled condition of each outgoing flow, in the
	// order of node.Outgoing; nil where a flow has none.
	conds []*expr.Program
	// join marks a synchronising gateway with more than one incoming flow.
	join bool
	// waits marks a wait state the loop sets up in the step that records a
	// token's entry (a catch, an event-based gateway, a job, a sub-process,
	// a call activity): from the moment the history shows the token there,
	// its subscriptions and boundary events are open. The track only blocks.
	// A multi-instance activity always waits (for its body); innerWaits
	// says whether each of its instances does (see waitsIn).
	waits      bool
	innerWaits bool
	// fork marks a node whose outgoing flows are all taken at once.
	fork bool
	// inclusive marks a converging inclusive gateway; reaches says, by
	// incoming flow and node index, from where a token can still arrive
	// on it without passing the gateway (joinReach).
	inclusive bool
	reaches   joinReach
	// complex marks a converging complex gateway, with its activation rule
	// (nil: fire as an inclusive join would).
	complex    bool
	activation *expr.Program

	jobType     *expr.Program
	jobTypeName string // the type when no expression is given
	retries     int
	// retriesExpr is set when the retries are an expression, evaluated
	// when the job is created.
	retriesExpr *expr.Program
	headers     map[string]string
	// dynHeaders are the job headers computed per job (user task
	// properties given as expressions).
	dynHeaders []headerSpec
	// script is a script task's expression the engine evaluates, as a
	// mapping to its result variable.
	script *mappingSpec

	// catches are the subscriptions a token opens when it waits at the
	// node: its own event definitions, or an event-based gateway's arms.
	catches []catchSpec
	// throw is set on a message or signal throw event (or send task) the
	// engine publishes itself.
	throw *catchSpec
	// startCatch is the trigger of a process-level message, signal or
	// timer start event.
	startCatch *catchSpec
	// inputs create the element's local variables when it is entered;
	// outputs set process variables when it is left.
	inputs, outputs []mappingSpec

	// boundaries are the activity's boundary events, in document order.
	boundaries []handlerSpec
	// subStart is a sub-process's none start event.
	subStart *model.Node
	// raise is set on an error or escalation end or throw event.
	raise *raiseSpec
	// calledElement is a call activity's process id.
	calledElement *expr.Program
	// loop repeats the activity (standard loop characteristics).
	loop *loopSpec
	// multi runs the activity as a multi-instance activity.
	multi *multiSpec
	// adhoc is set on an ad-hoc sub-process (adhoc.go).
	adhoc *adHocSpec
	// link is the link catch event a link throw event jumps to.
	link *model.Node
	// throws are, on a throw or end event with several event
	// definitions (BPMN's "multiple" event), what it throws, in document
	// order (throwAll); a single definition uses throw or raise instead.
	throws []throwStep
	// startsWaiting marks an activity with a start quantity (a join)
	// that, once started, waits for what the loop sets up (quantity.go).
	startsWaiting bool
	// comp is the node's part in compensation and transactions
	// (compensation.go); nil for most nodes.
	comp *compPlan
}

// loopSpec is a compiled standard loop.
type loopSpec struct {
	cond       *expr.Program // nil: no condition, the maximum alone ends it
	testBefore bool
	max        int // negative: no maximum
}

// raiseSpec is the error or escalation an end or throw event raises.
type raiseSpec struct {
	kind model.EventKind
	code string
}

// throwStep is one event definition of a multiple throw or end event: a
// message or signal the engine publishes, or an error or escalation it
// raises. A terminate or link definition needs no step: the token ends the
// scope, or jumps, as it leaves the event once the steps are thrown.
type throwStep struct {
	publish *catchSpec
	raise   *raiseSpec
}

// catchSpec is one event a waiting token subscribes to.
type catchSpec struct {
	// arm is the node whose event this is: the waiting node itself, or
	// the arm of an event-based gateway the token moves to when it fires.
	arm *model.Node
	def *model.EventDefinition
	// key is a message's correlation key expression (nil: empty key).
	key   *expr.Program
	timer *timerSpec
	// cond is a conditional event's condition.
	cond *expr.Program
}

// name returns the message or signal name the spec waits for.
func (c *catchSpec) name() string {
	switch {
	case c.def.Message != nil:
		return c.def.Message.Name
	case c.def.Signal != nil:
		return c.def.Signal.Name
	}
	return ""
}

// CompileOptions say how to compile a process.
type CompileOptions struct {
	Expr expr.Options
	// Strict rejects job tasks that name no job type.
	Strict bool
	// Deployment is the deployment the plans come with (NewDeployment).
	Deployment int64
}

// Compile turns a validated process into a Plan. Elements the runtime does
// not execute, and expressions that do not compile, are reported as
// *model.Problem values naming the element.
func Compile(p *model.Process, opts CompileOptions) (*Plan, error) {
	c := &compiler{
		plan: &Plan{Process: p, nodes: make([]nodePlan, len(p.Nodes)), eventStarts: map[int][]handlerSpec{}},
		p:    p,
		opts: opts,
	}
	for _, n := range p.Nodes {
		c.node(n)
	}
	for _, n := range p.Top {
		if err := c.plan.compileInstantiation(n); err != nil {
			c.problem(n.ID, "FT.unsupported", err, "%s", err)
		}
	}
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return c.plan, nil
}

// compiler is one run of Compile: the plan it fills in and the problems it
// has found so far, in the order they are reported.
type compiler struct {
	plan *Plan
	p    *model.Process
	opts CompileOptions
	errs []error
}

// problem records a problem on element n; the rule is the one err names,
// or else rule.
func (c *compiler) problem(n, rule string, err error, format string, args ...any) {
	c.errs = append(c.errs, &model.Problem{RuleID: ruleOf(err, rule), ProcessID: c.p.ID, ElementID: n, Rule: fmt.Sprintf(format, args...)})
}

// node compiles one node: what every node has (mappings, flow conditions),
// then what its kind needs, then what activities may carry (boundaries,
// loop, multi-instance, ad-hoc), then the work it does (a throw, a script,
// a job), then its start quantity. The order is the order problems are
// reported in.
func (c *compiler) node(n *model.Node) {
	np := &c.plan.nodes[n.Index]
	np.node = n
	if err := supported(n); err != nil {
		c.problem(n.ID, "FT.unsupported", err, "%s", err)
		return
	}
	np.comp = compileCompensation(c.p, n)
	c.mappings(np)
	c.conditions(np)
	switch n.Kind {
	case model.KindParallelGateway:
		c.parallelGateway(np)
	case model.KindInclusiveGateway:
		c.inclusiveGateway(np)
	case model.KindComplexGateway:
		c.complexGateway(np)
	case model.KindStartEvent:
		c.startEvent(np)
	case model.KindIntermediateCatchEvent, model.KindReceiveTask:
		c.catchEvent(np)
	case model.KindEventBasedGateway:
		c.eventBasedGateway(np)
	case model.KindCallActivity:
		c.callActivity(np)
	case model.KindSubProcess:
		c.subProcess(np)
	case model.KindEndEvent, model.KindIntermediateThrowEvent:
		c.throwEvent(np)
	}
	c.characteristics(np)
	if isThrow(n) {
		c.publish(np)
	}
	switch {
	case n.Kind == model.KindScriptTask && !n.ScriptExpression.IsZero() && (n.Job == nil || n.Job.Type.IsZero()):
		c.scriptTask(np)
	case n.Kind == model.KindBusinessRuleTask && n.Decision != nil && (n.Job == nil || n.Job.Type.IsZero()):
		c.decisionTask(np)
	case (n.Kind.IsJobTask() || isMessageJob(n)) && np.throw == nil:
		c.jobTask(np)
	}
	if err := compileStartQuantity(np); err != nil {
		c.problem(n.ID, "FT.unsupported", err, "%s", err)
	}
	np.waits = waitsOnEntry(np)
	np.innerWaits = np.waits
	if np.multi != nil {
		np.waits = true // the body: the loop sets it up on entry
	}
}

// mappings compiles the node's input and output mappings.
func (c *compiler) mappings(np *nodePlan) {
	n := np.node
	var err error
	if np.inputs, err = compileMappings(n.Inputs, c.opts.Expr); err != nil {
		c.problem(n.ID, "FT.mapping", err, "input %v", err)
	}
	if np.outputs, err = compileMappings(n.Outputs, c.opts.Expr); err != nil {
		c.problem(n.ID, "FT.mapping", err, "output %v", err)
	}
}

// conditions compiles the conditions of the node's outgoing flows; a
// problem names the flow.
func (c *compiler) conditions(np *nodePlan) {
	n := np.node
	np.conds = make([]*expr.Program, len(n.Outgoing))
	for i, f := range n.Outgoing {
		if f.Condition.IsZero() {
			continue
		}
		prog, err := expr.Compile(f.Condition, expr.Condition, c.opts.Expr)
		if err != nil {
			c.problem(f.ID, "FT.expression", err, "condition: %v", err)
			continue
		}
		np.conds[i] = prog
	}
}

// parallelGateway forks on all outgoing flows and, with more than one
// incoming flow, joins.
func (c *compiler) parallelGateway(np *nodePlan) {
	np.join = len(np.node.Incoming) > 1
	np.fork = true
}

// inclusiveGateway joins, with more than one incoming flow, the tokens
// that can still arrive.
func (c *compiler) inclusiveGateway(np *nodePlan) {
	n := np.node
	np.join = len(n.Incoming) > 1
	np.inclusive = np.join
	if np.join {
		np.reaches = upstream(c.p, n)
	}
}

// complexGateway joins, with more than one incoming flow, as its
// activation condition says.
func (c *compiler) complexGateway(np *nodePlan) {
	n := np.node
	np.join = len(n.Incoming) > 1
	np.complex = np.join
	if !np.join {
		return
	}
	np.reaches = upstream(c.p, n)
	if !n.ActivationCondition.IsZero() {
		prog, err := expr.Compile(n.ActivationCondition, expr.Condition, c.opts.Expr)
		if err != nil {
			c.problem(n.ID, "FT.expression", err, "activation condition: %v", err)
		}
		np.activation = prog
	}
}

// startEvent records the process's none start event, and compiles the
// trigger of a process-level event start.
func (c *compiler) startEvent(np *nodePlan) {
	n := np.node
	if len(n.Events) == 0 && n.Parent == nil && c.plan.start == nil {
		c.plan.start = n
	}
	if n.Parent == nil && len(n.Events) == 1 {
		// A process-level start event subscribes at deploy: its trigger
		// compiles like any catch, so a missing message, signal or timer
		// value is a problem here, not a crash while registering it.
		sc, err := compileCatch(n, n.Events[0], c.opts.Expr)
		if err != nil {
			c.problem(n.ID, "FT.expression", err, "%v", err)
			return
		}
		np.startCatch = &sc
	}
}

// catchEvent compiles what an intermediate catch event or a receive task
// waits for.
func (c *compiler) catchEvent(np *nodePlan) {
	n := np.node
	for _, d := range n.Events {
		if d.Kind == model.EventLink {
			continue // a link catch is where a throw goes on: nothing to wait for
		}
		sc, err := compileCatch(n, d, c.opts.Expr)
		if err != nil {
			c.problem(n.ID, "FT.expression", err, "%v", err)
			continue
		}
		np.catches = append(np.catches, sc)
	}
}

// eventBasedGateway compiles its arms' events, which a token waiting at
// the gateway subscribes to; a problem names the arm.
func (c *compiler) eventBasedGateway(np *nodePlan) {
	for _, f := range np.node.Outgoing {
		for _, d := range f.Target.Events {
			sc, err := compileCatch(f.Target, d, c.opts.Expr)
			if err != nil {
				c.problem(f.Target.ID, "FT.expression", err, "%v", err)
				continue
			}
			np.catches = append(np.catches, sc)
		}
	}
}

// callActivity compiles the id of the process a call activity calls.
func (c *compiler) callActivity(np *nodePlan) {
	n := np.node
	if n.CalledElement.IsZero() {
		c.problem(n.ID, "FT.called-element", nil, "call activity needs a calledElement: set calledElement or zeebe:calledElement processId")
		return
	}
	prog, err := expr.Compile(n.CalledElement, expr.Static, c.opts.Expr)
	if err != nil {
		c.problem(n.ID, "FT.expression", err, "called element: %v", err)
		return
	}
	np.calledElement = prog
}

// subProcess records a sub-process's none start event and, for an event
// sub-process, registers its start events as handlers of the enclosing
// scope.
func (c *compiler) subProcess(np *nodePlan) {
	n := np.node
	for _, ch := range n.Children {
		if ch.Kind == model.KindStartEvent && len(ch.Events) == 0 {
			np.subStart = ch
		}
	}
	if !n.TriggeredByEvent {
		return
	}
	scopeIdx := -1
	if n.Parent != nil {
		scopeIdx = n.Parent.Index
	}
	for _, ch := range n.Children {
		if ch.Kind != model.KindStartEvent {
			continue
		}
		h, err := compileHandler(ch, n, c.opts)
		if err != nil {
			c.problem(ch.ID, "FT.expression", err, "%v", err)
			continue
		}
		c.plan.eventStarts[scopeIdx] = append(c.plan.eventStarts[scopeIdx], h)
	}
}

// throwEvent records where an end or intermediate throw event's link
// jumps to and the error or escalation it raises. Its message or signal
// is compiled by publish.
func (c *compiler) throwEvent(np *nodePlan) {
	n := np.node
	if n.HasEvent(model.EventLink) {
		// Validate made sure there is exactly one.
		if targets := model.LinkTargets(c.p, n); len(targets) == 1 {
			np.link = targets[0]
		}
	}
	if len(n.Events) > 1 {
		c.multipleThrow(np)
		return
	}
	if len(n.Events) == 1 {
		np.raise = raiseOf(n.Events[0])
	}
}

// raiseOf returns what an error or escalation definition raises, or nil
// for any other definition.
func raiseOf(d *model.EventDefinition) *raiseSpec {
	switch d.Kind {
	case model.EventError:
		r := &raiseSpec{kind: d.Kind}
		if d.Error != nil {
			r.code = d.Error.Code
		}
		return r
	case model.EventEscalation:
		r := &raiseSpec{kind: d.Kind}
		if d.Escalation != nil {
			r.code = d.Escalation.Code
		}
		return r
	}
	return nil
}

// multipleThrow compiles a throw or end event with several event
// definitions: BPMN 2.0 §10.5 ("Multiple": all of them are thrown), in
// document order (throwAll).
func (c *compiler) multipleThrow(np *nodePlan) {
	n := np.node
	for _, d := range n.Events {
		switch d.Kind {
		case model.EventMessage, model.EventSignal:
			sc, err := compileCatch(n, d, c.opts.Expr)
			if err != nil {
				c.problem(n.ID, "FT.expression", err, "%v", err)
				continue
			}
			np.throws = append(np.throws, throwStep{publish: &sc})
		case model.EventError, model.EventEscalation:
			np.throws = append(np.throws, throwStep{raise: raiseOf(d)})
		}
	}
}

// characteristics compiles what an activity may carry: its boundary
// events, standard loop, multi-instance and ad-hoc characteristics.
func (c *compiler) characteristics(np *nodePlan) {
	n := np.node
	for _, b := range n.Boundaries {
		h, err := compileHandler(b, nil, c.opts)
		if err != nil {
			c.problem(b.ID, "FT.expression", err, "%v", err)
			continue
		}
		np.boundaries = append(np.boundaries, h)
	}
	if n.Loop != nil {
		if err := compileLoop(np, c.opts); err != nil {
			c.problem(n.ID, "FT.expression", err, "%v", err)
		}
	}
	if n.Multi != nil {
		if err := compileMulti(np, c.opts); err != nil {
			c.problem(n.ID, "FT.expression", err, "%v", err)
		}
	}
	if n.AdHoc != nil {
		if err := compileAdHoc(np, c.opts); err != nil {
			c.problem(n.ID, "FT.expression", err, "%v", err)
		}
	}
}

// publish compiles the message or signal a throw event, end event or send
// task publishes itself (see isThrow).
func (c *compiler) publish(np *nodePlan) {
	n := np.node
	sc, err := compileCatch(n, n.Events[0], c.opts.Expr)
	if err != nil {
		c.problem(n.ID, "FT.expression", err, "%v", err)
	}
	np.throw = &sc
}

// scriptTask compiles the expression of a script task the engine
// evaluates itself.
func (c *compiler) scriptTask(np *nodePlan) {
	if err := compileScript(np, c.opts.Expr); err != nil {
		c.problem(np.node.ID, "FT.mapping", err, "%v", err)
	}
}

// decisionTask checks the call of a business rule task whose decision the
// engine evaluates (the decision itself is found when the task runs, as
// Zeebe does: it may be deployed later).
func (c *compiler) decisionTask(np *nodePlan) {
	d := np.node.Decision
	switch {
	case d.DecisionID == "":
		c.problem(np.node.ID, "FT.decision", nil, "the business rule task names no decision (decisionId)")
	case d.ResultVariable == "":
		c.problem(np.node.ID, "FT.decision", nil, "the business rule task calling decision %q needs a resultVariable: name the variable that receives the result", d.DecisionID)
	}
	switch d.Binding {
	case "", "latest", "deployment":
	case "versionTag":
		if d.VersionTag == "" {
			c.problem(np.node.ID, "FT.decision", nil, "binding versionTag without a versionTag")
		}
	case "version":
		if !d.Camunda7 || d.Version < 1 {
			c.problem(np.node.ID, "FT.decision", nil, "binding version needs a decisionRefVersion of 1 or more")
		}
	default:
		c.problem(np.node.ID, "FT.decision", nil, "unknown decision binding %q (latest, deployment, versionTag)", d.Binding)
	}
	switch d.MapResult {
	case "", "singleEntry", "singleResult", "collectEntries", "resultList":
	default:
		c.problem(np.node.ID, "FT.decision", nil, "unknown mapDecisionResult %q (singleEntry, singleResult, collectEntries, resultList)", d.MapResult)
	}
	np.decides = true
}

// jobTask compiles the job a worker does for the node: its type, retries
// and headers, and a user task's properties.
func (c *compiler) jobTask(np *nodePlan) {
	if err := compileJob(np, c.opts); err != nil {
		c.problem(np.node.ID, "FT.expression", err, "%v", err)
	}
	if err := compileUserTask(np, c.opts.Expr); err != nil {
		c.problem(np.node.ID, "FT.expression", err, "%v", err)
	}
}

// waitsOnEntry reports whether a token entering np's node waits there for
// something the loop sets up: an event, a job, a sub-process or a called
// instance. Looping activities are left to their track, which decides each
// iteration.
func waitsOnEntry(np *nodePlan) bool {
	if np.join || np.loop != nil || np.raise != nil || np.throw != nil || len(np.throws) > 0 {
		return false
	}
	switch n := np.node; {
	case len(np.catches) > 0, n.Kind == model.KindCallActivity:
		return true
	case n.Kind == model.KindSubProcess:
		return !n.TriggeredByEvent
	}
	return np.jobTypeName != ""
}

// supported reports elements the runtime cannot execute yet.
func supported(n *model.Node) error {
	unsupported := func() error { return broke("FT.unsupported", "unsupported element bpmn:%s", n.Kind) }
	trigger := func(allowed ...model.EventKind) error {
		if len(n.Events) > 1 && n.Kind != model.KindIntermediateCatchEvent {
			if err := multipleThrowSupported(n); err != nil {
				return err
			}
		}
		for _, d := range n.Events {
			if !slices.Contains(allowed, d.Kind) {
				return broke("FT.unsupported", "unsupported element bpmn:%s with %s trigger", n.Kind, d.Kind)
			}
		}
		return nil
	}
	var err error
	switch n.Kind {
	case model.KindStartEvent:
		switch {
		case n.Parent != nil && n.Parent.TriggeredByEvent:
			err = trigger(model.EventMessage, model.EventSignal, model.EventTimer, model.EventError, model.EventEscalation, model.EventConditional,
				model.EventCompensation)
		case n.Parent != nil:
			// A sub-process's start event is a none start event: model
			// validation refuses any other (EXT.100).
		default:
			err = trigger(model.EventMessage, model.EventSignal, model.EventTimer)
		}
	case model.KindEndEvent:
		err = trigger(model.EventTerminate, model.EventMessage, model.EventSignal, model.EventError, model.EventEscalation,
			model.EventCompensation, model.EventCancel)
	case model.KindIntermediateThrowEvent:
		err = trigger(model.EventMessage, model.EventSignal, model.EventEscalation, model.EventLink, model.EventCompensation)
	case model.KindSubProcess, model.KindCallActivity:
	case model.KindBoundaryEvent:
		err = trigger(model.EventMessage, model.EventSignal, model.EventTimer, model.EventError, model.EventEscalation, model.EventConditional,
			model.EventCompensation, model.EventCancel)
	case model.KindIntermediateCatchEvent:
		if n.HasEvent(model.EventLink) && len(n.Events) > 1 {
			return broke("FT.unsupported", "unsupported element bpmn:%s with a link and other triggers", n.Kind)
		}
		err = trigger(model.EventMessage, model.EventSignal, model.EventTimer, model.EventConditional, model.EventLink)
	case model.KindTask, model.KindManualTask, model.KindReceiveTask, model.KindExclusiveGateway, model.KindParallelGateway,
		model.KindInclusiveGateway, model.KindComplexGateway, model.KindEventBasedGateway:
	case model.KindServiceTask, model.KindUserTask, model.KindBusinessRuleTask, model.KindScriptTask, model.KindSendTask:
	default:
		return unsupported()
	}
	if err != nil {
		return err
	}
	return nil
}

// multipleThrowSupported reports the multiple events the runtime cannot
// execute: a multiple start or boundary event (several triggers to catch,
// any one of which would start or fire it), and a multiple throw or end
// event with a definition that makes the thrower wait or that hands the
// event to a worker. A compensation definition waits for the handlers it
// starts and a cancel definition undoes its transaction first; thrown
// beside others, what is thrown after them would depend on their outcome,
// so each stays an event of its own.
func multipleThrowSupported(n *model.Node) error {
	if n.Kind != model.KindIntermediateThrowEvent && n.Kind != model.KindEndEvent {
		return broke("FT.unsupported", "unsupported element bpmn:%s with multiple triggers", n.Kind)
	}
	for _, d := range n.Events {
		if d.Kind == model.EventCompensation || d.Kind == model.EventCancel {
			return broke("FT.unsupported", "unsupported: a %s definition beside other event definitions on one bpmn:%s (it waits for what it starts): throw it from an event of its own", d.Kind, n.Kind)
		}
	}
	if n.Job != nil && !n.Job.Type.IsZero() {
		return broke("FT.unsupported", "unsupported: a job type on a bpmn:%s with several event definitions: the engine throws them itself; remove the job type or throw the message from an event of its own", n.Kind)
	}
	return nil
}

func compileJob(np *nodePlan, opts CompileOptions) error {
	n := np.node
	np.retries = DefaultRetries
	np.jobTypeName = n.Kind.String()
	if n.Kind == model.KindScriptTask && n.Job == nil {
		np.jobTypeName = "script"
		np.headers = map[string]string{"scriptFormat": n.ScriptFormat, "script": n.Script}
		return nil
	}
	if n.Job == nil || n.Job.Type.IsZero() {
		if opts.Strict {
			return broke("FT.job-type", "%s has no job type (strict mode requires zeebe:taskDefinition or camunda:topic)", n.Kind)
		}
	} else {
		prog, err := expr.Compile(n.Job.Type, expr.Static, opts.Expr)
		if err != nil {
			return fmt.Errorf("job type: %w", err)
		}
		np.jobType = prog
	}
	if n.Job == nil {
		return nil
	}
	if !n.Job.Retries.IsZero() {
		prog, err := expr.Compile(n.Job.Retries, expr.Static, opts.Expr)
		if err != nil {
			return fmt.Errorf("job retries: %w", err)
		}
		if prog.IsStatic() {
			r, err := strconv.Atoi(strings.TrimSpace(n.Job.Retries.Text))
			if err != nil || r < 0 {
				return broke("FT.job-retries", "job retries %q is not a non-negative whole number", n.Job.Retries.Text)
			}
			np.retries = r
		} else {
			np.retriesExpr = prog
		}
	}
	if len(n.Job.Headers) > 0 {
		np.headers = make(map[string]string, len(n.Job.Headers))
		for _, h := range n.Job.Headers {
			np.headers[h.Key] = h.Value
		}
	}
	return nil
}

// writes reports whether the loop must evaluate something at np's node
// before a token passing it leaves (it alone writes variables): a throw, a
// script, or output mappings.
func (np *nodePlan) writes() bool {
	return np.throw != nil || len(np.throws) > 0 || np.script != nil || np.decides || len(np.outputs) > 0
}

// isThrow reports whether n is a message or signal throw the engine
// publishes itself: a throw or end event with such a definition, or a send
// task with a message and no job type.
func isThrow(n *model.Node) bool {
	if len(n.Events) != 1 {
		return false
	}
	switch n.Events[0].Kind {
	case model.EventMessage:
		switch n.Kind {
		case model.KindIntermediateThrowEvent, model.KindEndEvent:
			return n.Job == nil || n.Job.Type.IsZero()
		case model.KindSendTask:
			return n.Job == nil || n.Job.Type.IsZero()
		}
	case model.EventSignal:
		return n.Kind == model.KindIntermediateThrowEvent || n.Kind == model.KindEndEvent
	}
	return false
}

// isMessageJob reports a message throw or end event with a job type: like
// Zeebe, the engine hands it to a worker as a job instead of publishing the
// message itself.
func isMessageJob(n *model.Node) bool {
	return (n.Kind == model.KindIntermediateThrowEvent || n.Kind == model.KindEndEvent) &&
		len(n.Events) == 1 && n.Events[0].Kind == model.EventMessage && n.Job != nil && !n.Job.Type.IsZero()
}

// compileCatch compiles what a token needs to subscribe to (or throw) d.
func compileCatch(n *model.Node, d *model.EventDefinition, opts expr.Options) (catchSpec, error) {
	c := catchSpec{arm: n, def: d}
	switch d.Kind {
	case model.EventMessage:
		if d.Message == nil {
			return c, nil // model validation refuses the model (EXT.127)
		}
		if d.Message.Name == "" {
			return c, broke("FT.message-name", "message %s has no name: give the bpmn:message a name", d.Message.ID)
		}
		if !d.Message.CorrelationKey.IsZero() {
			prog, err := expr.Compile(d.Message.CorrelationKey, expr.Static, opts)
			if err != nil {
				return c, fmt.Errorf("correlation key: %w", err)
			}
			c.key = prog
		}
	case model.EventSignal:
		if d.Signal == nil || d.Signal.Name == "" {
			return c, signalMissing(d)
		}
	case model.EventTimer:
		ts, err := compileTimer(d.Timer, opts)
		if err != nil {
			return c, fmt.Errorf("timer: %w", err)
		}
		c.timer = ts
	case model.EventConditional:
		if d.Condition.IsZero() {
			return c, broke("EXT.123", "conditional event needs a condition: add a condition expression")
		}
		prog, err := expr.Compile(d.Condition, expr.Condition, opts)
		if err != nil {
			return c, fmt.Errorf("condition: %w", err)
		}
		c.cond = prog
	default:
		return c, broke("FT.unsupported", "unsupported %s event here", d.Kind)
	}
	return c, nil
}

// signalMissing says what a signal event without a named signal lacks.
func signalMissing(d *model.EventDefinition) error {
	if d.Signal == nil {
		return broke("FT.signal-ref", "signal event needs a signal: set signalRef to a bpmn:signal")
	}
	return broke("FT.signal-name", "signal %s has no name: give the bpmn:signal a name", d.Signal.ID)
}

// joinReach is what a token at each node can still do to each incoming
// flow of a converging inclusive or complex gateway without passing the
// gateway; both tables are indexed [incoming flow][node index].
//
// feeds[i] marks the nodes from which a token can still appear on flow
// i: along sequence flows and link jumps, or through a boundary event of
// the activity the token is at. A boundary event fires while the token
// waits at its activity: an interrupting one moves that token onto its
// outgoing flows, a non-interrupting one adds a token there and leaves
// the activity's token where it was. Either way a token may appear on
// flow i, so a join with flow i empty waits for the activity.
//
// carries[i] marks the nodes from which the token itself can arrive on
// flow i: the same paths, except through non-interrupting boundary
// events. It decides which tokens the join need not wait for (BPMN 2.0
// §13.4.3 as corrected by BPMN2-289: a token excused because it can reach
// a filled flow is one whose own path, formed by sequence flows, goes
// there). A task whose non-interrupting boundary event feeds a filled flow
// is not excused from the empty flow its own outgoing flow feeds: its own
// token still comes that way.
//
// Other ways a token appears beside an activity feed nothing here: an
// event sub-process and a compensation handler have no outgoing sequence
// flows (their tokens end inside them), and a compensation boundary event
// has none either (it fires after its activity completed, through an
// association). A token inside a sub-process, multi-instance body or
// called process is in another scope; the join sees the token waiting at
// that activity in its own scope, and the activity's boundary events as
// above.
type joinReach struct {
	feeds, carries [][]bool
}

// upstream computes the joinReach of join: per incoming flow, a backward
// search from the flow's source that stops at join.
func upstream(p *model.Process, join *model.Node) joinReach {
	return joinReach{feeds: reachBack(p, join, true), carries: reachBack(p, join, false)}
}

// reachBack searches backwards from each incoming flow of join, along
// sequence flows, link jumps and boundary attachments (non-interrupting
// ones only when spawns is set), stopping at join.
func reachBack(p *model.Process, join *model.Node, spawns bool) [][]bool {
	out := make([][]bool, len(join.Incoming))
	for i, f := range join.Incoming {
		seen := make([]bool, len(p.Nodes))
		stack := []*model.Node{f.Source}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n == join || seen[n.Index] {
				continue
			}
			seen[n.Index] = true
			for _, in := range n.Incoming {
				stack = append(stack, in.Source)
			}
			if n.Kind == model.KindIntermediateCatchEvent && n.HasEvent(model.EventLink) {
				stack = append(stack, linkSources(p, n)...)
			}
			if n.Kind == model.KindBoundaryEvent && n.AttachedTo != nil && !n.HasEvent(model.EventCompensation) &&
				(n.CancelActivity || spawns) {
				stack = append(stack, n.AttachedTo)
			}
		}
		out[i] = seen
	}
	return out
}

// linkSources returns the link throw events that jump to the link catch
// event catch.
func linkSources(p *model.Process, catch *model.Node) []*model.Node {
	var out []*model.Node
	for _, n := range p.Nodes {
		if n.Kind == model.KindIntermediateThrowEvent && slices.Contains(model.LinkTargets(p, n), catch) {
			out = append(out, n)
		}
	}
	return out
}

// compileLoop compiles a standard loop. Loops run on tasks (job or
// pass-through), sub-processes and call activities; each iteration of the
// latter two waits for its sub-process or called instance.
func compileLoop(np *nodePlan, opts CompileOptions) error {
	n := np.node
	switch {
	case n.Kind.IsJobTask(), n.Kind == model.KindTask, n.Kind == model.KindManualTask, n.Kind == model.KindCallActivity:
	case n.Kind == model.KindSubProcess && !n.TriggeredByEvent:
	default:
		return broke("FT.unsupported", "unsupported: standard loop characteristics on bpmn:%s", n.Kind)
	}
	l := &loopSpec{testBefore: n.Loop.TestBefore, max: n.Loop.Maximum}
	if !n.Loop.Condition.IsZero() {
		prog, err := expr.Compile(n.Loop.Condition, expr.Condition, opts.Expr)
		if err != nil {
			return fmt.Errorf("loop condition: %w", err)
		}
		l.cond = prog
	}
	if l.cond == nil && l.max < 0 {
		return broke("FT.loop", "a standard loop needs a loopCondition or a loopMaximum: add one")
	}
	np.loop = l
	return nil
}
