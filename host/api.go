package host

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/internal/value"
	"github.com/flowtrack/flowtrack/worker"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// Deploy parses, validates and registers the executable processes of a
// BPMN 2.0 XML document, as engine.Engine.Deploy does; an invalid document
// is a *engine.DeployError.
func (e *Engine) Deploy(ctx context.Context, name string, bpmn []byte) (*api.Deployment, error) {
	var res wire.DeployResult
	// The document travels as its bytes (base64), not as a JSON string:
	// JSON strings hold UTF-8, and a document in another encoding, or
	// with invalid UTF-8, must reach the module as the native engine
	// would see it. An empty document is sent as "", which the engine
	// rejects as natively.
	doc := base64.StdEncoding.EncodeToString(bpmn)
	err := e.call(ctx, "deploy", wire.DeployRequest{Name: name, XMLBase64: &doc}, &res)
	if err != nil {
		if de, ok := err.(*api.DeployError); ok {
			de.File = name
		}
		return nil, err
	}
	return &api.Deployment{Name: res.Name, Processes: res.Processes, Decisions: res.Decisions, Warnings: res.Warnings}, nil
}

// EvaluateDecision evaluates version (0: the newest) of a deployed
// decision over vars, as engine.Engine.EvaluateDecisionVersion does: a
// failed evaluation returns the result (output nil) with an
// *engine.DecisionError; an unknown decision is engine.ErrUnknownDecision.
func (e *Engine) EvaluateDecision(ctx context.Context, decisionID string, version int, vars map[string]any) (*api.DecisionResult, error) {
	var res wire.EvaluateDecisionResult
	err := e.call(ctx, "evaluate_decision", wire.EvaluateDecisionRequest{DecisionID: decisionID, Version: version, Variables: vars}, &res)
	if err != nil {
		return nil, err
	}
	r := &api.DecisionResult{Decision: res.Decision, Output: res.Output, MatchedRules: res.MatchedRules, Evaluated: res.Evaluated}
	if res.Failure != "" {
		return r, &api.DecisionError{DecisionID: decisionID, Err: errors.New(res.Failure)}
	}
	return r, nil
}

// Start starts an instance of the newest version of processID and returns
// its key once the engine has settled.
func (e *Engine) Start(ctx context.Context, processID string, vars map[string]any) (int64, error) {
	s, err := e.StartInstance(ctx, processID, vars)
	return s.Key, err
}

// Started is what StartInstance reports of a new instance,
// CompleteJobInstance of a job's instance, and PublishMessageReached of
// each instance a message reached.
type Started struct {
	Key int64
	// State is the state the instance settled in before the call
	// returned: Completed for a process that needs no outside input.
	// Empty when the instance finished and is no longer retained.
	State api.State
	// Jobs are the instance's activatable jobs once settled, ordered by
	// key: a worker needs no Jobs call.
	Jobs []api.Job
}

// StartInstance is Start that also returns the state the instance settled
// in, which the module sends with its key: a caller that needs it (a
// benchmark driver, a script that runs a process to its end) makes no
// second call.
func (e *Engine) StartInstance(ctx context.Context, processID string, vars map[string]any) (Started, error) {
	if err := value.Check(vars); err != nil {
		return Started{}, fmt.Errorf("start %s: %w", processID, err)
	}
	var res wire.StartResult
	err := e.call(ctx, "start", wire.StartRequest{ProcessID: processID, Variables: vars}, &res)
	return Started{Key: res.InstanceKey, State: res.State, Jobs: res.Jobs}, err
}

// PublishMessage publishes msg as engine.Engine.PublishMessage does: it
// correlates to the subscriptions waiting for it, starts instances at
// matching message start events, and with a TTL is buffered.
func (e *Engine) PublishMessage(ctx context.Context, msg api.Message) error {
	_, err := e.PublishMessageReached(ctx, msg)
	return err
}

// PublishMessageReached is PublishMessage that also returns where the
// instances the message reached stand once settled (those it was
// correlated to, then those it started; none for a message buffered or
// dropped), which the module sends anyway: a caller that goes on with an
// instance (a worker taking its next job, a driver waiting for its end)
// makes no Jobs or State call.
func (e *Engine) PublishMessageReached(ctx context.Context, msg api.Message) ([]Started, error) {
	if err := value.Check(msg.Variables); err != nil {
		return nil, fmt.Errorf("publish message %q: %w", msg.Name, err)
	}
	var res wire.MessageResult
	err := e.call(ctx, "publish_message", wire.MessageRequest{Name: msg.Name, CorrelationKey: msg.CorrelationKey,
		Variables: msg.Variables, TTLMs: float64(msg.TTL) / float64(time.Millisecond), MessageID: msg.MessageID}, &res)
	if err != nil {
		return nil, err
	}
	var out []Started
	for _, p := range res.Instances {
		out = append(out, Started{Key: p.InstanceKey, State: p.State, Jobs: p.Jobs})
	}
	return out, nil
}

// BroadcastSignal delivers a signal to every instance waiting for it.
func (e *Engine) BroadcastSignal(ctx context.Context, name string, vars map[string]any) error {
	if err := value.Check(vars); err != nil {
		return fmt.Errorf("broadcast signal %q: %w", name, err)
	}
	return e.call(ctx, "broadcast_signal", wire.SignalRequest{Name: name, Variables: vars}, nil)
}

// Jobs returns the activatable jobs matching f, ordered by key.
func (e *Engine) Jobs(ctx context.Context, f api.JobFilter) ([]api.Job, error) {
	var jobs []api.Job
	err := e.call(ctx, "jobs", wire.JobsRequest{Type: f.Type, InstanceKey: f.InstanceKey, ElementID: f.ElementID}, &jobs)
	return jobs, err
}

// CompleteJob completes a job; vars are merged into the process variables.
// With engine.JobActivation the activation must still be the job's
// (engine.ErrStaleActivation).
func (e *Engine) CompleteJob(ctx context.Context, key int64, vars map[string]any, opts ...api.JobOption) error {
	if err := value.Check(vars); err != nil {
		return fmt.Errorf("complete job %d: %w", key, err)
	}
	a := api.JobArgsOf(opts)
	return e.call(ctx, "complete_job", wire.CompleteJobRequest{JobKey: &key, Variables: vars, Activation: a.Activation}, nil)
}

// CompleteJobInstance is CompleteJob that also returns where the job's
// instance stands once settled (its state and activatable jobs), which the
// module sends anyway: a worker that goes on with the instance's next job
// makes no Jobs call.
func (e *Engine) CompleteJobInstance(ctx context.Context, key int64, vars map[string]any) (Started, error) {
	if err := value.Check(vars); err != nil {
		return Started{}, fmt.Errorf("complete job %d: %w", key, err)
	}
	var res wire.CompleteJobResult
	err := e.call(ctx, "complete_job", wire.CompleteJobRequest{JobKey: &key, Variables: vars}, &res)
	return Started{Key: res.InstanceKey, State: res.State, Jobs: res.Jobs}, err
}

// FailJob reports a failed attempt at a job; with retries 0 an incident
// holds the token, with retries left the job is activatable again after
// the engine.RetryBackoff option's back-off.
func (e *Engine) FailJob(ctx context.Context, key int64, retries int, message string, opts ...api.JobOption) error {
	a := api.JobArgsOf(opts)
	return e.call(ctx, "fail_job", wire.FailJobRequest{JobKey: &key, Retries: &retries, Message: message,
		Activation: a.Activation, BackoffMs: millis(a.Backoff)}, nil)
}

// ThrowError raises the BPMN error code from a job's element.
func (e *Engine) ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any, opts ...api.JobOption) error {
	if err := value.Check(vars); err != nil {
		return fmt.Errorf("throw error from job %d: %w", key, err)
	}
	a := api.JobArgsOf(opts)
	return e.call(ctx, "throw_error", wire.ThrowErrorRequest{JobKey: &key, ErrorCode: code, Message: message, Variables: vars,
		Activation: a.Activation}, nil)
}

// ActivateJobs activates up to maxJobs jobs of jobType for worker and
// timeout, as engine.Engine.ActivateJobs does.
func (e *Engine) ActivateJobs(ctx context.Context, jobType, worker string, timeout time.Duration, maxJobs int) ([]api.Job, error) {
	var jobs []api.Job
	ms := millis(timeout)
	err := e.call(ctx, "activate_jobs", wire.ActivateJobsRequest{Type: jobType, Worker: worker, TimeoutMs: &ms, MaxJobs: &maxJobs}, &jobs)
	return jobs, err
}

// UpdateJobRetries sets how many retries (>= 1) a job has left, as
// engine.Engine.UpdateJobRetries does.
func (e *Engine) UpdateJobRetries(ctx context.Context, key int64, retries int) error {
	return e.call(ctx, "update_job_retries", wire.UpdateJobRetriesRequest{JobKey: &key, Retries: &retries}, nil)
}

// ModifyInstance repairs a live instance, as
// engine.Engine.ModifyInstance does.
func (e *Engine) ModifyInstance(ctx context.Context, instanceKey int64, m api.Modification) error {
	req := wire.ModifyInstanceRequest{InstanceKey: &instanceKey, Terminate: m.Terminate}
	for _, a := range m.Activate {
		if err := value.Check(a.Variables); err != nil {
			return fmt.Errorf("modify instance %d: activate %q: %w", instanceKey, a.ElementID, err)
		}
		req.Activate = append(req.Activate, wire.ActivateElement{ElementID: a.ElementID, Scope: a.Scope, Variables: a.Variables})
	}
	return e.call(ctx, "modify_instance", req, nil)
}

// SetGatewayChoices turns gateway choices on or off, as
// engine.Engine.SetGatewayChoices does (the module's configure
// gatewayChoices); unlike it, it reaches the module, so it takes a
// context and can fail.
func (e *Engine) SetGatewayChoices(ctx context.Context, on bool) error {
	return e.call(ctx, "configure", wire.ConfigureRequest{GatewayChoices: &on}, nil)
}

// ChooseFlows routes a token waiting for a choice at a gateway, as
// engine.Engine.ChooseFlows does.
func (e *Engine) ChooseFlows(ctx context.Context, instanceKey int64, tokenID int, flowIDs []string) error {
	return e.call(ctx, "choose_flows", wire.ChooseFlowsRequest{InstanceKey: &instanceKey, TokenID: &tokenID, FlowIDs: flowIDs}, nil)
}

// SetVariables sets vars on a scope of a live instance, as
// engine.Engine.SetVariables does.
func (e *Engine) SetVariables(ctx context.Context, instanceKey int64, vars map[string]any, s api.Scope) error {
	if err := value.Check(vars); err != nil {
		return fmt.Errorf("set variables of instance %d: %w", instanceKey, err)
	}
	if vars == nil {
		vars = map[string]any{}
	}
	return e.call(ctx, "set_variables", wire.SetVariablesRequest{InstanceKey: &instanceKey, Variables: vars, Scope: s.Token, Local: s.Local}, nil)
}

// ScopeVariables returns the variables of a scope of a live instance, as
// engine.Engine.ScopeVariables does.
func (e *Engine) ScopeVariables(ctx context.Context, instanceKey int64, s api.Scope) (map[string]any, error) {
	var vars map[string]any
	err := e.call(ctx, "scope_variables", wire.ScopeVariablesRequest{InstanceKey: &instanceKey, Scope: s.Token, Local: s.Local}, &vars)
	return vars, err
}

// StartVersion starts an instance of version (from 1; 0: the newest) of
// processID, as engine.Engine.StartVersion does.
func (e *Engine) StartVersion(ctx context.Context, processID string, version int, vars map[string]any) (Started, error) {
	if err := value.Check(vars); err != nil {
		return Started{}, fmt.Errorf("start %s: %w", processID, err)
	}
	var res wire.StartResult
	err := e.call(ctx, "start", wire.StartRequest{ProcessID: processID, Variables: vars, Version: version}, &res)
	return Started{Key: res.InstanceKey, State: res.State}, err
}

// Definitions returns every deployed version of every process, as
// engine.Engine.Definitions does.
func (e *Engine) Definitions(ctx context.Context) ([]api.Definition, error) {
	var defs []api.Definition
	err := e.call(ctx, "definitions", wire.DefinitionsRequest{}, &defs)
	return defs, err
}

// DefinitionXML returns the document that deployed version (0: the
// newest) of processID and its deployment name, as
// engine.Engine.DefinitionXML does.
func (e *Engine) DefinitionXML(ctx context.Context, processID string, version int) (string, []byte, error) {
	var res wire.DefinitionXMLResult
	if err := e.call(ctx, "definition_xml", wire.DefinitionXMLRequest{ProcessID: processID, Version: version}, &res); err != nil {
		return "", nil, err
	}
	xml, err := base64.StdEncoding.DecodeString(res.XMLBase64)
	if err != nil {
		return "", nil, fmt.Errorf("definition_xml: the module answered bad base64: %w", err)
	}
	return res.Name, xml, nil
}

// Metrics returns what an operator reads of the engine, as
// engine.Engine.Metrics does.
func (e *Engine) Metrics(ctx context.Context) (api.Metrics, error) {
	var m api.Metrics
	err := e.call(ctx, "metrics", wire.MetricsRequest{}, &m)
	return m, err
}

// HandleJobs runs a job worker for jobType until ctx ends, as
// engine.Engine.HandleJobs does, over this module's operations.
func (e *Engine) HandleJobs(ctx context.Context, jobType string, handler worker.Handler, o worker.Options) error {
	return worker.Run(ctx, e, jobType, handler, o)
}

// millis is d in the ABI's milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Incidents returns the open incidents of live instances, ordered by key.
func (e *Engine) Incidents(ctx context.Context) ([]api.Incident, error) {
	var out []api.Incident
	err := e.call(ctx, "incidents", wire.IncidentsRequest{}, &out)
	return out, err
}

// FindIncidents returns the open incidents f selects, as
// engine.Engine.FindIncidents does.
func (e *Engine) FindIncidents(ctx context.Context, f api.IncidentFilter) ([]api.Incident, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	var out []api.Incident
	err := e.call(ctx, "incidents", wire.IncidentsRequest{InstanceKey: f.InstanceKey, ElementID: f.ElementID, Type: string(f.Type)}, &out)
	return out, err
}

// ResolveIncident retries what an incident holds.
func (e *Engine) ResolveIncident(ctx context.Context, key int64) error {
	return e.call(ctx, "resolve_incident", wire.IncidentRequest{IncidentKey: &key}, nil)
}

// Advance moves the virtual clock forward by d, firing due timers in order.
func (e *Engine) Advance(ctx context.Context, d time.Duration) error {
	ms := float64(d) / float64(time.Millisecond)
	return e.call(ctx, "advance", wire.AdvanceRequest{ByMs: &ms}, nil)
}

// AdvanceTo moves the virtual clock to t (a t in the past changes nothing).
// A t outside [api.MinTime, api.MaxTime] is api.ErrTimeOutOfRange, as
// natively; it is refused here because the ABI's RFC 3339 cannot carry
// years past 9999.
func (e *Engine) AdvanceTo(ctx context.Context, t time.Time) error {
	if err := api.CheckTimeRange(t); err != nil {
		return fmt.Errorf("advance: %w", err)
	}
	to := t.UTC().Format(time.RFC3339Nano)
	return e.call(ctx, "advance", wire.AdvanceRequest{To: &to}, nil)
}

// Now returns the module clock's reading after the last call.
func (e *Engine) Now() time.Time {
	_ = e.acquire(context.Background())
	defer e.release()
	return e.now
}

// NextDeadline returns when the earliest pending timer is due or a job's
// activation timeout or back-off ends, as of the last call, and false when
// none is pending.
func (e *Engine) NextDeadline() (time.Time, bool) {
	_ = e.acquire(context.Background())
	defer e.release()
	if e.deadline == nil {
		return time.Time{}, false
	}
	return *e.deadline, true
}

// Settle returns at once: every call already runs until the engine
// settles. It exists so code written against engine.Engine runs unchanged,
// and like the native Settle it returns engine.ErrClosed after Close (and
// ErrTrapped after a trap).
func (e *Engine) Settle(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.acquire(ctx); err != nil {
		return err
	}
	defer e.release()
	return e.usable()
}

// InstanceInfo is an instance's state, variables and open incidents.
type InstanceInfo struct {
	Key       int64          `json:"key"`
	ProcessID string         `json:"processId"`
	State     api.State      `json:"state"`
	Message   string         `json:"message"`
	Variables map[string]any `json:"variables"`
	Incidents []api.Incident `json:"incidents"`
}

// Instance returns a live or recently finished instance's state, variables
// and incidents; an unknown key is ErrUnknownInstance.
func (e *Engine) Instance(ctx context.Context, key int64) (*InstanceInfo, error) {
	var res wire.InstanceResult
	if err := e.call(ctx, "instance", wire.InstanceRequest{InstanceKey: &key}, &res); err != nil {
		return nil, err
	}
	info := InstanceInfo(res)
	return &info, nil
}

// State returns an instance's lifecycle state.
func (e *Engine) State(ctx context.Context, key int64) (api.State, error) {
	info, err := e.Instance(ctx, key)
	if err != nil {
		return "", err
	}
	return info.State, nil
}

// Variables returns a copy of an instance's variables.
func (e *Engine) Variables(ctx context.Context, key int64) (map[string]any, error) {
	info, err := e.Instance(ctx, key)
	if err != nil {
		return nil, err
	}
	return info.Variables, nil
}

// Tokens returns where every token of an instance is and why it waits.
func (e *Engine) Tokens(ctx context.Context, key int64) ([]api.Token, error) {
	var toks []api.Token
	err := e.call(ctx, "tokens", wire.InstanceRequest{InstanceKey: &key}, &toks)
	return toks, err
}

// History returns an instance's event stream so far.
func (e *Engine) History(ctx context.Context, key int64) ([]api.Event, error) {
	var evs []api.Event
	err := e.call(ctx, "history", wire.InstanceRequest{InstanceKey: &key}, &evs)
	return evs, err
}

// ActivateAdHoc activates inner elements of an instance's active ad-hoc
// sub-process adHocID (engine.Engine.ActivateAdHoc).
func (e *Engine) ActivateAdHoc(ctx context.Context, key int64, adHocID string, elementIDs []string) error {
	if elementIDs == nil {
		elementIDs = []string{}
	}
	return e.call(ctx, "activate_ad_hoc", wire.ActivateAdHocRequest{InstanceKey: &key, ElementID: adHocID, Elements: elementIDs}, nil)
}

// Cancel terminates an instance.
func (e *Engine) Cancel(ctx context.Context, key int64) error {
	return e.call(ctx, "cancel", wire.InstanceRequest{InstanceKey: &key}, nil)
}

// Subscribe calls fn with every event record the module produces, under
// the observer contract of package engine: each instance's records in
// order, fn never concurrently with itself, and a panic in fn recovered
// and reported to the error handler (WithErrorHandler) as an
// *engine.ObserverPanicError while fn keeps getting records.
//
// fn runs on the goroutine of a call that produced records, after the call
// released the module, so fn may call the Engine; the records of a call fn
// makes are delivered after fn returns. While one goroutine delivers,
// records of calls made on other goroutines are delivered by it, in the
// module's order, so those calls may return before fn has seen their
// records.
//
// The returned function unsubscribes. It returns nil: unlike the native
// engine, the host never drops an observer (it has no backlog); the shape
// is engine.Engine.Subscribe's so that code can take either.
//
// The module produces events only while someone is subscribed: encoding
// records nobody reads costs a fifth to a quarter of every call.
func (e *Engine) Subscribe(fn func(api.Event)) (unsubscribe func() error) {
	e.obsMu.Lock()
	if e.observers == nil {
		e.observers = map[int]func(api.Event){}
	}
	id := e.nextObs
	e.nextObs++
	e.observers[id] = fn
	first := len(e.observers) == 1
	e.obsMu.Unlock()
	if first {
		_ = e.setEvents(context.Background(), true) // a closed or trapped engine has nothing to deliver anyway
	}
	var once sync.Once
	return func() error {
		once.Do(func() {
			e.obsMu.Lock()
			delete(e.observers, id)
			last := len(e.observers) == 0
			e.obsMu.Unlock()
			if last {
				_ = e.setEvents(context.Background(), false)
			}
		})
		return nil
	}
}

// queue appends a call's records to those waiting for the observers.
// Called with the module lock held, so the queue keeps the module's order.
func (e *Engine) queue(events []api.Event) {
	e.obsMu.Lock()
	e.pending = append(e.pending, events...)
	e.obsMu.Unlock()
}

// notify hands the waiting records to the observers, in order and in
// subscription order, unless another goroutine is doing so (it will hand
// out these too, or fn is calling the Engine from inside a delivery).
func (e *Engine) notify() {
	e.obsMu.Lock()
	if e.delivering {
		e.obsMu.Unlock()
		return
	}
	e.delivering = true
	for len(e.pending) > 0 {
		batch := e.pending
		e.pending = nil
		fns := make([]func(api.Event), 0, len(e.observers))
		for id := 0; id < e.nextObs; id++ {
			if fn, ok := e.observers[id]; ok {
				fns = append(fns, fn)
			}
		}
		e.obsMu.Unlock()
		for _, fn := range fns {
			for _, ev := range batch {
				e.observe(fn, ev)
			}
		}
		e.obsMu.Lock()
	}
	e.delivering = false
	e.obsMu.Unlock()
}

// observe calls fn with ev and reports a panic in fn to the error handler.
func (e *Engine) observe(fn func(api.Event), ev api.Event) {
	defer func() {
		if r := recover(); r != nil {
			e.onError(&api.ObserverPanicError{Event: ev, Value: r, Stack: debug.Stack()})
		}
	}()
	fn(ev)
}
