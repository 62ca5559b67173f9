package engine

import (
	"context"

	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// Instance is a running or finished process instance. Its methods are safe
// for concurrent use. It is a handle: what it returns is copied, so no
// value it hands out changes the instance, and the instance changes only
// through the Engine's operations and Cancel. Compare instances by Key:
// two lookups of one instance may return different handles.
type Instance struct {
	rt *runtime.Instance
	e  *Engine
}

// instanceOf returns the handle of a runtime instance.
func (e *Engine) instanceOf(rt *runtime.Instance) *Instance { return &Instance{rt: rt, e: e} }

// Key returns the instance key, unique within the engine.
func (i *Instance) Key() int64 { return i.rt.Key() }

// ProcessID returns the id of the process the instance runs.
func (i *Instance) ProcessID() string { return i.rt.Plan().Process.ID }

// State returns the instance's lifecycle state now.
func (i *Instance) State() State { return i.rt.State() }

// Message explains a Terminated or Failed instance; it is empty while the
// instance runs and once it has completed.
func (i *Instance) Message() string { return i.rt.Message() }

// Variables returns a deep copy of the process variables.
func (i *Instance) Variables() map[string]any { return i.rt.Variables() }

// Done is closed when the instance has ended and all its goroutines are
// gone.
func (i *Instance) Done() <-chan struct{} { return i.rt.Done() }

// Wait returns the final state once the instance has ended, or the
// context's error (with the state now) if ctx ends first.
func (i *Instance) Wait(ctx context.Context) (State, error) { return i.rt.Wait(ctx) }

// Tokens returns where every token is and why it waits, ordered by token
// id; a finished instance has none. The instance's loop answers it, between
// two steps of its tokens.
func (i *Instance) Tokens(ctx context.Context) ([]Token, error) { return i.rt.Tokens(ctx) }

// History returns a copy of the instance's event stream so far. While the
// instance runs its loop makes the copy, between two steps of its tokens;
// if ctx ends first History returns the context's error.
func (i *Instance) History(ctx context.Context) ([]Event, error) {
	return await(ctx, i.rt.History)
}

// Incidents returns the open incidents of the instance, ordered by key.
// While the instance runs its loop answers; if ctx ends first Incidents
// returns the context's error.
func (i *Instance) Incidents(ctx context.Context) ([]Incident, error) {
	return await(ctx, i.rt.Incidents)
}

// Cancel terminates the instance: every token is withdrawn, its jobs are
// cancelled, and it ends Terminated. An instance that has ended already is
// ErrInstanceEnded.
func (i *Instance) Cancel(ctx context.Context) error {
	return i.e.durably(ctx, func() error { return i.rt.Cancel(ctx) })
}

// await returns read's answer, or ctx's error if ctx ends first: read,
// which waits for an instance loop without a context, then finishes on its
// own goroutine (a loop always answers: it only ever waits for input).
func await[T any](ctx context.Context, read func() T) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if ctx.Done() == nil {
		return read(), nil
	}
	answer := make(chan T, 1)
	go func() { answer <- read() }()
	select {
	case v := <-answer:
		return v, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// instancesOf returns the handles of runtime instances.
func (e *Engine) instancesOf(rts []*runtime.Instance) []*Instance {
	out := make([]*Instance, len(rts))
	for i, rt := range rts {
		out[i] = e.instanceOf(rt)
	}
	return out
}
