package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// errorTypeOf classifies an incident as the API does, from what
// flowtrack records: a job out of retries, an uncaught BPMN error, a
// condition or mapping that failed to evaluate.
func errorTypeOf(in incidentRow) string {
	msg := strings.ToLower(in.message)
	switch {
	case in.job != 0:
		return "JOB_NO_RETRIES"
	case strings.Contains(msg, "uncaught") || strings.Contains(msg, "no catch"):
		return "UNHANDLED_ERROR_EVENT"
	case strings.Contains(msg, "condition"):
		return "CONDITION_ERROR"
	case strings.Contains(msg, "mapping"):
		return "IO_MAPPING_ERROR"
	}
	return "UNKNOWN"
}

// incidentResults merges the projected incidents with the engine's open
// ones (which the projection may not have seen yet, or at all when they
// were opened before the listener started).
func (a *API) incidentResults(ctx context.Context) ([]IncidentResult, error) {
	var open []engine.Incident
	if err := a.call(ctx, "incidents", wire.IncidentsRequest{}, &open); err != nil {
		return nil, err
	}
	rows := a.proj.incidentRows()
	seen := map[int64]bool{}
	for _, r := range rows {
		seen[r.key] = true
	}
	for _, in := range open {
		if !seen[in.Key] {
			rows = append(rows, incidentRow{key: in.Key, instance: in.InstanceKey, job: in.JobKey, elementID: in.ElementID,
				message: in.Message, state: "ACTIVE"})
		}
	}
	idx, err := a.definitionIndex(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]IncidentResult, 0, len(rows))
	for _, in := range rows {
		row, _ := a.proj.instance(in.instance)
		def := definitionFor(idx, row)
		var job *string
		if in.job != 0 {
			s := key(in.job)
			job = &s
		}
		el := in.element
		if el == "" {
			el = key(in.instance)
		}
		out = append(out, IncidentResult{ProcessDefinitionID: row.processID, ErrorType: errorTypeOf(in), ErrorMessage: in.message,
			ElementID: in.elementID, CreationTime: timeText(in.created), State: in.state, TenantID: defaultTenant,
			IncidentKey: key(in.key), ProcessDefinitionKey: key(def.Key), ProcessInstanceKey: key(in.instance),
			ElementInstanceKey: el, JobKey: job})
	}
	return out, nil
}

func (a *API) searchIncidents(r *http.Request) (int, any, error) {
	var q SearchQuery
	if err := decodeBody(r, &q); err != nil {
		return 0, nil, err
	}
	return a.incidentSearch(r.Context(), q)
}

func (a *API) incidentSearch(ctx context.Context, q SearchQuery) (int, any, error) {
	items, err := a.incidentResults(ctx)
	if err != nil {
		return 0, nil, err
	}
	s, err := newSearchable(items)
	if err != nil {
		return 0, nil, err
	}
	res, err := s.run(q, searchOptions{defaultSort: "incidentKey"})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}

// searchInstanceIncidents serves POST
// /v2/process-instances/{key}/incidents/search.
func (a *API) searchInstanceIncidents(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "processInstanceKey")
	if err != nil {
		return 0, nil, err
	}
	var q SearchQuery
	if err := decodeBody(r, &q); err != nil {
		return 0, nil, err
	}
	if q.Filter == nil {
		q.Filter = map[string]json.RawMessage{}
	}
	q.Filter["processInstanceKey"] = json.RawMessage(`"` + key(k) + `"`)
	return a.incidentSearch(r.Context(), q)
}

func (a *API) getIncident(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "incidentKey")
	if err != nil {
		return 0, nil, err
	}
	items, err := a.incidentResults(r.Context())
	if err != nil {
		return 0, nil, err
	}
	for _, it := range items {
		if it.IncidentKey == key(k) {
			return http.StatusOK, it, nil
		}
	}
	return 0, nil, notFound("incident %d is not known", k)
}

func (a *API) resolveIncident(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "incidentKey")
	if err != nil {
		return 0, nil, err
	}
	if err := a.call(r.Context(), "resolve_incident", wire.IncidentRequest{IncidentKey: &k}, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
