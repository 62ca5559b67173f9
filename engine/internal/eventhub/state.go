package eventhub

import (
	"container/heap"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// Subscription is an open subscription as a checkpoint writes it and a
// restore opens it again: the receiver is the runtime's to name.
type Subscription struct {
	ID   int64
	Kind Kind
	// Name and Key are a message's name and correlation key, or a
	// signal's name; Def is a message subscription's process definition.
	Name, Key, Def string
	// Due is a timer's due time.
	Due time.Time
	R   Receiver
}

// Buffered is a published message waiting in the TTL buffer.
type Buffered struct {
	Name, Key string
	// ID is the message id that deduplicates publications while the
	// message is buffered; empty for none.
	ID        string
	Variables map[string]any
	Expires   time.Time
	// Correlated lists the process definitions the message has served.
	Correlated []string
}

// State is what a hub holds, for a checkpoint: its open subscriptions by
// id, the buffered messages still alive at the hub clock's reading, in
// publication order per name and key, and the last subscription id given.
type State struct {
	LastID   int64
	Subs     []Subscription
	Messages []Buffered
	// MessageGen counts the changes to the buffer; StateOf leaves
	// Messages out, and sets MessagesSame, when it has not moved since
	// the count the caller gave.
	MessageGen   uint64
	MessagesSame bool
}

// State returns what the hub holds. Subscriptions come ordered by id, the
// order in which signals reach them, messages correlate to them and equal
// timers fire; messages ordered by name and key, and by publication
// within one name and key.
func (h *Hub) State() State {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := State{LastID: h.nextID}
	for _, s := range h.subs {
		st.Subs = append(st.Subs, s.state())
	}
	sort.Slice(st.Subs, func(i, j int) bool { return st.Subs[i].ID < st.Subs[j].ID })
	st.Messages = h.buffered()
	return st
}

// StateOf is State with only the open subscriptions among ids: what a
// store that writes the instances a command changed needs, at the cost of
// those, not of every subscription. The buffered messages are left out
// when the buffer has not changed since messagesSince (State.MessageGen of
// an earlier call), so that a large buffer costs only the commits that
// change it.
func (h *Hub) StateOf(ids []int64, messagesSince uint64) State {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := State{LastID: h.nextID}
	for _, id := range ids {
		if s := h.subs[id]; s != nil {
			st.Subs = append(st.Subs, s.state())
		}
	}
	sort.Slice(st.Subs, func(i, j int) bool { return st.Subs[i].ID < st.Subs[j].ID })
	st.MessageGen = h.bufGen
	if st.MessagesSame = h.bufGen == messagesSince; !st.MessagesSame {
		st.Messages = h.buffered()
	}
	return st
}

func (s *sub) state() Subscription {
	return Subscription{ID: s.id, Kind: s.kind, Name: s.mkey.name, Key: s.mkey.key, Def: s.def, Due: s.due, R: s.r}
}

// buffered returns the messages alive in the buffer, ordered by name and
// key, and by publication within one name and key. The caller holds mu.
func (h *Hub) buffered() []Buffered {
	var out []Buffered
	keys := make([]msgKey, 0, len(h.buffer))
	for k := range h.buffer {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].name < keys[j].name || keys[i].name == keys[j].name && keys[i].key < keys[j].key
	})
	now := h.clock.Now()
	for _, k := range keys {
		for _, m := range h.buffer[k] {
			if !m.expires.After(now) {
				continue // expired: it correlates to nothing and deduplicates nothing any more
			}
			b := Buffered{Name: k.name, Key: k.key, ID: m.id, Variables: m.vars, Expires: m.expires}
			if len(m.correlated) > 0 {
				b.Correlated = slices.Clone(m.correlated)
				sort.Strings(b.Correlated)
			}
			out = append(out, b)
		}
	}
	return out
}

// Restore opens st's subscriptions under their own ids, in id order (so
// that signals, message correlation and equal timers keep their order),
// buffers its messages and goes on numbering after st.LastID. It is for a
// hub that holds no subscription, before anything else uses it. Its
// timers do not run until Arm: the receivers must be ready first.
func (h *Hub) Restore(st State) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) > 0 {
		return fmt.Errorf("eventhub: restore into a hub with %d open subscriptions", len(h.subs))
	}
	h.timers = nil
	h.unarmed = nil
	if err := h.insert(st.Subs, st.LastID); err != nil {
		return err
	}
	for _, b := range st.Messages {
		m := &message{key: msgKey{b.Name, b.Key}, id: b.ID, vars: b.Variables, expires: b.Expires}
		for _, def := range b.Correlated {
			if !m.served(def) {
				m.correlated = append(m.correlated, def)
			}
		}
		h.buffer[m.key] = append(h.buffer[m.key], m)
		if m.id != "" {
			h.bufferIDs[m.id] = m
		}
		h.bufGen++
	}
	h.nextID = st.LastID
	return nil
}

// insert opens subs, whose ids must be new and within 1..last, in id
// order; timers wait for Arm.
func (h *Hub) insert(subs []Subscription, last int64) error {
	subs = append([]Subscription(nil), subs...)
	sort.Slice(subs, func(i, j int) bool { return subs[i].ID < subs[j].ID })
	for i, s := range subs {
		switch {
		case s.ID <= 0 || s.ID > last:
			return fmt.Errorf("eventhub: subscription %d is outside 1..%d, the ids given so far", s.ID, last)
		case i > 0 && subs[i-1].ID == s.ID || h.subs[s.ID] != nil:
			return fmt.Errorf("eventhub: subscription %d appears twice", s.ID)
		case s.R == nil:
			return fmt.Errorf("eventhub: subscription %d has no receiver", s.ID)
		case s.Kind != Message && s.Kind != Signal && s.Kind != Timer:
			return fmt.Errorf("eventhub: subscription %d has kind %d, which the hub does not hold", s.ID, s.Kind)
		}
	}
	for _, s := range subs {
		ns := &sub{id: s.ID, kind: s.Kind, def: s.Def, mkey: msgKey{s.Name, s.Key}, r: s.R, due: s.Due}
		switch s.Kind {
		case Message:
			h.byMessage[ns.mkey] = append(h.byMessage[ns.mkey], ns)
		case Signal:
			if h.bySignal[s.Name] == nil {
				h.bySignal[s.Name] = make(map[int64]*sub)
			}
			h.bySignal[s.Name][s.ID] = ns
		case Timer:
			heap.Push(&h.timers, timerEntry{due: s.Due, id: s.ID})
			h.unarmed = append(h.unarmed, timerEntry{due: s.Due, id: s.ID})
		}
		h.subs[s.ID] = ns
	}
	return nil
}

// Reserve gives n fresh subscription ids, first to first+n-1, for Adopt.
func (h *Hub) Reserve(n int) (first int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	first = h.nextID + 1
	h.nextID += int64(n)
	return first
}

// Adopt opens, in a hub in use, subscriptions a restore of one instance
// brings (under ids from Reserve), as Restore opens them: a message
// subscription does not look at the buffer, and timers wait for Arm.
// Nothing is opened when it returns an error.
func (h *Hub) Adopt(subs []Subscription) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.insert(subs, h.nextID)
}

// Arm starts the timers of Restore still open, once their receivers can
// take deliveries. On a clock other than a virtual one, timers that fell
// due before the restore fire from one callback, in due order
// (subscription id among equals): separate callbacks would run in any
// order. A virtual clock fires them in due order at its next advance by
// itself.
func (h *Hub) Arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, virtual := h.clock.(*clock.Virtual)
	now := h.clock.Now()
	var overdue []timerEntry
	for _, t := range h.unarmed {
		s := h.subs[t.id]
		switch {
		case s == nil:
		case !virtual && !t.due.After(now):
			overdue = append(overdue, t) // no timer of its own: fire skips it once gone
		default:
			id := t.id
			s.timer = h.clock.AfterFunc(t.due.Sub(now), func() { h.fire(id) })
		}
	}
	h.unarmed = nil
	if len(overdue) == 0 {
		return
	}
	sort.Slice(overdue, func(i, j int) bool {
		a, b := overdue[i], overdue[j]
		return a.due.Before(b.due) || a.due.Equal(b.due) && a.id < b.id
	})
	h.clock.AfterFunc(0, func() {
		for _, t := range overdue {
			h.fire(t.id)
		}
	})
}
