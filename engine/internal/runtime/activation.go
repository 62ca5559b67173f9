package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// Job activation, as Zeebe's job workers: a worker activates up to a
// number of jobs of a type for a timeout; a job activated and not finished
// within it can be activated again; a failed job with retries left waits
// out its back-off. Both times are read on the engine clock, when
// ActivateJobs runs, so a virtual clock decides them as it decides timers:
// no timer is kept for them. The activation fields live in the job record
// (Job.Activation, Worker, Deadline, RetryAt), which the loop owns and
// checkpoints write with the job.

// ActivateOptions say which jobs ActivateJobs activates and for whom.
type ActivateOptions struct {
	// Type is the job type; required.
	Type string
	// Worker names the worker, for the job records and operators.
	Worker string
	// Timeout is how long the activation holds the job; > 0.
	Timeout time.Duration
	// MaxJobs bounds how many jobs one call activates; > 0.
	MaxJobs int
}

// errNotActivatable is a loop's answer for a job that another activation
// holds or whose back-off has not ended: ActivateJobs passes over it.
var errNotActivatable = errors.New("job is not activatable now")

// activatable reports whether j can be activated at now.
func activatable(j *Job, now time.Time) bool {
	if j.Retries <= 0 {
		return false
	}
	if j.Activation != 0 && j.Deadline != nil && now.Before(*j.Deadline) {
		return false
	}
	return j.RetryAt == nil || !now.Before(*j.RetryAt)
}

// ActivateJobs activates up to o.MaxJobs jobs of o.Type that nobody holds
// (never activated, timed out, or past their retry back-off), oldest key
// first, and returns copies of them with their activation set. Each job is
// activated by its instance's loop, so two concurrent calls never activate
// the same job.
func (e *Engine) ActivateJobs(ctx context.Context, o ActivateOptions) ([]Job, error) {
	now := e.clock.Now()
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, ErrClosed
	}
	var keys []int64
	for k, j := range e.jobRecs {
		if j.Type == o.Type && activatable(j, now) {
			keys = append(keys, k)
		}
	}
	e.mu.Unlock()
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := []Job{}
	for _, k := range keys {
		if len(out) == o.MaxJobs {
			break
		}
		inst, err := e.jobOwner(k)
		if errors.Is(err, ErrUnknownJob) {
			continue // finished since
		}
		if err != nil {
			return out, err
		}
		c := &command{op: cmdActivateJob, key: k, msg: o.Worker, job: JobArgs{Backoff: o.Timeout}}
		switch err := inst.call(ctx, c); {
		case err == nil:
			out = append(out, *c.activated)
		case errors.Is(err, errNotActivatable), errors.Is(err, ErrUnknownJob), errors.Is(err, ErrInstanceEnded):
		default:
			return out, fmt.Errorf("activate job %d: %w", k, err)
		}
	}
	return out, nil
}

// UpdateJobRetries sets how many retries (> 0) a job has left. A job held by an
// incident keeps it: resolving the incident retries the job with these
// retries.
func (e *Engine) UpdateJobRetries(ctx context.Context, key int64, retries int) error {
	inst, err := e.jobOwner(key)
	if err != nil {
		// A job held by an incident is not in the activatable index.
		inst = e.incidentJobOwner(key)
		if inst == nil {
			return err
		}
	}
	return jobCall(key, inst.call(ctx, &command{op: cmdUpdateRetries, key: key, retries: retries}))
}

// incidentJobOwner finds the instance of a job that an open incident holds.
func (e *Engine) incidentJobOwner(key int64) *Instance {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ie := range e.incidents {
		if ie.incident.JobKey == key {
			return ie.inst
		}
	}
	return nil
}

// CompleteJobAs is CompleteJob answering the activation a.Activation.
func (e *Engine) CompleteJobAs(ctx context.Context, key int64, a JobArgs, vars map[string]any) error {
	inst, err := e.jobOwner(key)
	if err != nil {
		return err
	}
	return jobCall(key, inst.call(ctx, &command{op: cmdCompleteJob, key: key, vars: vars, job: a}))
}

// FailJobAs is FailJob answering the activation a.Activation; with retries
// left the job can be activated again once a.Backoff has passed.
func (e *Engine) FailJobAs(ctx context.Context, key int64, a JobArgs, retries int, message string) error {
	inst, err := e.jobOwner(key)
	if err != nil {
		return err
	}
	return jobCall(key, inst.call(ctx, &command{op: cmdFailJob, key: key, retries: retries, msg: message, job: a}))
}

// ThrowErrorAs is ThrowError answering the activation a.Activation.
func (e *Engine) ThrowErrorAs(ctx context.Context, key int64, a JobArgs, code, message string, vars map[string]any) error {
	inst, err := e.jobOwner(key)
	if err != nil {
		return err
	}
	return jobCall(key, inst.call(ctx, &command{op: cmdThrowError, key: key, code: code, msg: message, vars: vars, job: a}))
}

// checkActivation refuses a result naming an activation the job no longer
// has.
func checkActivation(js *jobState, c *command) error {
	if a := c.job.Activation; a != 0 && js.job.Activation != a {
		return fmt.Errorf("job %d: activation %d was replaced: %w", c.key, a, ErrStaleActivation)
	}
	return nil
}

// activateJob gives the job c.key a new activation for worker c.msg and
// timeout c.job.Backoff, if it is activatable now.
func (inst *Instance) activateJob(c *command) error {
	js, _, err := inst.activeJob(c.key)
	if err != nil {
		return err
	}
	now := inst.eng.clock.Now()
	if !activatable(js.job, now) {
		return errNotActivatable
	}
	deadline := laterBounded(now, c.job.Backoff)
	next := *js.job
	next.Activation = inst.eng.NextKey()
	next.Worker = c.msg
	next.Deadline = &deadline
	next.RetryAt = nil
	js.job = &next
	inst.eng.addJob(inst, js.job)
	a := cloneJob(&next)
	c.activated = &a
	return nil
}

// backOff ends a failed job's activation and, with a back-off, sets when
// it can be activated again.
func (inst *Instance) backOff(j *Job, d time.Duration) {
	j.Activation, j.Worker, j.Deadline, j.RetryAt = 0, "", nil, nil
	if d > 0 {
		at := laterBounded(inst.eng.clock.Now(), d)
		j.RetryAt = &at
	}
}

// laterBounded is t+d, at most clock.Max: a time every state document and
// every host can carry.
func laterBounded(t time.Time, d time.Duration) time.Time {
	if u := t.Add(d); u.Before(clock.Max) {
		return u
	}
	return clock.Max
}

// updateRetries sets the retries of job c.key, open or held by an
// incident.
func (inst *Instance) updateRetries(c *command) error {
	js := inst.jobs[c.key]
	if js == nil {
		return fmt.Errorf("job %d: %w", c.key, ErrUnknownJob)
	}
	next := *js.job
	next.Retries = c.retries
	js.job = &next
	if js.incident == 0 {
		inst.eng.addJob(inst, js.job) // replace the indexed record
	}
	return nil // an incident's job is indexed again when it is resolved
}
