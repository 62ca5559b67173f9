package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// oneJobXML waits on one job of type "work" and ends.
const oneJobXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:serviceTask id="task"><bpmn:extensionElements><zeebe:taskDefinition type="work" retries="3"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="task"/>
    <bpmn:sequenceFlow id="f2" sourceRef="task" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>`

func startJobs(t *testing.T, e *engine.Engine, n int) []*engine.Instance {
	t.Helper()
	_, err := e.Deploy("job.bpmn", []byte(oneJobXML))
	require.NoError(t, err)
	var out []*engine.Instance
	for range n {
		inst, err := e.Start(ctxT(t), "p", nil)
		require.NoError(t, err)
		out = append(out, inst)
	}
	require.NoError(t, e.Settle(ctxT(t)))
	return out
}

func keysOf(jobs []engine.Job) []int64 {
	var ks []int64
	for _, j := range jobs {
		ks = append(ks, j.Key)
	}
	return ks
}

func TestEngine_ActivateJobs(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	startJobs(t, e, 3)
	all := keysOf(e.Jobs(engine.JobFilter{Type: "work"}))

	first, err := e.ActivateJobs(ctx, "work", "w1", time.Minute, 2)
	require.NoError(t, err)
	require.Equal(t, all[:2], keysOf(first), "oldest jobs first, at most maxJobs")
	for _, j := range first {
		require.Equal(t, "w1", j.Worker)
		require.NotZero(t, j.Activation)
		require.Equal(t, e.Now().Add(time.Minute), *j.Deadline)
	}
	second, err := e.ActivateJobs(ctx, "work", "w2", time.Minute, 5)
	require.NoError(t, err)
	require.Equal(t, all[2:], keysOf(second), "activated jobs are not handed out again before their deadline")
	none, err := e.ActivateJobs(ctx, "work", "w2", time.Minute, 5)
	require.NoError(t, err)
	require.Empty(t, none)
	other, err := e.ActivateJobs(ctx, "other", "w2", time.Minute, 5)
	require.NoError(t, err)
	require.Empty(t, other, "only the asked type")

	// The second worker completes in time: its activation is current.
	require.NoError(t, e.CompleteJob(ctx, second[0].Key, nil, engine.JobActivation(second[0].Activation)))

	// The first worker's activations time out on the engine clock.
	require.NoError(t, e.Advance(ctx, time.Minute))
	again, err := e.ActivateJobs(ctx, "work", "w3", time.Minute, 5)
	require.NoError(t, err)
	require.Equal(t, all[:2], keysOf(again))
	require.NotEqual(t, first[0].Activation, again[0].Activation)

	// The late first worker is refused; the new one is not.
	err = e.CompleteJob(ctx, first[0].Key, nil, engine.JobActivation(first[0].Activation))
	require.ErrorIs(t, err, engine.ErrStaleActivation)
	require.ErrorContains(t, err, "job")
	require.ErrorIs(t, e.FailJob(ctx, first[1].Key, 1, "late", engine.JobActivation(first[1].Activation)), engine.ErrStaleActivation)
	require.ErrorIs(t, e.ThrowError(ctx, first[1].Key, "E", "late", nil, engine.JobActivation(first[1].Activation)), engine.ErrStaleActivation)
	require.NoError(t, e.CompleteJob(ctx, again[0].Key, nil, engine.JobActivation(again[0].Activation)))
	require.ErrorIs(t, e.CompleteJob(ctx, again[0].Key, nil, engine.JobActivation(again[0].Activation)), engine.ErrUnknownJob,
		"a second completion of the same activation finds no job")
}

func TestEngine_ActivateJobs_BadArguments(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	for name, call := range map[string]func() error{
		"empty type":   func() error { _, err := e.ActivateJobs(ctx, "", "w", time.Second, 1); return err },
		"zero timeout": func() error { _, err := e.ActivateJobs(ctx, "work", "w", 0, 1); return err },
		"zero maxJobs": func() error { _, err := e.ActivateJobs(ctx, "work", "w", time.Second, 0); return err },
		"retries 0":    func() error { return e.UpdateJobRetries(ctx, 1, 0) },
		"backoff < 0":  func() error { return e.FailJob(ctx, 1, 1, "x", engine.RetryBackoff(-time.Second)) },
		"nil handler":  func() error { return e.HandleJobs(ctx, "work", nil, engine.WorkerOptions{}) },
	} {
		require.ErrorIs(t, call(), engine.ErrInvalidArgument, name)
	}
}

func TestEngine_FailJob_RetryBackoff(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	startJobs(t, e, 1)
	jobs, err := e.ActivateJobs(ctx, "work", "w", time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.NoError(t, e.FailJob(ctx, jobs[0].Key, 2, "db down", engine.JobActivation(jobs[0].Activation), engine.RetryBackoff(30*time.Second)))

	none, err := e.ActivateJobs(ctx, "work", "w", time.Minute, 1)
	require.NoError(t, err)
	require.Empty(t, none, "in back-off")
	require.NoError(t, e.Advance(ctx, 29*time.Second))
	none, err = e.ActivateJobs(ctx, "work", "w", time.Minute, 1)
	require.NoError(t, err)
	require.Empty(t, none, "still in back-off")
	require.NoError(t, e.Advance(ctx, time.Second))
	back, err := e.ActivateJobs(ctx, "work", "w", time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, back, 1)
	require.Equal(t, 2, back[0].Retries)
	require.Equal(t, "db down", back[0].ErrorMessage)
	require.Nil(t, back[0].RetryAt)
	require.ErrorIs(t, e.CompleteJob(ctx, back[0].Key, nil, engine.JobActivation(jobs[0].Activation)), engine.ErrStaleActivation,
		"a failure ends its activation")
}

func TestEngine_UpdateJobRetries(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	insts := startJobs(t, e, 1)
	job := e.Jobs(engine.JobFilter{Type: "work"})[0]

	require.NoError(t, e.UpdateJobRetries(ctx, job.Key, 7))
	require.Equal(t, 7, e.Jobs(engine.JobFilter{Type: "work"})[0].Retries)

	// No retries left: an incident holds the job; new retries wait for
	// the incident's resolution.
	require.NoError(t, e.FailJob(ctx, job.Key, 0, "broken"))
	require.NoError(t, e.Settle(ctx))
	require.Empty(t, e.Jobs(engine.JobFilter{Type: "work"}))
	require.NoError(t, e.UpdateJobRetries(ctx, job.Key, 4))
	require.Empty(t, e.Jobs(engine.JobFilter{Type: "work"}), "the incident still holds the job")
	incs, err := insts[0].Incidents(ctx)
	require.NoError(t, err)
	require.Len(t, incs, 1)
	require.NoError(t, e.ResolveIncident(ctx, incs[0].Key))
	jobs, err := e.ActivateJobs(ctx, "work", "w", time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, 4, jobs[0].Retries)

	require.ErrorIs(t, e.UpdateJobRetries(ctx, 999_999, 1), engine.ErrUnknownJob)
}

// TestEngine_ActivationSurvivesCheckpoint: activation, deadline and
// back-off are instance state, so a restored engine keeps them.
func TestEngine_ActivationSurvivesCheckpoint(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	startJobs(t, e, 2)
	held, err := e.ActivateJobs(ctx, "work", "w", time.Minute, 1)
	require.NoError(t, err)
	rest := e.Jobs(engine.JobFilter{Type: "work"})[1]
	require.NoError(t, e.FailJob(ctx, rest.Key, 2, "later", engine.RetryBackoff(time.Hour)))

	r, _ := restored(t, e)
	none, err := r.ActivateJobs(ctx, "work", "w2", time.Minute, 5)
	require.NoError(t, err)
	require.Empty(t, none, "one job is held, the other in back-off")
	due, pending := r.NextDeadline()
	require.True(t, pending)
	require.True(t, held[0].Deadline.Equal(due), "the restored engine names the held job's deadline")
	require.NoError(t, r.Advance(ctx, time.Minute))
	again, err := r.ActivateJobs(ctx, "work", "w2", time.Minute, 5)
	require.NoError(t, err)
	require.Equal(t, []int64{held[0].Key}, keysOf(again))
	require.Greater(t, again[0].Activation, held[0].Activation, "activation keys stay unique after restore")
	require.ErrorIs(t, r.CompleteJob(ctx, held[0].Key, nil, engine.JobActivation(held[0].Activation)), engine.ErrStaleActivation)
}

func TestEngine_HandleJobs(t *testing.T) {
	e := newEngine(t)
	insts := startJobs(t, e, 6)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()

	var (
		mu       sync.Mutex
		attempts = map[int64]int{}
		running  atomic.Int32
		peak     atomic.Int32
	)
	handler := func(_ context.Context, j engine.Job) (map[string]any, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		mu.Lock()
		attempts[j.Key]++
		a := attempts[j.Key]
		mu.Unlock()
		switch {
		case a == 1 && j.Key%2 == 0:
			return nil, errors.New("first attempt fails")
		case a == 1:
			panic("first attempt panics")
		}
		return map[string]any{"attempts": a}, nil
	}
	done := make(chan error, 1)
	go func() {
		done <- e.HandleJobs(ctx, "work", handler, engine.WorkerOptions{Concurrency: 3, PollInterval: time.Millisecond})
	}()
	for _, inst := range insts {
		state, err := inst.Wait(ctxT(t))
		require.NoError(t, err)
		require.Equal(t, engine.Completed, state)
		require.EqualValues(t, 2, inst.Variables()["attempts"], "failed once, then completed")
	}
	cancel()
	require.NoError(t, <-done)
	require.LessOrEqual(t, peak.Load(), int32(3), "at most Concurrency handlers at once")
	for _, inst := range insts {
		h := history(inst)
		var failed int
		for _, ev := range h {
			if ev.Type == engine.JobFailed {
				failed++
				require.Contains(t, []string{"first attempt fails", "job handler panicked: first attempt panics"}, ev.Message)
			}
		}
		require.Equal(t, 1, failed)
	}
}

// TestEngine_ActivateJobs_Concurrent: workers activating at once never get
// the same job, and together they get every job.
func TestEngine_ActivateJobs_Concurrent(t *testing.T) {
	e := newEngine(t)
	startJobs(t, e, 60)
	ctx := ctxT(t)
	var (
		mu   sync.Mutex
		seen = map[int64]int{}
		wg   sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				jobs, err := e.ActivateJobs(ctx, "work", fmt.Sprint("w", w), time.Hour, 3)
				if err != nil || len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					seen[j.Key]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, 60, "every job was activated")
	for k, n := range seen {
		require.Equal(t, 1, n, "job %d activated %d times", k, n)
	}
}

// TestEngine_NextDeadline_JobTimes checks that NextDeadline names when an
// activation times out or a back-off ends, so a host in real time wakes
// when the job is activatable again, and names nothing once it is.
func TestEngine_NextDeadline_JobTimes(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	startJobs(t, e, 2)
	_, pending := e.NextDeadline()
	require.False(t, pending, "jobs nobody holds are activatable now")

	jobs, err := e.ActivateJobs(ctx, "work", "w", time.Minute, 2)
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	due, pending := e.NextDeadline()
	require.True(t, pending)
	require.Equal(t, e.Now().Add(time.Minute), due, "the activation deadline")

	require.NoError(t, e.FailJob(ctx, jobs[0].Key, 2, "busy", engine.JobActivation(jobs[0].Activation), engine.RetryBackoff(10*time.Second)))
	due, pending = e.NextDeadline()
	require.True(t, pending)
	require.Equal(t, e.Now().Add(10*time.Second), due, "the back-off ends before the other activation times out")

	require.NoError(t, e.AdvanceTo(ctx, due))
	due, pending = e.NextDeadline()
	require.True(t, pending)
	require.Equal(t, jobs[1].Deadline.UTC(), due.UTC(), "a passed back-off is no deadline")

	// A job failed with no retries left waits for an incident, not a time.
	require.NoError(t, e.FailJob(ctx, jobs[1].Key, 0, "broken", engine.JobActivation(jobs[1].Activation)))
	_, pending = e.NextDeadline()
	require.False(t, pending)
}

// TestEngine_NextDeadline_ManyActivations: after many activations of the
// same job, each leaving a stale time behind that nobody asked about
// (the times are rebuilt from the job records along the way), NextDeadline
// names the current one, and none once the job failed without a back-off.
func TestEngine_NextDeadline_ManyActivations(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	startJobs(t, e, 1)
	var last engine.Job
	for i := range 300 {
		jobs, err := e.ActivateJobs(ctx, "work", "w", time.Duration(300-i)*time.Second, 1)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		last = jobs[0]
		if i < 299 {
			require.NoError(t, e.FailJob(ctx, last.Key, 3, "again", engine.JobActivation(last.Activation)))
		}
	}
	due, pending := e.NextDeadline()
	require.True(t, pending)
	require.True(t, last.Deadline.Equal(due), "the last activation's deadline, not an earlier stale one")
	require.NoError(t, e.FailJob(ctx, last.Key, 3, "again", engine.JobActivation(last.Activation)))
	_, pending = e.NextDeadline()
	require.False(t, pending, "a failed job without back-off is activatable now")
}
