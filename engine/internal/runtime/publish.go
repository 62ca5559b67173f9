// Messages and signals from outside: publication and broadcast.

package runtime

import (
	"fmt"
	"slices"
	"time"
)

// PublishMessage publishes a message: it correlates to the waiting
// subscriptions by name and key (at most once per process definition),
// starts instances of processes with a matching message start event, and
// with ttl > 0 is buffered for subscriptions opened later. vars are
// normalized. It returns the instances the message reached: those it was
// handed to, then those it started.
func (e *Engine) PublishMessage(name, key string, vars map[string]any, ttl time.Duration, id string) ([]*Instance, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	pub, err := e.publishMessage(name, key, vars, ttl, id, new(cause))
	return slices.Concat(pub.Correlated, pub.Started), err
}

// Publication is what a published message reached.
type Publication struct {
	// Correlated are the instances it was handed to, at most one per
	// process definition, in the order they took it.
	Correlated []*Instance
	// Started are the instances its message start events started.
	Started []*Instance
	// Served are the process definitions it reached: correlated to, or
	// started an instance of.
	Served []string
}

// publishMessage is PublishMessage for an input c. When the instances the
// message could start would exceed c's budget, nothing is published.
func (e *Engine) publishMessage(name, key string, vars map[string]any, ttl time.Duration, id string, c *cause) (Publication, error) {
	e.mu.Lock()
	could := len(e.messageStarts[name])
	e.mu.Unlock()
	if could > 0 { // the budget's text is not built for every publication
		if err := c.reserve(could, e.opts.MaxStartsPerInput, fmt.Sprintf("message %q", name)); err != nil {
			return Publication{}, err
		}
	}
	hubPub, err := e.hub.PublishMessage(name, key, vars, ttl, id)
	if err != nil {
		return Publication{}, err
	}
	var pub Publication
	for _, r := range hubPub.Reached {
		if inst, ok := r.(*Instance); ok { // message subscriptions are held by instances
			pub.Correlated = append(pub.Correlated, inst)
		}
	}
	pub.Served = hubPub.Served
	e.mu.Lock()
	var starts []startTarget
	for _, t := range e.messageStarts[name] {
		pid := t.plan.Process.ID
		if slices.Contains(pub.Served, pid) || (key != "" && e.keyedStarts[[2]string{pid, key}] > 0) {
			continue
		}
		if key != "" {
			e.keyedStarts[[2]string{pid, key}]++
		}
		pub.Served = append(pub.Served, pid)
		starts = append(starts, t)
	}
	e.mu.Unlock()
	for _, t := range starts {
		trigger := &Event{Type: MessageCorrelated, Name: name, CorrelationKey: key, Variables: cloneVars(vars)}
		inst, err := e.startAt(t, vars, trigger, key, c)
		if err != nil {
			if key != "" {
				e.mu.Lock()
				e.keyedStarts[[2]string{t.plan.Process.ID, key}]--
				e.mu.Unlock()
			}
			return pub, err
		}
		pub.Started = append(pub.Started, inst)
	}
	return pub, nil
}

// BroadcastSignal delivers a signal to every subscription of its name and
// starts instances of processes with a matching signal start event. A
// signal nobody catches is a no-op. It fails, doing nothing, when it would
// start more instances than MaxStartsPerInput. After Close it returns
// ErrClosed.
func (e *Engine) BroadcastSignal(name string, vars map[string]any) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	return e.broadcastSignal(name, vars, new(cause))
}

// broadcastSignal is BroadcastSignal for an input c. When the instances
// the signal starts would exceed c's budget, nothing is broadcast.
func (e *Engine) broadcastSignal(name string, vars map[string]any, c *cause) error {
	e.mu.Lock()
	starts := append([]startTarget(nil), e.signalStarts[name]...)
	e.mu.Unlock()
	if err := c.reserve(len(starts), e.opts.MaxStartsPerInput, fmt.Sprintf("signal %q", name)); err != nil {
		return err
	}
	e.hub.BroadcastSignal(name, vars)
	for _, t := range starts {
		_, _ = e.startAt(t, vars, &Event{Type: SignalReceived, Name: name, Variables: cloneVars(vars)}, "", c)
	}
	return nil
}
