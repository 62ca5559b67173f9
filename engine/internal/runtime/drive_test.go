package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
)

func directEngine(t *testing.T) *Engine {
	t.Helper()
	e := NewEngine(Options{Clock: clock.NewVirtual(clock.Epoch), Resumption: ResumeDirect})
	t.Cleanup(func() { require.NoError(t, e.Close(ctxT(t))) })
	return e
}

func oneJobPlan(t *testing.T) *Plan {
	return newGraph(t, "job").node("s:startEvent", "a:serviceTask", "end:endEvent").
		flow("s>a", "a>end").plan(CompileOptions{})
}

// With direct resumption a call into the engine returns with the engine
// settled: the caller's goroutine drove the instance.
func TestDirect_CallReturnsSettled(t *testing.T) {
	e := directEngine(t)
	inst, err := e.Start(straightPlan(&testing.B{}), nil)
	require.NoError(t, err)
	assert.Equal(t, Completed, inst.State(), "Start drove the instance to its end")
	assert.Zero(t, e.busy.n.Load(), "nothing is left to move")
}

// A command that reaches an instance just as it ends is answered once,
// with ErrInstanceEnded, and released once: Settle never hangs and the
// count never goes negative. Callers race the completion that ends the
// instance from other goroutines.
func TestDirect_CommandToEndingInstanceIsReleasedOnce(t *testing.T) {
	e := directEngine(t)
	plan := oneJobPlan(t)
	for range 200 {
		inst := run(t, e, plan, nil)
		key := e.Jobs(JobFilter{InstanceKey: inst.Key()})[0].Key
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				_, err := inst.Tokens(ctxT(t))
				assert.NoError(t, err)
				err = inst.Cancel(ctxT(t))
				assert.True(t, err == nil || errors.Is(err, ErrInstanceEnded), "cancel: %v", err)
			})
		}
		err := e.CompleteJob(ctxT(t), key, nil)
		assert.True(t, err == nil || errors.Is(err, ErrUnknownJob), "complete: %v", err)
		wg.Wait()
		require.NoError(t, e.Settle(ctxT(t)))
		require.Zero(t, e.busy.n.Load())
		_, err = inst.Tokens(ctxT(t))
		require.NoError(t, err, "a finished instance has no tokens, and says so")
	}
}

// No user code runs on the driver: an observer that makes blocking calls
// into the engine from its callback (reading tokens, completing the job it
// was told about) waits for the driver like any caller, and never for
// itself.
func TestDirect_ObserverCallsBackIntoTheEngine(t *testing.T) {
	e := directEngine(t)
	plan := oneJobPlan(t)
	ctx := context.Background()
	unsubscribe := e.Subscribe(func(ev Event) {
		if ev.Type != JobCreated {
			return
		}
		inst, ok := e.Instance(ev.InstanceKey)
		if !assert.True(t, ok) {
			return
		}
		toks, err := inst.Tokens(ctx)
		assert.NoError(t, err)
		assert.Len(t, toks, 1)
		assert.NoError(t, e.CompleteJob(ctx, ev.JobKey, map[string]any{"done": true}))
	})
	var insts []*Instance
	for range 50 {
		inst, err := e.Start(plan, nil)
		require.NoError(t, err)
		insts = append(insts, inst)
	}
	require.NoError(t, e.Settle(ctxT(t)))
	require.NoError(t, unsubscribe())
	for _, inst := range insts {
		st, err := inst.Wait(ctxT(t))
		require.NoError(t, err)
		assert.Equal(t, Completed, st)
		assert.Equal(t, true, inst.Variables()["done"])
	}
}
