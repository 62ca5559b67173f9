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
// earlier firing inside the span fires too.
func (e *Engine) AdvanceTo(ctx context.Context, t time.Time) error {
	v, ok := e.clock.(*clock.Virtual)
	if !ok {
		return ErrNotVirtual
	}
	e.advanceMu.Lock()
	defer e.advanceMu.Unlock()
	if err := e.checkOpen(); err != nil {
		return err
	}
	if err := clock.CheckRange(t); err != nil {
		return fmt.Errorf("advance: %w", err)
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
		if err := v.AdvanceTo(due); err != nil {
			return fmt.Errorf("advance: %w", err)
		}
	}
	if err := v.AdvanceTo(t); err != nil {
		return fmt.Errorf("advance: %w", err)
	}
	return e.Settle(ctx)
}
