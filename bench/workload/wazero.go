package workload

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// Wazero drives the wasm module through the host package. One module
// instance runs one call at a time, so the concurrent mode spreads its
// workers over a pool of engines (host's documented way to parallelise
// independent work), one per processor by default.
//
// Every host call settles before it returns, so AwaitWaiting has nothing
// to wait for, and completion is read with one state call, the host's
// counterpart of the native driver's Wait. The driver does not subscribe:
// a host with no observers tells the module not to encode events, as any
// user that does not listen gets.
type Wazero struct {
	engines []*host.Engine
}

// hostRef is updated by the calls that report where the instance stands
// (start, complete_job, publish_message), so that a script makes no call
// to ask.
type hostRef struct {
	engine int
	key    int64
	// done is set when the instance had completed by the time the last
	// call returned, as the module reports with its key.
	done bool
	// jobs are the instance's activatable jobs the last call reported;
	// nil when a call since may have changed them (a publication that did
	// not report the instance).
	jobs []engine.Job
}

// NewWazero returns a target with size module instances.
func NewWazero(size int) (*Wazero, error) {
	w := &Wazero{}
	for range size {
		e, err := host.New(context.Background())
		if err != nil {
			w.Close()
			return nil, err
		}
		w.engines = append(w.engines, e)
	}
	return w, nil
}

// Deploy implements Target.
func (w *Wazero) Deploy(name string, xml []byte) error {
	for _, e := range w.engines {
		if _, err := e.Deploy(context.Background(), name, xml); err != nil {
			return err
		}
	}
	return nil
}

// Start implements Target.
func (w *Wazero) Start(worker int, process string, vars map[string]any) (Ref, error) {
	i := worker % len(w.engines)
	s, err := w.engines[i].StartInstance(context.Background(), process, vars)
	return &hostRef{engine: i, key: s.Key, done: s.State == engine.Completed, jobs: s.Jobs}, err
}

// Finish implements Target: every call settles, so the instance has
// completed by now if it ever will. An instance Start saw complete needs
// no call, as in the Node driver; one that waited for input is asked.
func (w *Wazero) Finish(ref Ref) error {
	r := ref.(*hostRef)
	if r.done {
		return nil
	}
	st, err := w.engines[r.engine].State(context.Background(), r.key)
	if err != nil || st != engine.Completed {
		return fmt.Errorf("instance %d is %s (%v): %w", r.key, st, err, ErrNotCompleted)
	}
	return nil
}

// AwaitWaiting implements Session: calls settle, nothing to wait for.
func (w *Wazero) AwaitWaiting(Ref, string) error { return nil }

// Publish implements Session: the publication reports where the instance
// it reached stands.
func (w *Wazero) Publish(ref Ref, name, key string) error {
	r := ref.(*hostRef)
	r.jobs, r.done = nil, false
	reached, err := w.engines[r.engine].PublishMessageReached(context.Background(), engine.Message{Name: name, CorrelationKey: key})
	for _, s := range reached {
		if s.Key == r.key {
			r.jobs, r.done = s.Jobs, s.State == engine.Completed
		}
	}
	return err
}

// CompleteJob implements Session: the job comes from what the last call
// reported, or from a jobs call when that is unknown.
func (w *Wazero) CompleteJob(ref Ref, jobType string) error {
	r := ref.(*hostRef)
	e := w.engines[r.engine]
	i := slices.IndexFunc(r.jobs, func(j engine.Job) bool { return j.Type == jobType })
	if i < 0 {
		jobs, err := e.Jobs(context.Background(), engine.JobFilter{Type: jobType, InstanceKey: r.key})
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			return fmt.Errorf("instance %d has no %s job", r.key, jobType)
		}
		r.jobs, i = jobs, 0
	}
	s, err := e.CompleteJobInstance(context.Background(), r.jobs[i].Key, nil)
	r.jobs, r.done = s.Jobs, s.State == engine.Completed
	return err
}

// Advance implements Target.
func (w *Wazero) Advance(d time.Duration) error {
	for _, e := range w.engines {
		if err := e.Advance(context.Background(), d); err != nil {
			return err
		}
	}
	return nil
}

// Close implements Target.
func (w *Wazero) Close() error {
	var first error
	for _, e := range w.engines {
		if err := e.Close(context.Background()); err != nil && first == nil {
			first = err
		}
	}
	return first
}
