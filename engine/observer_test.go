package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestEngine_BlockedObserverIsDropped checks the observer backlog policy:
// an observer that stops returning is dropped once its backlog passes the
// limit, without ever blocking an instance; Settle then returns, the
// engine runs on, the other observers see everything, and unsubscribe
// reports the drop.
func TestEngine_BlockedObserverIsDropped(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t, engine.WithObserverBacklog(50))
	deployFile(t, e, "order.bpmn")

	release := make(chan struct{})
	blocked := make(chan struct{})
	var once bool
	unsubscribe := e.Subscribe(func(engine.Event) {
		if !once {
			once = true
			close(blocked)
			<-release // never returns until the test says so
		}
	})
	var insts []*engine.Instance
	for i := range 20 { // well over 50 records
		inst, err := e.Start(ctx, "order", map[string]any{"amount": 1})
		require.NoError(t, err)
		insts = append(insts, inst)
		if i == 0 {
			// The first instance's dozen records reach the observer, which
			// blocks in its first call; the rest pile up behind it. (Before
			// that, the backlog could fill before the observer ran at all.)
			<-blocked
		}
	}
	require.NoError(t, e.Settle(ctx), "Settle does not wait for a dropped observer")
	before := 0
	for _, inst := range insts {
		before += len(history(inst))
	}
	seen := 0
	unsubscribeOther := e.Subscribe(func(engine.Event) { seen++ })
	for range 10 { // one job at a time, settling after each: a few records at a time
		jobs := e.Jobs(engine.JobFilter{})
		if len(jobs) == 0 {
			break
		}
		for _, j := range jobs {
			require.NoError(t, e.CompleteJob(ctx, j.Key, nil))
			require.NoError(t, e.Settle(ctx))
		}
	}
	records := 0
	for _, inst := range insts {
		assert.Equal(t, engine.Completed, inst.State())
		records += len(history(inst))
	}
	assert.Equal(t, records-before, seen, "an observer that keeps up sees every record")
	require.NoError(t, unsubscribeOther())

	close(release)
	err := unsubscribe()
	require.ErrorIs(t, err, engine.ErrObserverDropped)
	assert.Contains(t, err.Error(), "50")
}

// TestEngine_CloseReturnsWhenItsContextEnds checks that Close returns once
// its context ends even while an observer never returns, and reports why.
func TestEngine_CloseReturnsWhenItsContextEnds(t *testing.T) {
	e, err := engine.New()
	require.NoError(t, err)
	deploy(t, e, process(`<bpmn:startEvent id="s"/>`))
	release := make(chan struct{})
	blocked := make(chan struct{}, 1)
	e.Subscribe(func(engine.Event) {
		select {
		case blocked <- struct{}{}:
		default:
		}
		<-release
	})
	inst, err := e.Start(context.Background(), "p", nil)
	require.NoError(t, err)
	<-blocked
	_, err = inst.Wait(context.Background())
	require.NoError(t, err, "the instance ends whatever its observer does")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.Close(ctx) }()
	cancel()
	err = <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "observer")

	close(release) // the observer returns: a second Close completes
	require.NoError(t, e.Close(context.Background()))
}

// TestEngine_ObserverContract checks the observer contract of the package
// doc: every observer gets each instance's records in order and complete;
// an observer that panics loses only the records it panicked on, keeps
// getting the rest, and each panic reaches the error handler as an
// *ObserverPanicError naming the record; the engine and the other
// observers are not affected. host (TestEngine_ObserverContract) and the
// SDK (engine.test.mjs, "observer contract") hold their surfaces to it.
func TestEngine_ObserverContract(t *testing.T) {
	ctx := ctxT(t)
	var mu sync.Mutex
	var reported []error
	e := newEngine(t, engine.WithErrorHandler(func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}))
	deployFile(t, e, "order.bpmn")

	type stream map[int64][]uint64 // instance -> seqs received
	var calm, panicky stream = stream{}, stream{}
	var panickedOn []engine.Event
	stopCalm := e.Subscribe(func(ev engine.Event) { calm[ev.InstanceKey] = append(calm[ev.InstanceKey], ev.Seq) })
	stopPanicky := e.Subscribe(func(ev engine.Event) {
		if ev.Type == engine.JobCreated {
			panickedOn = append(panickedOn, ev)
			panic(fmt.Errorf("observer bug at %s", ev.ElementID))
		}
		panicky[ev.InstanceKey] = append(panicky[ev.InstanceKey], ev.Seq)
	})
	var insts []*engine.Instance
	for range 5 {
		inst, err := e.Start(ctx, "order", map[string]any{"amount": 1})
		require.NoError(t, err)
		insts = append(insts, inst)
	}
	require.NoError(t, e.Settle(ctx))
	work(t, e, nil)
	require.NoError(t, e.Settle(ctx))
	require.NoError(t, stopCalm())
	require.NoError(t, stopPanicky())

	require.NotEmpty(t, panickedOn)
	for _, inst := range insts {
		assert.Equal(t, engine.Completed, inst.State(), "a panicking observer does not stop the engine")
		var want, wantPanicky []uint64
		for _, ev := range history(inst) {
			want = append(want, ev.Seq)
			if ev.Type != engine.JobCreated {
				wantPanicky = append(wantPanicky, ev.Seq)
			}
		}
		assert.Equal(t, want, calm[inst.Key()], "instance %d: every record, in order", inst.Key())
		assert.Equal(t, wantPanicky, panicky[inst.Key()], "instance %d: all but the records it panicked on", inst.Key())
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reported, len(panickedOn), "one report per panic")
	for i, err := range reported {
		var pe *engine.ObserverPanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, panickedOn[i], pe.Event)
		assert.ErrorContains(t, err, "observer bug at "+pe.Event.ElementID)
		assert.NotEmpty(t, pe.Stack)
	}
}
