package runtime

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowtrack/flowtrack/engine/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testEngine(t *testing.T) *Engine {
	t.Helper()
	e := NewEngine(Options{Clock: clock.NewVirtual(clock.Epoch)})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, e.Close(ctx))
	})
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func run(t *testing.T, e *Engine, plan *Plan, vars map[string]any) *Instance {
	t.Helper()
	inst, err := e.Start(plan, vars)
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	return inst
}

// trace lists "type element" for the records of inst that concern
// elements, in stream order.
func trace(inst *Instance) []string {
	var out []string
	for _, ev := range inst.History() {
		switch ev.Type {
		case ElementEntered, ElementLeft, ElementTerminated, TokenMerged:
			out = append(out, string(ev.Type)+" "+ev.ElementID)
		}
	}
	return out
}

func left(inst *Instance) []string {
	var out []string
	for _, ev := range inst.History() {
		if ev.Type == ElementLeft {
			out = append(out, ev.ElementID)
		}
	}
	sort.Strings(out)
	return out
}

func TestInstance_Straight(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "straight").node("s:startEvent", "a:task", "b:manualTask", "end:endEvent").
		flow("s>a", "a>b", "b>end").plan(CompileOptions{})
	inst := run(t, e, plan, map[string]any{"x": 1.0})
	st, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, Completed, st)
	assert.Equal(t, []string{
		"elementEntered s", "elementLeft s", "elementEntered a", "elementLeft a",
		"elementEntered b", "elementLeft b", "elementEntered end", "elementLeft end",
	}, trace(inst))
	h := inst.History()
	assert.Equal(t, InstanceStarted, h[0].Type)
	assert.Equal(t, InstanceCompleted, h[len(h)-1].Type)
	for i, ev := range h {
		assert.Equal(t, uint64(i+1), ev.Seq, "records are numbered without gaps")
	}
	assert.Equal(t, map[string]any{"x": 1.0}, inst.Variables())
}

func TestInstance_ParallelForkJoin(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "par").node("s:startEvent", "fork:parallelGateway", "a:task", "b:task", "c:task",
		"join:parallelGateway", "end:endEvent").
		flow("s>fork", "fork>a", "fork>b", "fork>c", "a>join", "b>join", "c>join", "join>end").plan(CompileOptions{})
	inst := run(t, e, plan, nil)
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Completed, st)
	assert.Equal(t, []string{"a", "b", "c", "end", "fork", "join", "s"}, left(inst))
	merged := 0
	for _, ev := range inst.History() {
		if ev.Type == TokenMerged {
			merged++
		}
	}
	assert.Equal(t, 2, merged, "three tokens arrive, one goes on")
}

func TestInstance_ImplicitForkAndMerge(t *testing.T) {
	e := testEngine(t)
	// a forks implicitly; x is reached twice (an implicit merge runs it twice).
	plan := newGraph(t, "implicit").node("s:startEvent", "a:task", "b:task", "c:task", "x:task", "end:endEvent").
		flow("s>a", "a>b", "a>c", "b>x", "c>x", "x>end").plan(CompileOptions{})
	inst := run(t, e, plan, nil)
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Completed, st)
	assert.Equal(t, []string{"a", "b", "c", "end", "end", "s", "x", "x"}, left(inst))
}

func TestInstance_ExclusiveGateway(t *testing.T) {
	plan := func(t *testing.T) *Plan {
		return newGraph(t, "xor").node("s:startEvent", "gw:exclusiveGateway", "big:task", "small:task", "other:task", "end:endEvent").
			flow("s>gw", "gw>big?= amount > 100", "gw>small?amount > 10", "gw>other!", "big>end", "small>end", "other>end").
			plan(CompileOptions{})
	}
	for _, tc := range []struct {
		amount float64
		want   string
	}{{500, "big"}, {50, "small"}, {5, "other"}} {
		t.Run(fmt.Sprint(tc.amount), func(t *testing.T) {
			e := testEngine(t)
			inst := run(t, e, plan(t), map[string]any{"amount": tc.amount})
			st, _ := inst.Wait(ctxT(t))
			assert.Equal(t, Completed, st)
			assert.Contains(t, left(inst), tc.want)
			assert.Len(t, left(inst), 4)
		})
	}
}

func TestInstance_ExclusiveNoFlowOpensIncident(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "xor").node("s:startEvent", "gw:exclusiveGateway", "a:task", "end:endEvent").
		flow("s>gw", "gw>a?= amount > 100", "a>end").plan(CompileOptions{})
	inst := run(t, e, plan, map[string]any{"amount": 1.0})
	assert.Equal(t, Active, inst.State())
	incs := inst.Incidents()
	require.Len(t, incs, 1)
	assert.Equal(t, "gw", incs[0].ElementID)
	assert.Contains(t, incs[0].Message, "no condition is true")
	toks, err := inst.Tokens(ctxT(t))
	require.NoError(t, err)
	require.Len(t, toks, 1)
	assert.Equal(t, Token{ID: 1, ElementID: "gw", Waiting: WaitIncident, IncidentKey: incs[0].Key}, toks[0])

	// Resolving re-evaluates: still false, so a fresh incident opens.
	require.NoError(t, e.ResolveIncident(ctxT(t), incs[0].Key))
	require.NoError(t, e.Settle(ctxT(t)))
	incs2 := inst.Incidents()
	require.Len(t, incs2, 1)
	assert.NotEqual(t, incs[0].Key, incs2[0].Key)
	require.ErrorIs(t, e.ResolveIncident(ctxT(t), incs[0].Key), ErrUnknownIncident)
}

func TestInstance_ConditionErrorOpensIncident(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "xor").node("s:startEvent", "gw:exclusiveGateway", "a:task", "b:task", "end:endEvent").
		flow("s>gw", "gw>a?= amount > 100", "gw>b!", "a>end", "b>end").plan(CompileOptions{})
	inst := run(t, e, plan, map[string]any{"amount": "lots"})
	incs := inst.Incidents()
	require.Len(t, incs, 1, "a type mismatch never silently takes the default flow")
	assert.Equal(t, "gw", incs[0].ElementID)
	assert.Contains(t, incs[0].Message, "gw_a")
}

func jobPlan(t *testing.T) *Plan {
	return newGraph(t, "jobs").node("s:startEvent", "work:serviceTask", "end:endEvent").
		flow("s>work", "work>end").plan(CompileOptions{})
}

func TestJobs_CompleteMergesVariables(t *testing.T) {
	e := testEngine(t)
	inst := run(t, e, jobPlan(t), map[string]any{"a": 1.0})
	jobs := e.Jobs(JobFilter{})
	require.Len(t, jobs, 1)
	j := jobs[0]
	assert.Equal(t, "serviceTask", j.Type, "an untyped task is typed by its element kind")
	assert.Equal(t, "work", j.ElementID)
	assert.Equal(t, inst.Key(), j.InstanceKey)
	assert.Equal(t, DefaultRetries, j.Retries)
	assert.Equal(t, map[string]any{"a": 1.0}, j.Variables)
	toks, _ := inst.Tokens(ctxT(t))
	assert.Equal(t, []Token{{ID: 1, ElementID: "work", Waiting: WaitJob, JobKey: j.Key}}, toks)

	require.NoError(t, e.CompleteJob(ctxT(t), j.Key, map[string]any{"b": "x"}))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Completed, st)
	assert.Equal(t, map[string]any{"a": 1.0, "b": "x"}, inst.Variables())
	assert.Empty(t, e.Jobs(JobFilter{}))
	require.ErrorIs(t, e.CompleteJob(ctxT(t), j.Key, nil), ErrUnknownJob)
	require.ErrorIs(t, e.CompleteJob(ctxT(t), 424242, nil), ErrUnknownJob)
}

func TestJobs_FailRetriesThenIncident(t *testing.T) {
	e := testEngine(t)
	inst := run(t, e, jobPlan(t), nil)
	j := e.Jobs(JobFilter{Type: "serviceTask"})[0]
	require.NoError(t, e.FailJob(ctxT(t), j.Key, 2, "timeout"))
	again := e.Jobs(JobFilter{})
	require.Len(t, again, 1)
	assert.Equal(t, 2, again[0].Retries)
	assert.Equal(t, "timeout", again[0].ErrorMessage)

	require.NoError(t, e.FailJob(ctxT(t), j.Key, 0, "down"))
	assert.Empty(t, e.Jobs(JobFilter{}), "a job without retries is not activatable")
	incs := inst.Incidents()
	require.Len(t, incs, 1)
	assert.Equal(t, j.Key, incs[0].JobKey)
	assert.Equal(t, "down", incs[0].Message)

	require.NoError(t, e.ResolveIncident(ctxT(t), incs[0].Key))
	back := e.Jobs(JobFilter{})
	require.Len(t, back, 1)
	assert.Equal(t, 1, back[0].Retries)
	require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Completed, st)
}

func TestJobs_ThrowErrorWithoutCatchOpensIncident(t *testing.T) {
	e := testEngine(t)
	inst := run(t, e, jobPlan(t), nil)
	j := e.Jobs(JobFilter{})[0]
	require.NoError(t, e.ThrowError(ctxT(t), j.Key, "NO_STOCK", "out of stock", nil))
	incs := inst.Incidents()
	require.Len(t, incs, 1)
	assert.Contains(t, incs[0].Message, "NO_STOCK")
	assert.Empty(t, e.Jobs(JobFilter{}))
}

func TestInstance_CancelWithdrawsEverything(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "cancel").node("s:startEvent", "fork:parallelGateway", "a:serviceTask", "b:userTask",
		"join:parallelGateway", "end:endEvent").
		flow("s>fork", "fork>a", "fork>b", "a>join", "b>join", "join>end").plan(CompileOptions{})
	inst := run(t, e, plan, nil)
	require.Len(t, e.Jobs(JobFilter{}), 2)
	require.NoError(t, inst.Cancel(ctxT(t)))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Terminated, st)
	assert.Empty(t, e.Jobs(JobFilter{}))
	canceled := 0
	for _, ev := range inst.History() {
		if ev.Type == JobCanceled {
			canceled++
		}
	}
	assert.Equal(t, 2, canceled)
	assert.Contains(t, trace(inst), "elementTerminated a")
	assert.Contains(t, trace(inst), "elementTerminated b")
	require.ErrorIs(t, inst.Cancel(ctxT(t)), ErrInstanceEnded)
	toks, err := inst.Tokens(ctxT(t))
	require.NoError(t, err)
	assert.Empty(t, toks)
}

func TestInstance_TerminateEndEvent(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "term").node("s:startEvent", "fork:parallelGateway", "slow:userTask", "end:endEvent", "kill:terminate").
		flow("s>fork", "fork>slow", "fork>kill", "slow>end").plan(CompileOptions{})
	inst := run(t, e, plan, nil)
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Completed, st, "a terminate end event completes the instance")
	assert.Contains(t, trace(inst), "elementTerminated slow")
	assert.NotContains(t, left(inst), "slow")
	assert.Empty(t, e.Jobs(JobFilter{}))
}

func TestInstance_EndlessCycleIsBounded(t *testing.T) {
	e := NewEngine(Options{Clock: clock.NewVirtual(clock.Epoch), MaxSteps: 50})
	defer func() { require.NoError(t, e.Close(ctxT(t))) }()
	plan := newGraph(t, "cycle").node("s:startEvent", "a:task", "gw:exclusiveGateway", "end:endEvent").
		flow("s>a", "a>gw", "gw>a?true", "gw>end!").plan(CompileOptions{})
	inst := run(t, e, plan, nil)
	incs := inst.Incidents()
	require.Len(t, incs, 1)
	assert.Contains(t, incs[0].Message, "without waiting")
}

func TestEngine_SubscribeSeesEveryRecordInOrder(t *testing.T) {
	e := testEngine(t)
	var mu sync.Mutex
	got := map[int64][]uint64{}
	unsubscribe := e.Subscribe(func(ev Event) {
		mu.Lock()
		got[ev.InstanceKey] = append(got[ev.InstanceKey], ev.Seq)
		mu.Unlock()
	})
	defer unsubscribe()
	plan := newGraph(t, "par").node("s:startEvent", "fork:parallelGateway", "a:task", "b:task",
		"join:parallelGateway", "end:endEvent").
		flow("s>fork", "fork>a", "fork>b", "a>join", "b>join", "join>end").plan(CompileOptions{})
	var insts []*Instance
	for range 20 {
		inst, err := e.Start(plan, nil)
		require.NoError(t, err)
		insts = append(insts, inst)
	}
	require.NoError(t, e.Settle(ctxT(t)), "settle includes delivery to observers")
	mu.Lock()
	defer mu.Unlock()
	for _, inst := range insts {
		seqs := got[inst.Key()]
		require.Len(t, seqs, len(inst.History()))
		for i, s := range seqs {
			require.Equal(t, uint64(i+1), s)
		}
	}
}

func TestEngine_FinishedInstancesAreRetainedBounded(t *testing.T) {
	e := NewEngine(Options{Clock: clock.NewVirtual(clock.Epoch), RetainFinished: 3})
	defer func() { require.NoError(t, e.Close(ctxT(t))) }()
	plan := newGraph(t, "s").node("s:startEvent", "end:endEvent").flow("s>end").plan(CompileOptions{})
	var keys []int64
	for range 5 {
		inst := run(t, e, plan, nil)
		_, _ = inst.Wait(ctxT(t))
		keys = append(keys, inst.Key())
	}
	for i, k := range keys {
		_, ok := e.Instance(k)
		assert.Equal(t, i >= 2, ok, "instance %d", i)
	}
	assert.Empty(t, e.Instances())
}

// TestStress_ConcurrentInstances runs many instances with forks, joins and
// jobs completed from several goroutines at once. Run it under -race.
func TestStress_ConcurrentInstances(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "stress").node("s:startEvent", "fork:parallelGateway", "a:serviceTask", "b:task", "c:task",
		"join:parallelGateway", "gw:exclusiveGateway", "x:serviceTask", "y:task", "end:endEvent").
		flow("s>fork", "fork>a", "fork>b", "fork>c", "a>join", "b>join", "c>join", "join>gw",
			"gw>x?n > 2", "gw>y!", "x>end", "y>end").plan(CompileOptions{})
	const instances = 300
	var wg sync.WaitGroup
	insts := make([]*Instance, instances)
	for i := range instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst, err := e.Start(plan, map[string]any{"n": float64(i % 5)})
			assert.NoError(t, err)
			insts[i] = inst
		}()
	}
	wg.Wait()
	// Workers complete jobs concurrently until none is left.
	for {
		require.NoError(t, e.Settle(ctxT(t)))
		jobs := e.Jobs(JobFilter{})
		if len(jobs) == 0 {
			break
		}
		var workers sync.WaitGroup
		for w := range 4 {
			workers.Add(1)
			go func() {
				defer workers.Done()
				for i := w; i < len(jobs); i += 4 {
					assert.NoError(t, e.CompleteJob(ctxT(t), jobs[i].Key, map[string]any{"done": true}))
				}
			}()
		}
		workers.Wait()
	}
	for i, inst := range insts {
		st, err := inst.Wait(ctxT(t))
		require.NoError(t, err)
		require.Equal(t, Completed, st, "instance %d", i)
		want := []string{"a", "b", "c", "end", "fork", "gw", "join", "s", "y"}
		if i%5 > 2 {
			want = []string{"a", "b", "c", "end", "fork", "gw", "join", "s", "x"}
		}
		require.Equal(t, want, left(inst))
	}
}

// TestInstance_LoopPanicFailsInstanceCleanly: a bug that panics inside the
// loop fails the instance with the reason; every goroutine still ends and
// Settle returns (goleak checks the rest at the end of the package).
func TestInstance_LoopPanicFailsInstanceCleanly(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "boom").node("s:startEvent", "fork:parallelGateway", "a:serviceTask", "b:task", "end:endEvent").
		flow("s>fork", "fork>a", "fork>b", "a>end", "b>end").plan(CompileOptions{})
	inst := run(t, e, plan, nil)
	require.Len(t, e.Jobs(JobFilter{}), 1)
	// Break an invariant the loop relies on: the job's token is gone.
	cmd := &command{op: cmdCompleteJob, key: e.Jobs(JobFilter{})[0].Key}
	sabotage := &command{op: cmdTokens}
	require.NoError(t, inst.call(ctxT(t), sabotage))
	for _, js := range inst.jobs {
		js.token = 999
	}
	err := inst.call(ctxT(t), cmd)
	require.Error(t, err)
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Failed, st)
	assert.Contains(t, inst.Message(), "internal error")
	require.NoError(t, e.Settle(ctxT(t)))
}

// An engine without a store lists no changed instances: nothing would
// drain the list, which would keep every finished instance alive.
func TestEngine_NoStoreListsNoDirtyInstances(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "straight").node("s:startEvent", "a:task", "end:endEvent").
		flow("s>a", "a>end").plan(CompileOptions{})
	for range 20 {
		run(t, e, plan, nil)
	}
	e.dirtyMu.Lock()
	defer e.dirtyMu.Unlock()
	assert.Empty(t, e.dirty)
}
