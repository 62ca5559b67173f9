// Package eventhub matches inbound events to the subscriptions waiting for
// them: messages by name and correlation key (with a TTL buffer for early
// messages), signals by name, and timers by due time.
//
// The hub never touches an instance or a token. It holds Receivers and
// calls Deliver on them; the runtime's receivers only enqueue to their
// instance's loop, which decides whether the delivery still applies
// (SRD-027: producers emit, the loop is the only one to act). Message
// subscriptions are held by instances (correlation is instance state);
// signal and timer subscriptions by tokens.
package eventhub

import (
	"cmp"
	"container/heap"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// ErrDuplicateMessage is returned by Publish for a message whose ID matches
// a message still buffered.
var ErrDuplicateMessage = api.ErrDuplicateMessage

// Kind is the trigger of a subscription.
type Kind uint8

// Subscription kinds.
const (
	Message Kind = iota + 1
	Signal
	Timer
	// Conditional marks a conditional event's delivery. The hub never holds
	// such subscriptions (conditions are instance state); the kind lets the
	// runtime hand them through the same delivery path as the others.
	Conditional
)

// Receiver is told about fired subscriptions. Deliver must not block and
// must not call back into the hub: it enqueues. It reports false when the
// receiver is gone (its instance ended), so the hub can treat a message as
// not consumed.
type Receiver interface {
	Deliver(d Delivery) bool
}

// Delivery is one fired subscription.
type Delivery struct {
	// Sub is the subscription that fired.
	Sub  int64
	Kind Kind
	// Name is the message or signal name.
	Name           string
	CorrelationKey string
	Variables      map[string]any
	// Due is a timer's due time.
	Due time.Time

	msg *message
	def string
}

// Hub is the event hub of one engine. It is safe for concurrent use.
//
// Lock order: mu may be taken with the runtime's engine lock held, and
// under it the hub takes only its clock's (Now, AfterFunc, stopping a
// timer). It is never held while the hub calls a Receiver or the function
// SetOnFire set, which may therefore take any lock and call the hub. The
// whole order is in the package comment of engine/internal/runtime.
type Hub struct {
	clock clock.Clock

	mu        sync.Mutex
	nextID    int64
	subs      map[int64]*sub
	byMessage map[msgKey][]*sub // oldest first
	bySignal  map[string]map[int64]*sub
	buffer    map[msgKey][]*message
	bufferIDs map[string]*message
	// bufGen counts the changes to the buffer (State.MessageGen); it
	// starts at 1 so that no caller's zero reads as up to date.
	bufGen uint64
	timers timerQueue
	// unarmed are the timers Restore opened, until Arm starts them.
	unarmed []timerEntry
	// fired, when set, is called after each timer the clock fired has
	// been delivered (SetOnFire).
	fired atomic.Pointer[func()]
}

type msgKey struct{ name, key string }

type sub struct {
	id   int64
	kind Kind
	// def is the process definition a message subscription belongs to: a
	// message correlates at most once per definition.
	def   string
	mkey  msgKey
	r     Receiver
	timer clock.Timer
	due   time.Time
}

type message struct {
	key     msgKey
	id      string
	vars    map[string]any
	expires time.Time // zero: not buffered
	// correlated are the definitions it was correlated to, each once:
	// one or two, so a list costs less than a map.
	correlated []string
}

// served reports whether m was correlated to definition def.
func (m *message) served(def string) bool { return slices.Contains(m.correlated, def) }

// New returns a hub on clk.
func New(clk clock.Clock) *Hub {
	return &Hub{
		clock:     clk,
		subs:      make(map[int64]*sub),
		byMessage: make(map[msgKey][]*sub),
		bySignal:  make(map[string]map[int64]*sub),
		buffer:    make(map[msgKey][]*message),
		bufferIDs: make(map[string]*message),
		bufGen:    1,
	}
}

func (h *Hub) add(s *sub) int64 {
	h.nextID++
	s.id = h.nextID
	h.subs[s.id] = s
	return s.id
}

// Unsubscribe removes a subscription of any kind. Removing one that has
// fired or was removed already is a no-op.
func (h *Hub) Unsubscribe(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.remove(id)
}

func (h *Hub) remove(id int64) {
	s := h.subs[id]
	if s == nil {
		return
	}
	delete(h.subs, id)
	switch s.kind {
	case Message:
		list := h.byMessage[s.mkey]
		for i, o := range list {
			if o == s {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(h.byMessage, s.mkey)
		} else {
			h.byMessage[s.mkey] = list
		}
	case Signal:
		set := h.bySignal[s.mkey.name]
		delete(set, id)
		if len(set) == 0 {
			delete(h.bySignal, s.mkey.name)
		}
	case Timer:
		if s.timer != nil { // nil for a restored timer before Arm, or an overdue one (state.go)
			s.timer.Stop()
		}
	}
}

// Published is what PublishMessage did with a message.
type Published struct {
	// Served are the definitions the message was correlated to, each
	// once; the caller uses them to skip message start events of
	// definitions already served.
	Served []string
	// Reached are the receivers that took the message, in the order they
	// took it (at most one per definition).
	Reached []Receiver
}

// PublishMessage correlates a message to the oldest waiting subscription
// of every definition, by name and correlation key. With a TTL > 0 it is
// also buffered until the TTL runs out on the hub's clock, and correlates
// to matching subscriptions opened meanwhile (still at most once per
// definition). id, if not empty, deduplicates while buffered. It returns
// the definitions it was correlated to and the receivers that took it.
func (h *Hub) PublishMessage(name, key string, vars map[string]any, ttl time.Duration, id string) (Published, error) {
	h.mu.Lock()
	now := h.clock.Now()
	h.expire(msgKey{name, key}, now)
	if id != "" {
		if old := h.bufferIDs[id]; old != nil && old.expires.After(now) {
			h.mu.Unlock()
			return Published{}, ErrDuplicateMessage
		}
	}
	m := &message{key: msgKey{name, key}, id: id, vars: vars}
	deliveries := h.correlate(m)
	if ttl > 0 {
		m.expires = now.Add(ttl)
		h.buffer[m.key] = append(h.buffer[m.key], m)
		if id != "" {
			h.bufferIDs[id] = m
		}
		h.bufGen++
	}
	h.mu.Unlock()
	reached := h.send(deliveries, nil)
	// What it served once delivered (a rejected delivery may have handed
	// it on), read under the lock: loops reject concurrently.
	h.mu.Lock()
	served := slices.Clone(m.correlated)
	h.mu.Unlock()
	return Published{Served: served, Reached: reached}, nil
}

// correlate takes, for every definition not yet served by m, the oldest
// subscription waiting for m. Called with h.mu held.
func (h *Hub) correlate(m *message) []target {
	var out []target
	waiting := h.byMessage[m.key]
	if len(waiting) > 1 {
		waiting = slices.Clone(waiting) // h.remove changes the list
	}
	for _, s := range waiting {
		if m.served(s.def) {
			continue
		}
		m.correlated = append(m.correlated, s.def)
		h.remove(s.id)
		out = append(out, target{s, Delivery{Sub: s.id, Kind: Message, Name: m.key.name, CorrelationKey: m.key.key, Variables: m.vars, msg: m, def: s.def}})
	}
	return out
}

type target struct {
	s *sub
	d Delivery
}

// send delivers outside the lock and appends the receivers that took
// their delivery to reached. A message whose receiver is gone is handed
// back so that it may serve another subscription.
func (h *Hub) send(ts []target, reached []Receiver) []Receiver {
	for _, t := range ts {
		if t.s.r.Deliver(t.d) {
			reached = append(reached, t.s.r)
		} else if t.d.Kind == Message {
			reached = h.reject(t.d, reached)
		}
	}
	return reached
}

// Reject hands back a message delivery its receiver could not use (the
// token had moved on through another event). The message correlates
// again as if just published, for the rest of its TTL.
func (h *Hub) Reject(d Delivery) { h.reject(d, nil) }

// reject is Reject, appending the receivers that took the message then
// to reached.
func (h *Hub) reject(d Delivery, reached []Receiver) []Receiver {
	m := d.msg
	if m == nil {
		return reached
	}
	h.mu.Lock()
	m.correlated = slices.DeleteFunc(m.correlated, func(def string) bool { return def == d.def }) // not served after all
	deliveries := h.correlate(m)
	h.mu.Unlock()
	return h.send(deliveries, reached)
}

// expire drops buffered messages of key whose TTL has run out.
func (h *Hub) expire(key msgKey, now time.Time) {
	list := h.buffer[key]
	kept := list[:0]
	for _, m := range list {
		if m.expires.After(now) {
			kept = append(kept, m)
		} else if m.id != "" && h.bufferIDs[m.id] == m {
			delete(h.bufferIDs, m.id)
		}
	}
	if len(kept) < len(list) {
		h.bufGen++
	}
	if len(kept) == 0 {
		delete(h.buffer, key)
	} else {
		h.buffer[key] = kept
	}
}

// SubscribeMessage opens a message subscription for definition def. A
// buffered message that matches and has not served def yet is delivered
// at once (before SubscribeMessage returns) and the subscription is then
// already consumed.
func (h *Hub) SubscribeMessage(name, key, def string, r Receiver) int64 {
	h.mu.Lock()
	s := &sub{kind: Message, def: def, mkey: msgKey{name, key}, r: r}
	id := h.add(s)
	h.expire(s.mkey, h.clock.Now())
	for _, m := range h.buffer[s.mkey] {
		if !m.served(def) {
			m.correlated = append(m.correlated, def)
			h.bufGen++
			delete(h.subs, id)
			h.mu.Unlock()
			h.send([]target{{s, Delivery{Sub: id, Kind: Message, Name: name, CorrelationKey: key, Variables: m.vars, msg: m, def: def}}}, nil)
			return id
		}
	}
	h.byMessage[s.mkey] = append(h.byMessage[s.mkey], s)
	h.mu.Unlock()
	return id
}

// SubscribeSignal opens a signal subscription. It stays open, receiving
// every broadcast of name, until unsubscribed.
func (h *Hub) SubscribeSignal(name string, r Receiver) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &sub{kind: Signal, mkey: msgKey{name: name}, r: r}
	id := h.add(s)
	if h.bySignal[name] == nil {
		h.bySignal[name] = make(map[int64]*sub)
	}
	h.bySignal[name][id] = s
	return id
}

// BroadcastSignal delivers a signal to every subscription of its name,
// found through the name index. A signal nobody catches is a no-op. It
// returns how many subscriptions it reached.
func (h *Hub) BroadcastSignal(name string, vars map[string]any) int {
	h.mu.Lock()
	set := h.bySignal[name]
	ts := make([]target, 0, len(set))
	for id, s := range set {
		ts = append(ts, target{s, Delivery{Sub: id, Kind: Signal, Name: name, Variables: vars}})
	}
	h.mu.Unlock()
	// Deliver in subscription order so runs are reproducible (ids are
	// unique, so the order is total).
	slices.SortFunc(ts, func(a, b target) int { return cmp.Compare(a.d.Sub, b.d.Sub) })
	h.send(ts, nil)
	return len(ts)
}

// Schedule opens a timer subscription due at due on the hub's clock. A due
// time in the past fires at the next opportunity.
func (h *Hub) Schedule(due time.Time, r Receiver) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &sub{kind: Timer, r: r, due: due}
	id := h.add(s)
	s.timer = h.clock.AfterFunc(due.Sub(h.clock.Now()), func() { h.fire(id) })
	heap.Push(&h.timers, timerEntry{due: due, id: id})
	return id
}

func (h *Hub) fire(id int64) {
	h.mu.Lock()
	s := h.subs[id]
	if s == nil {
		h.mu.Unlock()
		return
	}
	delete(h.subs, id)
	h.mu.Unlock()
	s.r.Deliver(Delivery{Sub: id, Kind: Timer, Due: s.due})
	if f := h.fired.Load(); f != nil {
		(*f)()
	}
}

// SetOnFire makes the hub call f after it has delivered a timer the clock
// fired, which is input that comes through no command: a store commits
// on it. f runs on the clock's goroutine and must not block.
func (h *Hub) SetOnFire(f func()) { h.fired.Store(&f) }

// NextDeadline returns when the earliest open timer is due.
func (h *Hub) NextDeadline() (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(h.timers) > 0 {
		if _, open := h.subs[h.timers[0].id]; open {
			return h.timers[0].due, true
		}
		heap.Pop(&h.timers) // fired or cancelled: drop lazily
	}
	return time.Time{}, false
}

// Open returns how many subscriptions of each kind are open, for leak
// checks in tests and for metrics.
func (h *Hub) Open() map[Kind]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[Kind]int{}
	for _, s := range h.subs {
		out[s.kind]++
	}
	return out
}

type timerEntry struct {
	due time.Time
	id  int64
}

type timerQueue []timerEntry

func (q timerQueue) Len() int { return len(q) }
func (q timerQueue) Less(i, j int) bool {
	if q[i].due.Equal(q[j].due) {
		return q[i].id < q[j].id
	}
	return q[i].due.Before(q[j].due)
}
func (q timerQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *timerQueue) Push(x any)   { *q = append(*q, x.(timerEntry)) }
func (q *timerQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
