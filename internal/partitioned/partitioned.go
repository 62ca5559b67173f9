// Package partitioned holds the operations a cluster partition performs
// on its engine beyond the public API of engine.Engine: correlating a
// message published on another partition to one instance, publishing a
// message and learning which processes it served, claiming a buffered
// message for a wait another partition holds, and listing the open
// message subscriptions. Only the cluster (and the server that runs a
// partition) needs them, so they are functions taking an *engine.Engine
// here, under internal/, instead of methods every user of the engine
// sees. cluster/doc.go ("Messages") describes the protocol they serve.
package partitioned

import (
	"context"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/partitioned/link"
)

// ops is what package engine registers in link.Partitioned.
type ops interface {
	MessageSubscriptions(e *engine.Engine) []api.MessageSubscription
	CorrelateMessageTo(ctx context.Context, e *engine.Engine, instanceKey int64, m api.Message) (bool, error)
	PublishMessageServed(ctx context.Context, e *engine.Engine, m api.Message) (engine.Publication, error)
	ClaimBufferedMessage(e *engine.Engine, name, key, processID string) (*engine.BufferedMessage, bool)
}

// impl returns engine's implementation; importing engine (as this package
// does) has run engine's init, which sets it.
func impl() ops { return link.Partitioned.(ops) }

// MessageSubscriptions returns e's open message subscriptions, oldest
// first. A cluster partition reads them to tell the partition of each
// correlation key which of its instances wait there.
func MessageSubscriptions(e *engine.Engine) []api.MessageSubscription {
	return impl().MessageSubscriptions(e)
}

// CorrelateMessageTo correlates m to one instance of e: to its open
// subscription for m's name and correlation key, as if m had been
// published and the instance's subscription chosen for it. It bypasses
// the message buffer, the message id and message start events: the
// message was published on another partition (the one of its correlation
// key), which chose this instance. It reports false, with nothing done,
// when the instance holds no such subscription (it ended, or the wait was
// correlated, interrupted or cancelled meanwhile).
//
// # Errors
//
// api.ErrInvalidArgument for an empty name or variables that are not JSON
// values, api.ErrClosed; with a store, an error wrapping
// api.ErrNotAcknowledged when the correlation took effect but its commit
// failed.
func CorrelateMessageTo(ctx context.Context, e *engine.Engine, instanceKey int64, m api.Message) (bool, error) {
	return impl().CorrelateMessageTo(ctx, e, instanceKey, m)
}

// PublishMessageServed is e.PublishMessage that also returns what the
// message reached on e: the instances, and their process ids. A cluster
// partition correlates it to the waits other partitions hold only for the
// other processes, since a message reaches at most one instance per
// process, and answers the instances of both, correlated before started,
// as PublishMessageReached does on one engine.
//
// # Errors
//
// As engine.Engine.PublishMessageReached; with an error wrapping
// api.ErrNotAcknowledged the publication comes with it, since the message
// was published.
func PublishMessageServed(ctx context.Context, e *engine.Engine, m api.Message) (engine.Publication, error) {
	return impl().PublishMessageServed(ctx, e, m)
}

// ClaimBufferedMessage takes the oldest message buffered in e
// (PublishMessage with a TTL) for name and key that has not been
// correlated to process processID, and marks it as correlated to it: a
// cluster partition holds the message while a wait of that process is
// open on another partition. It reports false when no such message is
// buffered. The claim is committed with the engine's next commit; the
// caller records what it does with the message first, then waits for it
// (engine.BufferedMessage.Commit).
func ClaimBufferedMessage(e *engine.Engine, name, key, processID string) (*engine.BufferedMessage, bool) {
	return impl().ClaimBufferedMessage(e, name, key, processID)
}
