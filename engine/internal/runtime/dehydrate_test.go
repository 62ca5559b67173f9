package runtime

import (
	"encoding/json"
	"errors"
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

// TestDehydrate_KeptInStore: with a store (KeepDryIn), a dry instance
// lets go of its document only once a commit has written it unchanged,
// reads it back from the store when a delivery comes, and goes on from
// it; a store that fails the read fails the instance rather than leave it
// hanging with its input.
func TestDehydrate_KeptInStore(t *testing.T) {
	for _, mode := range []Resumption{ResumeGoroutines, ResumeDirect} {
		e := NewEngine(Options{Resumption: mode, Durable: true})
		stored := map[int64][]byte{} // by instance key: the document a commit wrote
		reads := 0
		var fail error
		e.KeepDryIn(func(key int64) ([]byte, error) {
			reads++
			if fail != nil {
				return nil, fail
			}
			return stored[key], nil
		}, func() {})
		commit := func() {
			d, err := e.CheckpointDirty(ctxT(t), func(int64) int { return 0 }, 0)
			require.NoError(t, err)
			for _, doc := range d.Doc.Live {
				raw, err := json.Marshal(doc)
				require.NoError(t, err)
				stored[doc.Key] = raw
			}
			e.Stored(d)
		}
		plan := newGraph(t, "jobs").node("s:startEvent", "a:serviceTask", "b:serviceTask", "end:endEvent").flow("s>a", "a>b", "b>end").plan(CompileOptions{})
		inst := run(t, e, plan, map[string]any{"x": 1.0})
		other := run(t, e, plan, nil)
		require.NoError(t, inst.Dehydrate(ctxT(t)))
		require.NoError(t, other.Dehydrate(ctxT(t)))
		inst.mailMu.Lock()
		assert.NotNil(t, inst.dry.doc, "mode %d: in memory until a commit writes it", mode)
		inst.mailMu.Unlock()

		commit()
		inst.mailMu.Lock()
		assert.Nil(t, inst.dry.doc, "mode %d: the store holds it now", mode)
		inst.mailMu.Unlock()
		assert.Equal(t, map[string]any{"x": 1.0}, inst.Variables(), "read from the store")
		assert.Positive(t, reads)

		jobs := e.Jobs(JobFilter{InstanceKey: inst.Key()})
		require.Len(t, jobs, 1)
		require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, map[string]any{"y": 2.0}))
		require.NoError(t, inst.Dehydrate(ctxT(t)))
		inst.mailMu.Lock()
		assert.NotNil(t, inst.dry.doc, "mode %d: changed since the commit: the store's copy is stale, the memory one stays", mode)
		inst.mailMu.Unlock()
		commit()
		jobs = e.Jobs(JobFilter{InstanceKey: inst.Key()})
		require.Len(t, jobs, 1)
		require.Equal(t, "b", jobs[0].ElementID)
		require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, nil))
		st, err := inst.Wait(ctxT(t))
		require.NoError(t, err)
		assert.Equal(t, Completed, st, "mode %d", mode)
		assert.Equal(t, map[string]any{"x": 1.0, "y": 2.0}, inst.Variables())

		fail = errors.New("disk gone")
		job := e.Jobs(JobFilter{InstanceKey: other.Key()})[0]
		require.ErrorIs(t, e.CompleteJob(ctxT(t), job.Key, nil), ErrUnknownJob)
		st, err = other.Wait(ctxT(t))
		require.NoError(t, err)
		assert.Equal(t, Failed, st, "mode %d", mode)
		assert.Contains(t, other.Message(), "disk gone")
		require.NoError(t, e.Close(ctxT(t)))
	}
}

// TestRehydrate_TrackOnTheLoop: with goroutine tracks, the track of a
// dehydrated instance that a delivery wakes runs on the loop's goroutine
// and stays a continuation the loop holds when it parks again, instead of
// getting a goroutine of its own (RATIONALE.md, "Why does a woken track
// run on its loop's goroutine?").
func TestRehydrate_TrackOnTheLoop(t *testing.T) {
	e := NewEngine(Options{Resumption: ResumeGoroutines})
	plan := newGraph(t, "chain").node("s:startEvent", "a:serviceTask", "b:serviceTask", "fork:parallelGateway", "c:serviceTask", "d:serviceTask", "end:endEvent").
		flow("s>a", "a>b", "b>fork", "fork>c", "fork>d", "c>end", "d>end").plan(CompileOptions{})
	inst := run(t, e, plan, nil)
	require.NoError(t, inst.Dehydrate(ctxT(t)))
	complete := func(element string) {
		t.Helper()
		for _, j := range e.Jobs(JobFilter{InstanceKey: inst.Key()}) {
			if j.ElementID == element {
				require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
				require.NoError(t, e.Settle(ctxT(t)))
				return
			}
		}
		t.Fatalf("no job at %s", element)
	}
	complete("a")
	require.Len(t, inst.tokens, 1)
	for _, tv := range inst.tokens {
		require.NotNil(t, tv.track, "the woken track parked at b on the loop, without a goroutine")
		assert.Nil(t, tv.track.ch, "the loop drives it")
		assert.Equal(t, "b", tv.node.ID)
	}
	complete("b")
	require.Len(t, inst.tokens, 2)
	for _, tv := range inst.tokens {
		require.NotNil(t, tv.track, "parked at %s: the loop holds it", tv.node.ID)
		if tv.node.ID == "c" {
			assert.Nil(t, tv.track.ch, "the token that came from b went on on the loop")
		}
	}
	complete("c")
	complete("d")
	st, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, Completed, st)
	require.NoError(t, e.Close(ctxT(t)))
}
