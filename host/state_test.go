package host_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// An instance moves between a native engine and the module, both ways,
// each running instances of its own: CheckpointInstance on one side,
// RestoreInstance on the other, and it goes on there to its end.
func TestEngine_RestoreInstance_AcrossHosts(t *testing.T) {
	ctx := ctxT(t)
	xml, err := os.ReadFile("../engine/testdata/readme_order.bpmn")
	require.NoError(t, err)
	native, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer native.Close(ctx)
	_, err = native.Deploy("order.bpmn", xml)
	require.NoError(t, err)
	module := newHost(t)
	_, err = module.Deploy(ctx, "order.bpmn", xml)
	require.NoError(t, err)
	_, err = module.Start(ctx, "order", map[string]any{"orderId": "m-0", "amount": 1})
	require.NoError(t, err)
	for range 3 {
		_, err := native.Start(ctx, "order", map[string]any{"orderId": "n", "amount": 1})
		require.NoError(t, err)
	}
	inst, err := native.Start(ctx, "order", map[string]any{"orderId": "o-1", "amount": 120})
	require.NoError(t, err)
	require.NoError(t, native.Settle(ctx))

	doc, err := native.CheckpointInstance(ctx, inst.Key())
	require.NoError(t, err)
	require.NoError(t, module.RestoreInstance(ctx, doc))
	require.ErrorIs(t, module.RestoreInstance(ctx, doc), engine.ErrKeyInUse)
	require.ErrorIs(t, module.RestoreInstance(ctx, []byte(`{"format":"flowtrack-state","version":99}`)), engine.ErrBadState)
	jobs, err := module.Jobs(ctx, engine.JobFilter{Type: "check-order", InstanceKey: inst.Key()})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.NoError(t, module.CompleteJob(ctx, jobs[0].Key, map[string]any{"valid": true}))

	// And back: the module's document of it goes on natively.
	back, err := module.CheckpointInstance(ctx, inst.Key())
	require.NoError(t, err)
	_, err = module.CheckpointInstance(ctx, 999_999)
	require.ErrorIs(t, err, engine.ErrUnknownInstance)
	other, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer other.Close(ctx)
	moved, err := other.RestoreInstance(ctx, back)
	require.NoError(t, err)
	require.NoError(t, other.PublishMessage(ctx, engine.Message{Name: "paid", CorrelationKey: "o-1"}))
	require.NoError(t, other.Settle(ctx))
	require.NoError(t, other.Advance(ctx, 24*time.Hour))
	st, err := moved.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st)
	assert.Equal(t, true, moved.Variables()["valid"])
}
