package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// TestEngine_CallsAfterCloseFail checks that every operation that takes
// input or waits reports ErrClosed after Close instead of dropping its
// input, and that an engine created afterwards still runs instances.
func TestEngine_CallsAfterCloseFail(t *testing.T) {
	ctx := ctxT(t)
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	deployFile(t, e, "order.bpmn")
	inst, err := e.Start(ctx, "order", map[string]any{"amount": 1})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctx))
	job := e.Jobs(engine.JobFilter{})[0]
	require.NoError(t, e.Close(ctx))
	require.NoError(t, e.Close(ctx), "Close is idempotent")

	for name, call := range map[string]func() error{
		"Deploy": func() error {
			_, err := e.Deploy("order.bpmn", []byte(process(`<bpmn:startEvent id="s"/>`)))
			return err
		},
		"Start":        func() error { _, err := e.Start(ctx, "order", nil); return err },
		"StartUnknown": func() error { _, err := e.Start(ctx, "nope", nil); return err },
		"PublishMessage": func() error {
			return e.PublishMessage(ctx, engine.Message{Name: "m", CorrelationKey: "k"})
		},
		"PublishMessageTTL": func() error {
			return e.PublishMessage(ctx, engine.Message{Name: "m", CorrelationKey: "k", TTL: time.Hour})
		},
		"BroadcastSignal": func() error { return e.BroadcastSignal(ctx, "s", nil) },
		"Advance":         func() error { return e.Advance(ctx, time.Second) },
		"AdvanceTo":       func() error { return e.AdvanceTo(ctx, clock.Epoch.Add(time.Hour)) },
		"Settle":          func() error { return e.Settle(ctx) },
		"CompleteJob":     func() error { return e.CompleteJob(ctx, job.Key, nil) },
		"FailJob":         func() error { return e.FailJob(ctx, job.Key, 0, "x") },
		"ThrowError":      func() error { return e.ThrowError(ctx, job.Key, "E", "x", nil) },
		"ResolveIncident": func() error { return e.ResolveIncident(ctx, 1) },
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, call(), engine.ErrClosed)
		})
	}
	require.ErrorIs(t, inst.Cancel(ctx), engine.ErrInstanceEnded, "Close ended every instance")
	assert.Equal(t, engine.Stats{}, e.Stats(), "nothing was buffered or scheduled after Close")

	// A fresh engine is unaffected.
	e2 := newEngine(t)
	deployFile(t, e2, "order.bpmn")
	inst2, err := e2.Start(ctx, "order", map[string]any{"amount": 1})
	require.NoError(t, err)
	work(t, e2, nil)
	assert.Equal(t, engine.Completed, inst2.State())
}
