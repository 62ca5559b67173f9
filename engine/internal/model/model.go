// Package model holds immutable process definitions: processes, nodes,
// sequence flows and event definitions.
//
// A model is format-free (it knows nothing of XML) and execution-free (it
// knows nothing of tokens). Importers build it, Validate checks it, and the
// runtime compiles it into an executable plan. After Validate returns nil a
// Definitions value is never mutated again, so it may be shared by any number
// of goroutines and instances.
package model

// Kind says what a node is. Its String form is the BPMN element name
// ("serviceTask"), which error messages and the event stream use.
type Kind uint8

// Node kinds. Only the kinds listed here can appear in a model; an importer
// rejects any other flow element as unsupported.
const (
	KindStartEvent Kind = iota + 1
	KindEndEvent
	KindIntermediateCatchEvent
	KindIntermediateThrowEvent
	KindBoundaryEvent
	KindTask
	KindManualTask
	KindServiceTask
	KindUserTask
	KindSendTask
	KindReceiveTask
	KindBusinessRuleTask
	KindScriptTask
	KindExclusiveGateway
	KindParallelGateway
	KindInclusiveGateway
	KindComplexGateway
	KindEventBasedGateway
	KindSubProcess
	KindCallActivity
)

var kindNames = [...]string{
	KindStartEvent:             "startEvent",
	KindEndEvent:               "endEvent",
	KindIntermediateCatchEvent: "intermediateCatchEvent",
	KindIntermediateThrowEvent: "intermediateThrowEvent",
	KindBoundaryEvent:          "boundaryEvent",
	KindTask:                   "task",
	KindManualTask:             "manualTask",
	KindServiceTask:            "serviceTask",
	KindUserTask:               "userTask",
	KindSendTask:               "sendTask",
	KindReceiveTask:            "receiveTask",
	KindBusinessRuleTask:       "businessRuleTask",
	KindScriptTask:             "scriptTask",
	KindExclusiveGateway:       "exclusiveGateway",
	KindParallelGateway:        "parallelGateway",
	KindInclusiveGateway:       "inclusiveGateway",
	KindComplexGateway:         "complexGateway",
	KindEventBasedGateway:      "eventBasedGateway",
	KindSubProcess:             "subProcess",
	KindCallActivity:           "callActivity",
}

// String returns the BPMN local element name of the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// KindByName maps a BPMN local element name to its Kind.
func KindByName(name string) (Kind, bool) {
	for k, n := range kindNames {
		if n == name && n != "" {
			return Kind(k), true
		}
	}
	return 0, false
}

// IsGateway reports whether k is one of the gateway kinds.
func (k Kind) IsGateway() bool { return k >= KindExclusiveGateway && k <= KindEventBasedGateway }

// IsActivity reports whether k is a task, sub-process or call activity:
// the elements that can carry boundary events and do work.
func (k Kind) IsActivity() bool { return k >= KindTask && k <= KindScriptTask || k >= KindSubProcess }

// IsJobTask reports whether a node of kind k is executed as a job by default:
// the host does its work and reports back through the jobs API.
func (k Kind) IsJobTask() bool {
	switch k {
	case KindServiceTask, KindUserTask, KindSendTask, KindBusinessRuleTask, KindScriptTask:
		return true
	}
	return false
}

// EventKind says which trigger an event definition carries.
type EventKind uint8

// Event definition kinds. EventNone is the kind of an event with no
// definition (a none start or end event).
const (
	EventNone EventKind = iota
	EventMessage
	EventSignal
	EventTimer
	EventError
	EventEscalation
	EventTerminate
	EventConditional
	EventLink
	EventCompensation
	EventCancel
)

var eventKindNames = [...]string{
	EventNone:         "none",
	EventMessage:      "message",
	EventSignal:       "signal",
	EventTimer:        "timer",
	EventError:        "error",
	EventEscalation:   "escalation",
	EventTerminate:    "terminate",
	EventConditional:  "conditional",
	EventLink:         "link",
	EventCompensation: "compensation",
	EventCancel:       "cancel",
}

// String returns the kind's lower-case name ("message", "timer").
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "unknown"
}

// Expression is an expression as written in the model: the text, and the
// language it was declared in (empty when the model did not say). Dialect
// selection (FEEL with a leading "=", JUEL "${...}", plain values) happens
// when the runtime compiles it.
type Expression struct {
	Text     string
	Language string
}

// IsZero reports whether the expression is absent.
func (e Expression) IsZero() bool { return e.Text == "" }

// Message is a global message declaration (bpmn:message).
type Message struct {
	ID   string
	Name string
	// CorrelationKey is the subscription's correlation key expression
	// (zeebe:subscription correlationKey, or BPMN correlation properties).
	CorrelationKey Expression
}

// Signal is a global signal declaration (bpmn:signal).
type Signal struct {
	ID   string
	Name string
}

// Error is a global error declaration (bpmn:error).
type Error struct {
	ID   string
	Name string
	Code string
}

// Escalation is a global escalation declaration (bpmn:escalation).
type Escalation struct {
	ID   string
	Name string
	Code string
}

// Timer holds a timer event definition: exactly one of Date, Duration or
// Cycle is set, each an expression yielding ISO-8601 text.
type Timer struct {
	Date     Expression
	Duration Expression
	Cycle    Expression
}

// EventDefinition is one trigger of an event. The reference matching Kind
// is set (Message for EventMessage, and so on); a nil reference on a catch
// means "any" (a catch-all error boundary).
type EventDefinition struct {
	ID         string
	Kind       EventKind
	Message    *Message
	Signal     *Signal
	Error      *Error
	Escalation *Escalation
	Timer      *Timer
	// Condition is the condition of a conditional event.
	Condition Expression
	// LinkName is the name of a link event.
	LinkName string
	// LinkTarget is, on a link throw event, the id of the link event
	// definition of the catch it jumps to (bpmn:target), and LinkSources
	// are, on a link catch event, those of the throws that jump to it
	// (bpmn:source); empty when the document pairs its links by name
	// only (LinkTargets).
	LinkTarget  string
	LinkSources []string
	// Activity is the id of the activity a compensation throw or end
	// event compensates (activityRef); empty compensates every completed
	// activity of the event's scope.
	Activity string
	// WaitForCompletion says whether a compensation throw or end event
	// waits for the compensation it starts to finish before it goes on
	// (the BPMN default, and Zeebe's only behaviour).
	WaitForCompletion bool
}

// JobDefinition says how a task is executed as a job.
type JobDefinition struct {
	// Type is the job type expression; empty means the engine derives the
	// type from the element kind ("serviceTask").
	Type Expression
	// Retries is the retries expression; empty means the engine default.
	Retries Expression
	// Headers are static custom headers handed to the worker, in document
	// order of the model.
	Headers []Header
}

// UserTask holds a user task's assignment, form and schedule
// (zeebe:assignmentDefinition, zeebe:formDefinition, zeebe:taskSchedule).
// Each is a value or an expression; a zero one is absent.
type UserTask struct {
	Assignee Expression
	// CandidateGroups and CandidateUsers are comma-separated lists, or
	// expressions yielding lists of text.
	CandidateGroups Expression
	CandidateUsers  Expression
	FormKey         Expression
	// DueDate and FollowUpDate are ISO-8601 date-times.
	DueDate      Expression
	FollowUpDate Expression
}

// Header is one custom job header.
type Header struct {
	Key   string
	Value string
}

// Mapping is one input or output variable mapping: Target receives the
// value of Source evaluated in the mapping's scope.
type Mapping struct {
	Source Expression
	Target string
}

// Node is one flow node of a process or sub-process.
type Node struct {
	ID   string
	Name string
	Kind Kind
	// Index is the node's position in its Process.Nodes, dense from 0, so
	// runtimes can keep per-node state in slices instead of maps.
	Index int

	Incoming []*Flow
	Outgoing []*Flow
	// Default is the default flow of a gateway or activity, or nil.
	Default *Flow

	// Events are the event definitions of an event node (empty for a none
	// event). Most events have one; a multiple event has several.
	Events []*EventDefinition
	// ParallelMultiple is set on a multiple event that waits for all its
	// definitions rather than any.
	ParallelMultiple bool

	// Job is set on a task executed as a job.
	Job *JobDefinition
	// ScriptFormat and Script are the inline script of a script task.
	ScriptFormat string
	Script       string
	// ScriptExpression and ResultVariable are a script task's expression
	// the engine evaluates itself (zeebe:script), and the variable that
	// receives its value.
	ScriptExpression Expression
	ResultVariable   string
	// CalledDecision is the decision a business rule task calls
	// (zeebe:calledDecision decisionId); empty when it names none.
	CalledDecision string
	// Decision is the whole call of that decision (zeebe:calledDecision
	// or camunda:decisionRef); nil when the task calls none.
	Decision *DecisionCall
	// UserTask is what a user task says about who works on it, with which
	// form and by when; nil when it says nothing.
	UserTask *UserTask

	// AttachedTo is the activity a boundary event is attached to.
	AttachedTo *Node
	// CancelActivity is true for an interrupting boundary event or event
	// sub-process start.
	CancelActivity bool
	// Boundaries are the boundary events attached to this activity, in
	// document order.
	Boundaries []*Node

	// Parent is the enclosing sub-process, or nil at process level.
	Parent *Node
	// Children is the content of a sub-process: its nodes, in document
	// order. Nodes of the whole process (all levels) are in Process.Nodes.
	Children []*Node
	// TriggeredByEvent marks an event sub-process.
	TriggeredByEvent bool
	// Transaction marks a sub-process that is a bpmn:transaction: its
	// cancel end events cancel it, compensating what completed inside,
	// and its cancel boundary event is where the token then goes on.
	// Otherwise it runs as a sub-process, so Kind is KindSubProcess.
	Transaction bool
	// ForCompensation marks a compensation handler
	// (isForCompensation="true"): an activity outside the normal flow,
	// run only when the activity it is associated with is compensated.
	ForCompensation bool
	// Compensation is, on a compensation boundary event, its handler: the
	// activity an association connects it to; nil when none does.
	Compensation *Node

	// ActivationCondition is a complex gateway's join rule.
	ActivationCondition Expression
	// Instantiate marks a receive task or event-based gateway that starts
	// instances.
	Instantiate bool
	// ParallelEvents marks an event-based gateway with
	// eventGatewayType="Parallel" (BPMN 2.0 §10.6.6).
	ParallelEvents bool
	// StartQuantity is how many tokens must arrive at an activity before
	// it starts, and CompletionQuantity how many it sends on each
	// outgoing flow when it completes (BPMN 2.0 §10.3.1); 0 means the
	// default, 1.
	StartQuantity, CompletionQuantity int

	// CalledElement is a call activity's process id expression.
	CalledElement Expression
	// GlobalTask is the id of the global task a call activity performs in
	// its place; the node then has that task's kind (BPMN 2.0 §10.3.6).
	GlobalTask string

	Inputs  []Mapping
	Outputs []Mapping

	// Loop is set on an activity with standard loop characteristics.
	Loop *StandardLoop
	// Multi is set on a multi-instance activity.
	Multi *MultiInstance
	// AdHoc is set on an ad-hoc sub-process (bpmn:adHocSubProcess), whose
	// Kind is KindSubProcess: it runs as a sub-process whose inner
	// elements are activated by name rather than from a start event.
	AdHoc *AdHoc

	// Documentation is the element's bpmn:documentation text.
	Documentation string
}

// StandardLoop repeats an activity while its condition holds (BPMN
// standardLoopCharacteristics).
type StandardLoop struct {
	// Condition is evaluated after each iteration, or before it with
	// TestBefore; the loop goes on while it is true.
	Condition  Expression
	TestBefore bool
	// Maximum caps the iterations; negative means no cap.
	Maximum int
}

// AdHoc says how an ad-hoc sub-process activates its inner elements and
// when it completes (BPMN adHocSubProcess attributes, with Camunda 8's
// zeebe:adHoc).
type AdHoc struct {
	// Sequential is BPMN ordering="Sequential": one activated element runs
	// at a time, the next once the previous one's tokens have gone.
	Sequential bool
	// ActiveElements yields the ids of the inner elements to activate on
	// entry (zeebe:adHoc activeElementsCollection). When it is absent,
	// every inner element without incoming flows is activated.
	ActiveElements Expression
	// CompletionCondition, evaluated each time an inner element completes,
	// completes the sub-process when true. Without it the sub-process
	// completes once no inner element is active.
	CompletionCondition Expression
	// CancelRemaining (cancelRemainingInstances, default true) terminates
	// the inner elements still active once the completion condition holds;
	// when false the sub-process waits for them.
	CancelRemaining bool
}

// MultiInstance runs an activity once per element of a collection, or a
// number of times, in parallel or one after another (BPMN
// multiInstanceLoopCharacteristics, with Zeebe's zeebe:loopCharacteristics
// or Camunda 7's camunda:collection and camunda:elementVariable).
type MultiInstance struct {
	Sequential bool
	// Collection yields the list to iterate over (inputCollection,
	// camunda:collection, loopDataInputRef); Cardinality yields the number
	// of instances instead (loopCardinality). Exactly one is set.
	Collection  Expression
	Cardinality Expression
	// Element is the variable each instance gets its element of the
	// collection in, as a local variable; empty for none.
	Element string
	// CompletionCondition, evaluated as each instance completes, ends the
	// activity early when it holds.
	CompletionCondition Expression
	// OutputCollection is the variable that receives, in instance order,
	// the value of OutputElement evaluated as each instance completes.
	// Both or neither are set.
	OutputCollection string
	OutputElement    Expression
	// Behavior says which events the activity throws as its inner
	// instances complete (BPMN 2.0 §10.2.8): "All" (or empty, the
	// default) none; "None" NoneEvent as each completes; "One" OneEvent
	// as the first completes; "Complex" the Event of every
	// ComplexBehavior whose Condition holds as each completes.
	Behavior         string
	NoneEvent        *EventDefinition
	OneEvent         *EventDefinition
	ComplexBehaviors []ComplexBehavior
}

// ComplexBehavior is a complexBehaviorDefinition of a multi-instance
// activity: the event it throws (nil: none) when its condition holds.
type ComplexBehavior struct {
	Condition Expression
	Event     *EventDefinition
}

// Flow is a sequence flow.
type Flow struct {
	ID        string
	Name      string
	Index     int
	Source    *Node
	Target    *Node
	Condition Expression
	// IsDefault is set when the flow is its source's default flow.
	IsDefault bool
}

// Process is one executable process.
type Process struct {
	ID         string
	Name       string
	Executable bool
	// Nodes holds every node of the process, sub-process content included,
	// indexed by Node.Index.
	Nodes []*Node
	// Flows holds every sequence flow, indexed by Flow.Index.
	Flows []*Flow
	// Top holds the nodes directly in the process (not in a sub-process).
	Top []*Node

	byID map[string]*Node
}

// Node returns the node with the given id, at any depth, or nil.
func (p *Process) Node(id string) *Node {
	if p.byID == nil {
		return nil
	}
	return p.byID[id]
}

// StartEvents returns the start events directly in the process (not those
// of sub-processes or event sub-processes), in document order.
func (p *Process) StartEvents() []*Node {
	var out []*Node
	for _, n := range p.Top {
		if n.Kind == KindStartEvent {
			out = append(out, n)
		}
	}
	return out
}

// Definitions is the content of one BPMN document.
type Definitions struct {
	ID string
	// DMN is set when the document is a DMN model rather than BPMN: its
	// decisions deploy, it has no processes.
	DMN         *DMNDefinitions
	Processes   []*Process
	Messages    []*Message
	Signals     []*Signal
	Errors      []*Error
	Escalations []*Escalation
	// Positions says where each element with an id starts in the source
	// document (the first element, for an id used twice), so problems
	// found after import can name their place.
	Positions map[string]Position
	// Warnings are what the importer found that deploys but is probably
	// not what the modeller meant, or that it ignores on purpose (a
	// choreography beside the processes). Check returns them with its own.
	Warnings []*Problem
	// Descriptive are the broken rules of processes that are not
	// executable, which Deploy does not run: it refuses them only with a
	// document it refuses anyway (and warns otherwise), while a validator
	// reports them as errors. The importer and Check both add to it.
	Descriptive []*Problem
	// Untyped maps the ids of sequence flows and conditional events of
	// executable processes whose condition has neither an xsi:type nor a
	// dialect marker (FEEL's "=", JUEL's ${...}) to the rule such a
	// condition breaks when it does not compile: it is natural language
	// (EXT.012; EXT.123 for a conditional event), not a formal expression
	// with a mistake (FT.expression).
	Untyped map[string]string
}

// Process returns the process with the given id, or nil.
func (d *Definitions) Process(id string) *Process {
	for _, p := range d.Processes {
		if p.ID == id {
			return p
		}
	}
	return nil
}
