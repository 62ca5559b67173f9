package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDehydrate_KeepsOnlyTheDocument: a dry instance has let go of its
// loop state and of its goroutines (the package's goleak check would
// catch a track left behind), and comes back with its tokens where they
// were, its job record the very one the engine's index holds.
func TestDehydrate_KeepsOnlyTheDocument(t *testing.T) {
	for _, mode := range []Resumption{ResumeGoroutines, ResumeDirect} {
		e := NewEngine(Options{Resumption: mode})
		plan := newGraph(t, "two").node("s:startEvent", "fork:parallelGateway", "a:serviceTask", "b:serviceTask", "join:parallelGateway", "end:endEvent").
			flow("s>fork", "fork>a", "fork>b", "a>join", "b>join", "join>end").plan(CompileOptions{})
		inst := run(t, e, plan, map[string]any{"x": 1.0})
		before := inst.tokenSnapshotOf(t)
		require.NoError(t, inst.Dehydrate(ctxT(t)))
		inst.mailMu.Lock()
		require.NotNil(t, inst.dry)
		assert.Nil(t, inst.loopState, "mode %d: the loop state is gone", mode)
		assert.Nil(t, inst.root)
		assert.Nil(t, inst.history)
		assert.Less(t, len(inst.dry.doc), 400, "mode %d: compressed", mode)
		inst.mailMu.Unlock()
		assert.Equal(t, map[string]any{"x": 1.0}, inst.Variables())

		assert.Equal(t, before, inst.tokenSnapshotOf(t), "mode %d: tokens where they were", mode)
		jobs := e.Jobs(JobFilter{})
		require.Len(t, jobs, 2)
		e.mu.Lock()
		rec := e.jobRecs[jobs[0].Key]
		e.mu.Unlock()
		assert.Same(t, rec, inst.jobRecOf(t, jobs[0].Key), "mode %d: the engine's job record, not a copy", mode)
		for _, j := range jobs {
			require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
		}
		st, err := inst.Wait(ctxT(t))
		require.NoError(t, err)
		assert.Equal(t, Completed, st)
		require.NoError(t, e.Close(ctxT(t)))
	}
}

// TestRehydrate_UnreadableDocument: a document the engine cannot read
// back (a bug, never input) fails the instance, with its jobs, instead of
// leaving it hanging with its input.
func TestRehydrate_UnreadableDocument(t *testing.T) {
	for _, mode := range []Resumption{ResumeGoroutines, ResumeDirect} {
		e := NewEngine(Options{Resumption: mode})
		plan := newGraph(t, "job").node("s:startEvent", "a:serviceTask", "end:endEvent").flow("s>a", "a>end").plan(CompileOptions{})
		inst := run(t, e, plan, nil)
		job := e.Jobs(JobFilter{})[0]
		require.NoError(t, inst.Dehydrate(ctxT(t)))
		inst.mailMu.Lock()
		inst.dry.doc = []byte("not deflate")
		inst.mailMu.Unlock()
		err := e.CompleteJob(ctxT(t), job.Key, nil)
		require.ErrorIs(t, err, ErrUnknownJob)
		st, err := inst.Wait(ctxT(t))
		require.NoError(t, err)
		assert.Equal(t, Failed, st, "mode %d", mode)
		assert.Contains(t, inst.Message(), "internal error: rehydrating")
		assert.Empty(t, e.Jobs(JobFilter{}), "mode %d: its job is gone with it", mode)
		require.NoError(t, e.Close(ctxT(t)))
	}
}

// tokenSnapshotOf reads the instance's tokens through its loop.
func (inst *Instance) tokenSnapshotOf(t *testing.T) []Token {
	t.Helper()
	toks, err := inst.Tokens(ctxT(t))
	require.NoError(t, err)
	return toks
}

// jobRecOf returns the record of job key the instance holds, read after
// a command: the loop's answer orders its writes before the read, and an
// idle loop writes no job.
func (inst *Instance) jobRecOf(t *testing.T, key int64) *Job {
	t.Helper()
	cmd := &command{op: cmdIncidents} // any command: it runs on the loop, after which the loop is idle again
	require.NoError(t, inst.call(ctxT(t), cmd))
	return inst.jobs[key].job
}
