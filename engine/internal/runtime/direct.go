// Direct correlation between engines: a cluster partition holding a
// message correlates it to a subscription another partition's instance
// holds (package cluster).

package runtime

import (
	"time"

	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
)

// MessageSubscriptions returns the open message subscriptions, oldest
// first.
func (e *Engine) MessageSubscriptions() []MessageSubscription {
	subs := e.hub.MessageSubs()
	out := make([]MessageSubscription, 0, len(subs))
	for _, s := range subs {
		inst, ok := s.Receiver.(*Instance)
		if !ok {
			continue
		}
		out = append(out, MessageSubscription{InstanceKey: inst.key, ProcessID: s.Def, Name: s.Name, CorrelationKey: s.CorrelationKey})
	}
	return out
}

// CorrelateMessageTo correlates a message published elsewhere to the
// instance's open subscription for name and key. It reports false when
// the instance holds none (it is gone, or the wait was correlated,
// interrupted or cancelled). vars are normalized.
func (e *Engine) CorrelateMessageTo(instanceKey int64, name, key string, vars map[string]any) (bool, error) {
	if err := e.checkOpen(); err != nil {
		return false, err
	}
	e.mu.Lock()
	inst := e.live[instanceKey]
	e.mu.Unlock()
	if inst == nil {
		return false, nil
	}
	return e.hub.DeliverTo(name, key, inst, vars), nil
}

// PublishMessageServed is PublishMessage that also returns the process
// definitions the message reached (correlated to, or started), with the
// instances, correlated and started apart.
func (e *Engine) PublishMessageServed(name, key string, vars map[string]any, ttl time.Duration, id string) (Publication, error) {
	if err := e.checkOpen(); err != nil {
		return Publication{}, err
	}
	return e.publishMessage(name, key, vars, ttl, id, new(cause))
}

// ClaimBufferedMessage takes the oldest buffered message for name and key
// that has not served process processID yet, for a subscription of that
// process held elsewhere (eventhub.Hub.ClaimBuffered).
func (e *Engine) ClaimBufferedMessage(name, key, processID string) (*eventhub.Claim, bool) {
	return e.hub.ClaimBuffered(name, key, processID)
}
