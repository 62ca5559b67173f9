package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// operation runs one ABI operation on its JSON request.
type operation func(ctx context.Context, m *module, req []byte) (any, error)

// operations maps export names to their implementation (ABI.md,
// "Operations"). The exports and the generic "call" both dispatch here.
var operations map[string]operation

func init() {
	operations = map[string]operation{
		"deploy":           opDeploy,
		"start":            opStart,
		"publish_message":  opPublishMessage,
		"broadcast_signal": opBroadcastSignal,
		"complete_job":     opCompleteJob,
		"fail_job":         opFailJob,
		"throw_error":      opThrowError,
		"resolve_incident": opResolveIncident,
		"activate_ad_hoc":  opActivateAdHoc,
		"advance":          opAdvance,
		"tokens":           opTokens,
		"instance":         opInstance,
		"history":          opHistory,
		"jobs":             opJobs,
		"incidents":        opIncidents,
		"cancel":           opCancel,
		"now":              opNow,
		"configure":        opConfigure,
		"call":             opCall,
		"checkpoint":       opCheckpoint,
		"restore":          opRestore,
	}
}

func opDeploy(_ context.Context, m *module, data []byte) (any, error) {
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
	m.used = true
	d, err := m.eng.Deploy(req.Name, doc)
	if err != nil {
		return nil, err
	}
	return wire.DeployResult{Name: d.Name, Processes: d.Processes, Warnings: d.Warnings}, nil
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

func opStart(ctx context.Context, m *module, data []byte) (any, error) {
	var req wire.StartRequest
	if err := decode("start", data, &req); err != nil {
		return nil, err
	}
	if req.ProcessID == "" {
		return nil, badRequest("start: field \"processId\" is required")
	}
	inst, err := m.eng.Start(ctx, req.ProcessID, req.Variables)
	if err != nil {
		return nil, err
	}
	if err := m.eng.Settle(ctx); err != nil {
		return nil, err
	}
	return wire.StartResult{InstanceKey: inst.Key(), State: inst.State()}, nil
}

func opPublishMessage(ctx context.Context, m *module, data []byte) (any, error) {
	var req wire.MessageRequest
	if err := decode("publish_message", data, &req); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, badRequest("publish_message: field \"name\" is required")
	}
	if req.TTLMs < 0 || req.TTLMs > maxAdvanceMs {
		return nil, badRequest("publish_message: field \"ttlMs\" must be between 0 and %v, got %v (a TTL must end by %s)",
			maxAdvanceMs, req.TTLMs, formatTime(clock.Max))
	}
	m.used = true
	return nil, publishMessage(ctx, m.eng, req)
}

func opBroadcastSignal(ctx context.Context, m *module, data []byte) (any, error) {
	var req wire.SignalRequest
	if err := decode("broadcast_signal", data, &req); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, badRequest("broadcast_signal: field \"name\" is required")
	}
	return nil, broadcastSignal(ctx, m.eng, req)
}

func opCompleteJob(ctx context.Context, m *module, data []byte) (any, error) {
	var req wire.CompleteJobRequest
	if err := decode("complete_job", data, &req); err != nil {
		return nil, err
	}
	if req.JobKey == nil {
		return nil, badRequest("complete_job: field \"jobKey\" is required")
	}
	return nil, m.eng.CompleteJob(ctx, *req.JobKey, req.Variables)
}

func opFailJob(ctx context.Context, m *module, data []byte) (any, error) {
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
	return nil, m.eng.FailJob(ctx, *req.JobKey, *req.Retries, req.Message)
}

func opThrowError(ctx context.Context, m *module, data []byte) (any, error) {
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
	return nil, m.eng.ThrowError(ctx, *req.JobKey, req.ErrorCode, req.Message, req.Variables)
}

func opActivateAdHoc(ctx context.Context, m *module, data []byte) (any, error) {
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

func opResolveIncident(ctx context.Context, m *module, data []byte) (any, error) {
	var req wire.IncidentRequest
	if err := decode("resolve_incident", data, &req); err != nil {
		return nil, err
	}
	if req.IncidentKey == nil {
		return nil, badRequest("resolve_incident: field \"incidentKey\" is required")
	}
	return nil, m.eng.ResolveIncident(ctx, *req.IncidentKey)
}

func opAdvance(ctx context.Context, m *module, data []byte) (any, error) {
	var req wire.AdvanceRequest
	if err := decode("advance", data, &req); err != nil {
		return nil, err
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
func advanceTo(ctx context.Context, m *module, target time.Time) error {
	return m.eng.AdvanceTo(ctx, target)
}

// maxAdvanceMs is the longest advance, about 292 years: a time.Duration.
const maxAdvanceMs = float64(math.MaxInt64 / int64(time.Millisecond))

func opNow(_ context.Context, m *module, data []byte) (any, error) {
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
func opConfigure(_ context.Context, m *module, data []byte) (any, error) {
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
	m.eng.SetEventLog(m.events)
	return nil, nil
}

// lookup decodes a wire.InstanceRequest and finds the instance.
func (m *module) lookup(op string, data []byte) (*engine.Instance, error) {
	var req wire.InstanceRequest
	if err := decode(op, data, &req); err != nil {
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

func opTokens(ctx context.Context, m *module, data []byte) (any, error) {
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

func opInstance(ctx context.Context, m *module, data []byte) (any, error) {
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

func opHistory(ctx context.Context, m *module, data []byte) (any, error) {
	inst, err := m.lookup("history", data)
	if err != nil {
		return nil, err
	}
	return inst.History(ctx)
}

func opCancel(ctx context.Context, m *module, data []byte) (any, error) {
	inst, err := m.lookup("cancel", data)
	if err != nil {
		return nil, err
	}
	return nil, inst.Cancel(ctx)
}

func opJobs(_ context.Context, m *module, data []byte) (any, error) {
	var req wire.JobsRequest
	if err := decode("jobs", data, &req); err != nil {
		return nil, err
	}
	jobs := m.eng.Jobs(engine.JobFilter{Type: req.Type, InstanceKey: req.InstanceKey, ElementID: req.ElementID})
	if jobs == nil {
		jobs = []engine.Job{}
	}
	return jobs, nil
}

func opIncidents(ctx context.Context, m *module, data []byte) (any, error) {
	var req wire.IncidentsRequest
	if err := decode("incidents", data, &req); err != nil {
		return nil, err
	}
	all, err := m.eng.Incidents(ctx)
	if err != nil {
		return nil, err
	}
	out := []engine.Incident{}
	for _, inc := range all {
		if req.InstanceKey == 0 || inc.InstanceKey == req.InstanceKey {
			out = append(out, inc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// opCall is the generic entry point: {"op": name, "request": {...}}.
func opCall(ctx context.Context, m *module, data []byte) (any, error) {
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
