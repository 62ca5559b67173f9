package engine

import (
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// Plain data types of the event stream and the jobs API. They are copies:
// changing one never changes the engine.
type (
	// Event is one record of an instance's ordered event stream.
	Event = runtime.Event
	// EventType names what an Event records.
	EventType = runtime.EventType
	// Token is where one path of an instance is and why it waits.
	Token = runtime.Token
	// WaitReason says why a token waits.
	WaitReason = runtime.WaitReason
	// Job is a unit of work the engine waits on.
	Job = runtime.Job
	// JobFilter selects jobs; zero fields match anything.
	JobFilter = runtime.JobFilter
	// Incident is a problem holding a token until resolved.
	Incident = runtime.Incident
	// Activation starts a token before an element (ModifyInstance).
	Activation = runtime.Activation
	// Modification is a set of changes to one instance (ModifyInstance).
	Modification = runtime.Modification
	// Choice is what the conditions of the gateway a token waits at say
	// (Token.Choice, with gateway choices on).
	Choice = runtime.Choice
	// Definition is one deployed version of a process (Definitions).
	Definition = runtime.Definition
	// Metrics is what an operator reads of an engine (Engine.Metrics).
	Metrics = runtime.Metrics
	// JobAge names a job and how long it has waited.
	JobAge = runtime.JobAge
	// ProcessMetrics counts one process's instances by state, with the
	// latency of the completed ones.
	ProcessMetrics = runtime.ProcessMetrics
	// State is an instance's lifecycle state.
	State = runtime.State
	// Stats counts what an engine holds open: live instances, activatable
	// jobs, open incidents, subscriptions and timers.
	Stats = runtime.Stats
)

// Wait reasons of a token (Token.Waiting). A token that is moving has none.
const (
	WaitJob      = runtime.WaitJob
	WaitMessage  = runtime.WaitMessage
	WaitSignal   = runtime.WaitSignal
	WaitTimer    = runtime.WaitTimer
	WaitEvent    = runtime.WaitEvent // any arm of an event-based gateway
	WaitJoin     = runtime.WaitJoin
	WaitIncident = runtime.WaitIncident
	WaitScope    = runtime.WaitScope  // an activity waiting for its inner tokens
	WaitCall     = runtime.WaitCall   // a call activity waiting for the instance it started
	WaitChoice   = runtime.WaitChoice // a gateway, before it routes, waiting for ChooseFlows
)

// Instance states.
const (
	Active     = runtime.Active
	Completed  = runtime.Completed
	Terminated = runtime.Terminated
	Failed     = runtime.Failed
)

// Event types.
const (
	InstanceStarted    = runtime.InstanceStarted
	InstanceCompleted  = runtime.InstanceCompleted
	InstanceTerminated = runtime.InstanceTerminated
	InstanceFailed     = runtime.InstanceFailed
	ElementEntered     = runtime.ElementEntered
	ElementLeft        = runtime.ElementLeft
	ElementTerminated  = runtime.ElementTerminated
	FlowTaken          = runtime.FlowTaken
	TokenMerged        = runtime.TokenMerged
	JobCreated         = runtime.JobCreated
	JobCompleted       = runtime.JobCompleted
	JobFailed          = runtime.JobFailed
	JobCanceled        = runtime.JobCanceled
	IncidentCreated    = runtime.IncidentCreated
	IncidentResolved   = runtime.IncidentResolved
	ErrorThrown        = runtime.ErrorThrown
	MessageSubscribed  = runtime.MessageSubscribed
	MessageCorrelated  = runtime.MessageCorrelated
	MessagePublished   = runtime.MessagePublished
	SignalSubscribed   = runtime.SignalSubscribed
	SignalReceived     = runtime.SignalReceived
	SignalBroadcast    = runtime.SignalBroadcast
	TimerScheduled     = runtime.TimerScheduled
	TimerFired         = runtime.TimerFired
	ErrorCaught        = runtime.ErrorCaught
	EscalationThrown   = runtime.EscalationThrown
	EscalationCaught   = runtime.EscalationCaught
	CallStarted        = runtime.CallStarted
	ConditionSatisfied = runtime.ConditionSatisfied
	VariablesUpdated   = runtime.VariablesUpdated
	FlowsChosen        = runtime.FlowsChosen
	DecisionEvaluated  = runtime.DecisionEvaluated
)

// eventTypes are the event types the engine writes.
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
