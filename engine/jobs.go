package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// JobArgs is what a job result names besides the job: the activation it
// answers (zero: any) and, for FailJob, the retry back-off. Hosts fill it
// from JobOptions with JobArgsOf.
type JobArgs = runtime.JobArgs

// JobOption qualifies a job result (CompleteJob, FailJob, ThrowError).
type JobOption func(*JobArgs)

// JobActivation makes a job result answer the activation a (Job.Activation
// of a job ActivateJobs returned): the engine refuses it with
// ErrStaleActivation once the job timed out and was activated again, or
// failed. Without it a result is accepted whoever holds the job.
func JobActivation(a int64) JobOption { return func(j *JobArgs) { j.Activation = a } }

// RetryBackoff makes FailJob keep the job from ActivateJobs for d, on the
// engine clock (default 0: activatable at once).
func RetryBackoff(d time.Duration) JobOption { return func(j *JobArgs) { j.Backoff = d } }

// JobArgsOf applies opts to zero JobArgs.
func JobArgsOf(opts []JobOption) JobArgs {
	var a JobArgs
	for _, o := range opts {
		o(&a)
	}
	return a
}

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
func (e *Engine) ActivateJobs(ctx context.Context, jobType, worker string, timeout time.Duration, maxJobs int) ([]Job, error) {
	if err := checkActivate(jobType, timeout, maxJobs); err != nil {
		return nil, err
	}
	var jobs []Job
	err := e.durably(ctx, func() (err error) {
		jobs, err = e.rt.ActivateJobs(ctx, runtime.ActivateOptions{Type: jobType, Worker: worker, Timeout: timeout, MaxJobs: maxJobs})
		return err
	})
	return jobs, err
}

// checkActivate validates ActivateJobs' arguments; hosts apply the same
// rules.
func checkActivate(jobType string, timeout time.Duration, maxJobs int) error {
	switch {
	case jobType == "":
		return invalid("activate jobs: the job type is empty")
	case timeout <= 0:
		return invalid("activate jobs of type %q: timeout must be > 0, got %s", jobType, timeout)
	case maxJobs <= 0:
		return invalid("activate jobs of type %q: maxJobs must be > 0, got %d", jobType, maxJobs)
	}
	return nil
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

// JobClient is what a job worker needs from an engine. *Engine implements
// it, and so does the wasm host's Engine (package host), so RunJobWorker
// works the same on both.
type JobClient interface {
	ActivateJobs(ctx context.Context, jobType, worker string, timeout time.Duration, maxJobs int) ([]Job, error)
	CompleteJob(ctx context.Context, key int64, vars map[string]any, opts ...JobOption) error
	FailJob(ctx context.Context, key int64, retries int, message string, opts ...JobOption) error
	ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any, opts ...JobOption) error
}

// JobHandler works one activated job. It returns the variables to complete
// the job with, or an error: a *BPMNError throws that BPMN error from the
// job's element, any other error fails the job with one retry fewer and
// the worker's back-off. A handler that panics fails the job the same way,
// with the panic as its message. ctx is the worker's: it ends when the
// worker stops.
type JobHandler func(ctx context.Context, job Job) (map[string]any, error)

// BPMNError is the error a JobHandler returns to throw a BPMN error (as
// ThrowError) instead of failing the job.
type BPMNError struct {
	Code      string
	Message   string
	Variables map[string]any
}

// Error says which BPMN error this is.
func (e *BPMNError) Error() string { return fmt.Sprintf("BPMN error %s: %s", e.Code, e.Message) }

// WorkerOptions configure a job worker. The zero value is valid.
type WorkerOptions struct {
	// Worker names the worker in the activated jobs (default "worker").
	Worker string
	// Concurrency is how many jobs the worker handles at once (default 1).
	Concurrency int
	// Timeout is each activation's timeout (default 5 minutes).
	Timeout time.Duration
	// RetryBackoff is how long a job the handler failed waits before it
	// can be activated again (default 0).
	RetryBackoff time.Duration
	// PollInterval is how long the worker waits, in real time, before it
	// asks again after finding no job (default 100ms).
	PollInterval time.Duration
}

// Defaults of WorkerOptions.
const (
	DefaultWorkerName   = "worker"
	DefaultJobTimeout   = 5 * time.Minute
	DefaultPollInterval = 100 * time.Millisecond
)

func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.Worker == "" {
		o.Worker = DefaultWorkerName
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultJobTimeout
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	return o
}

// HandleJobs runs a job worker for jobType until ctx ends: it activates
// jobs (up to Concurrency at once), runs handler on each on its own
// goroutine, and completes, fails (retries-1, with the RetryBackoff) or
// throws with the job's activation, so a result that comes after the
// activation timed out and the job went to another worker is dropped
// (ErrStaleActivation). It returns nil when ctx ends, after the running
// handlers return, or the first error that is not about one job
// (ErrClosed).
func (e *Engine) HandleJobs(ctx context.Context, jobType string, handler JobHandler, o WorkerOptions) error {
	return RunJobWorker(ctx, e, jobType, handler, o)
}

// RunJobWorker is HandleJobs over any JobClient.
func RunJobWorker(ctx context.Context, c JobClient, jobType string, handler JobHandler, o WorkerOptions) error {
	if handler == nil {
		return invalid("handle jobs of type %q: the handler is nil", jobType)
	}
	o = o.withDefaults()
	if err := checkActivate(jobType, o.Timeout, o.Concurrency); err != nil {
		return err
	}
	// The engine calls do not end with ctx: a call abandoned midway
	// discards a wasm host's module, and a job a handler finished is
	// reported even when the worker is stopping. The worker checks ctx
	// between calls instead.
	calls := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	free := make(chan struct{}, o.Concurrency) // one token per free slot
	for range o.Concurrency {
		free <- struct{}{}
	}
	for {
		n := 0
	take:
		for n < o.Concurrency {
			select {
			case <-free:
				n++
			default:
				break take
			}
		}
		if n == 0 {
			select { // every slot busy: wait for one
			case <-free:
				n = 1
			case <-ctx.Done():
				return nil
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		jobs, err := c.ActivateJobs(calls, jobType, o.Worker, o.Timeout, n)
		if err != nil {
			return fmt.Errorf("handle jobs of type %q: %w", jobType, err)
		}
		for range n - len(jobs) {
			free <- struct{}{}
		}
		for _, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { free <- struct{}{} }()
				workJob(ctx, calls, c, j, handler, o)
			}()
		}
		if len(jobs) == 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(o.PollInterval):
			}
		}
	}
}

// workJob runs handler on j and reports its result for j's activation.
// Errors reporting it are about this job only (it finished, or its
// activation went to another worker) and leave the worker running.
func workJob(ctx, calls context.Context, c JobClient, j Job, handler JobHandler, o WorkerOptions) {
	vars, err := runHandler(ctx, j, handler)
	_ = reportJob(calls, c, j, o, vars, err)
}

// WorkJob runs handler on a job activated elsewhere (a job queue's
// message) and reports its result for the job's activation as HandleJobs
// does: the returned variables complete it, a *BPMNError throws, any
// other error or a panic fails it with one retry fewer and o's
// RetryBackoff. The report is not cut short when ctx ends. It returns the
// report's error: ErrStaleActivation when the activation was replaced,
// ErrUnknownJob when the job is finished, or what the client returns.
func WorkJob(ctx context.Context, c JobClient, j Job, handler JobHandler, o WorkerOptions) error {
	vars, err := runHandler(ctx, j, handler)
	return reportJob(context.WithoutCancel(ctx), c, j, o.withDefaults(), vars, err)
}

// reportJob reports a handler's result for j's activation.
func reportJob(calls context.Context, c JobClient, j Job, o WorkerOptions, vars map[string]any, err error) error {
	act := JobActivation(j.Activation)
	var be *BPMNError
	switch {
	case err == nil:
		return c.CompleteJob(calls, j.Key, vars, act)
	case errors.As(err, &be):
		return c.ThrowError(calls, j.Key, be.Code, be.Message, be.Variables, act)
	default:
		return c.FailJob(calls, j.Key, max(j.Retries-1, 0), err.Error(), act, RetryBackoff(o.RetryBackoff))
	}
}

// runHandler calls handler, turning a panic into an error.
func runHandler(ctx context.Context, j Job, handler JobHandler) (vars map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job handler panicked: %v", p)
		}
	}()
	return handler(ctx, j)
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
