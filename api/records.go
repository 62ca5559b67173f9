package api

import "time"

// State is an instance's lifecycle state.
//
// Legal transitions: Active → Completed (no token left), Active → Terminated
// (cancelled, or aborted by the engine with a reason), Active → Failed (an
// engine fault such as a runaway loop). Every final state is final.
type State string

// Instance states.
const (
	Active     State = "active"
	Completed  State = "completed"
	Terminated State = "terminated"
	Failed     State = "failed"
)

// Final reports whether s is a final state.
func (s State) Final() bool { return s != Active && s != "" }

// WaitReason says why a token is not moving.
type WaitReason string

// Wait reasons of a token (Token.Waiting). A token that is moving has none.
const (
	WaitJob      WaitReason = "job"
	WaitMessage  WaitReason = "message"
	WaitSignal   WaitReason = "signal"
	WaitTimer    WaitReason = "timer"
	WaitEvent    WaitReason = "event" // an event-based gateway: any of its arms
	WaitJoin     WaitReason = "join"
	WaitIncident WaitReason = "incident"
	WaitScope    WaitReason = "scope"  // an activity waiting for its inner tokens
	WaitCall     WaitReason = "call"   // a call activity waiting for its called instance
	WaitChoice   WaitReason = "choice" // a diverging exclusive or inclusive gateway, before it routes, with gateway choices on
)

// Token is where one path of an instance is and why it waits.
type Token struct {
	ID        int        `json:"id"`
	ElementID string     `json:"elementId"`
	Waiting   WaitReason `json:"waiting,omitempty"`
	// JobKey is the job the token waits for.
	JobKey int64 `json:"jobKey,omitempty"`
	// IncidentKey is the incident that holds the token.
	IncidentKey int64 `json:"incidentKey,omitempty"`
	// Choice is, for a token waiting for a choice at a gateway, what the
	// gateway's conditions say now.
	Choice *Choice `json:"choice,omitempty"`
}

// Choice is what the conditions of a gateway a token waits at say now
// (Token.Choice, with gateway choices on).
type Choice struct {
	// Holds lists the outgoing flows whose condition holds (a flow
	// without a condition holds; the default flow is not listed), in
	// document order.
	Holds []string `json:"holds"`
	// Takes lists the flows the gateway would take by its conditions:
	// for an exclusive gateway the first that holds, else the default.
	Takes []string `json:"takes"`
	// Error says why a condition cannot be evaluated (Takes is then empty).
	Error string `json:"error,omitempty"`
}

// Job is a unit of work handed to the host: a task the engine waits on.
type Job struct {
	Key         int64             `json:"key"`
	Type        string            `json:"type"`
	ProcessID   string            `json:"processId"`
	ElementID   string            `json:"elementId"`
	InstanceKey int64             `json:"instanceKey"`
	Retries     int               `json:"retries"`
	Headers     map[string]string `json:"headers,omitempty"`
	Variables   map[string]any    `json:"variables,omitempty"`
	// ErrorMessage is the message of the last failure.
	ErrorMessage string    `json:"errorMessage,omitempty"`
	Created      time.Time `json:"created"`
	// Worker names the worker holding the job's current activation.
	Worker string `json:"worker,omitempty"`
	// Activation identifies the job's current activation (ActivateJobs),
	// zero while nobody holds it. A result that names an activation is
	// refused once another activation or a failure replaced it.
	Activation int64 `json:"activation,omitempty"`
	// Deadline is when the current activation times out: from then on,
	// on the engine clock, the job can be activated again.
	Deadline *time.Time `json:"deadline,omitempty"`
	// RetryAt is when a failed job's retry back-off ends: until then,
	// on the engine clock, ActivateJobs passes it over.
	RetryAt *time.Time `json:"retryAt,omitempty"`
}

// JobFilter selects jobs. Zero fields match anything.
type JobFilter struct {
	Type        string
	InstanceKey int64
	ElementID   string
}

// JobArgs are what a job result may name besides the job: the activation
// it answers (zero answers whatever activation the job has, or none) and,
// for a failure with retries left, how long the job waits before it can be
// activated again. Hosts fill it from JobOptions with JobArgsOf.
type JobArgs struct {
	Activation int64
	Backoff    time.Duration
}

// JobOption qualifies a job result (CompleteJob, FailJob, ThrowError).
type JobOption func(*JobArgs)

// JobActivation makes a job result answer the activation a (Job.Activation
// of a job ActivateJobs returned): the engine refuses it with
// ErrStaleActivation once the job timed out and was activated again, or
// failed. Without it a result is accepted whoever holds the job.
func JobActivation(a int64) JobOption { return func(j *JobArgs) { j.Activation = a } }

// RetryBackoff makes FailJob keep the job from ActivateJobs for d, on the
// engine clock (default 0: activatable at once).
func RetryBackoff(d time.Duration) JobOption { return func(j *JobArgs) { j.Backoff = d } }

// JobArgsOf applies opts to zero JobArgs.
func JobArgsOf(opts []JobOption) JobArgs {
	var a JobArgs
	for _, o := range opts {
		o(&a)
	}
	return a
}

// Incident is a problem that holds a token until it is resolved: a failed
// job with no retries left, a condition that cannot be evaluated, an
// uncaught error.
type Incident struct {
	Key         int64  `json:"key"`
	InstanceKey int64  `json:"instanceKey"`
	ElementID   string `json:"elementId"`
	// JobKey is the failed job, for job incidents.
	JobKey  int64  `json:"jobKey,omitempty"`
	Message string `json:"message"`
}

// IncidentType says what an incident holds, as operators filter them:
// IncidentJob for a job that failed with no retries left (Incident.JobKey
// is set; fix it with UpdateJobRetries, then ResolveIncident),
// IncidentElement for anything else at an element (an expression or
// mapping that cannot be evaluated, an uncaught error, a called instance
// that failed; fix the variables with SetVariables, then ResolveIncident).
type IncidentType string

// The incident types.
const (
	IncidentJob     IncidentType = "job"
	IncidentElement IncidentType = "element"
)

// TypeOf returns the type of inc.
func TypeOf(inc Incident) IncidentType {
	if inc.JobKey != 0 {
		return IncidentJob
	}
	return IncidentElement
}

// IncidentFilter selects incidents. Zero fields match anything.
type IncidentFilter struct {
	InstanceKey int64
	ElementID   string
	Type        IncidentType
}

// Match reports whether f selects inc.
func (f IncidentFilter) Match(inc Incident) bool {
	return (f.InstanceKey == 0 || inc.InstanceKey == f.InstanceKey) &&
		(f.ElementID == "" || inc.ElementID == f.ElementID) &&
		(f.Type == "" || TypeOf(inc) == f.Type)
}

// Check returns an error wrapping ErrInvalidArgument for an unknown Type.
func (f IncidentFilter) Check() error {
	switch f.Type {
	case "", IncidentJob, IncidentElement:
		return nil
	}
	return InvalidArgument("incident type %q: want %q or %q", f.Type, IncidentJob, IncidentElement)
}

// Activation starts a token before an element (ModifyInstance).
type Activation struct {
	// ElementID is the element to start at: an activity, an event or a
	// gateway; not a start event, a boundary event, or an element inside
	// a multi-instance or loop activity. A joining gateway receives the
	// token as on one incoming flow (the one with the fewest tokens
	// waiting there): it fires if that completes it, as in Zeebe.
	ElementID string
	// Scope is the token waiting at the enclosing sub-process for its
	// inner tokens; 0 finds the only open scope of that sub-process, or
	// the process scope for an element at process level. With Scope 0 and
	// no open scope, the enclosing sub-processes that are not open are
	// entered first (inputs, boundary events; not their start events), in
	// the only open scope above them, as Zeebe creates missing flow
	// scopes.
	Scope int
	// Variables are set locally in that scope first.
	Variables map[string]any
}

// Modification is a set of changes to one instance, applied at once
// (ModifyInstance): activations first, then terminations, so "move a
// token" never leaves the instance empty in between.
type Modification struct {
	Activate  []Activation
	Terminate []int // token ids
}

// Scope names the variable scope SetVariables writes and ScopeVariables
// reads. The zero value is the process scope, propagating.
type Scope struct {
	// Token names a sub-process activation's scope by the token waiting at
	// the sub-process for its inner tokens (Token.Waiting "scope"), or one
	// inner instance of a multi-instance activity by its token; 0 is the
	// process scope.
	Token int `json:"token,omitempty"`
	// Local writes into the scope's own variables, and reads only them.
	// Without it, as Zeebe's SetVariables, each variable is written to the
	// nearest scope up from this one that already holds it, else to the
	// process scope, and reading returns every variable visible there.
	Local bool `json:"local,omitempty"`
}

// Message is a message to publish.
type Message struct {
	// Name is the message name the subscriptions wait for.
	Name string `json:"name"`
	// CorrelationKey selects the subscriptions whose key equals it.
	CorrelationKey string `json:"correlationKey,omitempty"`
	// Variables are merged into the instance the message correlates to,
	// or become the variables of an instance it starts.
	Variables map[string]any `json:"variables,omitempty"`
	// TTL is how long, on the engine clock, a message nobody waits for yet
	// stays buffered for subscriptions opened later. Zero: not buffered.
	TTL time.Duration `json:"ttl,omitempty"`
	// MessageID, if set, makes a second publication with the same id fail
	// with ErrDuplicateMessage while the first is buffered.
	MessageID string `json:"messageId,omitempty"`
}

// MessageSubscription is an open message subscription of an instance.
type MessageSubscription struct {
	InstanceKey    int64  `json:"instanceKey"`
	ProcessID      string `json:"processId"`
	Name           string `json:"name"`
	CorrelationKey string `json:"correlationKey"`
}

// Deployment describes what Deploy registered.
type Deployment struct {
	Name      string
	Processes []Process
	// Decisions are the decisions a DMN model deployed (DeployResources
	// deploys .dmn and .bpmn together).
	Decisions []Decision
	// Warnings lists what deploys but is probably not what the modeller
	// meant (a non-executable process beside executable ones, a flow
	// without condition beside a default flow), sorted by position.
	Warnings []Problem
}

// Process describes one deployed process version.
type Process struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	Key     int64  `json:"key"`
	Version int    `json:"version"`
}

// Definition is one deployed version of a process: what an operator lists
// to see which versions exist and starts a chosen one of.
type Definition struct {
	ProcessID string `json:"processId"`
	Name      string `json:"name,omitempty"`
	Key       int64  `json:"key"`
	Version   int    `json:"version"`
	// Resource is the name the document was deployed under.
	Resource string `json:"resource"`
	// Latest marks the newest version, the one Start uses.
	Latest bool `json:"latest,omitempty"`
}

// Decision describes one deployed decision version: deploying a DMN model
// registers a new version of each of its decisions, as deploying a
// process does.
type Decision struct {
	ID         string `json:"id"`
	Name       string `json:"name,omitempty"`
	Version    int    `json:"version"`
	VersionTag string `json:"versionTag,omitempty"`
	// Resource is the name the DMN model was deployed under.
	Resource string `json:"resource"`
}

// MatchedRule is a rule of a decision table that matched in an
// evaluation.
type MatchedRule struct {
	DecisionID string `json:"decisionId"`
	RuleID     string `json:"ruleId,omitempty"`
	// RuleIndex is the rule's 1-based position in its table.
	RuleIndex int `json:"ruleIndex"`
}

// EvaluatedDecision is one decision evaluated for EvaluateDecision: the
// requested one or one it requires.
type EvaluatedDecision struct {
	DecisionID   string        `json:"decisionId"`
	DecisionName string        `json:"decisionName,omitempty"`
	Output       any           `json:"output"`
	MatchedRules []MatchedRule `json:"matchedRules,omitempty"`
	// Failure says why the decision's output is null, when it failed.
	Failure string `json:"failure,omitempty"`
}

// DecisionResult is what EvaluateDecision returns.
type DecisionResult struct {
	Decision Decision `json:"decision"`
	// Output is the decision's result as a JSON value: a decision
	// table's output (a context for several outputs, a list for the hit
	// policies that collect), a literal expression's value...
	Output any `json:"output"`
	// MatchedRules are the rules that matched in the decision's table
	// and in the tables of the decisions it requires.
	MatchedRules []MatchedRule `json:"matchedRules"`
	// Evaluated lists every decision evaluated, required ones first.
	Evaluated []EvaluatedDecision `json:"evaluated"`
}

// Stats counts what an engine holds open: live instances, activatable
// jobs, open incidents, subscriptions and timers.
type Stats struct {
	Instances            int `json:"instances"`
	Jobs                 int `json:"jobs"`
	Incidents            int `json:"incidents"`
	MessageSubscriptions int `json:"messageSubscriptions"`
	SignalSubscriptions  int `json:"signalSubscriptions"`
	Timers               int `json:"timers"`
}

// Metrics is what an operator reads of an engine: what is open now (Stats),
// open jobs by type and the one waiting longest, and per process how many
// instances are active or ended in each state and how long completed ones
// took on the engine clock. Ended instances are counted from when the
// engine was created or restored (a restored engine counts the finished
// instances its document holds).
type Metrics struct {
	// Open is what the engine holds open now.
	Open Stats `json:"open"`
	// JobsByType counts the activatable jobs by job type.
	JobsByType map[string]int `json:"jobsByType"`
	// OldestJob is the activatable job created first, nil with none.
	OldestJob *JobAge `json:"oldestJob,omitempty"`
	// Processes has one entry per process id with instances, by id.
	Processes []ProcessMetrics `json:"processes"`
}

// JobAge names a job and how long it has waited, on the engine clock.
type JobAge struct {
	Key         int64     `json:"key"`
	Type        string    `json:"type"`
	ElementID   string    `json:"elementId"`
	InstanceKey int64     `json:"instanceKey"`
	Created     time.Time `json:"created"`
	WaitingMs   float64   `json:"waitingMs"`
}

// ProcessMetrics counts the instances of one process by state, with the
// latency (start to end, engine clock) of those that completed.
type ProcessMetrics struct {
	ProcessID  string `json:"processId"`
	Active     int    `json:"active"`
	Completed  int    `json:"completed"`
	Terminated int    `json:"terminated"`
	Failed     int    `json:"failed"`
	// MeanLatencyMs and MaxLatencyMs are over the completed instances.
	MeanLatencyMs float64 `json:"meanLatencyMs"`
	MaxLatencyMs  float64 `json:"maxLatencyMs"`
}
