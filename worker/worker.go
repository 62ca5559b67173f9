// Package worker is the job-worker loop shared by every surface: the
// native engine (engine.Engine.HandleJobs), the Go host of the
// WebAssembly module (host.Engine.HandleJobs) and the client of a server
// (client.Client.HandleJobs) all run Run, over the Client interface each
// implements. It depends on package api only, so a client binary links no
// engine.
package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/api"
)

// CheckActivate validates the arguments of an ActivateJobs call (and of
// Run, whose Concurrency is its maxJobs), as every surface does: an error
// wrapping api.ErrInvalidArgument for an empty jobType, a timeout or
// maxJobs <= 0.
func CheckActivate(jobType string, timeout time.Duration, maxJobs int) error {
	switch {
	case jobType == "":
		return api.InvalidArgument("activate jobs: the job type is empty")
	case timeout <= 0:
		return api.InvalidArgument("activate jobs of type %q: timeout must be > 0, got %s", jobType, timeout)
	case maxJobs <= 0:
		return api.InvalidArgument("activate jobs of type %q: maxJobs must be > 0, got %d", jobType, maxJobs)
	}
	return nil
}

// Client is what a job worker needs from an engine: *engine.Engine,
// *host.Engine and *client.Client implement it, so Run works the same on
// each.
type Client interface {
	ActivateJobs(ctx context.Context, jobType, worker string, timeout time.Duration, maxJobs int) ([]api.Job, error)
	CompleteJob(ctx context.Context, key int64, vars map[string]any, opts ...api.JobOption) error
	FailJob(ctx context.Context, key int64, retries int, message string, opts ...api.JobOption) error
	ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any, opts ...api.JobOption) error
}

// Handler works one activated job. It returns the variables to complete
// the job with, or an error: a *api.BPMNError throws that BPMN error from the
// job's element, any other error fails the job with one retry fewer and
// the worker's back-off. A handler that panics fails the job the same way,
// with the panic as its message. ctx is the worker's: it ends when the
// worker stops.
type Handler func(ctx context.Context, job api.Job) (map[string]any, error)

// Options configure a job worker. The zero value is valid.
type Options struct {
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

// Defaults of Options.
const (
	DefaultName         = "worker"
	DefaultJobTimeout   = 5 * time.Minute
	DefaultPollInterval = 100 * time.Millisecond
)

func (o Options) withDefaults() Options {
	if o.Worker == "" {
		o.Worker = DefaultName
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

// Run runs a job worker for jobType over c until ctx ends: it activates
// jobs (up to Concurrency at once), runs handler on each on its own
// goroutine, and completes, fails (retries-1, with the RetryBackoff) or
// throws with the job's activation, so a result that comes after the
// activation timed out and the job went to another worker is dropped
// (api.ErrStaleActivation). It returns nil when ctx ends, after the
// running handlers return, or the first error that is not about one job
// (api.ErrClosed).
func Run(ctx context.Context, c Client, jobType string, handler Handler, o Options) error {
	if handler == nil {
		return api.InvalidArgument("handle jobs of type %q: the handler is nil", jobType)
	}
	o = o.withDefaults()
	if err := CheckActivate(jobType, o.Timeout, o.Concurrency); err != nil {
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
func workJob(ctx, calls context.Context, c Client, j api.Job, handler Handler, o Options) {
	vars, err := runHandler(ctx, j, handler)
	_ = reportJob(calls, c, j, o, vars, err)
}

// Work runs handler on a job activated elsewhere (a job queue's
// message) and reports its result for the job's activation as Run
// does: the returned variables complete it, a *api.BPMNError throws, any
// other error or a panic fails it with one retry fewer and o's
// RetryBackoff. The report is not cut short when ctx ends. It returns the
// report's error: api.ErrStaleActivation when the activation was replaced,
// api.ErrUnknownJob when the job is finished, or what the client returns.
func Work(ctx context.Context, c Client, j api.Job, handler Handler, o Options) error {
	vars, err := runHandler(ctx, j, handler)
	return reportJob(context.WithoutCancel(ctx), c, j, o.withDefaults(), vars, err)
}

// reportJob reports a handler's result for j's activation.
func reportJob(calls context.Context, c Client, j api.Job, o Options, vars map[string]any, err error) error {
	act := api.JobActivation(j.Activation)
	var be *api.BPMNError
	switch {
	case err == nil:
		return c.CompleteJob(calls, j.Key, vars, act)
	case errors.As(err, &be):
		return c.ThrowError(calls, j.Key, be.Code, be.Message, be.Variables, act)
	default:
		return c.FailJob(calls, j.Key, max(j.Retries-1, 0), err.Error(), act, api.RetryBackoff(o.RetryBackoff))
	}
}

// runHandler calls handler, turning a panic into an error.
func runHandler(ctx context.Context, j api.Job, handler Handler) (vars map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job handler panicked: %v", p)
		}
	}()
	return handler(ctx, j)
}
