package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// pollInterval is how often a long poll asks again when no event woke
// it: a back-off or an activation timeout ends without an event.
const pollInterval = 250 * time.Millisecond

// activateJobs serves POST /v2/jobs/activation: activate_jobs, asked
// again at every event of the cluster (and every pollInterval) until
// jobs come or requestTimeout (default DefaultRequestTimeout; negative:
// no long polling) passes; then an empty list.
func (a *API) activateJobs(r *http.Request) (int, any, error) {
	var req JobActivationRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	switch {
	case req.Type == "":
		return 0, nil, badRequest("field \"type\" is required")
	case req.Timeout <= 0:
		return 0, nil, badRequest("field \"timeout\" must be a positive number of milliseconds, not %d", req.Timeout)
	case req.MaxJobsToActivate <= 0:
		return 0, nil, badRequest("field \"maxJobsToActivate\" must be positive, not %d", req.MaxJobsToActivate)
	}
	ctx := r.Context()
	until := time.Now()
	if req.RequestTimeout >= 0 {
		until = deadline(req.RequestTimeout, DefaultRequestTimeout)
	}
	timeout := float64(req.Timeout)
	for {
		wake := a.proj.wake()
		var jobs []engine.Job
		if err := a.call(asCaller(ctx), "activate_jobs", wire.ActivateJobsRequest{Type: req.Type, Worker: req.Worker,
			TimeoutMs: &timeout, MaxJobs: &req.MaxJobsToActivate}, &jobs); err != nil {
			return 0, nil, err
		}
		if len(jobs) > 0 {
			return a.activated(ctx, jobs, req)
		}
		left := time.Until(until)
		if left <= 0 {
			return http.StatusOK, JobActivationResult{Jobs: []ActivatedJobResult{}}, nil
		}
		t := time.NewTimer(min(left, pollInterval))
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0, nil, ctx.Err()
		}
		t.Stop()
	}
}

// activated writes activated jobs as the API does.
func (a *API) activated(ctx context.Context, jobs []engine.Job, req JobActivationRequest) (int, any, error) {
	idx, err := a.definitionIndex(ctx)
	if err != nil {
		return 0, nil, err
	}
	res := JobActivationResult{Jobs: make([]ActivatedJobResult, 0, len(jobs))}
	for _, j := range jobs {
		row, _ := a.proj.instance(j.InstanceKey)
		row.processID = j.ProcessID
		def := definitionFor(idx, row)
		headers := map[string]any{}
		for k, v := range j.Headers {
			headers[k] = v
		}
		var dl int64
		if j.Deadline != nil {
			dl = j.Deadline.UnixMilli()
		}
		el := a.proj.jobElement(j.Key)
		if el == "" {
			el = key(j.Key)
		}
		version := def.Version
		if row.version != 0 {
			version = row.version
		}
		res.Jobs = append(res.Jobs, ActivatedJobResult{Type: j.Type, ProcessDefinitionID: j.ProcessID,
			ProcessDefinitionVersion: version, ElementID: j.ElementID, CustomHeaders: headers, Worker: j.Worker,
			Retries: j.Retries, Deadline: dl, Variables: pick(j.Variables, req.FetchVariable), TenantID: defaultTenant,
			JobKey: key(j.Key), ProcessInstanceKey: key(j.InstanceKey), ProcessDefinitionKey: key(def.Key),
			ElementInstanceKey: el, Kind: "BPMN_ELEMENT", ListenerEventType: "UNSPECIFIED", Tags: []string{}})
	}
	return http.StatusOK, res, nil
}

func (a *API) completeJob(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "jobKey")
	if err != nil {
		return 0, nil, err
	}
	var req JobCompletionRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if len(req.Result) > 0 && string(req.Result) != "null" {
		return 0, nil, unsupported("job results (user task corrections, ad-hoc activations) are not supported")
	}
	if err := a.call(asCaller(r.Context()), "complete_job", wire.CompleteJobRequest{JobKey: &k, Variables: req.Variables}, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (a *API) failJob(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "jobKey")
	if err != nil {
		return 0, nil, err
	}
	var req JobFailRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	switch {
	case req.Retries < 0:
		return 0, nil, badRequest("field \"retries\" must not be negative, not %d", req.Retries)
	case req.RetryBackOff < 0:
		return 0, nil, badRequest("field \"retryBackOff\" must not be negative, not %d", req.RetryBackOff)
	case len(req.Variables) > 0:
		return 0, nil, unsupported("variables on a job failure are not supported: flowtrack keeps no task-local variables")
	}
	if err := a.call(asCaller(r.Context()), "fail_job", wire.FailJobRequest{JobKey: &k, Retries: &req.Retries,
		Message: req.ErrorMessage, BackoffMs: float64(req.RetryBackOff)}, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (a *API) throwError(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "jobKey")
	if err != nil {
		return 0, nil, err
	}
	var req JobErrorRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.ErrorCode == "" {
		return 0, nil, badRequest("field \"errorCode\" is required")
	}
	msg := ""
	if req.ErrorMessage != nil {
		msg = *req.ErrorMessage
	}
	if err := a.call(asCaller(r.Context()), "throw_error", wire.ThrowErrorRequest{JobKey: &k, ErrorCode: req.ErrorCode,
		Message: msg, Variables: req.Variables}, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// updateJob serves PATCH /v2/jobs/{key}: retries only; a new timeout
// for an activation is not supported.
func (a *API) updateJob(r *http.Request) (int, any, error) {
	k, err := pathKey(r, "jobKey")
	if err != nil {
		return 0, nil, err
	}
	var req JobUpdateRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Changeset.Timeout != nil {
		return 0, nil, unsupported("changing a job's activation timeout is not supported")
	}
	if req.Changeset.Retries == nil {
		return 0, nil, badRequest("the changeset names nothing to change")
	}
	if err := a.call(r.Context(), "update_job_retries", wire.UpdateJobRetriesRequest{JobKey: &k, Retries: req.Changeset.Retries}, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// searchJobs serves POST /v2/jobs/search from the engine's jobs
// operation: the open jobs, activated or not (state CREATED, or FAILED
// once an attempt failed); jobs an incident holds and finished jobs are
// not listed.
func (a *API) searchJobs(r *http.Request) (int, any, error) {
	var q SearchQuery
	if err := decodeBody(r, &q); err != nil {
		return 0, nil, err
	}
	var jobs []engine.Job
	if err := a.call(r.Context(), "jobs", wire.JobsRequest{}, &jobs); err != nil {
		return 0, nil, err
	}
	idx, err := a.definitionIndex(r.Context())
	if err != nil {
		return 0, nil, err
	}
	items := make([]JobSearchResult, 0, len(jobs))
	for _, j := range jobs {
		row, _ := a.proj.instance(j.InstanceKey)
		row.processID = j.ProcessID
		def := definitionFor(idx, row)
		el := a.proj.jobElement(j.Key)
		if el == "" {
			el = key(j.Key)
		}
		state := "CREATED"
		if j.ErrorMessage != "" {
			state = "FAILED"
		}
		var deadline *string
		if j.Deadline != nil {
			deadline = optTime(*j.Deadline)
		}
		headers := j.Headers
		if headers == nil {
			headers = map[string]string{}
		}
		items = append(items, JobSearchResult{CustomHeaders: headers, Deadline: deadline, ElementID: optString(j.ElementID),
			ElementInstanceKey: el, ErrorMessage: optString(j.ErrorMessage), HasFailedWithRetriesLeft: j.ErrorMessage != "" && j.Retries > 0,
			JobKey: key(j.Key), Kind: "BPMN_ELEMENT", ListenerEventType: "UNSPECIFIED", ProcessDefinitionID: j.ProcessID,
			ProcessDefinitionKey: key(def.Key), ProcessInstanceKey: key(j.InstanceKey), Retries: j.Retries, State: state,
			TenantID: defaultTenant, Type: j.Type, Worker: j.Worker, CreationTime: optTime(j.Created)})
	}
	s, err := newSearchable(items)
	if err != nil {
		return 0, nil, err
	}
	res, err := s.run(q, searchOptions{defaultSort: "jobKey"})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}
