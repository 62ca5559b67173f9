package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// Runner drives one engine — native, or a WebAssembly module behind a host
// — through the operations scenarios use. Every method is called from one
// goroutine at a time. Each scenario gets a fresh Runner whose clock is a
// virtual clock reading clock.Epoch.
//
// A Runner reports a rejected model from Deploy as an error that unwraps
// (errors.As) to *engine.DeployError, and uses the engine's plain data types
// (engine.Job, engine.Event, engine.Token, engine.Incident) in its answers,
// so results from different runners compare directly.
//
// Operations the engine behind a runner does not offer yet return an error
// wrapping ErrUnsupported.
type Runner interface {
	// Deploy registers the processes of a BPMN document.
	Deploy(ctx context.Context, name string, bpmn []byte) error
	// Start starts an instance and returns its key.
	Start(ctx context.Context, processID string, vars map[string]any) (int64, error)
	// PublishMessage publishes a message for correlation.
	PublishMessage(ctx context.Context, m Message) error
	// BroadcastSignal delivers a signal to every waiting catcher.
	BroadcastSignal(ctx context.Context, name string, vars map[string]any) error
	// Advance moves the virtual clock forward by d, firing due timers.
	Advance(ctx context.Context, d time.Duration) error
	// NextDeadline reports the earliest pending timer, if any.
	NextDeadline(ctx context.Context) (time.Time, bool, error)
	// Jobs lists the activatable jobs, ordered by key.
	Jobs(ctx context.Context) ([]engine.Job, error)
	CompleteJob(ctx context.Context, key int64, vars map[string]any) error
	FailJob(ctx context.Context, key int64, retries int, message string) error
	ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any) error
	// Incidents lists the open incidents, ordered by key.
	Incidents(ctx context.Context) ([]engine.Incident, error)
	ResolveIncident(ctx context.Context, key int64) error
	// Cancel terminates an instance.
	Cancel(ctx context.Context, instance int64) error
	// ActivateAdHoc activates inner elements of an instance's active
	// ad-hoc sub-process.
	ActivateAdHoc(ctx context.Context, instance int64, adHoc string, elements []string) error
	// Settle returns once nothing can move without outside input.
	Settle(ctx context.Context) error
	// Snapshot describes an instance (live or finished).
	Snapshot(ctx context.Context, instance int64) (Snapshot, error)
	// Close releases the runner and everything it started.
	Close(ctx context.Context) error
}

// Message is a message to publish (the fields of engine.Message).
type Message struct {
	Name           string
	CorrelationKey string
	Variables      map[string]any
	TTL            time.Duration
	MessageID      string
}

// Snapshot is what a runner reports about one instance.
type Snapshot struct {
	State     engine.State
	History   []engine.Event
	Tokens    []engine.Token
	Variables map[string]any
}

// ErrUnsupported is wrapped by Runner methods whose operation the engine
// behind the runner does not offer yet.
var ErrUnsupported = errors.New("conformance: operation not supported by this runner")

// Factory makes a fresh Runner.
type Factory struct {
	// Name names the runner in reports ("native", "host").
	Name string
	New  func() (Runner, error)
}

// factories holds the registered runners, native first: with goroutine
// tracks (the native default) and with direct resumption, so that every
// scenario holds both modes to the same observations.
var (
	factoriesMu sync.Mutex
	factories   = []Factory{
		{Name: "native", New: NewNative},
		{Name: "native-direct", New: func() (Runner, error) { return newNative(engine.WithResumption(engine.ResumeDirect)) }},
	}
)

// Register adds a runner that TestScenarios and the reports use next to
// the native one. Hosts call it from an init function in a file of this
// package, or from their own test.
func Register(f Factory) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	factories = append(factories, f)
}

// Factories returns the registered runners.
func Factories() []Factory {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	return append([]Factory(nil), factories...)
}

// Native runs scenarios on the engine package in this process.
type Native struct {
	e     *engine.Engine
	insts map[int64]*engine.Instance
}

// NewNative returns a Runner over a fresh engine.Engine on a virtual clock.
func NewNative() (Runner, error) { return newNative() }

func newNative(opts ...engine.Option) (Runner, error) {
	e, err := engine.New(append([]engine.Option{engine.WithClock(clock.NewVirtual(clock.Epoch))}, opts...)...)
	if err != nil {
		return nil, err
	}
	return &Native{e: e, insts: map[int64]*engine.Instance{}}, nil
}

// Deploy implements Runner on the native engine.
func (n *Native) Deploy(_ context.Context, name string, bpmn []byte) error {
	_, err := n.e.Deploy(name, bpmn)
	return err
}

// Start implements Runner on the native engine.
func (n *Native) Start(ctx context.Context, processID string, vars map[string]any) (int64, error) {
	inst, err := n.e.Start(ctx, processID, vars)
	if err != nil {
		return 0, err
	}
	n.insts[inst.Key()] = inst
	return inst.Key(), nil
}

// Jobs implements Runner on the native engine.
func (n *Native) Jobs(context.Context) ([]engine.Job, error) {
	return n.e.Jobs(engine.JobFilter{}), nil
}

// CompleteJob implements Runner on the native engine.
func (n *Native) CompleteJob(ctx context.Context, key int64, vars map[string]any) error {
	return n.e.CompleteJob(ctx, key, vars)
}

// FailJob implements Runner on the native engine.
func (n *Native) FailJob(ctx context.Context, key int64, retries int, message string) error {
	return n.e.FailJob(ctx, key, retries, message)
}

// ThrowError implements Runner on the native engine.
func (n *Native) ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any) error {
	return n.e.ThrowError(ctx, key, code, message, vars)
}

// Incidents implements Runner on the native engine.
func (n *Native) Incidents(ctx context.Context) ([]engine.Incident, error) { return n.e.Incidents(ctx) }

// ResolveIncident implements Runner on the native engine.
func (n *Native) ResolveIncident(ctx context.Context, key int64) error {
	return n.e.ResolveIncident(ctx, key)
}

func (n *Native) instance(key int64) (*engine.Instance, error) {
	if inst, ok := n.insts[key]; ok {
		return inst, nil
	}
	if inst, ok := n.e.Instance(key); ok {
		n.insts[key] = inst
		return inst, nil
	}
	return nil, fmt.Errorf("instance %d: %w", key, engine.ErrUnknownInstance)
}

// ActivateAdHoc implements Runner on the native engine.
func (n *Native) ActivateAdHoc(ctx context.Context, key int64, adHoc string, elements []string) error {
	return n.e.ActivateAdHoc(ctx, key, adHoc, elements)
}

// Cancel implements Runner on the native engine.
func (n *Native) Cancel(ctx context.Context, key int64) error {
	inst, err := n.instance(key)
	if err != nil {
		return err
	}
	return inst.Cancel(ctx)
}

// Settle implements Runner on the native engine.
func (n *Native) Settle(ctx context.Context) error { return n.e.Settle(ctx) }

// Snapshot implements Runner on the native engine.
func (n *Native) Snapshot(ctx context.Context, key int64) (Snapshot, error) {
	inst, err := n.instance(key)
	if err != nil {
		return Snapshot{}, err
	}
	toks, err := inst.Tokens(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	history, err := inst.History(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{State: inst.State(), History: history, Tokens: toks, Variables: inst.Variables()}, nil
}

// Close implements Runner on the native engine.
func (n *Native) Close(ctx context.Context) error { return n.e.Close(ctx) }
