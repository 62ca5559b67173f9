package conformance

import (
	"context"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

func init() { Register(Factory{Name: "host", New: NewHost}) }

// Host runs scenarios on the WebAssembly module in wazero through package
// host.
type Host struct{ e *host.Engine }

// NewHost returns a Runner over a fresh module instance (its clock is
// virtual and starts at clock.Epoch).
func NewHost() (Runner, error) {
	e, err := host.New(context.Background())
	if err != nil {
		return nil, err
	}
	return &Host{e: e}, nil
}

// Deploy implements Runner through the wasm module.
func (h *Host) Deploy(ctx context.Context, name string, bpmn []byte) error {
	_, err := h.e.Deploy(ctx, name, bpmn)
	return err
}

// Start implements Runner through the wasm module.
func (h *Host) Start(ctx context.Context, processID string, vars map[string]any) (int64, error) {
	return h.e.Start(ctx, processID, vars)
}

// PublishMessage implements Runner through the wasm module.
func (h *Host) PublishMessage(ctx context.Context, m Message) error {
	return h.e.PublishMessage(ctx, engine.Message{Name: m.Name, CorrelationKey: m.CorrelationKey,
		Variables: m.Variables, TTL: m.TTL, MessageID: m.MessageID})
}

// BroadcastSignal implements Runner through the wasm module.
func (h *Host) BroadcastSignal(ctx context.Context, name string, vars map[string]any) error {
	return h.e.BroadcastSignal(ctx, name, vars)
}

// Advance implements Runner through the wasm module.
func (h *Host) Advance(ctx context.Context, d time.Duration) error { return h.e.Advance(ctx, d) }

// NextDeadline implements Runner through the wasm module.
func (h *Host) NextDeadline(context.Context) (time.Time, bool, error) {
	t, ok := h.e.NextDeadline()
	return t, ok, nil
}

// Jobs implements Runner through the wasm module.
func (h *Host) Jobs(ctx context.Context) ([]engine.Job, error) {
	return h.e.Jobs(ctx, engine.JobFilter{})
}

// CompleteJob implements Runner through the wasm module.
func (h *Host) CompleteJob(ctx context.Context, key int64, vars map[string]any) error {
	return h.e.CompleteJob(ctx, key, vars)
}

// FailJob implements Runner through the wasm module.
func (h *Host) FailJob(ctx context.Context, key int64, retries int, message string) error {
	return h.e.FailJob(ctx, key, retries, message)
}

// ThrowError implements Runner through the wasm module.
func (h *Host) ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any) error {
	return h.e.ThrowError(ctx, key, code, message, vars)
}

// Incidents implements Runner through the wasm module.
func (h *Host) Incidents(ctx context.Context) ([]engine.Incident, error) { return h.e.Incidents(ctx) }

// ResolveIncident implements Runner through the wasm module.
func (h *Host) ResolveIncident(ctx context.Context, key int64) error {
	return h.e.ResolveIncident(ctx, key)
}

// Cancel implements Runner through the wasm module.
func (h *Host) Cancel(ctx context.Context, key int64) error { return h.e.Cancel(ctx, key) }

// ActivateAdHoc implements Runner through the wasm module.
func (h *Host) ActivateAdHoc(ctx context.Context, key int64, adHoc string, elements []string) error {
	return h.e.ActivateAdHoc(ctx, key, adHoc, elements)
}

// Settle implements Runner through the wasm module.
func (h *Host) Settle(ctx context.Context) error { return h.e.Settle(ctx) }

// Snapshot implements Runner through the wasm module.
func (h *Host) Snapshot(ctx context.Context, key int64) (Snapshot, error) {
	info, err := h.e.Instance(ctx, key)
	if err != nil {
		return Snapshot{}, err
	}
	hist, err := h.e.History(ctx, key)
	if err != nil {
		return Snapshot{}, err
	}
	var toks []engine.Token
	if !info.State.Final() {
		if toks, err = h.e.Tokens(ctx, key); err != nil {
			return Snapshot{}, err
		}
	}
	return Snapshot{State: info.State, History: hist, Tokens: toks, Variables: info.Variables}, nil
}

// Close implements Runner through the wasm module.
func (h *Host) Close(ctx context.Context) error { return h.e.Close(ctx) }
