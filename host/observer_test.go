package host_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// TestEngine_ObserverContract holds the host to the observer contract of
// package engine (engine's TestEngine_ObserverContract is the same test
// natively): with calls made from several goroutines at once, every
// observer gets each instance's records in order and complete, and is
// never called concurrently with itself; an observer that panics loses
// only the records it panicked on, and each panic reaches the error
// handler as an *engine.ObserverPanicError naming the record.
func TestEngine_ObserverContract(t *testing.T) {
	ctx := ctxT(t)
	var mu sync.Mutex
	var reported []error
	e := newHost(t, host.WithErrorHandler(func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}))
	_, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)

	type stream map[int64][]uint64 // instance -> seqs received
	calm, panicky := stream{}, stream{}
	var panickedOn []engine.Event
	var inCalm, inPanicky sync.Mutex // TryLock fails if an observer is entered twice at once
	stopCalm := e.Subscribe(func(ev engine.Event) {
		assert.True(t, inCalm.TryLock(), "observer called concurrently with itself")
		defer inCalm.Unlock()
		calm[ev.InstanceKey] = append(calm[ev.InstanceKey], ev.Seq)
	})
	stopPanicky := e.Subscribe(func(ev engine.Event) {
		assert.True(t, inPanicky.TryLock(), "observer called concurrently with itself")
		defer inPanicky.Unlock()
		if ev.Type == engine.JobCreated {
			panickedOn = append(panickedOn, ev)
			panic(fmt.Errorf("observer bug at %s", ev.ElementID))
		}
		panicky[ev.InstanceKey] = append(panicky[ev.InstanceKey], ev.Seq)
	})

	const workers = 4
	keys := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				key, err := e.Start(ctx, "order", map[string]any{"amount": 40})
				if !assert.NoError(t, err) {
					return
				}
				keys[w] = append(keys[w], key)
			}
			for range 20 { // each goroutine works its own instances' jobs
				done := true
				for _, key := range keys[w] {
					jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: key})
					if !assert.NoError(t, err) {
						return
					}
					for _, j := range jobs {
						done = false
						assert.NoError(t, e.CompleteJob(ctx, j.Key, map[string]any{"valid": true, "paid": true}))
					}
				}
				if done {
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, stopCalm())
	require.NoError(t, stopPanicky())

	require.NotEmpty(t, panickedOn)
	for _, ks := range keys {
		for _, key := range ks {
			st, err := e.State(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, st, "a panicking observer does not stop the engine")
			hist, err := e.History(ctx, key)
			require.NoError(t, err)
			var want, wantPanicky []uint64
			for _, ev := range hist {
				want = append(want, ev.Seq)
				if ev.Type != engine.JobCreated {
					wantPanicky = append(wantPanicky, ev.Seq)
				}
			}
			assert.Equal(t, want, calm[key], "instance %d: every record, in order", key)
			assert.Equal(t, wantPanicky, panicky[key], "instance %d: all but the records it panicked on", key)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reported, len(panickedOn), "one report per panic")
	for i, err := range reported {
		var pe *engine.ObserverPanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, panickedOn[i], pe.Event)
		assert.ErrorContains(t, err, "observer bug at "+pe.Event.ElementID)
	}
}
