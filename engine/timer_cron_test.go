package engine_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// cronStart is a process started by a timer start event with cycle expr.
func cronStart(expr string) string {
	return defs(``, `<bpmn:startEvent id="s"><bpmn:timerEventDefinition><bpmn:timeCycle>`+expr+`</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:startEvent>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "e"))
}

// firings records when timers fire (the due times of TimerFired).
func firings(t *testing.T, e *engine.Engine) func() []time.Time {
	var mu sync.Mutex
	var out []time.Time
	unsubscribe := e.Subscribe(func(ev engine.Event) {
		if ev.Type == engine.TimerFired {
			mu.Lock()
			out = append(out, ev.Due.UTC())
			mu.Unlock()
		}
	})
	t.Cleanup(func() { _ = unsubscribe() })
	return func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), out...)
	}
}

// TestTimer_CronCycle: a timeCycle may be a cron expression with seconds
// (Zeebe's, after Spring) or a macro, besides an ISO-8601 repeating
// interval; it fires at every time it matches, in UTC.
func TestTimer_CronCycle(t *testing.T) {
	day := func(d, h, m int) time.Time { return time.Date(2026, 1, d, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name, expr string
		advance    time.Duration
		want       []time.Time
	}{
		// clock.Epoch is Thursday 2026-01-01 00:00 UTC.
		{"weekdays at nine", "0 0 9 * * MON-FRI", 7 * 24 * time.Hour, []time.Time{day(1, 9, 0), day(2, 9, 0), day(5, 9, 0), day(6, 9, 0), day(7, 9, 0)}},
		{"macro", "@daily", 3 * 24 * time.Hour, []time.Time{day(2, 0, 0), day(3, 0, 0), day(4, 0, 0)}},
		{"steps and lists", " 0 0/20 8,17 1 JAN ? ", 24 * time.Hour, []time.Time{day(1, 8, 0), day(1, 8, 20), day(1, 8, 40), day(1, 17, 0), day(1, 17, 20), day(1, 17, 40)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			fired := firings(t, e)
			deploy(t, e, cronStart(tc.expr))
			require.NoError(t, e.Advance(ctxT(t), tc.advance))
			assert.Equal(t, tc.want, fired())
			due, pending := e.NextDeadline()
			require.True(t, pending, "a cron cycle goes on")
			assert.True(t, due.After(clock.Epoch.Add(tc.advance)))
		})
	}
}

// TestTimer_CronCycleOnBoundary: a non-interrupting boundary timer with a
// cron cycle fires each time it matches while its activity runs.
func TestTimer_CronCycleOnBoundary(t *testing.T) {
	e := newEngine(t)
	fired := firings(t, e)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+task("work", "work")+
		`<bpmn:boundaryEvent id="remind" attachedToRef="work" cancelActivity="false"><bpmn:timerEventDefinition><bpmn:timeCycle>0 */15 * * * *</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:boundaryEvent>`+
		task("nudge", "nudge")+`<bpmn:endEvent id="e"/><bpmn:endEvent id="e2"/>`+flows("s", "work", "work", "e", "remind", "nudge", "nudge", "e2")))
	inst := start(t, e, nil)
	require.NoError(t, e.Advance(ctxT(t), time.Hour))
	assert.Len(t, fired(), 4)
	assert.Len(t, e.Jobs(engine.JobFilter{Type: "nudge"}), 4)
	assert.Equal(t, clock.Epoch.Add(time.Hour), fired()[3])
	complete(t, e, "work")
	require.NoError(t, e.Advance(ctxT(t), time.Hour))
	assert.Len(t, fired(), 4, "the cycle ends with its activity")
	for _, j := range e.Jobs(engine.JobFilter{Type: "nudge"}) {
		require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
	}
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
}

// TestTimer_CronCycleRefused: a cron cycle that never fires, or is not
// of the dialect (five fields, @every, a time zone prefix), is refused at
// deploy naming the rule and why.
func TestTimer_CronCycleRefused(t *testing.T) {
	for expr, why := range map[string]string{
		"0 0 0 30 2 *":                      "never fire",
		"0 9 * * MON":                       "cron expression with seconds",
		"@every 1h":                         "R/PT10M",
		"CRON_TZ=Europe/Berlin 0 0 9 * * *": "UTC",
		"0 0 25 * * *":                      "cron expression with seconds",
	} {
		t.Run(expr, func(t *testing.T) {
			e := newEngine(t)
			_, err := e.Deploy("cron.bpmn", []byte(cronStart(expr)))
			var de *engine.DeployError
			require.ErrorAs(t, err, &de)
			require.Len(t, de.Problems, 1)
			assert.Equal(t, "EXT.133", de.Problems[0].RuleID)
			assert.Equal(t, "s", de.Problems[0].ElementID)
			assert.Contains(t, de.Problems[0].Rule, why)
		})
	}
}
