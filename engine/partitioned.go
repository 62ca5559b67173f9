package engine

import (
	"context"
	"fmt"

	"github.com/flowtrack/flowtrack/internal/partitioned/link"

	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// crossPartition implements the operations of a cluster partition on its
// engine, beyond the public API: package internal/partitioned exposes them
// to the cluster as functions taking an *Engine, so Engine's method set
// stays what every user of the engine needs. They correlate messages
// across partitions (cluster/doc.go, "Messages").
type crossPartition struct{}

func init() { link.Partitioned = crossPartition{} }

// MessageSubscriptions returns the open message subscriptions, oldest
// first. A cluster partition reads them to tell the partition of each
// correlation key which of its instances wait there (package cluster).
func (crossPartition) MessageSubscriptions(e *Engine) []MessageSubscription {
	return e.rt.MessageSubscriptions()
}

// CorrelateMessageTo correlates m to one instance: to its open
// subscription for m's name and correlation key, as if m had been
// published and the instance's subscription chosen for it. It bypasses
// the message buffer, the message id and message start events: the
// message was published on another engine (the partition of its
// correlation key), which chose this instance. It reports false, with
// nothing done, when the instance holds no such subscription (it ended,
// or the wait was correlated, interrupted or cancelled meanwhile).
//
// # Errors
//
// ErrInvalidArgument for an empty name or variables that are not JSON
// values, ErrClosed; with a store, an error wrapping ErrNotAcknowledged
// when the correlation took effect but its commit failed.
func (crossPartition) CorrelateMessageTo(ctx context.Context, e *Engine, instanceKey int64, m Message) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if m.Name == "" {
		return false, invalid("correlate message to instance %d: the name is empty", instanceKey)
	}
	norm, err := normalize(m.Variables)
	if err != nil {
		return false, fmt.Errorf("correlate message %q to instance %d: %w", m.Name, instanceKey, err)
	}
	var ok bool
	if err := e.durably(ctx, func() (err error) {
		ok, err = e.rt.CorrelateMessageTo(instanceKey, m.Name, m.CorrelationKey, norm)
		return err
	}); err != nil {
		return ok, fmt.Errorf("correlate message %q to instance %d: %w", m.Name, instanceKey, err)
	}
	return ok, nil
}

// Publication is what partitioned.PublishMessageServed did with a message on this
// engine.
type Publication struct {
	// Correlated are the instances the message was correlated to, at most
	// one per process definition; Started those its message start events
	// started. Correlated then Started is what PublishMessageReached
	// returns.
	Correlated, Started []*Instance
	// Served are the process ids the message reached, each with one
	// instance: those it was correlated to, and those whose message start
	// event it started.
	Served map[string]bool
}

// PublishMessageServed is PublishMessage that also returns what the
// message reached on this engine: the instances, and their process ids.
// A cluster partition correlates it to the waits other partitions hold
// only for the other processes, since a message reaches at most one
// instance per process, and answers the instances of both, correlated
// before started, as PublishMessageReached does on one engine.
//
// # Errors
//
// As PublishMessageReached; with an error wrapping ErrNotAcknowledged the
// publication comes with it, since the message was published.
func (crossPartition) PublishMessageServed(ctx context.Context, e *Engine, m Message) (Publication, error) {
	if err := e.checkMessage(ctx, m); err != nil {
		return Publication{}, err
	}
	norm, err := normalize(m.Variables)
	if err != nil {
		return Publication{}, fmt.Errorf("publish message %q: %w", m.Name, err)
	}
	var pub runtime.Publication
	if err := e.durably(ctx, func() (err error) {
		pub, err = e.rt.PublishMessageServed(m.Name, m.CorrelationKey, norm, m.TTL, m.MessageID)
		return err
	}); err != nil {
		return e.publicationOf(pub), fmt.Errorf("publish message %q: %w", m.Name, err)
	}
	return e.publicationOf(pub), nil
}

// publicationOf returns the handles of what the runtime's publication
// reached.
func (e *Engine) publicationOf(pub runtime.Publication) Publication {
	served := make(map[string]bool, len(pub.Served))
	for _, pid := range pub.Served {
		served[pid] = true
	}
	return Publication{Correlated: e.instancesOf(pub.Correlated), Started: e.instancesOf(pub.Started), Served: served}
}

// BufferedMessage is a buffered message taken for one process by
// partitioned.ClaimBufferedMessage.
type BufferedMessage struct {
	c *eventhub.Claim
	e *Engine
}

// Variables returns the message's variables.
func (b *BufferedMessage) Variables() map[string]any { return b.c.Variables() }

// MessageID returns the message's id, "" for none.
func (b *BufferedMessage) MessageID() string { return b.c.ID() }

// Release hands the message back to the buffer: the wait it was taken
// for had closed, so it may serve its process again for the rest of its
// TTL. It returns once the release is committed (with a store).
func (b *BufferedMessage) Release(ctx context.Context) error {
	return b.e.durably(ctx, func() error { b.c.Release(); return nil })
}

// Commit waits until the claim (or its release) is committed (with a
// store; without one it returns at once).
func (b *BufferedMessage) Commit(ctx context.Context) error {
	return b.e.durably(ctx, func() error { return nil })
}

// ClaimBufferedMessage takes the oldest buffered message (PublishMessage
// with a TTL) for name and key that has not been correlated to process
// processID, and marks it as correlated to it: a cluster partition holds
// the message while a wait of that process is open on another partition.
// It reports false when no such message is buffered. The claim is
// committed with the engine's next commit; the caller records what it
// does with the message first, then waits for it (BufferedMessage.Commit).
func (crossPartition) ClaimBufferedMessage(e *Engine, name, key, processID string) (*BufferedMessage, bool) {
	c, ok := e.rt.ClaimBufferedMessage(name, key, processID)
	if !ok {
		return nil, false
	}
	return &BufferedMessage{c: c, e: e}, true
}
