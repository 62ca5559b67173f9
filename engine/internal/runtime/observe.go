package runtime

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
)

// DefaultObserverBacklog is how many records an observer may have waiting
// (delivered to it, not yet returned from) before the engine drops it.
const DefaultObserverBacklog = 1 << 16

// RecoverObserver calls fn with ev; if fn panics it recovers and hands an
// *ObserverPanicError to report. Every host delivers records through it,
// so that a panicking observer means the same thing everywhere.
func RecoverObserver(fn func(Event), ev Event, report func(error)) {
	defer func() {
		if r := recover(); r != nil {
			report(&ObserverPanicError{Event: ev, Value: r, Stack: debug.Stack()})
		}
	}()
	fn(ev)
}

// LogError is the default error handler: it writes err with the standard
// logger, as net/http does with a handler's panic.
func LogError(err error) { log.Printf("flowtrack: %v", err) }

// subscriber delivers records to one observer on its own goroutine, in
// order and without loss, so a slow observer never blocks an instance loop.
// Each record waiting for the observer counts as pending work for Settle
// until the observer has returned from it.
//
// The backlog is bounded: when a record would make it exceed max, the
// observer is dropped. It gets no further records, what it had waiting is
// discarded (and no longer holds Settle), and its unsubscribe function
// returns ErrObserverDropped. The engine never blocks on an observer and
// never buffers without bound for one.
type subscriber struct {
	fn     func(Event)
	report func(error) // receives the observer's panics
	busy   *quiescence
	max    int
	remove func(*subscriber) // takes it off the engine's list

	mu       sync.Mutex
	queue    []Event
	inflight int // records run took from queue and has not finished delivering
	wake     chan struct{}
	stopped  bool
	dropped  bool
	// parked is set while the observer waits in a Settle it called: its
	// records then count in the quiescence's parked, not in its n.
	parked bool
	done   chan struct{}
}

// Subscribe registers fn to receive every record of every instance, in each
// instance's order, on a goroutine of its own. fn must not block forever;
// it may call back into the engine: Settle from fn does not wait for fn's
// own records, AdvanceTo and Close from fn return ErrCalledFromObserver
// (see callingObserver). If fn panics the panic is recovered,
// reported to Options.OnError as an *ObserverPanicError, and fn gets the
// next record as usual. An observer more than the backlog limit behind is
// dropped (see subscriber). The returned function unsubscribes, waits
// until fn has returned for the last time, and returns ErrObserverDropped
// if the engine dropped the observer.
func (e *Engine) Subscribe(fn func(Event)) (unsubscribe func() error) {
	s := &subscriber{fn: fn, report: e.opts.OnError, busy: e.busy, max: e.opts.ObserverBacklog, remove: e.unsubscribe,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	for {
		old := e.subs.Load()
		next := append(append([]*subscriber(nil), *old...), s)
		if e.subs.CompareAndSwap(old, &next) {
			break
		}
	}
	go e.run(s)
	var once sync.Once
	return func() error {
		once.Do(func() {
			e.unsubscribe(s)
			s.stop()
			<-s.done
		})
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.dropped {
			return fmt.Errorf("%w (more than %d records waiting)", ErrObserverDropped, s.max)
		}
		return nil
	}
}

// unsubscribe takes s off the list of observers.
func (e *Engine) unsubscribe(s *subscriber) {
	for {
		old := e.subs.Load()
		next := make([]*subscriber, 0, len(*old))
		for _, o := range *old {
			if o != s {
				next = append(next, o)
			}
		}
		if e.subs.CompareAndSwap(old, &next) {
			return
		}
	}
}

// observed reports whether anyone subscribed, so that records are only
// expanded for observers that exist.
func (e *Engine) observed() bool { return len(*e.subs.Load()) > 0 }

// publish hands ev to every observer.
func (e *Engine) publish(ev *Event) {
	subs := *e.subs.Load()
	for _, s := range subs {
		s.push(ev)
	}
}

func (s *subscriber) push(ev *Event) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	if len(s.queue)+s.inflight >= s.max {
		s.drop()
		return
	}
	if s.parked {
		s.busy.addParked(1)
	} else {
		s.busy.addObserved(1)
	}
	c := *ev
	c.Variables = cloneVars(ev.Variables)
	s.queue = append(s.queue, c)
	s.mu.Unlock()
	s.signal()
}

// drop discards the observer's backlog and stops it. Called with s.mu
// held; releases it.
func (s *subscriber) drop() {
	pending, parked := len(s.queue)+s.inflight, s.parked
	s.dropped, s.stopped = true, true
	s.queue, s.inflight = nil, 0
	s.mu.Unlock()
	if parked {
		s.busy.addParked(-int64(pending))
	} else {
		s.busy.addObserved(-int64(pending))
	}
	s.remove(s)
	s.signal()
}

func (s *subscriber) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run delivers s's records on the goroutine it runs on, which it
// registers as s's (observerGoroutines) while it runs.
func (e *Engine) run(s *subscriber) {
	defer close(s.done)
	id := goroutineID()
	e.observerGoroutines.Store(id, s)
	e.observerCount.Add(1)
	defer func() {
		e.observerCount.Add(-1)
		e.observerGoroutines.Delete(id)
	}()
	s.run()
}

func (s *subscriber) run() {
	for {
		s.mu.Lock()
		batch := s.queue
		s.queue = nil
		s.inflight = len(batch)
		stopped := s.stopped
		s.mu.Unlock()
		for i := range batch {
			s.deliver(&batch[i])
			s.mu.Lock()
			if s.dropped {
				s.mu.Unlock()
				return // drop released what was in flight
			}
			s.inflight--
			s.mu.Unlock()
			s.busy.addObserved(-1)
		}
		if len(batch) > 0 {
			continue
		}
		if stopped {
			return
		}
		<-s.wake
	}
}

func (s *subscriber) deliver(ev *Event) { RecoverObserver(s.fn, *ev, s.report) }

// settle is Settle called from s's own callback: it parks s's records
// (the one it is handling, and those queued behind it, which wait for it
// to return) for as long as it waits, so it waits for everything else,
// the records of other parked observers excepted (two observers that
// settle at once do not wait for each other). An outside Settle still
// waits for s's records.
func (s *subscriber) settle(ctx context.Context) error {
	s.mu.Lock()
	s.parked = true
	s.busy.park(int64(len(s.queue) + s.inflight))
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.parked = false
		s.busy.unpark(int64(len(s.queue) + s.inflight)) // none if dropped meanwhile
		s.mu.Unlock()
	}()
	return s.busy.waitQuiet(ctx)
}

// callingObserver returns the observer whose callback is running on the
// calling goroutine, or nil. The engine starts every observer's goroutine
// itself (run), so the goroutine tells which observer calls. Go has no
// goroutine identity in its API; goroutineID reads it from the first line
// of the goroutine's trace, as golang.org/x/net/http2's debug checks do,
// and only when an observer's goroutine runs at all.
func (e *Engine) callingObserver() *subscriber {
	if e.observerCount.Load() == 0 {
		return nil
	}
	s, ok := e.observerGoroutines.Load(goroutineID())
	if !ok {
		return nil
	}
	return s.(*subscriber)
}

// refuseObserver returns ErrCalledFromObserver, with op, when an observer
// of e calls op from its callback: op waits for every observer.
func (e *Engine) refuseObserver(op string) error {
	if e.callingObserver() != nil {
		return fmt.Errorf("%s: %w", op, ErrCalledFromObserver)
	}
	return nil
}

// RefuseObserver returns an error wrapping ErrCalledFromObserver when the
// caller is an observer of e, in its callback: for calls (a store's Close)
// that would wait for every observer before they reach one that checks.
func (e *Engine) RefuseObserver(op string) error { return e.refuseObserver(op) }

var goroutinePrefix = []byte("goroutine ")

// goroutineID returns the calling goroutine's id, read from the header of
// its stack trace ("goroutine 18 [running]:"), or 0 (no goroutine's id)
// if the header cannot be read: then no caller is known as an observer,
// and TestGoroutineID fails.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, goroutinePrefix)
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// stop lets the observer drain what is queued, then ends its goroutine
// (done closes when it has).
func (s *subscriber) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.signal()
}

// stopObservers stops every observer and waits, until ctx ends, for each
// to deliver what it has queued and end.
func (e *Engine) stopObservers(ctx context.Context) error {
	subs := *e.subs.Swap(new([]*subscriber))
	for _, s := range subs {
		s.stop()
	}
	for _, s := range subs {
		select {
		case <-s.done:
		case <-ctx.Done():
			return fmt.Errorf("close: an observer has not returned: %w", ctx.Err())
		}
	}
	return nil
}
