package conformance

import (
	"context"
	"fmt"
	"time"
)

// The engine's event delivery API (messages, signals, engine-driven time)
// is landing; until it does, the native runner moves the virtual clock
// itself and reports messages and signals as unsupported.

func (n *Native) PublishMessage(context.Context, Message) error {
	return fmt.Errorf("publish message: %w", ErrUnsupported)
}

func (n *Native) BroadcastSignal(context.Context, string, map[string]any) error {
	return fmt.Errorf("broadcast signal: %w", ErrUnsupported)
}

func (n *Native) Advance(ctx context.Context, d time.Duration) error {
	n.clock.Advance(d)
	return n.e.Settle(ctx)
}

func (n *Native) NextDeadline(context.Context) (time.Time, bool, error) {
	t, ok := n.clock.NextDue()
	return t, ok, nil
}
