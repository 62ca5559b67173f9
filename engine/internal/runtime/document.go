package runtime

import (
	"time"
)

// The state document: what a checkpoint writes and a restore reads. Its
// field-by-field description, with the rules for older and newer
// versions, is engine/STATE.md; change both together.

// StateFormat names the document kind; StateVersion is the version this
// engine writes. It reads every version up to StateVersion and refuses a
// newer one with a clear error.
const (
	StateFormat  = "flowtrack-state"
	StateVersion = 3
)

// Document is the state of a settled engine.
type Document struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Clock   ClockDoc  `json:"clock"`
	LastKey int64     `json:"lastKey"`
	Deploys []Deploy  `json:"deployments"`
	Hub     HubDoc    `json:"hub"`
	Live    []InstDoc `json:"instances"`
	// Finished are the finished instances still findable by key, oldest
	// first.
	Finished []InstDoc `json:"finished,omitempty"`
}

// ClockDoc is the engine clock's reading and kind.
type ClockDoc struct {
	Now     time.Time `json:"now"`
	Virtual bool      `json:"virtual"`
}

// Deploy is one successful deployment: its BPMN source and the process
// versions it registered.
type Deploy struct {
	Name      string       `json:"name"`
	Source    string       `json:"bpmn"`
	Processes []ProcessDoc `json:"processes"`
	// Deployment identifies the deployment the document came with:
	// documents deployed together (DeployResources) share it, and a
	// business rule task with binding "deployment" finds its decision by
	// it. Absent (0) in documents before version 3.
	Deployment int64 `json:"deployment,omitempty"`
}

// ProcessDoc is one process version a deployment registered.
type ProcessDoc struct {
	ID      string `json:"id"`
	Key     int64  `json:"key"`
	Version int    `json:"version"`
}

// HubDoc is the engine-level event state: the message TTL buffer (which
// is also the message-id dedup window) and the timer start events.
type HubDoc struct {
	LastSubscription int64        `json:"lastSubscription"`
	Messages         []MessageDoc `json:"messages,omitempty"`
	TimerStarts      []TimerDoc   `json:"timerStarts,omitempty"`
}

// MessageDoc is a buffered message.
type MessageDoc struct {
	Name           string         `json:"name"`
	CorrelationKey string         `json:"correlationKey,omitempty"`
	MessageID      string         `json:"messageId,omitempty"`
	Variables      map[string]any `json:"variables,omitempty"`
	Expires        time.Time      `json:"expires"`
	Correlated     []string       `json:"correlated,omitempty"`
}

// TimerDoc is an open timer of a timer start event.
type TimerDoc struct {
	Sub        int64     `json:"sub"`
	ProcessKey int64     `json:"processKey"`
	Element    string    `json:"element"`
	Due        time.Time `json:"due"`
	Period     Duration  `json:"period,omitempty"`
	Left       int       `json:"left"`
}

// Duration is a time.Duration written as Go duration text ("1h30m").
type Duration time.Duration

// MarshalText writes d as Go duration text.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads Go duration text.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// InstDoc is one instance: everything its loop owns.
type InstDoc struct {
	Key        int64  `json:"key"`
	ProcessKey int64  `json:"processKey"`
	Process    string `json:"process"`
	State      State  `json:"state"`
	// Message explains a finished instance's end.
	Message     string `json:"message,omitempty"`
	StartKey    string `json:"startKey,omitempty"`
	Parent      int64  `json:"parent,omitempty"`
	ParentToken int    `json:"parentToken,omitempty"`
	Depth       int    `json:"depth,omitempty"`
	NextToken   int    `json:"nextToken"`
	NextScope   int    `json:"nextScope"`
	HeldBy      int64  `json:"heldBy,omitempty"`
	LastElement string `json:"lastElement,omitempty"`

	Scopes    []ScopeDoc    `json:"scopes"`
	Tokens    []TokenDoc    `json:"tokens,omitempty"`
	Joins     []JoinDoc     `json:"joins,omitempty"`
	Jobs      []JobDoc      `json:"jobs,omitempty"`
	Incidents []IncidentDoc `json:"incidents,omitempty"`
	Subs      []SubDoc      `json:"subscriptions,omitempty"`
	// Compensations are the compensations in progress.
	Compensations []CompRunDoc `json:"compensations,omitempty"`
	History       []RecordDoc  `json:"history"`
}

// ScopeDoc is one scope: the process (id 0) or a sub-process or event
// sub-process activation.
type ScopeDoc struct {
	ID      int    `json:"id"`
	Element string `json:"element,omitempty"`
	Parent  int    `json:"parent"` // -1 for the process scope
	// Detached is set on a done scope its parent no longer lists.
	Detached    bool           `json:"detached,omitempty"`
	Variables   map[string]any `json:"variables,omitempty"`
	Token       int            `json:"token,omitempty"`
	Live        int            `json:"live"`
	Subs        []int64        `json:"subscriptions,omitempty"`
	Interrupted bool           `json:"interrupted,omitempty"`
	Done        bool           `json:"done,omitempty"`
	// Multi is set on the body of a multi-instance activity; Inner on the
	// scope of one of its inner instances, Index saying which (from 0).
	Multi *MultiDoc `json:"multi,omitempty"`
	Inner bool      `json:"inner,omitempty"`
	Index int       `json:"index,omitempty"`
	// Compensable are the activity instances that completed in the scope
	// and can be compensated, in order of completion; Revived marks a
	// scope revived to compensate what completed in it.
	Compensable []CompDoc `json:"compensable,omitempty"`
	Revived     bool      `json:"revived,omitempty"`
	// AdHoc is set on the scope of an ad-hoc sub-process.
	AdHoc *AdHocDoc `json:"adHoc,omitempty"`
}

// AdHocDoc is the state of a running ad-hoc sub-process.
type AdHocDoc struct {
	// Pending are the ids of the inner elements a sequential one has still
	// to activate, in order.
	Pending []string `json:"pending,omitempty"`
	// Met is set once the completion condition held.
	Met bool `json:"met,omitempty"`
}

// CompDoc is one completed activity instance that can be compensated:
// its activity, the variables its handler or content runs with, and,
// with Content, the records of what completed inside it.
type CompDoc struct {
	Element   string         `json:"element,omitempty"`
	Variables map[string]any `json:"variables,omitempty"`
	Content   bool           `json:"content,omitempty"`
	EventSub  bool           `json:"eventSub,omitempty"`
	Inner     []CompDoc      `json:"inner,omitempty"`
}

// CompRunDoc is one compensation in progress: in which scope, the
// records still to run, what runs now (a handler's token, or the run of
// a record's content), the run it is part of, and who waits for it.
type CompRunDoc struct {
	ID       int       `json:"id"`
	Scope    int       `json:"scope"`
	Pending  []CompDoc `json:"pending,omitempty"`
	Handler  int       `json:"handler,omitempty"`
	Child    int       `json:"child,omitempty"`
	Parent   int       `json:"parent,omitempty"`
	Revived  bool      `json:"revived,omitempty"`
	EventSub bool      `json:"eventSub,omitempty"`
	Token    int       `json:"token,omitempty"`
	Owner    int       `json:"owner,omitempty"`
	Cancel   string    `json:"cancel,omitempty"`
}

// MultiDoc is the state of a running multi-instance body.
type MultiDoc struct {
	Items     []any `json:"items,omitempty"` // the input collection; absent with a cardinality
	Count     int   `json:"count"`           // inner instances in all
	Started   int   `json:"started"`
	Active    int   `json:"active"`
	Completed int   `json:"completed"`
	Results   []any `json:"results,omitempty"`   // by instance index, with an output collection
	Met       bool  `json:"met,omitempty"`       // the completion condition has held
	ThrownOne bool  `json:"thrownOne,omitempty"` // behavior One has thrown its event
}

// TokenDoc is one token: the loop's view of it and its track's
// continuation.
type TokenDoc struct {
	ID       int            `json:"id"`
	Element  string         `json:"element,omitempty"`
	Scope    int            `json:"scope"`
	Wait     WaitReason     `json:"wait"`
	Job      int64          `json:"job,omitempty"`
	Incident int64          `json:"incident,omitempty"`
	Subs     []int64        `json:"subscriptions,omitempty"`
	Boundary []int64        `json:"boundary,omitempty"`
	Locals   map[string]any `json:"locals,omitempty"`
	AtJoin   bool           `json:"atJoin,omitempty"`
	// Raising is set while the token waits for its callers to deal with
	// an error or escalation it raised (call.go).
	Raising bool  `json:"raising,omitempty"`
	Inner   int   `json:"inner,omitempty"`
	Child   int64 `json:"child,omitempty"`
	// Left is what the sub-process or multi-instance body the token is
	// leaving left to compensate, until its completion is recorded (a
	// loop condition's incident can hold it there).
	Left  *CompDoc `json:"left,omitempty"`
	Track TrackDoc `json:"track"`
}

// TrackDoc is a parked track's continuation.
type TrackDoc struct {
	Element   string     `json:"element"`
	Flow      string     `json:"flow,omitempty"`
	At        string     `json:"at"`
	Report    *ReportDoc `json:"report,omitempty"`
	Iteration int        `json:"iteration,omitempty"`
}

// ReportDoc is the report a track parked with, which it repeats when told
// to retry.
type ReportDoc struct {
	Kind    string `json:"kind"`
	Element string `json:"element,omitempty"`
	Flow    string `json:"flow,omitempty"`
}

// JoinDoc is the state of one join in one scope activation.
type JoinDoc struct {
	Scope   int     `json:"scope"`
	Element string  `json:"element"`
	Arrived [][]int `json:"arrived"`
	Fired   bool    `json:"fired,omitempty"`
}

// JobDoc is an open job.
type JobDoc struct {
	Job      Job   `json:"job"`
	Token    int   `json:"token"`
	Incident int64 `json:"incident,omitempty"`
}

// IncidentDoc is an open incident.
type IncidentDoc struct {
	Incident Incident `json:"incident"`
	Token    int      `json:"token,omitempty"`
	Reported bool     `json:"reported,omitempty"`
	Held     []int    `json:"held,omitempty"`
}

// SubDoc is an open subscription of a token or a scope.
type SubDoc struct {
	ID    int64  `json:"id"`
	Kind  string `json:"kind"`
	Token int    `json:"token,omitempty"`
	// Catch names the catch: the element whose catches it is one of (the
	// waiting node) and its index there; Handler names a boundary event
	// or event sub-process start instead, and Scope the scope of the
	// latter.
	Catch   string `json:"catch,omitempty"`
	Index   int    `json:"index,omitempty"`
	Handler string `json:"handler,omitempty"`
	Scope   *int   `json:"scope,omitempty"`
	// Timers: the due time, and for a cycle the period and the firings
	// left; messages: the correlation key.
	Due    *time.Time `json:"due,omitempty"`
	Period Duration   `json:"period,omitempty"`
	Left   int        `json:"left,omitempty"`
	Key    string     `json:"correlationKey,omitempty"`
	// Held is a conditional subscription's last evaluation.
	Held bool `json:"held,omitempty"`
	// Gone is set on a subscription the hub no longer holds (it fired and
	// the delivery was turned down).
	Gone bool `json:"gone,omitempty"`
}

// RecordDoc is one history record.
type RecordDoc struct {
	At             time.Time       `json:"at"`
	Type           EventType       `json:"type"`
	Element        string          `json:"element,omitempty"`
	Flow           string          `json:"flow,omitempty"`
	Token          int             `json:"token,omitempty"`
	Variables      *map[string]any `json:"variables,omitempty"`
	Message        string          `json:"message,omitempty"`
	JobKey         int64           `json:"jobKey,omitempty"`
	JobType        string          `json:"jobType,omitempty"`
	IncidentKey    int64           `json:"incidentKey,omitempty"`
	Name           string          `json:"name,omitempty"`
	CorrelationKey string          `json:"correlationKey,omitempty"`
	Due            *time.Time      `json:"due,omitempty"`
}
