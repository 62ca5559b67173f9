package runtime

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// MaxCycleFirings bounds an unbounded timer cycle ("R/PT1M") on a timer
// start event: after this many repetitions the cycle stops. Without a bound
// one Advance across a long span would start instances without end.
const MaxCycleFirings = 1000

// timerSpec is a compiled timer definition: exactly one of its programs is
// set.
type timerSpec struct {
	date, duration, cycle *expr.Program
}

// compileTimer compiles a timer definition that model validation accepted
// (EXT.131: exactly one of date, duration, cycle); for one it refused, it
// returns nil.
func compileTimer(t *model.Timer, opts expr.Options) (*timerSpec, error) {
	if t == nil {
		return nil, nil
	}
	ts := &timerSpec{}
	var err error
	var prog *expr.Program
	var rule, what string
	switch {
	case !t.Date.IsZero():
		ts.date, err = expr.Compile(t.Date, expr.Static, opts)
		prog, rule, what = ts.date, "EXT.132", "timeDate: write an ISO-8601 date-time such as 2030-01-31T09:00:00Z"
	case !t.Duration.IsZero():
		ts.duration, err = expr.Compile(t.Duration, expr.Static, opts)
		prog, rule, what = ts.duration, "FT.timer-duration", "timeDuration: write an ISO-8601 duration such as PT10M or P3D"
	case !t.Cycle.IsZero():
		ts.cycle, err = expr.Compile(t.Cycle, expr.Static, opts)
		prog, rule, what = ts.cycle, "EXT.133", "timeCycle: write an ISO-8601 repeating interval such as R3/PT10M"
	default:
		return nil, nil
	}
	if err != nil {
		return nil, broke("FT.expression", "%v", err)
	}
	// A literal value is checked now rather than when the timer starts,
	// where it could only open an incident.
	if prog.IsStatic() {
		if _, err := ts.evaluate(nil, time.Unix(0, 0).UTC()); err != nil {
			return nil, broke(rule, "%v (%s)", err, what)
		}
	}
	return ts, nil
}

// schedule is a timer's evaluated plan: when it first fires, and for a
// cycle how often it repeats and how many times in all (-1: unbounded).
type schedule struct {
	first  time.Time
	period time.Duration
	times  int
}

// evaluate computes the schedule of ts at now over vars. A schedule with
// a firing the engine cannot represent (after clock.Max) is an error that
// names the time and the limit: a bounded cycle must end in range, an
// unbounded one ends at the last repetition in range.
func (ts *timerSpec) evaluate(vars map[string]any, now time.Time) (schedule, error) {
	s, err := ts.plan(vars, now)
	if err != nil {
		return s, err
	}
	if err := clock.CheckRange(s.first); err != nil {
		return s, fmt.Errorf("timer: first firing: %w", err)
	}
	if s.times > 1 && s.period > 0 {
		// In range means: (times-1) periods fit before clock.Max. Divide
		// rather than multiply, which could overflow.
		if room := clock.Max.Sub(s.first); time.Duration(s.times-1) > room/s.period {
			return s, fmt.Errorf("timer: the last of %d repetitions, every %s from %s, falls after %s: %w",
				s.times, s.period, s.first.UTC().Format(time.RFC3339Nano), clock.Max.Format(time.RFC3339Nano), clock.ErrOutOfRange)
		}
	}
	return s, nil
}

// plan computes the schedule of ts at now over vars, unchecked.
func (ts *timerSpec) plan(vars map[string]any, now time.Time) (schedule, error) {
	switch {
	case ts.date != nil:
		t, err := ts.date.EvalTime(vars)
		return schedule{first: t, times: 1}, err
	case ts.duration != nil:
		d, err := ts.duration.EvalDuration(vars)
		if err == nil && d < 0 {
			err = fmt.Errorf("timer duration %s is negative", d)
		}
		return schedule{first: now.Add(d), times: 1}, err
	}
	text, err := ts.cycle.EvalString(vars)
	if err != nil {
		return schedule{}, err
	}
	return parseCycle(text, now)
}

// parseCycle reads an ISO-8601 repeating interval: "R3/PT10M",
// "R/PT1M" (unbounded), "R2/2026-01-01T10:00:00Z/PT1H" (with a start).
func parseCycle(text string, now time.Time) (schedule, error) {
	parts := strings.Split(strings.TrimSpace(text), "/")
	if len(parts) < 2 || len(parts) > 3 || !strings.HasPrefix(parts[0], "R") {
		return schedule{}, fmt.Errorf("timer cycle %q is not an ISO-8601 repeating interval like R3/PT10M", text)
	}
	s := schedule{times: -1}
	if n := parts[0][1:]; n != "" {
		times, err := strconv.Atoi(n)
		if err != nil || times < 0 {
			return schedule{}, fmt.Errorf("timer cycle %q: bad repetition count %q", text, n)
		}
		s.times = times
	}
	period, err := expr.ParseDuration(parts[len(parts)-1])
	if err != nil {
		return schedule{}, fmt.Errorf("timer cycle %q: %v", text, err)
	}
	if period <= 0 {
		return schedule{}, fmt.Errorf("timer cycle %q: the period must be positive", text)
	}
	s.period = period
	s.first = now.Add(period)
	if len(parts) == 3 {
		start, err := expr.ParseDateTime(parts[1])
		if err != nil {
			return schedule{}, fmt.Errorf("timer cycle %q: %v", text, err)
		}
		s.first = start
	}
	return s, nil
}
