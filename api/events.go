package api

import "time"

// EventType names what an Event records. The names are the wire names of
// the wasm ABI and of the JavaScript SDK's listeners, so they never change.
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
	// at a gateway: the message names them and what the gateway's
	// conditions would have taken.
	FlowsChosen EventType = "flowsChosen"
	// DecisionEvaluated records a business rule task's decision
	// evaluation: its outputs and, for tables, the rules that matched.
	DecisionEvaluated EventType = "decisionEvaluated"
)

// eventTypes are the event types the engine writes, in the order the
// wire contract (internal/wire's Events) and the SDK list them.
var eventTypes = [...]EventType{
	InstanceStarted, InstanceCompleted, InstanceTerminated, InstanceFailed, ElementEntered, ElementLeft,
	ElementTerminated, FlowTaken, TokenMerged, JobCreated, JobCompleted, JobFailed, JobCanceled,
	IncidentCreated, IncidentResolved, MessageSubscribed, MessageCorrelated, SignalSubscribed,
	SignalReceived, TimerScheduled, TimerFired, ErrorThrown, EscalationThrown, MessagePublished,
	SignalBroadcast, ErrorCaught, EscalationCaught, CallStarted, ConditionSatisfied, VariablesUpdated,
	FlowsChosen,
	DecisionEvaluated,
}

// EventTypes returns every event type the engine writes, for hosts and
// tools that list or check them.
func EventTypes() []EventType { return append([]EventType(nil), eventTypes[:]...) }

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
