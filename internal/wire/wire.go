// Package wire is the one definition of the JSON contract between
// flowtrack's WebAssembly module and its callers (wasm/ABI.md): the
// operations with their requests and results, the response envelope, the
// event records and what each type carries, the wait reasons, and the
// error codes with the sentinel errors they stand for.
//
// The module (wasm/) decodes requests into these types and encodes these
// results; the Go host (host/) encodes and decodes the same types; the
// TypeScript SDK's sdk-js/src/contract.ts is generated from them
// (go generate ./internal/wire, program tsgen), and a test fails when that
// file or ABI.md's tables no longer match. A new operation, field, event
// type or error code is added here and reaches every surface.
package wire

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/flowtrack/flowtrack/api"
)

//go:generate go run ./tsgen -o ../../sdk-js/src/contract.ts

// ABIVersion is the ABI version of wasm/ABI.md: the module exports it and
// every caller refuses a module that reports another.
const ABIVersion = 1

// MaxRequest bounds a request (16 MiB): the module rejects a larger one as
// BAD_REQUEST before decoding it.
const MaxRequest = 16 << 20

// Operation describes one operation export.
type Operation struct {
	// Name is the export's name and the name "call" takes.
	Name string
	// Request and Result are zero values of the request and result types;
	// a nil Result means the result is JSON null.
	Request, Result any
	// Doc says what the operation does, in one sentence.
	Doc string
}

// Operations lists every operation export of ABIVersion, in ABI.md's order.
var Operations = []Operation{
	{"deploy", DeployRequest{}, DeployResult{}, "Parses, validates and registers the executable processes of a BPMN 2.0 XML document, or the decisions of a DMN model."},
	{"start", StartRequest{}, StartResult{}, "Starts an instance of the newest version of a process at its none start event."},
	{"publish_message", MessageRequest{}, MessageResult{}, "Publishes a message: it correlates, starts instances, or is buffered for ttlMs; answers where the instances it reached stand."},
	{"broadcast_signal", SignalRequest{}, nil, "Broadcasts a signal to every instance waiting for it."},
	{"complete_job", CompleteJobRequest{}, CompleteJobResult{}, "Completes a job; its variables are merged into the instance."},
	{"fail_job", FailJobRequest{}, nil, "Reports a failed attempt at a job; with retries 0 an incident holds the token."},
	{"throw_error", ThrowErrorRequest{}, nil, "Raises a BPMN error from a job's element."},
	{"resolve_incident", IncidentRequest{}, nil, "Retries what an incident holds."},
	{"activate_ad_hoc", ActivateAdHocRequest{}, nil, "Activates inner elements of an instance's active ad-hoc sub-process."},
	{"advance", AdvanceRequest{}, NowResult{}, "Moves the virtual clock forward, firing due timers in order."},
	{"tokens", InstanceRequest{}, []api.Token{}, "Where every token of an instance is and why it waits."},
	{"instance", InstanceRequest{}, InstanceResult{}, "State, variables and open incidents of one instance."},
	{"history", InstanceRequest{}, []api.Event{}, "The instance's whole event stream so far."},
	{"jobs", JobsRequest{}, []api.Job{}, "Activatable jobs, ordered by key."},
	{"activate_jobs", ActivateJobsRequest{}, []api.Job{}, "Activates up to maxJobs jobs of a type for a worker and a timeout, oldest first."},
	{"modify_instance", ModifyInstanceRequest{}, nil, "Repairs an instance: starts tokens before elements, then terminates tokens, checked whole first."},
	{"choose_flows", ChooseFlowsRequest{}, nil, "Routes a token waiting for a choice at a gateway through the flows named, or, with none, by the gateway's conditions."},
	{"set_variables", SetVariablesRequest{}, nil, "Sets variables on an instance's process scope or one of its sub-process scopes, locally or propagating."},
	{"scope_variables", ScopeVariablesRequest{}, map[string]any{}, "The variables of one scope of an instance: its own, or all visible in it."},
	{"update_job_retries", UpdateJobRetriesRequest{}, nil, "Sets how many retries a job has left; an incident holding it waits for resolve_incident."},
	{"incidents", IncidentsRequest{}, []api.Incident{}, "Open incidents of live instances, ordered by key."},
	{"cancel", InstanceRequest{}, nil, "Terminates an instance."},
	{"definitions", DefinitionsRequest{}, []api.Definition{}, "Every deployed version of every process (or of one), by process id and version."},
	{"definition_xml", DefinitionXMLRequest{}, DefinitionXMLResult{}, "The document that deployed a version of a process, as it was deployed."},
	{"evaluate_decision", EvaluateDecisionRequest{}, EvaluateDecisionResult{}, "Evaluates a deployed decision over variables: its output and the rules its decision tables matched."},
	{"metrics", MetricsRequest{}, api.Metrics{}, "What an operator reads: open counts, jobs by type, the oldest job, instances by process and state with latency."},
	{"now", NowRequest{}, NowResult{}, "The virtual clock's reading."},
	{"configure", ConfigureRequest{}, nil, "Sets whether responses carry events, and the engine's limits."},
	{"checkpoint", CheckpointRequest{}, StateResult{}, "Writes the engine's state document: deployments, clock, messages and every instance where it stands; or one instance's with its call tree."},
	{"restore", RestoreRequest{}, nil, "Replaces the engine by one in the state of a checkpoint document, or adds one instance's to it; its instances go on where they stand."},
	{"call", CallRequest{}, nil, "Runs the operation named by op with request as its request."},
}

// OperationNames returns the names of Operations, in order.
func OperationNames() []string {
	names := make([]string, len(Operations))
	for i, op := range Operations {
		names[i] = op.Name
	}
	return names
}

// Requests. A pointer field is one whose absence the module must tell from
// its zero value (a required field, or one of two alternatives).

// DeployRequest is deploy's request: exactly one of XML and XMLBase64.
type DeployRequest struct {
	// Name is the file name used in errors (default "model.bpmn").
	Name string `json:"name,omitempty"`
	// XML is the document as text; it reaches the engine as UTF-8.
	XML *string `json:"xml,omitempty"`
	// XMLBase64 is the document's bytes, standard padded base64.
	XMLBase64 *string `json:"xmlBase64,omitempty"`
}

// StartRequest is start's request.
type StartRequest struct {
	ProcessID string         `json:"processId"`
	Variables map[string]any `json:"variables,omitempty"`
	// Version is the version to start (from 1); 0 or absent: the newest.
	Version int `json:"version,omitempty"`
}

// MessageRequest is publish_message's request.
type MessageRequest struct {
	Name           string         `json:"name"`
	CorrelationKey string         `json:"correlationKey,omitempty"`
	Variables      map[string]any `json:"variables,omitempty"`
	// TTLMs is how long, in virtual milliseconds, a message nobody waits
	// for yet stays buffered; 0 is not buffered.
	TTLMs float64 `json:"ttlMs,omitempty"`
	// MessageID deduplicates: a second publish with the same id while the
	// first is buffered is DUPLICATE_MESSAGE.
	MessageID string `json:"messageId,omitempty"`
}

// SignalRequest is broadcast_signal's request.
type SignalRequest struct {
	Name      string         `json:"name"`
	Variables map[string]any `json:"variables,omitempty"`
}

// CompleteJobRequest is complete_job's request.
type CompleteJobRequest struct {
	JobKey    *int64         `json:"jobKey"`
	Variables map[string]any `json:"variables,omitempty"`
	// Activation, when set, is the activation this result answers
	// (activate_jobs): STALE_ACTIVATION once another replaced it.
	Activation int64 `json:"activation,omitempty"`
}

// FailJobRequest is fail_job's request.
type FailJobRequest struct {
	JobKey *int64 `json:"jobKey"`
	// Retries is how many retries are left; 0 opens an incident.
	Retries *int   `json:"retries"`
	Message string `json:"message,omitempty"`
	// Activation, when set, is the activation this result answers.
	Activation int64 `json:"activation,omitempty"`
	// BackoffMs is how long, in virtual milliseconds, a job with retries
	// left waits before activate_jobs hands it out again (>= 0).
	BackoffMs float64 `json:"backoffMs,omitempty"`
}

// ThrowErrorRequest is throw_error's request.
type ThrowErrorRequest struct {
	JobKey    *int64         `json:"jobKey"`
	ErrorCode string         `json:"errorCode"`
	Message   string         `json:"message,omitempty"`
	Variables map[string]any `json:"variables,omitempty"`
	// Activation, when set, is the activation this result answers.
	Activation int64 `json:"activation,omitempty"`
}

// IncidentRequest is resolve_incident's request.
type IncidentRequest struct {
	IncidentKey *int64 `json:"incidentKey"`
}

// ActivateAdHocRequest is activate_ad_hoc's request.
type ActivateAdHocRequest struct {
	InstanceKey *int64 `json:"instanceKey"`
	// ElementID is the ad-hoc sub-process, active in the instance.
	ElementID string `json:"elementId"`
	// Elements are the ids of its inner elements to activate, in order.
	Elements []string `json:"elements"`
}

// AdvanceRequest is advance's request: exactly one of ByMs and To.
type AdvanceRequest struct {
	// ByMs is how many milliseconds to advance (>= 0, may be fractional).
	ByMs *float64 `json:"byMs,omitempty"`
	// To is the RFC 3339 instant to advance to.
	To *string `json:"to,omitempty"`
}

// InstanceRequest is the request of tokens, instance, history and cancel.
type InstanceRequest struct {
	InstanceKey *int64 `json:"instanceKey"`
}

// JobsRequest is jobs' request; zero fields match anything. The jobs are
// ordered by key, so a page is AfterKey (the last key of the page
// before; 0 from the start) and Limit (0: every job).
type JobsRequest struct {
	Type        string `json:"type,omitempty"`
	InstanceKey int64  `json:"instanceKey,omitempty"`
	ElementID   string `json:"elementId,omitempty"`
	AfterKey    int64  `json:"afterKey,omitempty"`
	Limit       int    `json:"limit,omitempty"`
}

// ActivateJobsRequest is activate_jobs' request.
type ActivateJobsRequest struct {
	Type string `json:"type"`
	// Worker names the worker in the activated jobs.
	Worker string `json:"worker,omitempty"`
	// TimeoutMs is how long, in virtual milliseconds, each activation
	// holds its job (> 0).
	TimeoutMs *float64 `json:"timeoutMs"`
	// MaxJobs bounds how many jobs the call activates (> 0).
	MaxJobs *int `json:"maxJobs"`
}

// UpdateJobRetriesRequest is update_job_retries' request.
type UpdateJobRetriesRequest struct {
	JobKey *int64 `json:"jobKey"`
	// Retries is how many retries the job has left (>= 1).
	Retries *int `json:"retries"`
}

// ModifyInstanceRequest is modify_instance's request.
type ModifyInstanceRequest struct {
	InstanceKey *int64 `json:"instanceKey"`
	// Activate starts a token before each element, in order.
	Activate []ActivateElement `json:"activate,omitempty"`
	// Terminate lists the tokens (ids from tokens) to terminate.
	Terminate []int `json:"terminate,omitempty"`
}

// ChooseFlowsRequest is choose_flows' request: with gatewayChoices on
// (configure), a token about to leave a diverging exclusive or inclusive
// gateway waits (wait reason "choice") for it.
type ChooseFlowsRequest struct {
	InstanceKey *int64 `json:"instanceKey"`
	// TokenID is the waiting token (ids from tokens).
	TokenID *int `json:"tokenId"`
	// FlowIDs are outgoing flows of the gateway: one for an exclusive
	// gateway, any for an inclusive one; none lets the conditions decide.
	FlowIDs []string `json:"flowIds,omitempty"`
}

// ActivateElement is one activation of modify_instance.
type ActivateElement struct {
	ElementID string `json:"elementId"`
	// Scope is the token waiting at the enclosing sub-process whose scope
	// is meant; 0 or absent: its only open scope, or the process scope.
	Scope int `json:"scope,omitempty"`
	// Variables are set locally in that scope first.
	Variables map[string]any `json:"variables,omitempty"`
}

// SetVariablesRequest is set_variables' request.
type SetVariablesRequest struct {
	InstanceKey *int64         `json:"instanceKey"`
	Variables   map[string]any `json:"variables"`
	// Scope is the token waiting at a sub-process for its inner tokens (or
	// of a multi-instance inner instance) whose scope is meant; 0 or
	// absent is the process scope.
	Scope int `json:"scope,omitempty"`
	// Local writes into the scope's own variables instead of propagating.
	Local bool `json:"local,omitempty"`
}

// ScopeVariablesRequest is scope_variables' request.
type ScopeVariablesRequest struct {
	InstanceKey *int64 `json:"instanceKey"`
	// Scope is as SetVariablesRequest's.
	Scope int `json:"scope,omitempty"`
	// Local returns only the scope's own variables.
	Local bool `json:"local,omitempty"`
}

// IncidentsRequest is incidents' request; zero selects every instance.
type IncidentsRequest struct {
	InstanceKey int64  `json:"instanceKey,omitempty"`
	ElementID   string `json:"elementId,omitempty"`
	// Type is "job" (a job with no retries left) or "element" (anything
	// else); empty matches both.
	Type string `json:"type,omitempty"`
}

// DefinitionsRequest is definitions' request; an empty processId lists
// every process.
type DefinitionsRequest struct {
	ProcessID string `json:"processId,omitempty"`
}

// EvaluateDecisionRequest is evaluate_decision's request.
type EvaluateDecisionRequest struct {
	DecisionID string `json:"decisionId"`
	// Version is the version to evaluate (from 1); 0 or absent: the
	// newest.
	Version   int            `json:"version,omitempty"`
	Variables map[string]any `json:"variables,omitempty"`
}

// EvaluateDecisionResult is evaluate_decision's result (api.DecisionResult).
type EvaluateDecisionResult struct {
	Decision api.Decision `json:"decision"`
	// Output is the decision's result; null when it failed (failure says why).
	Output       any                     `json:"output"`
	MatchedRules []api.MatchedRule       `json:"matchedRules"`
	Evaluated    []api.EvaluatedDecision `json:"evaluated"`
	Failure      string                  `json:"failure,omitempty"`
}

// DefinitionXMLRequest is definition_xml's request.
type DefinitionXMLRequest struct {
	ProcessID string `json:"processId"`
	// Version is the version (from 1); 0 or absent: the newest.
	Version int `json:"version,omitempty"`
}

// MetricsRequest is metrics' request: an empty object.
type MetricsRequest struct{}

// NowRequest is now's request: an empty object.
type NowRequest struct{}

// ConfigureRequest is configure's request; an absent field keeps its
// setting.
type ConfigureRequest struct {
	// Events is whether responses carry the call's events (default true).
	Events *bool `json:"events,omitempty"`
	// Limits are the engine's limits, accepted only before the first
	// deploy or publish_message.
	Limits *api.Limits `json:"limits,omitempty"`
	// GatewayChoices makes tokens stop before diverging exclusive and
	// inclusive gateways route, for choose_flows (default false; any time).
	GatewayChoices *bool `json:"gatewayChoices,omitempty"`
}

// CheckpointRequest is checkpoint's request: an empty object for the
// whole engine.
type CheckpointRequest struct {
	// InstanceKey, when set, writes the document of that live instance
	// with its whole call tree only (engine.Engine.CheckpointInstance).
	InstanceKey int64 `json:"instanceKey,omitempty"`
}

// RestoreRequest is restore's request.
type RestoreRequest struct {
	// State is a state document (engine/STATE.md) as a JSON value.
	State json.RawMessage `json:"state"`
	// Instance adds the instance of a one-instance document (checkpoint
	// with instanceKey) to the running engine instead of replacing the
	// engine (engine.Engine.RestoreInstance).
	Instance bool `json:"instance,omitempty"`
}

// CallRequest is call's request.
type CallRequest struct {
	Op      string          `json:"op"`
	Request json.RawMessage `json:"request,omitempty"`
}

// Results.

// DeployResult is what deploy registered.
type DeployResult struct {
	Name      string        `json:"name"`
	Processes []api.Process `json:"processes"`
	// Decisions are the decisions a DMN model deployed; absent for BPMN.
	Decisions []api.Decision `json:"decisions,omitempty"`
	// Warnings lists what deploys but is probably not what the modeller
	// meant; absent when there is nothing.
	Warnings []api.Problem `json:"warnings,omitempty"`
}

// StartResult is start's result: the instance and its state once settled.
type StartResult struct {
	InstanceKey int64     `json:"instanceKey"`
	State       api.State `json:"state"`
	// Jobs are the instance's activatable jobs once settled, ordered by
	// key (absent when there are none): a worker needs no jobs call.
	Jobs []api.Job `json:"jobs,omitempty"`
}

// CompleteJobResult is complete_job's result: where the job's instance
// stands once settled, so that a worker needs no jobs or instance call.
type CompleteJobResult struct {
	InstanceKey int64 `json:"instanceKey"`
	// State is empty when the instance finished and is no longer
	// retained.
	State api.State `json:"state,omitempty"`
	// Jobs are the instance's activatable jobs, ordered by key (absent
	// when there are none).
	Jobs []api.Job `json:"jobs,omitempty"`
}

// MessageResult is publish_message's result: where each instance the
// message reached stands once settled, as complete_job answers for a job's
// instance, so that a caller that goes on with them needs no instance or
// jobs call.
type MessageResult struct {
	// Instances are those the message was correlated to (at most one per
	// process definition), then those it started, in that order; absent
	// when it reached none (buffered for later, or dropped). A buffered
	// message that correlates later is not reported.
	Instances []CompleteJobResult `json:"instances,omitempty"`
}

// DefinitionXMLResult is the document of one process version.
type DefinitionXMLResult struct {
	// Name is the name the document was deployed under.
	Name string `json:"name"`
	// XMLBase64 is the document's bytes, standard padded base64.
	XMLBase64 string `json:"xmlBase64"`
	// XML is the document as text, when its bytes are UTF-8.
	XML string `json:"xml,omitempty"`
}

// NowResult is the clock's reading after the call.
type NowResult struct {
	// Now is RFC 3339, UTC.
	Now string `json:"now"`
}

// StateResult is checkpoint's result.
type StateResult struct {
	// State is the state document (engine/STATE.md) as a JSON value, not
	// as text inside a string.
	State json.RawMessage `json:"state"`
}

// InstanceResult is instance's result.
type InstanceResult struct {
	Key       int64     `json:"key"`
	ProcessID string    `json:"processId"`
	State     api.State `json:"state"`
	// Message explains a terminated or failed instance.
	Message   string         `json:"message"`
	Variables map[string]any `json:"variables"`
	Incidents []api.Incident `json:"incidents"`
}

// Response is the envelope of every answer; R is the result's type as the
// side that handles it holds it (any to encode, json.RawMessage to decode).
type Response[R any] struct {
	OK     bool   `json:"ok"`
	Result R      `json:"result"`
	Error  *Error `json:"error,omitempty"`
	// Events are the records produced during the call, all instances, in
	// each instance's order.
	Events []api.Event `json:"events"`
	// Now is the virtual clock after the call.
	Now time.Time `json:"now"`
	// NextDeadline is when the earliest pending timer is due or a job's
	// activation timeout or retry back-off ends, or nil.
	NextDeadline *time.Time `json:"nextDeadline"`
}

// Error is an error response's error object.
type Error struct {
	// Code is the stable error code (Codes).
	Code Code `json:"code"`
	// Message is a plain sentence naming the field, key or element.
	Message string `json:"message"`
	// ElementID and ProcessID locate the error, when there is an element.
	ElementID string `json:"elementId,omitempty"`
	ProcessID string `json:"processId,omitempty"`
	// Problems lists every problem of a rejected document (DEPLOY_FAILED).
	Problems []api.Problem `json:"problems,omitempty"`
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel error of e.Code (Sentinel): the one the
// native engine returns for the same mistake, so errors.Is works on an
// error that came over the wire as on a native one.
func (e *Error) Unwrap() error { return Sentinel(e.Code) }

// Native returns the error a native engine call returns for e: an
// *api.DeployError for DEPLOY_FAILED, e itself otherwise.
func (e *Error) Native() error {
	if e.Code != CodeDeployFailed {
		return e
	}
	de := &api.DeployError{ProcessID: e.ProcessID, ElementID: e.ElementID, Problems: e.Problems}
	if len(e.Problems) > 0 {
		de.Rule = e.Problems[0].Rule
	} else {
		de.Rule = e.Message
	}
	return de
}

// JobsPage returns the page of jobs (ordered by key) that a JobsRequest's
// AfterKey and Limit ask for, never nil.
func JobsPage(jobs []api.Job, afterKey int64, limit int) []api.Job {
	i := sort.Search(len(jobs), func(i int) bool { return jobs[i].Key > afterKey })
	jobs = jobs[i:]
	if limit > 0 && len(jobs) > limit {
		jobs = jobs[:limit]
	}
	if jobs == nil {
		return []api.Job{}
	}
	return jobs
}
