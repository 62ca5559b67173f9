package runtime

import "sync"

// subscriber delivers records to one observer on its own goroutine, in
// order and without loss, so a slow observer never blocks an instance loop.
// Its queue is unbounded; each queued record counts as pending work for
// Settle until the observer has returned from it.
type subscriber struct {
	fn   func(Event)
	busy *quiescence

	mu      sync.Mutex
	queue   []Event
	wake    chan struct{}
	stopped bool
	done    chan struct{}
}

// Subscribe registers fn to receive every record of every instance, in each
// instance's order, on a goroutine of its own. fn must not block forever;
// it may call back into the engine. If fn panics the panic is recovered and
// the record is dropped for that observer only. The returned function
// unsubscribes and waits until fn has returned for the last time.
func (e *Engine) Subscribe(fn func(Event)) (unsubscribe func()) {
	s := &subscriber{fn: fn, busy: e.busy, wake: make(chan struct{}, 1), done: make(chan struct{})}
	for {
		old := e.subs.Load()
		next := append(append([]*subscriber(nil), *old...), s)
		if e.subs.CompareAndSwap(old, &next) {
			break
		}
	}
	go s.run()
	var once sync.Once
	return func() {
		once.Do(func() {
			for {
				old := e.subs.Load()
				next := make([]*subscriber, 0, len(*old))
				for _, o := range *old {
					if o != s {
						next = append(next, o)
					}
				}
				if e.subs.CompareAndSwap(old, &next) {
					break
				}
			}
			s.stop()
		})
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
	s.busy.add(1)
	c := *ev
	c.Variables = cloneVars(ev.Variables)
	s.queue = append(s.queue, c)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		batch := s.queue
		s.queue = nil
		stopped := s.stopped
		s.mu.Unlock()
		for i := range batch {
			s.deliver(&batch[i])
			s.busy.add(-1)
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

func (s *subscriber) deliver(ev *Event) {
	defer func() { _ = recover() }()
	s.fn(*ev)
}

// stop lets the observer drain what is queued, then ends its goroutine.
func (s *subscriber) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
}
