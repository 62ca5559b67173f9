// Package clock is the engine's only source of time.
//
// Nothing in flowtrack calls time.Now or time.Sleep directly: timers, FEEL's
// now() and every timestamp in the event stream come from a Clock. The Real
// clock follows the wall clock; a Virtual clock moves only when told to,
// which makes timer behaviour deterministic in tests, in simulators and
// inside the WebAssembly module, where the host owns time.
package clock

import (
	"container/heap"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/api"
)

// Min and Max are the earliest and latest instants the engine represents
// (api.MinTime and api.MaxTime, which say why).
var (
	Min = api.MinTime
	Max = api.MaxTime
)

// ErrOutOfRange is returned for an instant outside [Min, Max] by the
// Virtual clock's moves and CheckRange, and wrapped by every engine call
// that rejects such an instant. It is api.ErrTimeOutOfRange.
var ErrOutOfRange = api.ErrTimeOutOfRange

// CheckRange returns nil when t lies in [Min, Max], and otherwise an error
// wrapping ErrOutOfRange that names t and the limit it passes
// (api.CheckTimeRange).
func CheckRange(t time.Time) error { return api.CheckTimeRange(t) }

// Clock tells the time and runs a function once a duration has passed.
//
// Implementations must be safe for concurrent use. A function passed to
// AfterFunc runs on a goroutine chosen by the clock and must not block.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once d has passed on this clock, unless the
	// returned Timer is stopped first. A d <= 0 fires at the next
	// opportunity (immediately for Real, at the next advance for Virtual).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not run yet and reports whether it
	// did so.
	Stop() bool
}

// Real is the wall clock. Its zero value is ready to use.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Virtual is a clock that moves only through Advance, AdvanceTo or Set.
// Pending AfterFunc calls run synchronously inside those calls, in due order
// (ties in registration order), each while Now reports its due time.
//
// A Virtual clock is safe for concurrent use; functions it fires run on the
// goroutine that moves the clock, without the clock's lock held, so they
// may call back into the clock.
type Virtual struct {
	mu      sync.Mutex
	now     time.Time
	seq     uint64
	pending timerHeap
}

// NewVirtual returns a Virtual clock that reads start.
func NewVirtual(start time.Time) *Virtual { return &Virtual{now: start} }

// Epoch is the default start of a virtual clock: a fixed instant, so that
// traces recorded on virtual time are reproducible.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Now returns the clock's current reading.
func (v *Virtual) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

// AfterFunc schedules f for Now()+d.
func (v *Virtual) AfterFunc(d time.Duration, f func()) Timer {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	t := &virtualTimer{clock: v, due: v.now.Add(d), seq: v.seq, f: f, index: -1}
	heap.Push(&v.pending, t)
	return t
}

// NextDue returns when the earliest pending call is due, and false when
// nothing is pending.
func (v *Virtual) NextDue() (time.Time, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.pending) == 0 {
		return time.Time{}, false
	}
	return v.pending[0].due, true
}

// Advance moves the clock forward by d; see AdvanceTo.
func (v *Virtual) Advance(d time.Duration) error { return v.AdvanceTo(v.Now().Add(d)) }

// AdvanceTo moves the clock to t, firing every call due at or before t in
// due order. A t before Now fires nothing and leaves the clock unchanged.
// A t outside [Min, Max] is refused with an error wrapping ErrOutOfRange,
// and nothing moves.
func (v *Virtual) AdvanceTo(t time.Time) error {
	if err := CheckRange(t); err != nil {
		return err
	}
	for {
		v.mu.Lock()
		if len(v.pending) == 0 || v.pending[0].due.After(t) {
			if t.After(v.now) {
				v.now = t
			}
			v.mu.Unlock()
			return nil
		}
		next := heap.Pop(&v.pending).(*virtualTimer)
		if next.due.After(v.now) {
			v.now = next.due
		}
		f := next.f
		v.mu.Unlock()
		f()
	}
}

// Set moves the clock to t, which may lie in the past (to replay from an
// earlier instant). Calls due at or before t fire as in AdvanceTo; a t
// outside [Min, Max] is refused in the same way.
func (v *Virtual) Set(t time.Time) error {
	if err := CheckRange(t); err != nil {
		return err
	}
	v.mu.Lock()
	v.now = t
	v.mu.Unlock()
	return v.AdvanceTo(t)
}

type virtualTimer struct {
	clock *Virtual
	due   time.Time
	seq   uint64
	f     func()
	index int
}

func (t *virtualTimer) Stop() bool {
	v := t.clock
	v.mu.Lock()
	defer v.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&v.pending, t.index)
	return true
}

type timerHeap []*virtualTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].due.Equal(h[j].due) {
		return h[i].seq < h[j].seq
	}
	return h[i].due.Before(h[j].due)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*virtualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
