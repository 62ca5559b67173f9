package rest

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// User tasks are the jobs of userTask elements (engine: the job's type is
// its element kind unless the model names one; the Zeebe headers carry
// assignee, candidates, dates and form). Their key is the job's key. An
// assignment is kept by the listener that took it (docs/camunda-rest.md).

// The job headers of a user task (engine/internal/runtime/usertask.go).
const (
	headerAssignee        = "io.camunda.zeebe:assignee"
	headerCandidateGroups = "io.camunda.zeebe:candidateGroups"
	headerCandidateUsers  = "io.camunda.zeebe:candidateUsers"
	headerFormKey         = "io.camunda.zeebe:formKey"
	headerDueDate         = "io.camunda.zeebe:dueDate"
	headerFollowUpDate    = "io.camunda.zeebe:followUpDate"
)

func (a *API) userTaskResults(ctx context.Context) ([]UserTaskResult, error) {
	rows := a.proj.taskRows()
	idx, err := a.definitionIndex(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]UserTaskResult, 0, len(rows))
	for _, t := range rows {
		row, _ := a.proj.instance(t.instance)
		def := definitionFor(idx, row)
		headers := map[string]string{}
		if t.state == "CREATED" {
			var jobs []engine.Job
			if err := a.call(ctx, "jobs", wire.JobsRequest{InstanceKey: t.instance, ElementID: t.elementID}, &jobs); err != nil {
				return nil, err
			}
			for _, j := range jobs {
				if j.Key == t.key {
					headers = j.Headers
				}
			}
		}
		assignee := t.assignee
		if assignee == "" {
			assignee = headers[headerAssignee]
		}
		custom := map[string]string{}
		for k, v := range headers {
			custom[k] = v
		}
		version := def.Version
		if row.version != 0 {
			version = row.version
		}
		var done *string
		if t.state != "CREATED" {
			done = optTime(t.done)
		}
		out = append(out, UserTaskResult{Name: optString(t.elementID), State: t.state, Assignee: optString(assignee),
			ElementID: t.elementID, CandidateGroups: list(headers[headerCandidateGroups]), CandidateUsers: list(headers[headerCandidateUsers]),
			ProcessDefinitionID: row.processID, CreationDate: timeText(t.created), CompletionDate: done,
			FollowUpDate: optString(headers[headerFollowUpDate]), DueDate: optString(headers[headerDueDate]), TenantID: defaultTenant,
			ExternalFormReference: nil, ProcessDefinitionVersion: version, CustomHeaders: custom, Priority: 50,
			UserTaskKey: key(t.key), ElementInstanceKey: t.element, ProcessName: optString(def.Name),
			ProcessDefinitionKey: key(def.Key), ProcessInstanceKey: key(t.instance), FormKey: nil, Tags: []string{}})
	}
	return out, nil
}

// list reads a JSON list header (candidate groups and users).
func list(s string) []string {
	var out []string
	if s == "" || json.Unmarshal([]byte(s), &out) != nil || out == nil {
		return []string{}
	}
	return out
}

func (a *API) searchUserTasks(r *http.Request) (int, any, error) {
	var q SearchQuery
	if err := decodeBody(r, &q); err != nil {
		return 0, nil, err
	}
	items, err := a.userTaskResults(r.Context())
	if err != nil {
		return 0, nil, err
	}
	s, err := newSearchable(items)
	if err != nil {
		return 0, nil, err
	}
	res, err := s.run(q, searchOptions{defaultSort: "userTaskKey", alias: map[string]string{
		"candidateGroup": "candidateGroups", "candidateUser": "candidateUsers"}})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}

func (a *API) userTask(r *http.Request) (UserTaskResult, error) {
	k, err := pathKey(r, "userTaskKey")
	if err != nil {
		return UserTaskResult{}, err
	}
	items, err := a.userTaskResults(r.Context())
	if err != nil {
		return UserTaskResult{}, err
	}
	for _, it := range items {
		if it.UserTaskKey == key(k) {
			return it, nil
		}
	}
	return UserTaskResult{}, notFound("user task %d is not known", k)
}

func (a *API) getUserTask(r *http.Request) (int, any, error) {
	t, err := a.userTask(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, t, nil
}

func (a *API) assignUserTask(r *http.Request) (int, any, error) {
	t, err := a.userTask(r)
	if err != nil {
		return 0, nil, err
	}
	var req UserTaskAssignmentRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Assignee == "" {
		return 0, nil, badRequest("field \"assignee\" is required")
	}
	if t.State != "CREATED" {
		return 0, nil, &problemError{status: http.StatusConflict, title: "INVALID_STATE", detail: "user task " + t.UserTaskKey + " is " + t.State}
	}
	override := req.AllowOverride == nil || *req.AllowOverride
	if !override && t.Assignee != nil && *t.Assignee != req.Assignee {
		return 0, nil, &problemError{status: http.StatusConflict, title: "INVALID_STATE",
			detail: "user task " + t.UserTaskKey + " is assigned to " + *t.Assignee + " and allowOverride is false"}
	}
	k, _ := parseKey(t.UserTaskKey, "userTaskKey")
	a.proj.assign(k, req.Assignee)
	return http.StatusNoContent, nil, nil
}

func (a *API) unassignUserTask(r *http.Request) (int, any, error) {
	t, err := a.userTask(r)
	if err != nil {
		return 0, nil, err
	}
	k, _ := parseKey(t.UserTaskKey, "userTaskKey")
	a.proj.assign(k, "")
	return http.StatusNoContent, nil, nil
}

func (a *API) completeUserTask(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "userTaskKey")
	if err != nil {
		return 0, nil, err
	}
	var req UserTaskCompletionRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if err := a.call(r.Context(), "complete_job", wire.CompleteJobRequest{JobKey: &k, Variables: req.Variables}, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
