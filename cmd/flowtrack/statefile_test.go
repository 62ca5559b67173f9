package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// TestStateFile_Overlap checks that an invocation whose state file another
// invocation changed meanwhile writes nothing and says so, instead of
// undoing the other's work.
func TestStateFile_Overlap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")

	e, sf, err := openState(ctx, state, false)
	require.NoError(t, err)
	defer e.Close(ctx)
	_, err = e.Start(ctx, "shipment", map[string]any{"orderId": "slow"})
	require.NoError(t, err)
	// Another invocation starts an instance in the meantime.
	ft(t, exitOK, state, "start", "shipment", "--vars", `{"orderId":"fast"}`)
	other, err := os.ReadFile(state)
	require.NoError(t, err)

	err = sf.save(ctx, e)
	require.ErrorIs(t, err, errStateChanged)
	assert.Equal(t, "STATE_CHANGED", failureOf(err).Code)
	now, err := os.ReadFile(state)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(other, now), "the other invocation's document stays")
	jobs := result[[]map[string]any](t, ft(t, exitOK, state, "jobs"))
	require.Len(t, jobs, 1)
	assert.Equal(t, map[string]any{"orderId": "fast"}, jobs[0]["variables"])

	// A deploy that started a new state file does not replace one that
	// appeared meanwhile.
	fresh := filepath.Join(t.TempDir(), "fresh.json")
	e2, sf2, err := openState(ctx, fresh, true)
	require.NoError(t, err)
	defer e2.Close(ctx)
	ft(t, exitOK, fresh, "deploy", "testdata/timer.bpmn")
	require.ErrorIs(t, sf2.save(ctx, e2), errStateChanged)
}

// TestStateFile_FromNativeEngine checks that a state file may come from
// another host: the native engine's checkpoint goes on in the CLI.
func TestStateFile_FromNativeEngine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	xml, err := os.ReadFile("testdata/shipment.bpmn")
	require.NoError(t, err)
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer e.Close(ctx)
	_, err = e.Deploy("shipment.bpmn", xml)
	require.NoError(t, err)
	inst, err := e.Start(ctx, "shipment", map[string]any{"orderId": "native"})
	require.NoError(t, err)
	doc, err := e.Checkpoint(ctx)
	require.NoError(t, err)
	state := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(state, doc, 0o600))

	jobs := result[[]engine.Job](t, ft(t, exitOK, state, "jobs"))
	require.Len(t, jobs, 1)
	assert.Equal(t, inst.Key(), jobs[0].InstanceKey)
	ft(t, exitOK, state, "complete", itoa(jobs[0].Key))
	ft(t, exitOK, state, "publish", "paid", "--key", "native")
	p := ft(t, exitOK, state, "advance", "--next")
	assert.Contains(t, types(p), engine.JobCreated, "the join went on to ship")
}
