package conformance

import (
	"context"
	"time"

	"github.com/flowtrack/flowtrack/engine"
)

// PublishMessage implements Runner on the native engine.
func (n *Native) PublishMessage(ctx context.Context, m Message) error {
	return n.e.PublishMessage(ctx, engine.Message{Name: m.Name, CorrelationKey: m.CorrelationKey,
		Variables: m.Variables, TTL: m.TTL, MessageID: m.MessageID})
}

// BroadcastSignal implements Runner on the native engine.
func (n *Native) BroadcastSignal(ctx context.Context, name string, vars map[string]any) error {
	return n.e.BroadcastSignal(ctx, name, vars)
}

// Advance implements Runner on the native engine.
func (n *Native) Advance(ctx context.Context, d time.Duration) error {
	if err := n.e.Advance(ctx, d); err != nil {
		return err
	}
	return n.e.Settle(ctx)
}

// NextDeadline implements Runner on the native engine.
func (n *Native) NextDeadline(context.Context) (time.Time, bool, error) {
	t, ok := n.e.NextDeadline()
	return t, ok, nil
}
