package dispatch

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// operation runs one ABI operation on its JSON request.
type operation func(ctx context.Context, m *Module, req []byte) (any, error)

// operations maps export names to their implementation (ABI.md,
// "Operations"). The exports and the generic "call" both dispatch here.
var operations map[string]operation

func init() {
	operations = map[string]operation{
		"deploy":             opDeploy,
		"start":              opStart,
		"publish_message":    opPublishMessage,
		"broadcast_signal":   opBroadcastSignal,
		"complete_job":       opCompleteJob,
		"fail_job":           opFailJob,
		"throw_error":        opThrowError,
		"resolve_incident":   opResolveIncident,
		"activate_ad_hoc":    opActivateAdHoc,
		"advance":            opAdvance,
		"tokens":             opTokens,
		"instance":           opInstance,
		"history":            opHistory,
		"jobs":               opJobs,
		"activate_jobs":      opActivateJobs,
		"update_job_retries": opUpdateJobRetries,
		"modify_instance":    opModifyInstance,
		"choose_flows":       opChooseFlows,
		"set_variables":      opSetVariables,
		"scope_variables":    opScopeVariables,
		"incidents":          opIncidents,
		"cancel":             opCancel,
		"metrics":            opMetrics,
		"definitions":        opDefinitions,
		"definition_xml":     opDefinitionXML,
		"evaluate_decision":  opEvaluateDecision,
		"now":                opNow,
		"configure":          opConfigure,
		"call":               opCall,
		"checkpoint":         opCheckpoint,
		"restore":            opRestore,
	}
}

func opDeploy(_ context.Context, m *Module, data []byte) (any, error) {
	var req wire.DeployRequest
	if err := decode("deploy", data, &req); err != nil {
		return nil, err
	}
	var doc []byte
	switch {
	case (req.XML == nil) == (req.XMLBase64 == nil):
		return nil, badRequest("deploy: exactly one of fields \"xml\" and \"xmlBase64\" is required")
	case req.XMLBase64 != nil:
		var err error
		if doc, err = base64.StdEncoding.DecodeString(*req.XMLBase64); err != nil {
			return nil, badRequest("deploy: field \"xmlBase64\" is not standard base64: %v", err)
		}
	default:
		doc = []byte(*req.XML)
		if enc := declaredEncoding(doc); enc != "" && !utf8Label(enc) && !ascii(doc) {
			return nil, badRequest("deploy: field \"xml\" carries text, which reaches the engine as UTF-8, but the document declares encoding %q: "+
				"send the document's bytes in \"xmlBase64\" instead", enc)
		}
	}
	if req.Name == "" {
		req.Name = "model.bpmn"
	}
	m.markUsed()
	d, err := m.eng.Deploy(req.Name, doc)
	if err != nil {
		return nil, err
	}
	return wire.DeployResult{Name: d.Name, Processes: d.Processes, Decisions: d.Decisions, Warnings: d.Warnings}, nil
}

// declaredEncoding returns the encoding named by doc's XML declaration, or
// "" when it names none.
func declaredEncoding(doc []byte) string {
	doc = bytes.TrimLeft(doc, "\ufeff \t\r\n")
	if !bytes.HasPrefix(doc, []byte("<?xml")) {
		return ""
	}
	decl, _, ok := bytes.Cut(doc, []byte("?>"))
	if !ok {
		return ""
	}
	_, after, ok := bytes.Cut(decl, []byte("encoding"))
	if !ok {
		return ""
	}
	after = bytes.TrimLeft(after, " \t\r\n=")
	if len(after) == 0 || (after[0] != '"' && after[0] != '\'') {
		return ""
	}
	name, _, _ := bytes.Cut(after[1:], after[:1])
	return string(name)
}

func utf8Label(enc string) bool {
	return strings.EqualFold(enc, "utf-8") || strings.EqualFold(enc, "utf8")
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func opStart(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.StartRequest
	if err := decodeStart(data, &req); err != nil {
		return nil, err
	}
	if req.ProcessID == "" {
		return nil, badRequest("start: field \"processId\" is required")
	}
	inst, err := m.eng.StartVersion(ctx, req.ProcessID, req.Version, req.Variables)
	if err != nil {
		return nil, err
	}
	if err := m.eng.Settle(ctx); err != nil {
		return nil, err
	}
	state := inst.State()
	return wire.StartResult{InstanceKey: inst.Key(), State: state, Jobs: jobsOf(m.eng, inst.Key(), state)}, nil
}

func opPublishMessage(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.MessageRequest
	if err := decodeMessage(data, &req); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, badRequest("publish_message: field \"name\" is required")
	}
	if req.TTLMs < 0 || req.TTLMs > maxAdvanceMs {
		return nil, badRequest("publish_message: field \"ttlMs\" must be between 0 and %v, got %v (a TTL must end by %s)",
			maxAdvanceMs, req.TTLMs, formatTime(clock.Max))
	}
	m.markUsed()
	reached, err := publishMessage(ctx, m.eng, req)
	if err != nil {
		return nil, err
	}
	if len(reached) == 0 {
		return wire.MessageResult{}, nil
	}
	if err := m.eng.Settle(ctx); err != nil {
		return nil, err
	}
	res := wire.MessageResult{Instances: make([]wire.CompleteJobResult, len(reached))}
	for i, inst := range reached {
		res.Instances[i] = Reached(m.eng, inst)
	}
	return res, nil
}

func opBroadcastSignal(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.SignalRequest
	if err := decode("broadcast_signal", data, &req); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, badRequest("broadcast_signal: field \"name\" is required")
	}
	return nil, broadcastSignal(ctx, m.eng, req)
}

func opCompleteJob(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.CompleteJobRequest
	if err := decodeCompleteJob(data, &req); err != nil {
		return nil, err
	}
	if req.JobKey == nil {
		return nil, badRequest("complete_job: field \"jobKey\" is required")
	}
	job, _ := m.eng.Job(*req.JobKey) // its instance, for the result
	if err := m.eng.CompleteJob(ctx, *req.JobKey, req.Variables, engine.JobActivation(req.Activation)); err != nil {
		return nil, err
	}
	if err := m.eng.Settle(ctx); err != nil {
		return nil, err
	}
	return Progress(m.eng, job.InstanceKey), nil
}

// Progress says where the instance key stands once settled, with its
// activatable jobs (complete_job's result); no state once it finished and
// is no longer retained. A cluster partition answers it for an instance a
// message from another partition reached, when it has the key only.
func Progress(eng *engine.Engine, key int64) wire.CompleteJobResult {
	if inst, ok := eng.Instance(key); ok {
		return Reached(eng, inst)
	}
	return wire.CompleteJobResult{InstanceKey: key}
}

// Reached says where inst stands once settled, with its activatable jobs:
// one of publish_message's instances, also as a cluster's partitions
// answer them. The instance is at hand, so its state is known even once
// it finished and is no longer retained.
func Reached(eng *engine.Engine, inst *engine.Instance) wire.CompleteJobResult {
	st := inst.State()
	return wire.CompleteJobResult{InstanceKey: inst.Key(), State: st, Jobs: jobsOf(eng, inst.Key(), st)}
}

// jobsOf returns the activatable jobs of the instance key, which is in
// state, for the results that spare a worker its jobs call.
func jobsOf(eng *engine.Engine, key int64, state engine.State) []engine.Job {
	if state != engine.Active {
		return nil
	}
	return eng.Jobs(engine.JobFilter{InstanceKey: key})
}

func opFailJob(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.FailJobRequest
	if err := decode("fail_job", data, &req); err != nil {
		return nil, err
	}
	switch {
	case req.JobKey == nil:
		return nil, badRequest("fail_job: field \"jobKey\" is required")
	case req.Retries == nil:
		return nil, badRequest("fail_job: field \"retries\" is required")
	case *req.Retries < 0:
		return nil, badRequest("fail_job: field \"retries\" must be >= 0, got %d", *req.Retries)
	}
	backoff, err := millis("fail_job", "backoffMs", req.BackoffMs)
	if err != nil {
		return nil, err
	}
	return nil, m.eng.FailJob(ctx, *req.JobKey, *req.Retries, req.Message,
		engine.JobActivation(req.Activation), engine.RetryBackoff(backoff))
}

func opThrowError(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.ThrowErrorRequest
	if err := decode("throw_error", data, &req); err != nil {
		return nil, err
	}
	switch {
	case req.JobKey == nil:
		return nil, badRequest("throw_error: field \"jobKey\" is required")
	case req.ErrorCode == "":
		return nil, badRequest("throw_error: field \"errorCode\" is required")
	}
	return nil, m.eng.ThrowError(ctx, *req.JobKey, req.ErrorCode, req.Message, req.Variables, engine.JobActivation(req.Activation))
}

func opActivateAdHoc(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.ActivateAdHocRequest
	if err := decode("activate_ad_hoc", data, &req); err != nil {
		return nil, err
	}
	switch {
	case req.InstanceKey == nil:
		return nil, badRequest("activate_ad_hoc: field \"instanceKey\" is required")
	case req.ElementID == "":
		return nil, badRequest("activate_ad_hoc: field \"elementId\" is required")
	}
	return nil, m.eng.ActivateAdHoc(ctx, *req.InstanceKey, req.ElementID, req.Elements)
}

func opResolveIncident(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.IncidentRequest
	if err := decode("resolve_incident", data, &req); err != nil {
		return nil, err
	}
	if req.IncidentKey == nil {
		return nil, badRequest("resolve_incident: field \"incidentKey\" is required")
	}
	return nil, m.eng.ResolveIncident(ctx, *req.IncidentKey)
}

func opAdvance(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.AdvanceRequest
	if err := decodeAdvance(data, &req); err != nil {
		return nil, err
	}
	if m.served {
		return nil, &callError{Code: wire.CodeUnsupported, Message: "advance: the served engine runs on the real clock"}
	}
	var target time.Time
	switch {
	case (req.ByMs == nil) == (req.To == nil):
		return nil, badRequest("advance: exactly one of fields \"byMs\" and \"to\" is required")
	case req.ByMs != nil:
		ms := *req.ByMs
		if ms < 0 || math.IsNaN(ms) || ms > maxAdvanceMs {
			return nil, badRequest("advance: field \"byMs\" must be between 0 and %v, got %v (the clock ends at %s)",
				maxAdvanceMs, ms, formatTime(clock.Max))
		}
		target = m.clock.Now().Add(time.Duration(ms * float64(time.Millisecond)))
	default:
		t, err := time.Parse(time.RFC3339Nano, *req.To)
		if err != nil {
			return nil, badRequest("advance: field \"to\" is not an RFC 3339 time between %s and %s: %q",
				formatTime(clock.Min), formatTime(clock.Max), *req.To)
		}
		target = t
	}
	if err := advanceTo(ctx, m, target); err != nil {
		return nil, err
	}
	return wire.NowResult{Now: formatTime(m.clock.Now())}, nil
}

// advanceTo fires the timers due up to target in due order, settling
// after each due time (engine.AdvanceTo), then moves the clock to target.
func advanceTo(ctx context.Context, m *Module, target time.Time) error {
	return m.eng.AdvanceTo(ctx, target)
}

// maxAdvanceMs is the longest advance, about 292 years: a time.Duration.
const maxAdvanceMs = float64(math.MaxInt64 / int64(time.Millisecond))

func opNow(_ context.Context, m *Module, data []byte) (any, error) {
	var req wire.NowRequest
	if err := decode("now", data, &req); err != nil {
		return nil, err
	}
	return wire.NowResult{Now: formatTime(m.clock.Now())}, nil
}

// opConfigure sets how the module answers (events, any time) and the
// engine's limits (engine.Limits), which only an empty engine takes: the
// engine is rebuilt with them, so they must come before the first deploy
// or publish_message.
func opConfigure(_ context.Context, m *Module, data []byte) (any, error) {
	var req wire.ConfigureRequest
	if err := decode("configure", data, &req); err != nil {
		return nil, err
	}
	settings := m.settings
	if req.Limits != nil {
		settings.limits = *req.Limits
	}
	if settings != m.settings {
		if m.used {
			return nil, badRequest("configure: engine limits must be set before the first deploy or publish_message")
		}
		old := m.settings
		m.settings = settings
		if err := m.build(); err != nil {
			m.settings = old // the engine was left as it was
			return nil, badRequest("configure: field \"limits\": %v", err)
		}
	}
	if req.Events != nil {
		m.events = *req.Events
	}
	if req.GatewayChoices != nil {
		m.choices = *req.GatewayChoices
	}
	m.eng.SetGatewayChoices(m.choices)
	m.eng.SetEventLog(m.events)
	return nil, nil
}

// lookup decodes a wire.InstanceRequest and finds the instance.
func (m *Module) lookup(op string, data []byte) (*engine.Instance, error) {
	var req wire.InstanceRequest
	if err := decodeInstance(op, data, &req); err != nil {
		return nil, err
	}
	if req.InstanceKey == nil {
		return nil, badRequest("%s: field \"instanceKey\" is required", op)
	}
	inst, ok := m.eng.Instance(*req.InstanceKey)
	if !ok {
		return nil, &callError{Code: wire.CodeUnknownInstance, Message: fmt.Sprintf("%s: unknown instance %d", op, *req.InstanceKey)}
	}
	return inst, nil
}

func opTokens(ctx context.Context, m *Module, data []byte) (any, error) {
	inst, err := m.lookup("tokens", data)
	if err != nil {
		return nil, err
	}
	toks, err := inst.Tokens(ctx)
	if toks == nil {
		toks = []engine.Token{}
	}
	return toks, err
}

func opInstance(ctx context.Context, m *Module, data []byte) (any, error) {
	inst, err := m.lookup("instance", data)
	if err != nil {
		return nil, err
	}
	incidents, err := inst.Incidents(ctx)
	if err != nil {
		return nil, err
	}
	res := wire.InstanceResult{Key: inst.Key(), ProcessID: inst.ProcessID(), State: inst.State(),
		Message: inst.Message(), Variables: inst.Variables(), Incidents: incidents}
	if res.Variables == nil {
		res.Variables = map[string]any{}
	}
	if res.Incidents == nil {
		res.Incidents = []engine.Incident{}
	}
	return res, nil
}

func opHistory(ctx context.Context, m *Module, data []byte) (any, error) {
	inst, err := m.lookup("history", data)
	if err != nil {
		return nil, err
	}
	return inst.History(ctx)
}

func opCancel(ctx context.Context, m *Module, data []byte) (any, error) {
	inst, err := m.lookup("cancel", data)
	if err != nil {
		return nil, err
	}
	return nil, inst.Cancel(ctx)
}

func opJobs(_ context.Context, m *Module, data []byte) (any, error) {
	var req wire.JobsRequest
	if err := decode("jobs", data, &req); err != nil {
		return nil, err
	}
	if req.Limit < 0 {
		return nil, fmt.Errorf("jobs: field \"limit\" must not be negative, got %d: %w", req.Limit, engine.ErrInvalidArgument)
	}
	jobs := m.eng.Jobs(engine.JobFilter{Type: req.Type, InstanceKey: req.InstanceKey, ElementID: req.ElementID})
	return wire.JobsPage(jobs, req.AfterKey, req.Limit), nil
}

func opIncidents(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.IncidentsRequest
	if err := decode("incidents", data, &req); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.eng.FindIncidents(engine.IncidentFilter{InstanceKey: req.InstanceKey, ElementID: req.ElementID, Type: engine.IncidentType(req.Type)})
}

// opCall is the generic entry point: {"op": name, "request": {...}}.
func opCall(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.CallRequest
	// The wrapped request is decoded, with the usual limit, by its own
	// operation; here it is one level deeper.
	if err := decodeNested("call", data, &req, maxRequestDepth+1); err != nil {
		return nil, err
	}
	if req.Op == "" {
		return nil, badRequest("call: field \"op\" is required")
	}
	fn, ok := operations[req.Op]
	if !ok || req.Op == "call" {
		return nil, &callError{Code: wire.CodeUnknownOperation, Message: "unknown operation " + strconv.Quote(req.Op)}
	}
	return fn(ctx, m, req.Request)
}

// millis converts a request's duration field in milliseconds, refusing a
// negative, NaN or longer-than-a-Duration value by name.
func millis(op, field string, ms float64) (time.Duration, error) {
	if ms < 0 || math.IsNaN(ms) || ms > maxAdvanceMs {
		return 0, badRequest("%s: field %q must be between 0 and %v, got %v", op, field, maxAdvanceMs, ms)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

func opActivateJobs(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.ActivateJobsRequest
	if err := decode("activate_jobs", data, &req); err != nil {
		return nil, err
	}
	switch {
	case req.TimeoutMs == nil:
		return nil, badRequest("activate_jobs: field \"timeoutMs\" is required")
	case req.MaxJobs == nil:
		return nil, badRequest("activate_jobs: field \"maxJobs\" is required")
	}
	timeout, err := millis("activate_jobs", "timeoutMs", *req.TimeoutMs)
	if err != nil {
		return nil, err
	}
	jobs, err := m.eng.ActivateJobs(ctx, req.Type, req.Worker, timeout, *req.MaxJobs)
	if err == nil && m.activated != nil {
		m.activated(req.Type, len(jobs))
	}
	return jobs, err
}

func opUpdateJobRetries(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.UpdateJobRetriesRequest
	if err := decode("update_job_retries", data, &req); err != nil {
		return nil, err
	}
	switch {
	case req.JobKey == nil:
		return nil, badRequest("update_job_retries: field \"jobKey\" is required")
	case req.Retries == nil:
		return nil, badRequest("update_job_retries: field \"retries\" is required")
	}
	return nil, m.eng.UpdateJobRetries(ctx, *req.JobKey, *req.Retries)
}

func opSetVariables(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.SetVariablesRequest
	if err := decode("set_variables", data, &req); err != nil {
		return nil, err
	}
	switch {
	case req.InstanceKey == nil:
		return nil, badRequest("set_variables: field \"instanceKey\" is required")
	case req.Variables == nil:
		return nil, badRequest("set_variables: field \"variables\" is required")
	}
	return nil, m.eng.SetVariables(ctx, *req.InstanceKey, req.Variables, engine.Scope{Token: req.Scope, Local: req.Local})
}

func opScopeVariables(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.ScopeVariablesRequest
	if err := decode("scope_variables", data, &req); err != nil {
		return nil, err
	}
	if req.InstanceKey == nil {
		return nil, badRequest("scope_variables: field \"instanceKey\" is required")
	}
	return m.eng.ScopeVariables(ctx, *req.InstanceKey, engine.Scope{Token: req.Scope, Local: req.Local})
}

func opMetrics(_ context.Context, m *Module, data []byte) (any, error) {
	var req wire.MetricsRequest
	if err := decode("metrics", data, &req); err != nil {
		return nil, err
	}
	return m.eng.Metrics(), nil
}

func opDefinitions(_ context.Context, m *Module, data []byte) (any, error) {
	var req wire.DefinitionsRequest
	if err := decode("definitions", data, &req); err != nil {
		return nil, err
	}
	out := []engine.Definition{}
	for _, d := range m.eng.Definitions() {
		if req.ProcessID == "" || d.ProcessID == req.ProcessID {
			out = append(out, d)
		}
	}
	return out, nil
}

// opEvaluateDecision evaluates a deployed decision. A failed evaluation
// is a result (output null, failure saying why), not an error: it is the
// model's answer to these variables.
func opEvaluateDecision(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.EvaluateDecisionRequest
	if err := decode("evaluate_decision", data, &req); err != nil {
		return nil, err
	}
	if req.DecisionID == "" {
		return nil, badRequest("evaluate_decision: field \"decisionId\" is required")
	}
	r, err := m.eng.EvaluateDecisionVersion(ctx, req.DecisionID, req.Version, req.Variables)
	var de *engine.DecisionError
	if r == nil || err != nil && !errors.As(err, &de) {
		return nil, err
	}
	res := wire.EvaluateDecisionResult{Decision: r.Decision, Output: r.Output, MatchedRules: r.MatchedRules, Evaluated: r.Evaluated}
	if de != nil {
		res.Failure = de.Err.Error()
	}
	return res, nil
}

func opDefinitionXML(_ context.Context, m *Module, data []byte) (any, error) {
	var req wire.DefinitionXMLRequest
	if err := decode("definition_xml", data, &req); err != nil {
		return nil, err
	}
	if req.ProcessID == "" {
		return nil, badRequest("definition_xml: field \"processId\" is required")
	}
	name, xml, err := m.eng.DefinitionXML(req.ProcessID, req.Version)
	if err != nil {
		return nil, err
	}
	res := wire.DefinitionXMLResult{Name: name, XMLBase64: base64.StdEncoding.EncodeToString(xml)}
	if utf8.Valid(xml) {
		res.XML = string(xml)
	}
	return res, nil
}

func opModifyInstance(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.ModifyInstanceRequest
	if err := decode("modify_instance", data, &req); err != nil {
		return nil, err
	}
	if req.InstanceKey == nil {
		return nil, badRequest("modify_instance: field \"instanceKey\" is required")
	}
	mod := engine.Modification{Terminate: req.Terminate}
	for i, a := range req.Activate {
		if a.ElementID == "" {
			return nil, badRequest("modify_instance: activate[%d]: field \"elementId\" is required", i)
		}
		mod.Activate = append(mod.Activate, engine.Activation{ElementID: a.ElementID, Scope: a.Scope, Variables: a.Variables})
	}
	return nil, m.eng.ModifyInstance(ctx, *req.InstanceKey, mod)
}

func opChooseFlows(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.ChooseFlowsRequest
	if err := decode("choose_flows", data, &req); err != nil {
		return nil, err
	}
	if req.InstanceKey == nil {
		return nil, badRequest("choose_flows: field \"instanceKey\" is required")
	}
	if req.TokenID == nil {
		return nil, badRequest("choose_flows: field \"tokenId\" is required")
	}
	return nil, m.eng.ChooseFlows(ctx, *req.InstanceKey, *req.TokenID, req.FlowIDs)
}
