package host_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestEngine_CallsAfterCloseFail checks that every call of the host
// Engine reports engine.ErrClosed after Close, as the native engine does.
func TestEngine_CallsAfterCloseFail(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
	key, err := e.Start(ctx, "order", map[string]any{"amount": 1})
	require.NoError(t, err)
	require.NoError(t, e.Close(ctx))
	for name, call := range map[string]func() error{
		"Deploy": func() error { _, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn")); return err },
		"Start":  func() error { _, err := e.Start(ctx, "order", nil); return err },
		"PublishMessage": func() error {
			return e.PublishMessage(ctx, engine.Message{Name: "m", TTL: time.Hour})
		},
		"BroadcastSignal": func() error { return e.BroadcastSignal(ctx, "s", nil) },
		"Advance":         func() error { return e.Advance(ctx, time.Second) },
		"AdvanceTo":       func() error { return e.AdvanceTo(ctx, time.Now()) },
		"Settle":          func() error { return e.Settle(ctx) },
		"CompleteJob":     func() error { return e.CompleteJob(ctx, 1, nil) },
		"FailJob":         func() error { return e.FailJob(ctx, 1, 0, "x") },
		"ThrowError":      func() error { return e.ThrowError(ctx, 1, "E", "x", nil) },
		"ResolveIncident": func() error { return e.ResolveIncident(ctx, 1) },
		"Cancel":          func() error { return e.Cancel(ctx, key) },
		"Jobs":            func() error { _, err := e.Jobs(ctx, engine.JobFilter{}); return err },
		"Incidents":       func() error { _, err := e.Incidents(ctx); return err },
		"Instance":        func() error { _, err := e.Instance(ctx, key); return err },
		"Tokens":          func() error { _, err := e.Tokens(ctx, key); return err },
		"History":         func() error { _, err := e.History(ctx, key); return err },
		"Call":            func() error { _, err := e.Call(ctx, "now", nil); return err },
	} {
		t.Run(name, func(t *testing.T) { require.ErrorIs(t, call(), engine.ErrClosed) })
	}
}
