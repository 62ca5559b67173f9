// Jobs: the engine-wide index and the calls that complete, fail or throw
// from them, and their handling in an instance's loop.

package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Jobs returns copies of the activatable jobs matching f, ordered by key.
func (e *Engine) Jobs(f JobFilter) []Job {
	e.mu.Lock()
	all := maps.Values(e.jobRecs)
	if f.InstanceKey != 0 {
		all = slices.Values(e.instJobs[f.InstanceKey])
	}
	out := make([]Job, 0)
	for j := range all {
		if (f.Type == "" || j.Type == f.Type) && (f.InstanceKey == 0 || j.InstanceKey == f.InstanceKey) &&
			(f.ElementID == "" || j.ElementID == f.ElementID) {
			out = append(out, cloneJob(j))
		}
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Job returns a copy of the activatable job with key.
func (e *Engine) Job(key int64) (Job, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, ok := e.jobRecs[key]
	if !ok {
		return Job{}, false
	}
	return cloneJob(j), true
}

func cloneJob(j *Job) Job {
	c := *j
	if j.Headers != nil {
		c.Headers = make(map[string]string, len(j.Headers))
		for k, v := range j.Headers {
			c.Headers[k] = v
		}
	}
	c.Variables = cloneVars(j.Variables)
	return c
}

func (e *Engine) addJob(inst *Instance, j *Job) {
	e.mu.Lock()
	e.jobs[j.Key] = inst
	e.indexJob(j)
	e.mu.Unlock()
}

// indexJob records j in jobRecs and instJobs, replacing the record of the
// same key (a failed attempt's). Called with e.mu held.
func (e *Engine) indexJob(j *Job) {
	list := e.instJobs[j.InstanceKey]
	if i := slices.IndexFunc(list, func(o *Job) bool { return o.Key == j.Key }); i >= 0 {
		list[i] = j
	} else {
		list = append(list, j)
	}
	e.instJobs[j.InstanceKey] = list
	e.jobRecs[j.Key] = j
	e.noteJobTimes(j)
}

func (e *Engine) removeJob(key int64) {
	e.mu.Lock()
	delete(e.jobs, key)
	if j, ok := e.jobRecs[key]; ok {
		rest := slices.DeleteFunc(e.instJobs[j.InstanceKey], func(o *Job) bool { return o.Key == key })
		if len(rest) == 0 {
			delete(e.instJobs, j.InstanceKey)
		} else {
			e.instJobs[j.InstanceKey] = rest
		}
	}
	delete(e.jobRecs, key)
	e.mu.Unlock()
}

func (e *Engine) jobOwner(key int64) (*Instance, error) {
	e.mu.Lock()
	inst, closed := e.jobs[key], e.closed
	e.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if inst == nil {
		return nil, fmt.Errorf("job %d: %w", key, ErrUnknownJob)
	}
	return inst, nil
}

// CompleteJob completes an activatable job, merging vars (normalized) into
// the instance, and moves its token on.
func (e *Engine) CompleteJob(ctx context.Context, key int64, vars map[string]any) error {
	return e.CompleteJobAs(ctx, key, JobArgs{}, vars)
}

// FailJob records a failed attempt. With retries left the job stays
// activatable; with none an incident holds the token.
func (e *Engine) FailJob(ctx context.Context, key int64, retries int, message string) error {
	return e.FailJobAs(ctx, key, JobArgs{}, retries, message)
}

// ThrowError raises a BPMN error with code from a job's element.
func (e *Engine) ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any) error {
	return e.ThrowErrorAs(ctx, key, JobArgs{}, code, message, vars)
}

// jobCall maps an instance that ended between finding a job and reaching
// its loop to what the caller asked about: the job no longer exists.
func jobCall(key int64, err error) error {
	if errors.Is(err, ErrInstanceEnded) {
		return fmt.Errorf("job %d: %w", key, ErrUnknownJob)
	}
	return err
}

// createJob parks tv on a new job for node n.
func (inst *Instance) createJob(tv *tokenView, n *model.Node) {
	inst.park(tv, WaitJob)
	np := &inst.plan.nodes[n.Index]
	typ := np.jobTypeName
	if np.jobType != nil {
		t, err := np.jobType.EvalString(tv.scope.visible())
		if err != nil || t == "" {
			if err == nil {
				err = fmt.Errorf("job type expression %q yielded empty text", np.jobType.Text())
			}
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, err.Error())
			return
		}
		typ = t
	}
	retries := np.retries
	if np.retriesExpr != nil {
		r, err := evalRetries(np, tv.scope.visible())
		if err != nil {
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, err.Error())
			return
		}
		retries = r
	}
	jobVars := tv.scope.visible()
	if len(np.inputs) > 0 {
		locals, err := applyMappings(np.inputs, tv.scope.visible())
		if err != nil {
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, err.Error())
			return
		}
		tv.locals = locals
		jobVars = overlay(tv.scope.visible(), locals)
	}
	headers, err := np.jobHeaders(jobVars)
	if err != nil {
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, err.Error())
		return
	}
	key := inst.eng.NextKey()
	job := &Job{
		Key: key, Type: typ, ProcessID: inst.plan.Process.ID, ElementID: n.ID, InstanceKey: inst.key,
		Retries: retries, Headers: headers, Variables: jobVars, Created: inst.eng.clock.Now(),
	}
	if inst.jobs == nil {
		inst.jobs = make(map[int64]*jobState)
	}
	inst.jobs[key] = &jobState{job: job, token: tv.id}
	tv.jobKey = key
	// Index the job before recording it: an observer that reacts to the
	// record by completing the job must find it.
	if retries > 0 {
		inst.eng.addJob(inst, job)
	}
	inst.record(Event{Type: JobCreated, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: tv.id, JobKey: key, JobType: typ})
	if err := inst.openBoundaries(tv, n); err != nil {
		inst.record(Event{Type: IncidentCreated, ElementID: n.ID, TokenID: tv.id, Message: err.Error()})
	}
	if retries == 0 {
		inst.jobs[key].incident = inst.openIncident(tv, n, key, "job has no retries")
		tv.wait = WaitIncident
	}
}

// outputs computes what leaving n sets in the process scope, given the
// result variables of its job or event. With output mappings only their
// targets are set, evaluated over the process variables, the element's
// locals and the result; without, the result merges as it is (Zeebe).
func (inst *Instance) outputs(tv *tokenView, n *model.Node, result map[string]any) (map[string]any, error) {
	np := &inst.plan.nodes[n.Index]
	if len(np.outputs) == 0 {
		return result, nil
	}
	return applyMappings(np.outputs, overlay(overlay(tv.scope.visible(), tv.locals), result))
}

// evalRetries evaluates a job's retries expression to a whole number.
func evalRetries(np *nodePlan, vars map[string]any) (int, error) {
	v, err := np.retriesExpr.Eval(vars)
	if err != nil {
		return 0, fmt.Errorf("job retries: %w", err)
	}
	switch r := v.(type) {
	case float64:
		if r >= 0 && r == float64(int(r)) {
			return int(r), nil
		}
	case string:
		if n, err := strconv.Atoi(r); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("job retries %q yielded %v, not a non-negative whole number", np.retriesExpr.Text(), v)
}

func (inst *Instance) activeJob(key int64) (*jobState, *tokenView, error) {
	js := inst.jobs[key]
	if js == nil || js.incident != 0 {
		return nil, nil, fmt.Errorf("job %d: %w", key, ErrUnknownJob)
	}
	return js, inst.tokens[js.token], nil
}

func (inst *Instance) completeJob(c *command) error {
	js, tv, err := inst.activeJob(c.key)
	if err != nil {
		return err
	}
	if err := checkActivation(js, c); err != nil {
		return err
	}
	n := inst.plan.Process.Node(js.job.ElementID)
	update, err := inst.outputs(tv, n, c.vars)
	if err != nil {
		return fmt.Errorf("complete job %d: %w", c.key, err) // the job stays open: fix the variables and retry
	}
	inst.endJob(js)
	inst.closeBoundaries(tv)
	inst.record(Event{Type: JobCompleted, ElementID: js.job.ElementID, TokenID: tv.id, JobKey: c.key,
		JobType: js.job.Type, Variables: cloneVars(c.vars)})
	tv.scope.set(update)
	inst.keepLocals(tv, n)
	tv.locals = nil
	inst.notify(tv, notice{kind: resume})
	return nil
}

func (inst *Instance) endJob(js *jobState) {
	delete(inst.jobs, js.job.Key)
	inst.eng.removeJob(js.job.Key)
	if tv := inst.tokens[js.token]; tv != nil {
		tv.jobKey = 0
	}
}

func (inst *Instance) failJob(c *command) error {
	js, tv, err := inst.activeJob(c.key)
	if err != nil {
		return err
	}
	if err := checkActivation(js, c); err != nil {
		return err
	}
	retries := max(c.retries, 0)
	// The record the engine index holds is replaced, never mutated, so that
	// copies handed out earlier stay as they were.
	next := *js.job
	next.Retries = retries
	next.ErrorMessage = c.msg
	inst.backOff(&next, c.job.Backoff)
	js.job = &next
	inst.record(Event{Type: JobFailed, ElementID: next.ElementID, TokenID: tv.id, JobKey: c.key, JobType: next.Type, Message: c.msg})
	if retries > 0 {
		inst.eng.addJob(inst, js.job)
		return nil
	}
	inst.eng.removeJob(c.key)
	msg := c.msg
	if msg == "" {
		msg = "job failed with no retries left"
	}
	js.incident = inst.openIncident(tv, inst.plan.Process.Node(next.ElementID), c.key, msg)
	tv.wait = WaitIncident
	return nil
}

// throwError raises a BPMN error from a job: the nearest boundary event or
// event sub-process that catches its code handles it; with none, an
// incident holds the token, as in Zeebe.
func (inst *Instance) throwError(c *command) error {
	js, tv, err := inst.activeJob(c.key)
	if err != nil {
		return err
	}
	if err := checkActivation(js, c); err != nil {
		return err
	}
	inst.endJob(js)
	n := inst.plan.Process.Node(js.job.ElementID)
	inst.record(Event{Type: ErrorThrown, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: tv.id, JobKey: c.key, Name: c.code, Message: c.msg})
	tv.scope.set(c.vars)
	inst.raise(tv, n, model.EventError, c.code, c.msg, true, c.vars)
	return nil
}
