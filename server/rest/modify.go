package rest

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// ProcessInstanceModification is the body of POST
// /v2/process-instances/{key}/modification.
type ProcessInstanceModification struct {
	ActivateInstructions []struct {
		ElementID            string `json:"elementId"`
		VariableInstructions []struct {
			Variables map[string]any `json:"variables"`
			ScopeID   string         `json:"scopeId"`
		} `json:"variableInstructions"`
		AncestorElementInstanceKey string `json:"ancestorElementInstanceKey"`
	} `json:"activateInstructions"`
	TerminateInstructions []struct {
		ElementID          string `json:"elementId"`
		ElementInstanceKey string `json:"elementInstanceKey"`
	} `json:"terminateInstructions"`
	MoveInstructions []json.RawMessage `json:"moveInstructions"`
}

// AdHocActivation is the body of POST
// /v2/element-instances/ad-hoc-activities/{key}/activation.
type AdHocActivation struct {
	Elements []struct {
		ElementID string         `json:"elementId"`
		Variables map[string]any `json:"variables"`
	} `json:"elements"`
	CancelRemainingInstances bool `json:"cancelRemainingInstances"`
}

// modifyInstance serves POST /v2/process-instances/{key}/modification
// with the engine's modify_instance: activations (variables without a
// scopeId, an ancestor sub-process's element instance as the scope) and
// terminations by element instance key or by element id (every token
// there); move instructions answer 501.
func (a *API) modifyInstance(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "processInstanceKey")
	if err != nil {
		return 0, nil, err
	}
	var req ProcessInstanceModification
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if len(req.MoveInstructions) > 0 {
		return 0, nil, unsupported("move instructions are not supported: terminate and activate instead")
	}
	mod := wire.ModifyInstanceRequest{InstanceKey: &k}
	for i, ai := range req.ActivateInstructions {
		if ai.ElementID == "" {
			return 0, nil, badRequest("activateInstructions[%d]: elementId is required", i)
		}
		act := wire.ActivateElement{ElementID: ai.ElementID}
		for _, vi := range ai.VariableInstructions {
			if vi.ScopeID != "" {
				return 0, nil, unsupported("activateInstructions[%d]: variables for scope %q: only the activation's own scope is supported", i, vi.ScopeID)
			}
			if act.Variables == nil {
				act.Variables = map[string]any{}
			}
			for n, v := range vi.Variables {
				act.Variables[n] = v
			}
		}
		if ai.AncestorElementInstanceKey != "" && ai.AncestorElementInstanceKey != key(k) {
			e, ok := a.proj.element(ai.AncestorElementInstanceKey)
			if !ok || e.instance != k || !scopeKinds[e.elementType] {
				return 0, nil, notFound("activateInstructions[%d]: element instance %s is no sub-process of instance %d", i, ai.AncestorElementInstanceKey, k)
			}
			act.Scope = e.token
		}
		mod.Activate = append(mod.Activate, act)
	}
	var tokens []engine.Token
	for i, ti := range req.TerminateInstructions {
		switch {
		case ti.ElementInstanceKey != "":
			e, ok := a.proj.element(ti.ElementInstanceKey)
			if !ok || e.instance != k || e.state != "ACTIVE" {
				return 0, nil, notFound("terminateInstructions[%d]: element instance %s is not active in instance %d", i, ti.ElementInstanceKey, k)
			}
			mod.Terminate = append(mod.Terminate, e.token)
		case ti.ElementID != "":
			if tokens == nil {
				if err := a.call(r.Context(), "tokens", wire.InstanceRequest{InstanceKey: &k}, &tokens); err != nil {
					return 0, nil, err
				}
			}
			for _, t := range tokens {
				if t.ElementID == ti.ElementID {
					mod.Terminate = append(mod.Terminate, t.ID)
				}
			}
		default:
			return 0, nil, badRequest("terminateInstructions[%d]: elementId or elementInstanceKey is required", i)
		}
	}
	if err := a.call(r.Context(), "modify_instance", mod, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// activateAdHoc serves POST
// /v2/element-instances/ad-hoc-activities/{key}/activation with the
// engine's activate_ad_hoc; element variables and
// cancelRemainingInstances answer 501.
func (a *API) activateAdHoc(r *http.Request) (int, any, error) {
	ks := r.PathValue("adHocSubProcessInstanceKey")
	if _, err := parseKey(ks, "adHocSubProcessInstanceKey"); err != nil {
		return 0, nil, err
	}
	var req AdHocActivation
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.CancelRemainingInstances {
		return 0, nil, unsupported("cancelRemainingInstances is not supported")
	}
	e, ok := a.proj.element(ks)
	// Events name every sub-process kind "subProcess": the engine tells
	// whether it is an ad-hoc one.
	if !ok || !scopeKinds[e.elementType] {
		return 0, nil, notFound("element instance %s is no known ad-hoc sub-process", ks)
	}
	act := wire.ActivateAdHocRequest{InstanceKey: &e.instance, ElementID: e.elementID}
	for i, el := range req.Elements {
		if len(el.Variables) > 0 {
			return 0, nil, unsupported("elements[%d]: variables of an activated element are not supported", i)
		}
		act.Elements = append(act.Elements, el.ElementID)
	}
	if err := a.call(r.Context(), "activate_ad_hoc", act, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// resolveInstanceIncidents serves POST
// /v2/process-instances/{key}/incident-resolution: every open incident
// of the instance, one by one. Camunda answers with a batch operation;
// flowtrack resolves at once and answers its (made up) key.
func (a *API) resolveInstanceIncidents(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "processInstanceKey")
	if err != nil {
		return 0, nil, err
	}
	var open []engine.Incident
	if err := a.call(r.Context(), "incidents", wire.IncidentsRequest{InstanceKey: k}, &open); err != nil {
		return 0, nil, err
	}
	for _, in := range open {
		if err := a.call(r.Context(), "resolve_incident", wire.IncidentRequest{IncidentKey: &in.Key}, nil); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusOK, map[string]any{"batchOperationKey": key(a.keys.next()), "batchOperationType": "RESOLVE_INCIDENT"}, nil
}

// searchElementIncidents serves POST
// /v2/element-instances/{key}/incidents/search.
func (a *API) searchElementIncidents(r *http.Request) (int, any, error) {
	ks := r.PathValue("elementInstanceKey")
	if _, err := parseKey(ks, "elementInstanceKey"); err != nil {
		return 0, nil, err
	}
	var q SearchQuery
	if err := decodeBody(r, &q); err != nil {
		return 0, nil, err
	}
	if q.Filter == nil {
		q.Filter = map[string]json.RawMessage{}
	}
	q.Filter["elementInstanceKey"] = json.RawMessage(strconv.Quote(ks))
	return a.incidentSearch(r.Context(), q)
}

// getVariable serves GET /v2/variables/{key} for the keys variable
// search hands out (the instance's key, "9", the variable's position by
// name).
func (a *API) getVariable(r *http.Request) (int, any, error) {
	ks := r.PathValue("variableKey")
	if _, err := parseKey(ks, "variableKey"); err != nil {
		return 0, nil, err
	}
	if len(ks) < 8 || ks[len(ks)-7] != '9' {
		return 0, nil, notFound("variable %s is not a key variable search handed out", ks)
	}
	inst, err := parseKey(ks[:len(ks)-7], "variableKey")
	if err != nil {
		return 0, nil, notFound("variable %s is not a key variable search handed out", ks)
	}
	items, err := a.variablesOf(r.Context(), []int64{inst})
	if err != nil {
		return 0, nil, err
	}
	for _, v := range items {
		if v.VariableKey == ks {
			return http.StatusOK, v, nil
		}
	}
	return 0, nil, notFound("variable %s is not known", ks)
}
