package workload

import (
	"context"
	"fmt"
	"sync"
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
// to wait for, and completion is read from the events the calls return.
type Wazero struct {
	engines []*host.Engine
	unsub   []func()

	mu        sync.Mutex
	completed map[hostRef]bool
}

type hostRef struct {
	engine int
	key    int64
}

// NewWazero returns a target with size module instances.
func NewWazero(size int) (*Wazero, error) {
	w := &Wazero{completed: map[hostRef]bool{}}
	for i := range size {
		e, err := host.New(context.Background())
		if err != nil {
			w.Close()
			return nil, err
		}
		w.engines = append(w.engines, e)
		w.unsub = append(w.unsub, e.Subscribe(func(ev engine.Event) {
			if ev.Type == engine.InstanceCompleted {
				w.mu.Lock()
				w.completed[hostRef{i, ev.InstanceKey}] = true
				w.mu.Unlock()
			}
		}))
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
	key, err := w.engines[i].Start(context.Background(), process, vars)
	return hostRef{i, key}, err
}

// Finish implements Target: the instance's instanceCompleted event must
// have been seen (every call settles, so it has arrived if it ever will).
func (w *Wazero) Finish(ref Ref) error {
	r := ref.(hostRef)
	w.mu.Lock()
	ok := w.completed[r]
	delete(w.completed, r)
	w.mu.Unlock()
	if !ok {
		st, err := w.engines[r.engine].State(context.Background(), r.key)
		return fmt.Errorf("instance %d is %s (%v): %w", r.key, st, err, ErrNotCompleted)
	}
	return nil
}

// AwaitWaiting implements Session: calls settle, nothing to wait for.
func (w *Wazero) AwaitWaiting(Ref, string) error { return nil }

// Publish implements Session.
func (w *Wazero) Publish(ref Ref, name, key string) error {
	e := w.engines[ref.(hostRef).engine]
	return e.PublishMessage(context.Background(), engine.Message{Name: name, CorrelationKey: key})
}

// CompleteJob implements Session.
func (w *Wazero) CompleteJob(ref Ref, jobType string) error {
	r := ref.(hostRef)
	e := w.engines[r.engine]
	jobs, err := e.Jobs(context.Background(), engine.JobFilter{Type: jobType, InstanceKey: r.key})
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		return fmt.Errorf("instance %d has no %s job", r.key, jobType)
	}
	return e.CompleteJob(context.Background(), jobs[0].Key, nil)
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
	for _, u := range w.unsub {
		u()
	}
	var first error
	for _, e := range w.engines {
		if err := e.Close(context.Background()); err != nil && first == nil {
			first = err
		}
	}
	return first
}
