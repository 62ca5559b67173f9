package engine_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// timerProcess is start → intermediate timer (definition) → end.
func timerProcess(definition string) string {
	return defs(``, `<bpmn:startEvent id="s"/>`+
		`<bpmn:intermediateCatchEvent id="wait"><bpmn:timerEventDefinition>`+definition+`</bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="wait"/><bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="e"/>`)
}

// TestEngine_RejectsTimesOutOfRange checks that every way an instant can
// enter the engine rejects one past clock.Max with an error naming the
// value and the limit, that nothing moves, and that the engine still runs
// a normal instance afterwards.
func TestEngine_RejectsTimesOutOfRange(t *testing.T) {
	ctx := ctxT(t)
	limit := clock.Max.Format(time.RFC3339Nano)
	year10000 := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)

	_, err := engine.New(engine.WithClock(clock.NewVirtual(year10000)))
	require.ErrorIs(t, err, engine.ErrTimeOutOfRange)
	assert.Contains(t, err.Error(), limit)

	e := newEngine(t)
	for name, call := range map[string]func() error{
		"AdvanceTo year 10000": func() error { return e.AdvanceTo(ctx, year10000) },
		"AdvanceTo 2263":       func() error { return e.AdvanceTo(ctx, time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC)) },
		"Advance MaxInt64":     func() error { return e.Advance(ctx, math.MaxInt64) },
		"PublishMessage TTL": func() error {
			return e.PublishMessage(ctx, engine.Message{Name: "m", CorrelationKey: "k", TTL: math.MaxInt64})
		},
	} {
		err := call()
		require.ErrorIs(t, err, engine.ErrTimeOutOfRange, name)
		assert.Contains(t, err.Error(), limit, name)
		assert.Equal(t, clock.Epoch, e.Now(), "%s: nothing moved", name)
	}
	assert.Equal(t, engine.Stats{}, e.Stats(), "no message was buffered")

	// Literal timers whose firing falls past the limit are refused at
	// deploy, naming the time and the limit.
	for name, def := range map[string]string{
		"date":  `<bpmn:timeDate>2300-01-01T00:00:00Z</bpmn:timeDate>`,
		"cycle": `<bpmn:timeCycle>R5/P36500D</bpmn:timeCycle>`,
	} {
		_, err := e.Deploy("test.bpmn", []byte(timerProcess(def)))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), limit, name)
	}

	// Computed timers whose firing falls past the limit: an incident naming
	// the time and the limit, never a wrapped-around due time.
	for name, def := range map[string]string{
		"duration": `<bpmn:timeDuration>= duration("P" + string(days) + "D")</bpmn:timeDuration>`,
		"date":     `<bpmn:timeDate>= date and time("2300-01-01T00:00:00Z")</bpmn:timeDate>`,
		"cycle":    `<bpmn:timeCycle>= "R5/P" + string(days) + "D"</bpmn:timeCycle>`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, timerProcess(def))
			inst := start(t, e, map[string]any{"days": 100_000})
			incs := incidents(inst)
			require.Len(t, incs, 1, "an incident holds the token")
			assert.Equal(t, "wait", incs[0].ElementID)
			assert.Contains(t, incs[0].Message, limit)
			_, pending := e.NextDeadline()
			assert.False(t, pending, "no timer was scheduled")
		})
	}

	// The engine is still usable: a normal timer instance completes, and
	// the clock can go all the way to the limit.
	deploy(t, e, timerProcess(`<bpmn:timeDuration>PT1H</bpmn:timeDuration>`))
	inst := start(t, e, nil)
	require.NoError(t, e.Advance(ctx, time.Hour))
	assert.Equal(t, engine.Completed, inst.State())
	require.NoError(t, e.AdvanceTo(ctx, clock.Max))
	assert.Equal(t, clock.Max, e.Now())
	for _, ev := range history(inst) {
		assert.False(t, ev.Time.Before(clock.Epoch), "record times never wrap around")
	}
}

// TestEngine_UnboundedCycleEndsAtTheLimit checks that an unbounded start
// timer cycle stops at the last repetition the engine can represent
// instead of wrapping around.
func TestEngine_UnboundedCycleEndsAtTheLimit(t *testing.T) {
	ctx := ctxT(t)
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Max.Add(-30 * 24 * time.Hour))))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Close(ctx)) })
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"><bpmn:timerEventDefinition><bpmn:timeCycle>R/P7D</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:startEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="e"/>`))
	var started []time.Time
	unsubscribe := e.Subscribe(func(ev engine.Event) {
		if ev.Type == engine.InstanceStarted {
			started = append(started, ev.Time)
		}
	})
	defer unsubscribe()
	require.NoError(t, e.AdvanceTo(ctx, clock.Max))
	require.NoError(t, e.Settle(ctx))
	assert.Len(t, started, 4, "the 7-day cycle fits four times in the last 30 days")
	_, pending := e.NextDeadline()
	assert.False(t, pending, "the fifth repetition would fall after clock.Max: the cycle ended")
}
