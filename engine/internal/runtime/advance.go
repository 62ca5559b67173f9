// The engine clock: deadlines and advancing virtual time.

package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// NextDeadline returns the earliest instant at which the engine's state
// changes with time alone: a timer falls due, a job's activation times out
// or its retry back-off ends. The job times are read when ActivateJobs
// runs, not fired (activation.go), but a host in real time must still wake
// at them, or a worker never sees the job activatable again. Only job
// times after the clock's now count: a passed one is already activatable.
func (e *Engine) NextDeadline() (time.Time, bool) {
	due, ok := e.hub.NextDeadline()
	if at, found := e.nextJobTime(e.clock.Now()); found && (!ok || at.Before(due)) {
		due, ok = at, true
	}
	return due, ok
}

// MaxFiringsPerAdvance bounds how many timer firings one Advance call
// processes, so that no call loops without end.
const MaxFiringsPerAdvance = 100_000

// AdvanceTo moves a virtual clock to t, firing due timers one due time at a
// time, in order, and settling after each, so that a timer started by an
// earlier firing inside the span fires too. Called by an observer from its
// callback it returns ErrCalledFromObserver: it settles, which waits for
// every observer to return, the caller included.
func (e *Engine) AdvanceTo(ctx context.Context, t time.Time) error {
	return e.AdvanceToHeld(ctx, t, nil)
}

// AdvanceToHeld is AdvanceTo for a caller that must hold something while
// the engine is given input (a store's commit gate): hold is called before
// each step that fires timers or moves the clock, and the function it
// returns after the step. Settling, between the steps, runs without it:
// it waits for observers, which may give commands that need it (their
// commits). An error from hold ends the advance with it. A nil hold holds
// nothing.
func (e *Engine) AdvanceToHeld(ctx context.Context, t time.Time, hold func() (release func(), err error)) error {
	v, ok := e.clock.(*clock.Virtual)
	if !ok {
		return ErrNotVirtual
	}
	if err := e.refuseObserver("advance"); err != nil {
		return err
	}
	if hold == nil {
		hold = func() (func(), error) { return func() {}, nil }
	}
	e.advanceMu.Lock()
	defer e.advanceMu.Unlock()
	if err := e.checkOpen(); err != nil {
		return err
	}
	if err := clock.CheckRange(t); err != nil {
		return fmt.Errorf("advance: %w", err)
	}
	// step moves the clock to at while hold is held.
	step := func(at time.Time) error {
		release, err := hold()
		if err != nil {
			return fmt.Errorf("advance: stopped at %s: %w", v.Now().Format(time.RFC3339), err)
		}
		defer release()
		if err := v.AdvanceTo(at); err != nil {
			return fmt.Errorf("advance: %w", err)
		}
		return nil
	}
	for fired := 0; ; fired++ {
		if err := e.Settle(ctx); err != nil {
			return err
		}
		due, ok := v.NextDue()
		if !ok || due.After(t) {
			break
		}
		if fired >= MaxFiringsPerAdvance {
			return fmt.Errorf("advance to %s: %w (stopped at %s)", t.Format(time.RFC3339), ErrTooManyFirings, v.Now().Format(time.RFC3339))
		}
		if err := step(due); err != nil {
			return err
		}
	}
	if err := step(t); err != nil {
		return err
	}
	return e.Settle(ctx)
}
