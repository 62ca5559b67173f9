package runtime

import (
	"time"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// EventType names what happened. The names are the wire names of the wasm
// ABI and of the JavaScript SDK's listeners, so they never change.
type EventType string

// Event types of the per-instance stream.
const (
	InstanceStarted    EventType = "instanceStarted"
	InstanceCompleted  EventType = "instanceCompleted"
	InstanceTerminated EventType = "instanceTerminated"
	InstanceFailed     EventType = "instanceFailed"
	ElementEntered     EventType = "elementEntered"
	ElementLeft        EventType = "elementLeft"
	ElementTerminated  EventType = "elementTerminated"
	FlowTaken          EventType = "flowTaken"
	TokenMerged        EventType = "tokenMerged"
	JobCreated         EventType = "jobCreated"
	JobCompleted       EventType = "jobCompleted"
	JobFailed          EventType = "jobFailed"
	JobCanceled        EventType = "jobCanceled"
	IncidentCreated    EventType = "incidentCreated"
	IncidentResolved   EventType = "incidentResolved"
	VariablesUpdated   EventType = "variablesUpdated"
	MessageSubscribed  EventType = "messageSubscribed"
	MessageCorrelated  EventType = "messageCorrelated"
	MessagePublished   EventType = "messagePublished"
	SignalBroadcast    EventType = "signalBroadcast"
	SignalSubscribed   EventType = "signalSubscribed"
	SignalReceived     EventType = "signalReceived"
	TimerScheduled     EventType = "timerScheduled"
	TimerFired         EventType = "timerFired"
	ErrorThrown        EventType = "errorThrown"
	EscalationThrown   EventType = "escalationThrown"
	ErrorCaught        EventType = "errorCaught"
	CallStarted        EventType = "callStarted"
	ConditionSatisfied EventType = "conditionSatisfied"
	EscalationCaught   EventType = "escalationCaught"
	// FlowsChosen records flows chosen for a token waiting for a choice
	// at a gateway (choice.go): the message names them and what the
	// gateway's conditions would have taken.
	FlowsChosen EventType = "flowsChosen"
	// DecisionEvaluated records a business rule task's decision
	// evaluation: its outputs and, for tables, the rules that matched.
	DecisionEvaluated EventType = "decisionEvaluated"
)

// eventTypes lists the event types by their compact code (see record).
var eventTypes = [...]EventType{
	InstanceStarted, InstanceCompleted, InstanceTerminated, InstanceFailed, ElementEntered, ElementLeft,
	ElementTerminated, FlowTaken, TokenMerged, JobCreated, JobCompleted, JobFailed, JobCanceled,
	IncidentCreated, IncidentResolved, VariablesUpdated, MessageSubscribed, MessageCorrelated,
	SignalSubscribed, SignalReceived, TimerScheduled, TimerFired, ErrorThrown, EscalationThrown,
	MessagePublished, SignalBroadcast, ErrorCaught, EscalationCaught, CallStarted, ConditionSatisfied,
	FlowsChosen,
	DecisionEvaluated,
}

// EventTypes returns every event type the engine writes.
func EventTypes() []EventType { return append([]EventType(nil), eventTypes[:]...) }

// typeCode maps an event type to its index in eventTypes.
var typeCode = func() map[EventType]uint8 {
	m := make(map[EventType]uint8, len(eventTypes))
	for i, t := range eventTypes {
		m[t] = uint8(i)
	}
	return m
}()

// Codes of the records written at every step, looked up once.
var (
	codeEntered = typeCode[ElementEntered]
	codeLeft    = typeCode[ElementLeft]
	codeFlow    = typeCode[FlowTaken]
)

// Event is one record of an instance's event stream. Records are plain data:
// the engine never changes a record once it is published, and readers get
// copies.
type Event struct {
	// Seq numbers the instance's records from 1, without gaps.
	Seq uint64 `json:"seq"`
	// Time is the engine clock's reading when the record was written.
	Time        time.Time `json:"time"`
	Type        EventType `json:"type"`
	InstanceKey int64     `json:"instanceKey"`
	ProcessID   string    `json:"processId"`
	// ElementID and ElementType name the element concerned, if any.
	ElementID   string `json:"elementId,omitempty"`
	ElementType string `json:"elementType,omitempty"`
	// FlowID is the sequence flow of a flowTaken record.
	FlowID string `json:"flowId,omitempty"`
	// TokenID identifies the token (the path) the record concerns.
	TokenID int `json:"tokenId,omitempty"`
	// JobKey and JobType are set on job records.
	JobKey  int64  `json:"jobKey,omitempty"`
	JobType string `json:"jobType,omitempty"`
	// IncidentKey is set on incident records.
	IncidentKey int64 `json:"incidentKey,omitempty"`
	// Name is a message, signal, error or escalation name or code.
	Name string `json:"name,omitempty"`
	// CorrelationKey is set on message records.
	CorrelationKey string `json:"correlationKey,omitempty"`
	// Due is a timer's due time.
	Due *time.Time `json:"due,omitempty"`
	// Message explains incidents, failures and terminations.
	Message string `json:"message,omitempty"`
	// Variables carries the variables a record set (job results, message
	// payloads, start variables).
	Variables map[string]any `json:"variables,omitempty"`
}

// record is the compact form in which an instance keeps its stream: the
// common records (an element entered or left, a flow taken) need only the
// node or flow and the token, so they are stored in 32 bytes and expanded
// to an Event only when read. A record holds no pointer (its node and flow
// are indexes into the immutable process), so the garbage collector never
// scans an instance's history; rarer records keep their full Event in the
// instance's details.
type record struct {
	at    int64 // clock reading, Unix nanoseconds
	node  int32 // 1 + the Node.Index of the element concerned; 0: none
	flow  int32 // 1 + the Flow.Index of the flow taken; 0: none
	token int32
	more  int32 // 1 + the index of the record's details in Instance.details; 0: none
	typ   uint8
}

// element returns the node r concerns, or nil.
func (r *record) element(p *model.Process) *model.Node {
	if r.node == 0 {
		return nil
	}
	return p.Nodes[r.node-1]
}

// event expands r, the seq-th record of inst, whose details are more (nil
// for a common record), into a public Event.
func (r *record) event(inst *Instance, more *Event, seq int) Event {
	var ev Event
	if more != nil {
		ev = *more
	}
	ev.Seq = uint64(seq)
	ev.Time = time.Unix(0, r.at).UTC()
	ev.Type = eventTypes[r.typ]
	ev.InstanceKey = inst.key
	p := inst.plan.Process
	ev.ProcessID = p.ID
	if n := r.element(p); n != nil {
		ev.ElementID = n.ID
		ev.ElementType = n.Kind.String()
	}
	if r.flow != 0 {
		f := p.Flows[r.flow-1]
		ev.ElementID = f.ID
		ev.ElementType = "sequenceFlow"
		ev.FlowID = f.ID
	}
	if r.token != 0 {
		ev.TokenID = int(r.token)
	}
	return ev
}

// nodeRef and flowRef are a record's reference to n and f.
func nodeRef(n *model.Node) int32 {
	if n == nil {
		return 0
	}
	return int32(n.Index) + 1
}

func flowRef(f *model.Flow) int32 {
	if f == nil {
		return 0
	}
	return int32(f.Index) + 1
}
