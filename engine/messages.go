package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// PublishMessage correlates m to the subscriptions waiting for its name and
// correlation key (at most one per process definition, the oldest), starts
// instances of processes with a matching message start event (unless one
// started by the same key is still active), and with a TTL buffers it for
// subscriptions opened later.
func (e *Engine) PublishMessage(ctx context.Context, m Message) error {
	_, err := e.publishMessage(ctx, m)
	return err
}

// PublishMessageReached is PublishMessage that also returns the instances
// the message reached when it was published: those it was correlated to
// (at most one per process definition), then those it started. It is
// empty for a message nobody waited for, buffered or not; a buffered
// message that correlates later is not reported. The instances may still
// be handling the message when it returns (Instance.Wait, Engine.Settle).
// Zeebe's CorrelateMessage answers the same question with the process
// instance key.
//
// # Errors
//
// As PublishMessage: ErrInvalidArgument, ErrDuplicateMessage, ErrClosed;
// with a store, an error wrapping ErrNotAcknowledged comes with the
// instances reached, since the message was published (WithStore).
func (e *Engine) PublishMessageReached(ctx context.Context, m Message) ([]*Instance, error) {
	reached, err := e.publishMessage(ctx, m)
	if reached == nil {
		return nil, err
	}
	return e.instancesOf(reached), err
}

// publishMessage is PublishMessageReached with the runtime's instances,
// which PublishMessage does not wrap.
func (e *Engine) publishMessage(ctx context.Context, m Message) ([]*runtime.Instance, error) {
	if err := e.checkMessage(ctx, m); err != nil {
		return nil, err
	}
	norm, err := normalize(m.Variables)
	if err != nil {
		return nil, fmt.Errorf("publish message %q: %w", m.Name, err)
	}
	var reached []*runtime.Instance
	if err := e.durably(ctx, func() (err error) {
		reached, err = e.rt.PublishMessage(m.Name, m.CorrelationKey, norm, m.TTL, m.MessageID)
		return err
	}); err != nil {
		if errors.Is(err, ErrNotAcknowledged) {
			return reached, fmt.Errorf("publish message %q: %w", m.Name, err)
		}
		return nil, fmt.Errorf("publish message %q: %w", m.Name, err)
	}
	return reached, nil
}

// checkMessage refuses a message PublishMessage cannot publish.
func (e *Engine) checkMessage(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.Name == "" {
		return invalid("publish message: the name is empty")
	}
	if m.TTL < 0 {
		return invalid("publish message %q: negative TTL %s", m.Name, m.TTL)
	}
	if err := clock.CheckRange(e.Now().Add(m.TTL)); err != nil {
		return fmt.Errorf("publish message %q: TTL %s: %w", m.Name, m.TTL, err)
	}
	return nil
}

// BroadcastSignal delivers a signal to every instance waiting for it and
// starts instances of processes with a matching signal start event. A
// signal nobody catches is not an error; one whose start events would
// start more instances than Limits.MaxStartsPerInput allows fails and
// delivers nothing.
func (e *Engine) BroadcastSignal(ctx context.Context, name string, vars map[string]any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if name == "" {
		return invalid("broadcast signal: the name is empty")
	}
	norm, err := normalize(vars)
	if err != nil {
		return fmt.Errorf("broadcast signal %q: %w", name, err)
	}
	if err := e.durably(ctx, func() error { return e.rt.BroadcastSignal(name, norm) }); err != nil {
		return fmt.Errorf("broadcast signal %q: %w", name, err)
	}
	return nil
}
