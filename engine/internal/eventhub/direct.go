// Direct correlation: what a cluster needs to correlate a message held on
// one engine (the partition of its correlation key) to a subscription
// held on another (the partition of the waiting instance).

package eventhub

import (
	"cmp"
	"slices"
)

// MessageSub is an open message subscription, as MessageSubs reports it.
type MessageSub struct {
	// Def is the process definition the subscription belongs to.
	Def            string
	Name           string
	CorrelationKey string
	// Receiver holds the subscription (the runtime's instance).
	Receiver Receiver
}

// MessageSubs returns the open message subscriptions, oldest first.
func (h *Hub) MessageSubs() []MessageSub {
	h.mu.Lock()
	defer h.mu.Unlock()
	var subs []*sub
	for _, list := range h.byMessage {
		subs = append(subs, list...)
	}
	slices.SortFunc(subs, func(a, b *sub) int { return cmp.Compare(a.id, b.id) })
	out := make([]MessageSub, len(subs))
	for i, s := range subs {
		out[i] = MessageSub{Def: s.def, Name: s.mkey.name, CorrelationKey: s.mkey.key, Receiver: s.r}
	}
	return out
}

// DeliverTo correlates a message to r's oldest open subscription for name
// and key, bypassing the buffer: the message was published on another
// hub, which chose r. It reports false when r holds no such subscription
// (it was correlated, interrupted or cancelled meanwhile) or r is gone.
func (h *Hub) DeliverTo(name, key string, r Receiver, vars map[string]any) bool {
	h.mu.Lock()
	var found *sub
	for _, s := range h.byMessage[msgKey{name, key}] {
		if s.r == r {
			found = s
			break
		}
	}
	if found == nil {
		h.mu.Unlock()
		return false
	}
	h.remove(found.id)
	h.mu.Unlock()
	return r.Deliver(Delivery{Sub: found.id, Kind: Message, Name: name, CorrelationKey: key, Variables: vars, def: found.def})
}

// Claim is a buffered message taken for one definition by ClaimBuffered.
type Claim struct {
	h *Hub
	m *message
	// def is the definition the message is taken for.
	def string
}

// Variables returns the claimed message's variables.
func (c *Claim) Variables() map[string]any { return c.m.vars }

// ID returns the claimed message's id, "" for none.
func (c *Claim) ID() string { return c.m.id }

// Release hands the message back: it was not correlated to def after all
// (the subscription it was taken for had closed), so it may serve def
// again for the rest of its TTL.
func (c *Claim) Release() {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if c.m.served(c.def) {
		c.m.correlated = slices.DeleteFunc(c.m.correlated, func(def string) bool { return def == c.def })
		c.h.bufGen++
	}
}

// ClaimBuffered takes the oldest buffered message for name and key that
// has not served definition def, and marks it as served by def, as
// SubscribeMessage does for a subscription of def opened here. It
// reports false when no such message is buffered (or its TTL ran out).
func (h *Hub) ClaimBuffered(name, key, def string) (*Claim, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := msgKey{name, key}
	h.expire(k, h.clock.Now())
	for _, m := range h.buffer[k] {
		if !m.served(def) {
			m.correlated = append(m.correlated, def)
			h.bufGen++
			return &Claim{h: h, m: m, def: def}, true
		}
	}
	return nil, false
}
