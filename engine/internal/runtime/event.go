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
)

// eventTypes lists the event types by their compact code (see record).
var eventTypes = [...]EventType{
	InstanceStarted, InstanceCompleted, InstanceTerminated, InstanceFailed, ElementEntered, ElementLeft,
	ElementTerminated, FlowTaken, TokenMerged, JobCreated, JobCompleted, JobFailed, JobCanceled,
	IncidentCreated, IncidentResolved, VariablesUpdated, MessageSubscribed, MessageCorrelated,
	SignalSubscribed, SignalReceived, TimerScheduled, TimerFired, ErrorThrown, EscalationThrown,
	MessagePublished, SignalBroadcast, ErrorCaught, EscalationCaught, CallStarted, ConditionSatisfied,
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
// node or flow and the token, so they are stored in 40 bytes and expanded
// to an Event only when read. Rarer records keep their full Event in more.
type record struct {
	at    int64 // clock reading, Unix nanoseconds
	node  *model.Node
	flow  *model.Flow
	token int32
	typ   uint8
	more  *Event
}

// event expands r, the seq-th record of inst, into a public Event.
func (r *record) event(inst *Instance, seq int) Event {
	var ev Event
	if r.more != nil {
		ev = *r.more
	}
	ev.Seq = uint64(seq)
	ev.Time = time.Unix(0, r.at).UTC()
	ev.Type = eventTypes[r.typ]
	ev.InstanceKey = inst.key
	ev.ProcessID = inst.plan.Process.ID
	if r.node != nil {
		ev.ElementID = r.node.ID
		ev.ElementType = r.node.Kind.String()
	}
	if r.flow != nil {
		ev.ElementID = r.flow.ID
		ev.ElementType = "sequenceFlow"
		ev.FlowID = r.flow.ID
	}
	if r.token != 0 {
		ev.TokenID = int(r.token)
	}
	return ev
}
