package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestEngine_JobsByInstance: Jobs filtered by instance, which the engine
// answers from an index by instance, lists exactly the instance's jobs
// from the unfiltered list, through a failed attempt (the record is
// replaced), a completion and an incident.
func TestEngine_JobsByInstance(t *testing.T) {
	e := newEngine(t)
	deployFile(t, e, "order.bpmn")
	ctx := ctxT(t)
	var keys []int64
	for _, amount := range []int{50, 500, 70} {
		inst, err := e.Start(ctx, "order", map[string]any{"amount": amount})
		require.NoError(t, err)
		keys = append(keys, inst.Key())
	}
	require.NoError(t, e.Settle(ctx))
	same := func(step string) {
		t.Helper()
		all := e.Jobs(engine.JobFilter{})
		for _, key := range keys {
			want := []engine.Job{}
			for _, j := range all {
				if j.InstanceKey == key {
					want = append(want, j)
				}
			}
			assert.Equal(t, want, e.Jobs(engine.JobFilter{InstanceKey: key}), "%s: instance %d", step, key)
		}
	}
	same("started")
	first := e.Jobs(engine.JobFilter{InstanceKey: keys[0]})
	require.Len(t, first, 1)
	require.NoError(t, e.FailJob(ctx, first[0].Key, 1, "try again"))
	require.NoError(t, e.Settle(ctx))
	same("failed once")
	again := e.Jobs(engine.JobFilter{InstanceKey: keys[0]})
	require.Len(t, again, 1, "the failed attempt's record is replaced, not added")
	assert.Equal(t, "try again", again[0].ErrorMessage)
	got, ok := e.Job(first[0].Key)
	assert.True(t, ok)
	assert.Equal(t, again[0], got, "Job finds the same record")
	require.NoError(t, e.FailJob(ctx, first[0].Key, 0, "no retries"))
	require.NoError(t, e.Settle(ctx))
	same("incident")
	assert.Empty(t, e.Jobs(engine.JobFilter{InstanceKey: keys[0]}), "a job held by an incident is not activatable")
	_, ok = e.Job(first[0].Key)
	assert.False(t, ok, "nor found by key")
	second := e.Jobs(engine.JobFilter{InstanceKey: keys[1]})
	require.Len(t, second, 1)
	require.NoError(t, e.CompleteJob(ctx, second[0].Key, nil))
	require.NoError(t, e.Settle(ctx))
	same("completed one")
	assert.NotEqual(t, second, e.Jobs(engine.JobFilter{InstanceKey: keys[1]}))
}
