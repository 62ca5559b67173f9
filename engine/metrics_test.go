package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

func TestEngine_Metrics(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	startJobs(t, e, 3) // three jobs "work", created at the epoch
	require.NoError(t, e.Advance(ctx, 2*time.Second))

	m := e.Metrics()
	require.Equal(t, map[string]int{"work": 3}, m.JobsByType)
	require.Equal(t, 3, m.Open.Jobs)
	require.NotNil(t, m.OldestJob)
	first := e.Jobs(engine.JobFilter{})[0] // created at the same instant: the lowest key
	require.Equal(t, first.Key, m.OldestJob.Key)
	require.Equal(t, first.InstanceKey, m.OldestJob.InstanceKey)
	require.Equal(t, 2000.0, m.OldestJob.WaitingMs)
	require.Equal(t, []engine.ProcessMetrics{{ProcessID: "p", Active: 3}}, m.Processes)

	// One completes after 2 s, one after 5 s, one is cancelled.
	jobs := e.Jobs(engine.JobFilter{})
	require.NoError(t, e.CompleteJob(ctx, jobs[0].Key, nil))
	require.NoError(t, e.Advance(ctx, 3*time.Second))
	require.NoError(t, e.CompleteJob(ctx, jobs[1].Key, nil))
	third, ok := e.Instance(jobs[2].InstanceKey)
	require.True(t, ok)
	require.NoError(t, third.Cancel(ctx))
	require.NoError(t, e.Settle(ctx))

	m = e.Metrics()
	require.Equal(t, map[string]int{}, m.JobsByType)
	require.Nil(t, m.OldestJob)
	require.Equal(t, []engine.ProcessMetrics{{ProcessID: "p", Completed: 2, Terminated: 1, MeanLatencyMs: 3500, MaxLatencyMs: 5000}}, m.Processes)
	require.Equal(t, engine.Stats{}, m.Open, "nothing open")
}
