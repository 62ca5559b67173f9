package runtime

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

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
		prog, rule, what = ts.cycle, "EXT.133", "timeCycle: write an ISO-8601 repeating interval such as R3/PT10M, or a cron expression with seconds such as 0 0 9 * * MON-FRI"
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
// A cron cycle has no period (0): it repeats when its expression matches
// next (following).
type schedule struct {
	first  time.Time
	period time.Duration
	times  int
}

// following returns when a cycle of ts that fired at due fires next: one
// period later, or, for a cron cycle (period 0), the first time after due
// its expression matches, the expression evaluated again over vars (a
// literal one gives the same schedule every time; the state document
// keeps no more than the period). ok is false when there is no next
// firing the engine can represent.
func (ts *timerSpec) following(vars map[string]any, due time.Time, period time.Duration) (next time.Time, ok bool) {
	if period > 0 {
		next = due.Add(period)
		return next, clock.CheckRange(next) == nil
	}
	if ts == nil || ts.cycle == nil {
		return time.Time{}, false
	}
	s, err := ts.plan(vars, due)
	if err != nil || !s.first.After(due) {
		return time.Time{}, false
	}
	return s.first, clock.CheckRange(s.first) == nil
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
	if isCron(text) {
		return parseCron(text, now)
	}
	return parseCycle(text, now)
}

// isCron reports whether a timeCycle is a cron expression rather than an
// ISO-8601 repeating interval, which always starts with R and a
// repetition count or a slash.
func isCron(text string) bool {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "@") {
		return true
	}
	return !strings.HasPrefix(t, "R") && len(strings.Fields(t)) > 1
}

// cronParser reads the cron dialect of timer cycles (docs/timers.md):
// six fields, seconds first, as Zeebe's (Spring's) cron, and the macros
// @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly.
var cronParser = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseCron reads a cron timer cycle. It repeats without a count (bounded
// like "R/PT1M", by MaxCycleFirings), first at the first time after now
// the expression matches, in UTC. An expression that matches no time
// within five years of now (0 0 0 30 2 *: February 30th) never fires and
// is an error, as are the parser's @every (write R/PT10M) and time zone
// prefixes (every host computes the same times, in UTC; the module has no
// time zone database).
func parseCron(text string, now time.Time) (schedule, error) {
	t := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(t, "@every"):
		return schedule{}, fmt.Errorf("timer cycle %q: @every is not a cron expression: write an ISO-8601 repeating interval such as R/PT10M", text)
	case strings.HasPrefix(t, "CRON_TZ=") || strings.HasPrefix(t, "TZ="):
		return schedule{}, fmt.Errorf("timer cycle %q: a time zone prefix is not supported: cron cycles run in UTC; write the times in UTC", text)
	}
	c, err := cronParser.Parse(t)
	if err != nil {
		return schedule{}, fmt.Errorf("timer cycle %q is neither an ISO-8601 repeating interval like R3/PT10M nor a cron expression with seconds like 0 0 9 * * MON-FRI: %v", text, err)
	}
	first := c.Next(now.UTC())
	if first.IsZero() {
		return schedule{}, fmt.Errorf("timer cycle %q: the cron expression matches no time within five years, so the timer would never fire", text)
	}
	return schedule{first: first, times: -1}, nil
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
