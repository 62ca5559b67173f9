package engine

import (
	"time"

	"github.com/flowtrack/flowtrack/api"
)

// The records of the event stream and the jobs API are package api's
// (go doc github.com/flowtrack/flowtrack/api); engine names them too, so
// code written against engine reads as before. They are copies: changing
// one never changes the engine.
type (
	// Event is one record of an instance's ordered event stream.
	Event = api.Event
	// EventType names what an Event records.
	EventType = api.EventType
	// Token is where one path of an instance is and why it waits.
	Token = api.Token
	// WaitReason says why a token waits.
	WaitReason = api.WaitReason
	// Job is a unit of work the engine waits on.
	Job = api.Job
	// JobFilter selects jobs; zero fields match anything.
	JobFilter = api.JobFilter
	// Incident is a problem holding a token until resolved.
	Incident = api.Incident
	// Activation starts a token before an element (ModifyInstance).
	Activation = api.Activation
	// Modification is a set of changes to one instance (ModifyInstance).
	Modification = api.Modification
	// Choice is what the conditions of the gateway a token waits at say
	// (Token.Choice, with gateway choices on).
	Choice = api.Choice
	// Definition is one deployed version of a process (Definitions).
	Definition = api.Definition
	// Metrics is what an operator reads of an engine (Engine.Metrics).
	Metrics = api.Metrics
	// JobAge names a job and how long it has waited.
	JobAge = api.JobAge
	// ProcessMetrics counts one process's instances by state, with the
	// latency of the completed ones.
	ProcessMetrics = api.ProcessMetrics
	// State is an instance's lifecycle state.
	State = api.State
	// Stats counts what an engine holds open: live instances, activatable
	// jobs, open incidents, subscriptions and timers.
	Stats = api.Stats
)

// Wait reasons of a token (Token.Waiting). A token that is moving has none.
const (
	WaitJob      = api.WaitJob
	WaitMessage  = api.WaitMessage
	WaitSignal   = api.WaitSignal
	WaitTimer    = api.WaitTimer
	WaitEvent    = api.WaitEvent // any arm of an event-based gateway
	WaitJoin     = api.WaitJoin
	WaitIncident = api.WaitIncident
	WaitScope    = api.WaitScope  // an activity waiting for its inner tokens
	WaitCall     = api.WaitCall   // a call activity waiting for the instance it started
	WaitChoice   = api.WaitChoice // a gateway, before it routes, waiting for ChooseFlows
)

// Instance states.
const (
	Active     = api.Active
	Completed  = api.Completed
	Terminated = api.Terminated
	Failed     = api.Failed
)

// Event types.
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
	ErrorThrown        = api.ErrorThrown
	MessageSubscribed  = api.MessageSubscribed
	MessageCorrelated  = api.MessageCorrelated
	MessagePublished   = api.MessagePublished
	SignalSubscribed   = api.SignalSubscribed
	SignalReceived     = api.SignalReceived
	SignalBroadcast    = api.SignalBroadcast
	TimerScheduled     = api.TimerScheduled
	TimerFired         = api.TimerFired
	ErrorCaught        = api.ErrorCaught
	EscalationThrown   = api.EscalationThrown
	EscalationCaught   = api.EscalationCaught
	CallStarted        = api.CallStarted
	ConditionSatisfied = api.ConditionSatisfied
	VariablesUpdated   = api.VariablesUpdated
	FlowsChosen        = api.FlowsChosen
	DecisionEvaluated  = api.DecisionEvaluated
)

// EventTypes returns every event type the engine writes, for hosts and
// tools that list or check them.
func EventTypes() []EventType { return api.EventTypes() }

// The records of deploys, decisions, jobs, incidents and messages, also
// package api's.
type (
	// Deployment describes what Deploy registered.
	Deployment = api.Deployment
	// Process describes one deployed process version.
	Process = api.Process
	// Decision describes one deployed decision version.
	Decision = api.Decision
	// MatchedRule is a rule of a decision table that matched.
	MatchedRule = api.MatchedRule
	// EvaluatedDecision is one decision evaluated for EvaluateDecision.
	EvaluatedDecision = api.EvaluatedDecision
	// DecisionResult is what EvaluateDecision returns.
	DecisionResult = api.DecisionResult
	// Message is a message to publish.
	Message = api.Message
	// MessageSubscription is an open message subscription of an instance.
	MessageSubscription = api.MessageSubscription
	// Scope names the variable scope SetVariables writes and
	// ScopeVariables reads.
	Scope = api.Scope
	// IncidentType says what an incident holds.
	IncidentType = api.IncidentType
	// IncidentFilter selects incidents.
	IncidentFilter = api.IncidentFilter
	// JobArgs is what a job result names besides the job.
	JobArgs = api.JobArgs
	// JobOption qualifies a job result (CompleteJob, FailJob, ThrowError).
	JobOption = api.JobOption
	// Limits are the budgets that bound what one model, expression or
	// input can make the engine do.
	Limits = api.Limits
)

// The incident types.
const (
	IncidentJob     = api.IncidentJob
	IncidentElement = api.IncidentElement
)

// TypeOf returns the type of inc.
func TypeOf(inc Incident) IncidentType { return api.TypeOf(inc) }

// JobActivation makes a job result answer the activation a (api.JobActivation).
func JobActivation(a int64) JobOption { return api.JobActivation(a) }

// RetryBackoff makes FailJob keep the job from ActivateJobs for d
// (api.RetryBackoff).
func RetryBackoff(d time.Duration) JobOption { return api.RetryBackoff(d) }

// JobArgsOf applies opts to zero JobArgs.
func JobArgsOf(opts []JobOption) JobArgs { return api.JobArgsOf(opts) }
