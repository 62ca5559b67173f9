package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowtrack/flowtrack/engine/internal/runtime"
	"github.com/flowtrack/flowtrack/worker"
)

// ActivateJobs activates up to maxJobs jobs of jobType for worker, as a
// Zeebe job worker does: each returned job carries its Activation, Worker
// and Deadline (now + timeout on the engine clock). Until the deadline no
// other call activates the job; after it, if still open, the job is
// activatable again and a result naming the old activation is refused
// once it is. A job in its retry back-off (FailJob with RetryBackoff) is
// passed over until the back-off ends. Jobs come oldest first.
//
// # Errors
//
// ErrInvalidArgument for an empty jobType, a timeout or maxJobs <= 0;
// ErrClosed after Close.
func (e *Engine) ActivateJobs(ctx context.Context, jobType, workerName string, timeout time.Duration, maxJobs int) ([]Job, error) {
	if err := worker.CheckActivate(jobType, timeout, maxJobs); err != nil {
		return nil, err
	}
	var jobs []Job
	err := e.durably(ctx, func() (err error) {
		jobs, err = e.rt.ActivateJobs(ctx, runtime.ActivateOptions{Type: jobType, Worker: workerName, Timeout: timeout, MaxJobs: maxJobs})
		return err
	})
	return jobs, err
}

// UpdateJobRetries sets how many retries a job has left, as Zeebe's
// UpdateJobRetries: an open job keeps its activation; a job an incident
// holds (no retries left) stays held until ResolveIncident, which then
// retries it with these retries.
//
// # Errors
//
// ErrInvalidArgument for retries < 1; ErrUnknownJob for a key that names
// no open job; ErrClosed after Close.
func (e *Engine) UpdateJobRetries(ctx context.Context, key int64, retries int) error {
	if retries < 1 {
		return invalid("update retries of job %d: retries must be >= 1, got %d", key, retries)
	}
	return e.durably(ctx, func() error { return e.rt.UpdateJobRetries(ctx, key, retries) })
}

// The job-worker loop is package worker's, shared by the engine, the Go
// host and the client of a server; engine names it too.
type (
	// JobClient is what a job worker needs from an engine (worker.Client).
	JobClient = worker.Client
	// JobHandler works one activated job (worker.Handler).
	JobHandler = worker.Handler
	// WorkerOptions configure a job worker (worker.Options).
	WorkerOptions = worker.Options
)

// Defaults of WorkerOptions.
const (
	DefaultWorkerName   = worker.DefaultName
	DefaultJobTimeout   = worker.DefaultJobTimeout
	DefaultPollInterval = worker.DefaultPollInterval
)

// HandleJobs runs a job worker for jobType until ctx ends (worker.Run):
// it activates jobs (up to Concurrency at once), runs handler on each on
// its own goroutine, and completes, fails (retries-1, with the
// RetryBackoff) or throws with the job's activation, so a result that
// comes after the activation timed out and the job went to another worker
// is dropped (ErrStaleActivation). It returns nil when ctx ends, after the
// running handlers return, or the first error that is not about one job
// (ErrClosed).
func (e *Engine) HandleJobs(ctx context.Context, jobType string, handler JobHandler, o WorkerOptions) error {
	return worker.Run(ctx, e, jobType, handler, o)
}

// RunJobWorker is HandleJobs over any JobClient (worker.Run).
func RunJobWorker(ctx context.Context, c JobClient, jobType string, handler JobHandler, o WorkerOptions) error {
	return worker.Run(ctx, c, jobType, handler, o)
}

// WorkJob runs handler on a job activated elsewhere and reports its
// result (worker.Work).
func WorkJob(ctx context.Context, c JobClient, j Job, handler JobHandler, o WorkerOptions) error {
	return worker.Work(ctx, c, j, handler, o)
}

// Jobs returns the activatable jobs matching f, ordered by key.
func (e *Engine) Jobs(f JobFilter) []Job { return e.rt.Jobs(f) }

// Job returns the activatable job with key, or false when there is none
// (completed, cancelled, held by an incident, or never created).
func (e *Engine) Job(key int64) (Job, bool) { return e.rt.Job(key) }

// CompleteJob completes a job; vars are merged into the process variables
// and the waiting token moves on. With JobActivation the activation must
// still be the job's (ErrStaleActivation).
func (e *Engine) CompleteJob(ctx context.Context, key int64, vars map[string]any, opts ...JobOption) error {
	norm, err := normalize(vars)
	if err != nil {
		return fmt.Errorf("complete job %d: %w", key, err)
	}
	return e.durably(ctx, func() error { return e.rt.CompleteJobAs(ctx, key, JobArgsOf(opts), norm) })
}

// FailJob reports a failed attempt at a job. With retries > 0 the job stays
// activatable, after the RetryBackoff option's back-off; with 0 an incident
// holds the token until ResolveIncident. With JobActivation the activation
// must still be the job's (ErrStaleActivation).
func (e *Engine) FailJob(ctx context.Context, key int64, retries int, message string, opts ...JobOption) error {
	if retries < 0 {
		return invalid("fail job %d: retries must be >= 0, got %d", key, retries)
	}
	a := JobArgsOf(opts)
	if a.Backoff < 0 {
		return invalid("fail job %d: retry back-off must be >= 0, got %s", key, a.Backoff)
	}
	return e.durably(ctx, func() error { return e.rt.FailJobAs(ctx, key, a, retries, message) })
}

// ThrowError raises the BPMN error code from a job's element. Without a
// boundary event or event sub-process that catches it, an incident holds
// the token. With JobActivation the activation must still be the job's
// (ErrStaleActivation).
func (e *Engine) ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any, opts ...JobOption) error {
	if code == "" {
		return invalid("throw error from job %d: the error code is empty", key)
	}
	norm, err := normalize(vars)
	if err != nil {
		return fmt.Errorf("throw error from job %d: %w", key, err)
	}
	return e.durably(ctx, func() error { return e.rt.ThrowErrorAs(ctx, key, JobArgsOf(opts), code, message, norm) })
}

// ActivateAdHoc activates inner elements of the active ad-hoc sub-process
// adHocID of an instance, as Zeebe's ad-hoc activation API does: each
// element named gets a token of its own there (a sequential ad-hoc
// sub-process runs them one after another, after what it runs already). An
// element may be activated again while it runs; the sub-process completes,
// as always, when nothing inside is active and its completion condition
// held.
//
// # Errors
//
// ErrUnknownInstance for a key that names no instance; ErrInstanceEnded
// once it has ended; an error matching ErrInvalidArgument when the
// instance has no active ad-hoc sub-process adHocID, runs it more than once
// (a multi-instance one), elementIDs is empty, or an id names something
// other than an inner element without incoming flows.
func (e *Engine) ActivateAdHoc(ctx context.Context, instanceKey int64, adHocID string, elementIDs []string) error {
	inst, ok := e.rt.Instance(instanceKey)
	if !ok {
		return fmt.Errorf("activate ad-hoc elements: instance %d: %w", instanceKey, ErrUnknownInstance)
	}
	err := e.durably(ctx, func() error { return inst.ActivateAdHoc(ctx, adHocID, elementIDs) })
	if ae := (*runtime.AdHocError)(nil); errors.As(err, &ae) {
		return invalid("activate ad-hoc elements: %s", ae)
	}
	return err
}
