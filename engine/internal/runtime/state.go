package runtime

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

// Wait reasons of a token. A token that is moving has no reason.
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
