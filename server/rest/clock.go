package rest

import (
	"sort"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// Clock is the engine clock behind Camunda's clock endpoints (PUT
// /v2/clock, POST /v2/clock/reset): the real clock until pinned, then
// frozen at the pinned instant, which each pin moves (forward or back),
// until reset returns it to real time. Timers due at or before a pinned
// instant fire when it is pinned, in due order; while pinned, real time
// fires none.
//
// It is safe for concurrent use. Timer callbacks run on goroutines of
// their own (real time) or on the goroutine that pins, after the clock's
// lock is released, so a callback may read Now or schedule.
//
// # Why not clock.Virtual?
//
// A served engine runs on real time: job deadlines, back-offs and timers
// must move without anybody advancing them. Camunda's clock control is a
// test aid layered on top, so the clock is real by default and frozen
// only when asked.
type Clock struct {
	mu     sync.Mutex
	pinned bool
	at     time.Time
	timers map[*pinTimer]struct{}
}

var _ clock.Clock = (*Clock)(nil)

// NewClock returns a Clock on real time.
func NewClock() *Clock { return &Clock{timers: make(map[*pinTimer]struct{})} }

// Now is the pinned instant, or the real time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	if c.pinned {
		return c.at
	}
	return time.Now()
}

// Pinned reports whether the clock is pinned, and at which instant.
func (c *Clock) Pinned() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at, c.pinned
}

// AfterFunc runs f once the clock reads d from now.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	t := &pinTimer{c: c, due: c.nowLocked().Add(d), f: f}
	c.timers[t] = struct{}{}
	pinned := c.pinned
	if !pinned {
		c.armLocked(t)
	}
	c.mu.Unlock()
	if pinned && d <= 0 {
		go c.fire(t)
	}
	return t
}

// armLocked starts t's real timer.
func (c *Clock) armLocked(t *pinTimer) {
	t.real = time.AfterFunc(time.Until(t.due), func() { c.fire(t) })
}

// fire runs t unless it was stopped or fired, or the clock was pinned
// before the instant it is due.
func (c *Clock) fire(t *pinTimer) {
	c.mu.Lock()
	if _, ok := c.timers[t]; !ok || (c.pinned && c.at.Before(t.due)) {
		c.mu.Unlock()
		return
	}
	delete(c.timers, t)
	c.mu.Unlock()
	t.f()
}

// Pin freezes the clock at at and fires, in due order, the timers due by
// then.
func (c *Clock) Pin(at time.Time) {
	c.mu.Lock()
	c.pinned, c.at = true, at
	var due []*pinTimer
	for t := range c.timers {
		if t.real != nil {
			t.real.Stop()
			t.real = nil
		}
		if !t.due.After(at) {
			due = append(due, t)
			delete(c.timers, t)
		}
	}
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].due.Before(due[j].due) })
	for _, t := range due {
		t.f()
	}
}

// Reset returns the clock to real time; timers already due fire at once.
func (c *Clock) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.pinned {
		return
	}
	c.pinned = false
	for t := range c.timers {
		c.armLocked(t)
	}
}

// pinTimer is one AfterFunc of a Clock.
type pinTimer struct {
	c    *Clock
	due  time.Time
	f    func()
	real *time.Timer // nil while pinned
}

// Stop cancels the timer; false when it already fired or was stopped.
func (t *pinTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if _, ok := t.c.timers[t]; !ok {
		return false
	}
	delete(t.c.timers, t)
	if t.real != nil {
		t.real.Stop()
	}
	return true
}
