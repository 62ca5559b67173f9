package engine_test

import (
	"context"
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
