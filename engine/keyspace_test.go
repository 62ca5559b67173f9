package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// Every key a partition's engine hands out names the partition, stays
// below 2^53, and goes on in the partition's range after a restore.
func TestWithKeySpace(t *testing.T) {
	vc := clock.NewVirtual(clock.Epoch)
	e, err := engine.New(engine.WithClock(vc), engine.WithKeySpace(7))
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(ctxT(t)) })
	d, err := e.Deploy("two.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	inst, err := e.Start(ctxT(t), "p", map[string]any{"key": "k"})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	job := oneJob(t, e, "a")
	keys := []int64{d.Processes[0].Key, inst.Key(), job.Key}
	for _, k := range keys {
		assert.Equal(t, 7, engine.PartitionOf(k), "key %d", k)
		assert.Less(t, k, int64(1)<<53, "key %d", k)
	}
	r, _ := restored(t, e, engine.WithKeySpace(7))
	inst2, err := r.Start(ctxT(t), "p", map[string]any{"key": "k2"})
	require.NoError(t, err)
	assert.Equal(t, 7, engine.PartitionOf(inst2.Key()))
	assert.Greater(t, inst2.Key(), job.Key, "keys go on after the restored ones")

	_, err = engine.Restore(mustCheckpoint(t, e), engine.WithKeySpace(8))
	require.ErrorIs(t, err, engine.ErrBadState, "a partition's document restored into another key space")

	_, err = engine.New(engine.WithKeySpace(engine.MaxPartitions + 1))
	require.ErrorContains(t, err, "WithKeySpace")
	plain, err := engine.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = plain.Close(ctxT(t)) })
	d, err = plain.Deploy("two.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	assert.Equal(t, int64(1), d.Processes[0].Key, "without a key space keys count from 1")
	assert.Equal(t, 0, engine.PartitionOf(d.Processes[0].Key))
}

func mustCheckpoint(t *testing.T, e *engine.Engine) []byte {
	t.Helper()
	doc, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	return doc
}
