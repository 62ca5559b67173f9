package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
)

// definitions lists every deployed process version.
func (a *API) definitions(ctx context.Context, processID string) ([]engine.Definition, error) {
	var defs []engine.Definition
	err := a.call(ctx, "definitions", wire.DefinitionsRequest{ProcessID: processID}, &defs)
	return defs, err
}

// definitionOf finds a process version: by key, or by id and version
// (0: the latest).
//
// In a cluster every partition registers each deployment under keys of
// its own key space, and the definitions operation is answered by one
// partition in turn: a key another partition handed out is asked again,
// of the next partitions, before it is unknown.
func (a *API) definitionOf(ctx context.Context, defKey int64, processID string, version int) (engine.Definition, error) {
	for range definitionAttempts {
		defs, err := a.definitions(ctx, processID)
		if err != nil {
			var we *wire.Error
			if errors.As(err, &we) && we.Code == wire.CodeUnknownProcess {
				return engine.Definition{}, notFound("no process definition with id %q is deployed", processID)
			}
			return engine.Definition{}, err
		}
		for _, d := range defs {
			switch {
			case defKey != 0 && d.Key == defKey,
				defKey == 0 && d.ProcessID == processID && (version == d.Version || version == 0 && d.Latest):
				return d, nil
			}
		}
		if defKey == 0 {
			break
		}
	}
	if defKey != 0 {
		return engine.Definition{}, notFound("no process definition with key %d is deployed", defKey)
	}
	return engine.Definition{}, notFound("process definition %q has no version %d", processID, version)
}

// definitionAttempts bounds how many partitions definitionOf asks for a
// key (a cluster has at most this many partitions worth asking).
const definitionAttempts = 16

// definitionIndex maps each process id to its versions.
func (a *API) definitionIndex(ctx context.Context) (map[string][]engine.Definition, error) {
	defs, err := a.definitions(ctx, "")
	if err != nil {
		return nil, err
	}
	idx := map[string][]engine.Definition{}
	for _, d := range defs {
		idx[d.ProcessID] = append(idx[d.ProcessID], d)
	}
	return idx, nil
}

// definitionFor is the definition an instance row reports: the one it
// was created from, or else its process's latest.
func definitionFor(idx map[string][]engine.Definition, row instanceRow) engine.Definition {
	for _, d := range idx[row.processID] {
		if row.defKey != 0 && d.Key == row.defKey || row.defKey == 0 && d.Latest {
			return d
		}
	}
	return engine.Definition{ProcessID: row.processID}
}

// stateOf maps an engine state to the API's.
func stateOf(s engine.State) string {
	switch s {
	case engine.State("completed"):
		return "COMPLETED"
	case engine.State("terminated"), engine.State("failed"):
		return "TERMINATED"
	}
	return "ACTIVE"
}

func (a *API) createInstance(r *http.Request) (int, any, error) {
	var req ProcessInstanceCreation
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if len(req.StartInstructions) > 0 || len(req.RuntimeInstructions) > 0 {
		return 0, nil, unsupported("startInstructions and runtimeInstructions are not supported: flowtrack starts instances at their none start event")
	}
	var defKey int64
	if req.ProcessDefinitionKey != "" {
		k, err := parseKey(req.ProcessDefinitionKey, "processDefinitionKey")
		if err != nil {
			return 0, nil, err
		}
		defKey = k
	} else if req.ProcessDefinitionID == "" {
		return 0, nil, badRequest("one of processDefinitionId and processDefinitionKey is required")
	}
	version := 0
	if req.ProcessDefinitionVersion != nil && *req.ProcessDefinitionVersion > 0 {
		version = *req.ProcessDefinitionVersion
	}
	ctx := r.Context()
	def, err := a.definitionOf(ctx, defKey, req.ProcessDefinitionID, version)
	if err != nil {
		return 0, nil, err
	}
	var events <-chan *nats.Msg
	var started wire.StartResult
	if err := a.call(ctx, "start", wire.StartRequest{ProcessID: def.ProcessID, Version: def.Version, Variables: req.Variables}, &started); err != nil {
		return 0, nil, err
	}
	a.proj.noteDefinition(started.InstanceKey, def.Key, def.Version, def.ProcessID)
	res := CreateProcessInstanceResult{ProcessDefinitionID: def.ProcessID, ProcessDefinitionVersion: def.Version,
		TenantID: defaultTenant, Variables: map[string]any{}, ProcessDefinitionKey: key(def.Key),
		ProcessInstanceKey: key(started.InstanceKey), Tags: emptyIfNil(req.Tags), BusinessID: optString(req.BusinessID)}
	if !req.AwaitCompletion {
		return http.StatusOK, res, nil
	}
	until := deadline(req.RequestTimeout, DefaultRequestTimeout)
	if started.State == engine.State("active") {
		ch := make(chan *nats.Msg, 64)
		sub, err := a.cfg.Conn.ChanSubscribe(wire.EventSubject(a.cfg.Cluster, started.InstanceKey), ch)
		if err != nil {
			return 0, nil, fmt.Errorf("await instance %d: %w", started.InstanceKey, err)
		}
		defer func() { _ = sub.Unsubscribe() }()
		if err := a.cfg.Conn.Flush(); err != nil {
			return 0, nil, fmt.Errorf("await instance %d: %w", started.InstanceKey, err)
		}
		events = ch
	}
	inst, err := a.awaitEnd(ctx, started.InstanceKey, events, until)
	if err != nil {
		return 0, nil, err
	}
	if inst.State != engine.State("completed") {
		return 0, nil, &problemError{status: http.StatusConflict, title: "INVALID_STATE",
			detail: fmt.Sprintf("process instance %d was %s before it completed: %s", started.InstanceKey, inst.State, inst.Message)}
	}
	res.Variables = pick(inst.Variables, req.FetchVariables)
	return http.StatusOK, res, nil
}

// awaitEnd waits until instance k is no longer active (events carries
// its events, subscribed before its state is read, or is nil when it
// already ended) or until passes.
func (a *API) awaitEnd(ctx context.Context, k int64, events <-chan *nats.Msg, until time.Time) (*wire.InstanceResult, error) {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	for {
		var inst wire.InstanceResult
		if err := a.call(ctx, "instance", wire.InstanceRequest{InstanceKey: &k}, &inst); err != nil {
			return nil, err
		}
		if inst.State != engine.State("active") || events == nil {
			return &inst, nil
		}
	wait:
		for {
			select {
			case m := <-events:
				var ev engine.Event
				if json.Unmarshal(m.Data, &ev) == nil && (ev.Type == engine.InstanceCompleted || ev.Type == engine.InstanceTerminated || ev.Type == engine.InstanceFailed) {
					break wait
				}
			case <-timer.C:
				return nil, &problemError{status: http.StatusGatewayTimeout, title: "DEADLINE_EXCEEDED",
					detail: fmt.Sprintf("process instance %d did not complete within the request timeout", k)}
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
}

// pick returns the variables named by names, or all when names is empty.
func pick(vars map[string]any, names []string) map[string]any {
	out := map[string]any{}
	if len(names) == 0 {
		for k, v := range vars {
			out[k] = v
		}
		return out
	}
	for _, n := range names {
		if v, ok := vars[n]; ok {
			out[n] = v
		}
	}
	return out
}

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// instanceResult writes a projected instance as the API does.
func instanceResult(row instanceRow, def engine.Definition) ProcessInstanceResult {
	version := def.Version
	if row.version != 0 {
		version = row.version
	}
	var end *string
	if row.state != "ACTIVE" {
		end = optTime(row.end)
	}
	return ProcessInstanceResult{ProcessDefinitionID: row.processID, ProcessDefinitionName: optString(def.Name),
		ProcessDefinitionVersion: version, StartDate: timeText(row.start), EndDate: end, State: row.state,
		HasIncident: row.incidents > 0, TenantID: defaultTenant, ProcessInstanceKey: key(row.key),
		ProcessDefinitionKey: key(def.Key), Tags: []string{}}
}

func (a *API) getInstance(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "processInstanceKey")
	if err != nil {
		return 0, nil, err
	}
	var inst wire.InstanceResult
	err = a.call(r.Context(), "instance", wire.InstanceRequest{InstanceKey: &k}, &inst)
	row, projected := a.proj.instance(k)
	if err != nil {
		var we *wire.Error
		if !projected || !errors.As(err, &we) || we.Code != wire.CodeUnknownInstance {
			return 0, nil, err
		}
	} else {
		// The engine is ahead of the projection.
		if !projected {
			row = instanceRow{key: k, processID: inst.ProcessID, start: time.Now()}
		}
		row.state = stateOf(inst.State)
		row.incidents = len(inst.Incidents)
	}
	idx, err := a.definitionIndex(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, instanceResult(row, definitionFor(idx, row)), nil
}

func (a *API) cancelInstance(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "processInstanceKey")
	if err != nil {
		return 0, nil, err
	}
	if err := a.call(r.Context(), "cancel", wire.InstanceRequest{InstanceKey: &k}, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (a *API) searchInstances(r *http.Request) (int, any, error) {
	var q SearchQuery
	if err := decodeBody(r, &q); err != nil {
		return 0, nil, err
	}
	idx, err := a.definitionIndex(r.Context())
	if err != nil {
		return 0, nil, err
	}
	rows := a.proj.instanceRows()
	items := make([]ProcessInstanceResult, 0, len(rows))
	for _, row := range rows {
		items = append(items, instanceResult(row, definitionFor(idx, row)))
	}
	s, err := newSearchable(items)
	if err != nil {
		return 0, nil, err
	}
	res, err := s.run(q, searchOptions{defaultSort: "processInstanceKey"})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}

// elementTypes maps the engine's element kinds to the API's.
var elementTypes = map[string]string{
	"process": "PROCESS", "subProcess": "SUB_PROCESS", "eventSubProcess": "EVENT_SUB_PROCESS", "adHocSubProcess": "AD_HOC_SUB_PROCESS",
	"startEvent": "START_EVENT", "intermediateCatchEvent": "INTERMEDIATE_CATCH_EVENT", "intermediateThrowEvent": "INTERMEDIATE_THROW_EVENT",
	"boundaryEvent": "BOUNDARY_EVENT", "endEvent": "END_EVENT", "serviceTask": "SERVICE_TASK", "receiveTask": "RECEIVE_TASK",
	"userTask": "USER_TASK", "manualTask": "MANUAL_TASK", "task": "TASK", "exclusiveGateway": "EXCLUSIVE_GATEWAY",
	"inclusiveGateway": "INCLUSIVE_GATEWAY", "parallelGateway": "PARALLEL_GATEWAY", "eventBasedGateway": "EVENT_BASED_GATEWAY",
	"complexGateway": "UNKNOWN", "callActivity": "CALL_ACTIVITY", "businessRuleTask": "BUSINESS_RULE_TASK",
	"scriptTask": "SCRIPT_TASK", "sendTask": "SEND_TASK", "transaction": "SUB_PROCESS",
}

func elementResult(e elementRow, processID string, def engine.Definition) ElementInstanceResult {
	typ := elementTypes[e.elementType]
	if typ == "" {
		typ = "UNKNOWN"
	}
	var end *string
	if e.state != "ACTIVE" {
		end = optTime(e.end)
	}
	var inc *string
	if e.incidentKey != 0 {
		s := key(e.incidentKey)
		inc = &s
	}
	return ElementInstanceResult{ProcessDefinitionID: processID, StartDate: timeText(e.start), EndDate: end,
		ElementID: e.elementID, ElementName: e.elementID, Type: typ, State: e.state, HasIncident: e.incidentKey != 0,
		TenantID: defaultTenant, ElementInstanceKey: e.key, ProcessInstanceKey: key(e.instance),
		ProcessDefinitionKey: key(def.Key), IncidentKey: inc}
}

// elementResults writes the projected element instances.
func (a *API) elementResults(ctx context.Context) ([]ElementInstanceResult, error) {
	idx, err := a.definitionIndex(ctx)
	if err != nil {
		return nil, err
	}
	insts := map[int64]instanceRow{}
	for _, row := range a.proj.instanceRows() {
		insts[row.key] = row
	}
	rows := a.proj.elementRows()
	out := make([]ElementInstanceResult, 0, len(rows))
	for _, e := range rows {
		row := insts[e.instance]
		out = append(out, elementResult(e, row.processID, definitionFor(idx, row)))
	}
	return out, nil
}

func (a *API) searchElements(r *http.Request) (int, any, error) {
	var q SearchQuery
	if err := decodeBody(r, &q); err != nil {
		return 0, nil, err
	}
	items, err := a.elementResults(r.Context())
	if err != nil {
		return 0, nil, err
	}
	s, err := newSearchable(items)
	if err != nil {
		return 0, nil, err
	}
	res, err := s.run(q, searchOptions{defaultSort: "elementInstanceKey",
		alias: map[string]string{"elementInstanceScopeKey": "processInstanceKey"}})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}

func (a *API) getElement(r *http.Request) (int, any, error) {
	k := r.PathValue("elementInstanceKey")
	if _, err := parseKey(k, "elementInstanceKey"); err != nil {
		return 0, nil, err
	}
	items, err := a.elementResults(r.Context())
	if err != nil {
		return 0, nil, err
	}
	for _, it := range items {
		if it.ElementInstanceKey == k {
			return http.StatusOK, it, nil
		}
	}
	return 0, nil, notFound("element instance %s is not known (element instances are projected from the events since the listener started)", k)
}

// scopeKinds are the elements whose element instance is a variable
// scope of its own.
var scopeKinds = map[string]bool{"subProcess": true, "eventSubProcess": true, "adHocSubProcess": true, "transaction": true}

// setVariables serves PUT /v2/element-instances/{key}/variables: a
// process instance's key sets its process scope; a sub-process's element
// instance sets that scope (locally with local); any other element
// instance's variables go to its process scope, propagated (flowtrack
// keeps no task-local variables outside input mappings).
func (a *API) setVariables(r *http.Request) (int, any, error) {
	ks := r.PathValue("elementInstanceKey")
	k, err := parseKey(ks, "elementInstanceKey")
	if err != nil {
		return 0, nil, err
	}
	var req SetVariableRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Variables == nil {
		return 0, nil, badRequest("field \"variables\" is required")
	}
	set := wire.SetVariablesRequest{InstanceKey: &k, Variables: req.Variables, Local: req.Local}
	if e, ok := a.proj.element(ks); ok {
		set.InstanceKey = &e.instance
		if scopeKinds[e.elementType] {
			set.Scope = e.token
		} else {
			set.Local = false
		}
	}
	if err := a.call(r.Context(), "set_variables", set, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// searchVariables serves POST /v2/variables/search from the process
// scopes of the instances the filter's processInstanceKey names (every
// projected active instance when it names none).
func (a *API) searchVariables(r *http.Request) (int, any, error) {
	var q SearchQuery
	if err := decodeBody(r, &q); err != nil {
		return 0, nil, err
	}
	var keys []int64
	if v, ok := q.Filter["processInstanceKey"]; ok {
		keys = keysOf(v)
	}
	if len(keys) == 0 {
		for _, row := range a.proj.instanceRows() {
			if row.state == "ACTIVE" {
				keys = append(keys, row.key)
			}
		}
	}
	items, err := a.variablesOf(r.Context(), keys)
	if err != nil {
		return 0, nil, err
	}
	s, err := newSearchable(items)
	if err != nil {
		return 0, nil, err
	}
	res, err := s.run(q, searchOptions{defaultSort: "variableKey"})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}

// variablesOf lists the process scope variables of instances, those of
// a finished instance from its retained state.
func (a *API) variablesOf(ctx context.Context, keys []int64) ([]VariableResult, error) {
	var items []VariableResult
	for _, k := range keys {
		var vars map[string]any
		if err := a.call(ctx, "scope_variables", wire.ScopeVariablesRequest{InstanceKey: &k}, &vars); err != nil {
			var we *wire.Error
			if errors.As(err, &we) && (we.Code == wire.CodeUnknownInstance || we.Code == wire.CodeInstanceEnded) {
				var inst wire.InstanceResult
				if a.call(ctx, "instance", wire.InstanceRequest{InstanceKey: &k}, &inst) != nil {
					continue
				}
				vars = inst.Variables
			} else {
				return nil, err
			}
		}
		names := make([]string, 0, len(vars))
		for n := range vars {
			names = append(names, n)
		}
		sort.Strings(names)
		for i, n := range names {
			text, err := json.Marshal(vars[n])
			if err != nil {
				return nil, fmt.Errorf("variable %q of instance %d: %w", n, k, err)
			}
			items = append(items, VariableResult{Name: n, TenantID: defaultTenant, VariableKey: variableKey(k, i),
				ScopeKey: key(k), ProcessInstanceKey: key(k), Value: string(text)})
		}
	}
	return items, nil
}

// variableKey keys the i-th variable (by name) of an instance's process
// scope.
func variableKey(instance int64, i int) string {
	return strconv.FormatInt(instance, 10) + "9" + fmt.Sprintf("%06d", i)
}

// keysOf reads the keys a key filter property names: an exact key, or
// $eq or $in.
func keysOf(v json.RawMessage) []int64 {
	var exact string
	if json.Unmarshal(v, &exact) == nil {
		if k, err := strconv.ParseInt(exact, 10, 64); err == nil {
			return []int64{k}
		}
		return nil
	}
	var ops struct {
		Eq string   `json:"$eq"`
		In []string `json:"$in"`
	}
	if json.Unmarshal(v, &ops) != nil {
		return nil
	}
	var out []int64
	for _, s := range append(ops.In, ops.Eq) {
		if k, err := strconv.ParseInt(s, 10, 64); err == nil {
			out = append(out, k)
		}
	}
	return out
}
