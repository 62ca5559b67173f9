package runtime

import "github.com/flowtrack/flowtrack/api"

// The records of instance state are package api's; the runtime names
// them here so that its code reads as before.
type (
	// State is an instance's lifecycle state (api.State).
	State = api.State
	// WaitReason says why a token is not moving (api.WaitReason).
	WaitReason = api.WaitReason
	// Token is where one path of an instance is and why it waits.
	Token = api.Token
	// Job is a unit of work handed to the host.
	Job = api.Job
	// Incident is a problem that holds a token until it is resolved.
	Incident = api.Incident
	// Choice is what the conditions of a gateway a token waits at say now.
	Choice = api.Choice
	// JobFilter selects jobs.
	JobFilter = api.JobFilter
	// JobArgs are what a job result may name besides the job.
	JobArgs = api.JobArgs
	// Activation starts a token before an element.
	Activation = api.Activation
	// Modification is a set of changes to one instance, applied at once.
	Modification = api.Modification
	// Definition is one deployed version of a process.
	Definition = api.Definition
	// Metrics is what an operator reads of an engine.
	Metrics = api.Metrics
	// JobAge names a job and how long it has waited.
	JobAge = api.JobAge
	// ProcessMetrics counts the instances of one process by state.
	ProcessMetrics = api.ProcessMetrics
	// Stats counts what the engine holds open.
	Stats = api.Stats
	// MessageSubscription is an open message subscription of an instance.
	MessageSubscription = api.MessageSubscription
	// ObserverPanicError reports an observer that panicked.
	ObserverPanicError = api.ObserverPanicError
	// Event is one record of an instance's event stream.
	Event = api.Event
	// EventType names what an Event records.
	EventType = api.EventType
)

// Instance states.
const (
	Active     = api.Active
	Completed  = api.Completed
	Terminated = api.Terminated
	Failed     = api.Failed
)

// Wait reasons of a token. A token that is moving has no reason.
const (
	WaitJob      = api.WaitJob
	WaitMessage  = api.WaitMessage
	WaitSignal   = api.WaitSignal
	WaitTimer    = api.WaitTimer
	WaitEvent    = api.WaitEvent
	WaitJoin     = api.WaitJoin
	WaitIncident = api.WaitIncident
	WaitScope    = api.WaitScope
	WaitCall     = api.WaitCall
	WaitChoice   = api.WaitChoice
)

// Event types of the per-instance stream.
const (
	InstanceStarted    = api.InstanceStarted
	InstanceCompleted  = api.InstanceCompleted
	InstanceTerminated = api.InstanceTerminated
	InstanceFailed     = api.InstanceFailed
	ElementEntered     = api.ElementEntered
	ElementLeft        = api.ElementLeft
	ElementTerminated  = api.ElementTerminated
	FlowTaken          = api.FlowTaken
	TokenMerged        = api.TokenMerged
	JobCreated         = api.JobCreated
	JobCompleted       = api.JobCompleted
	JobFailed          = api.JobFailed
	JobCanceled        = api.JobCanceled
	IncidentCreated    = api.IncidentCreated
	IncidentResolved   = api.IncidentResolved
	VariablesUpdated   = api.VariablesUpdated
	MessageSubscribed  = api.MessageSubscribed
	MessageCorrelated  = api.MessageCorrelated
	MessagePublished   = api.MessagePublished
	SignalBroadcast    = api.SignalBroadcast
	SignalSubscribed   = api.SignalSubscribed
	SignalReceived     = api.SignalReceived
	TimerScheduled     = api.TimerScheduled
	TimerFired         = api.TimerFired
	ErrorThrown        = api.ErrorThrown
	EscalationThrown   = api.EscalationThrown
	ErrorCaught        = api.ErrorCaught
	CallStarted        = api.CallStarted
	ConditionSatisfied = api.ConditionSatisfied
	EscalationCaught   = api.EscalationCaught
	FlowsChosen        = api.FlowsChosen
	DecisionEvaluated  = api.DecisionEvaluated
)

// The sentinel errors the runtime returns are package api's (api/errors.go).
var (
	ErrUnknownProcess     = api.ErrUnknownProcess
	ErrNoNoneStart        = api.ErrNoNoneStart
	ErrUnknownJob         = api.ErrUnknownJob
	ErrUnknownInstance    = api.ErrUnknownInstance
	ErrUnknownIncident    = api.ErrUnknownIncident
	ErrInstanceEnded      = api.ErrInstanceEnded
	ErrClosed             = api.ErrClosed
	ErrNotVirtual         = api.ErrNotVirtual
	ErrBadVariables       = api.ErrBadVariables
	ErrStaleActivation    = api.ErrStaleActivation
	ErrObserverDropped    = api.ErrObserverDropped
	ErrCalledFromObserver = api.ErrCalledFromObserver
	ErrUnknownScope       = api.ErrUnknownScope
	ErrBadModification    = api.ErrBadModification
	ErrBadChoice          = api.ErrBadChoice
	ErrUnknownDecision    = api.ErrUnknownDecision
	ErrTooManyFirings     = api.ErrTooManyFirings
	ErrBadState           = api.ErrBadState
	ErrKeyInUse           = api.ErrKeyInUse
	ErrNotSettled         = api.ErrNotSettled
	ErrDuplicateMessage   = api.ErrDuplicateMessage
)
