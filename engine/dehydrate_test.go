package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

var modes = []struct {
	name string
	r    engine.Resumption
}{{"goroutines", engine.ResumeGoroutines}, {"direct", engine.ResumeDirect}}

// TestDehydration_SameHistory runs the README's order (a job, a keyed
// message, a timer) on a plain engine and on one that dehydrates every
// idle instance, and requires the same histories, keys and times included,
// the same variables and the same jobs.
func TestDehydration_SameHistory(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			run := func(opts ...engine.Option) ([]engine.Event, map[string]any, []engine.Job, bool) {
				e := newEngine(t, append(opts, engine.WithResumption(m.r))...)
				deployFile(t, e, "readme_order.bpmn")
				ctx := ctxT(t)
				inst, err := e.Start(ctx, "order", map[string]any{"orderId": "o-1", "amount": 120})
				require.NoError(t, err)
				require.NoError(t, e.Settle(ctx))
				dry := inst.Dehydrated()
				jobs := e.Jobs(engine.JobFilter{})
				for _, job := range jobs {
					require.NoError(t, e.CompleteJob(ctx, job.Key, map[string]any{"valid": true}))
				}
				require.NoError(t, e.Settle(ctx))
				dry = dry && inst.Dehydrated()
				require.NoError(t, e.PublishMessage(ctx, engine.Message{Name: "paid", CorrelationKey: "o-1"}))
				require.NoError(t, e.Settle(ctx))
				dry = dry && inst.Dehydrated()
				require.NoError(t, e.Advance(ctx, time.Hour))
				st, err := inst.Wait(ctx)
				require.NoError(t, err)
				require.Equal(t, engine.Completed, st)
				return history(inst), inst.Variables(), jobs, dry
			}
			plainHist, plainVars, plainJobs, plainDry := run()
			dryHist, dryVars, dryJobs, dried := run(engine.WithDehydration(0))
			assert.False(t, plainDry, "without the option nothing dehydrates")
			assert.True(t, dried, "with WithDehydration(0) the instance is dry whenever the engine is settled")
			assert.Equal(t, plainHist, dryHist)
			assert.Equal(t, plainVars, dryVars)
			assert.Equal(t, plainJobs, dryJobs)
		})
	}
}

// TestInstance_Dehydrate: an explicit dehydration, reads of a dry
// instance, and a read that wakes it.
func TestInstance_Dehydrate(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := newEngine(t, engine.WithResumption(m.r))
			deploy(t, e, catchProcess)
			ctx := ctxT(t)
			inst := start(t, e, map[string]any{"key": "a", "n": 1.5, "list": []any{"x", map[string]any{"y": true}}})
			other := start(t, e, map[string]any{"key": "b"})
			awake := inst.Variables()
			toks, err := inst.Tokens(ctx)
			require.NoError(t, err)
			hist := history(inst)
			require.False(t, inst.Dehydrated())

			require.NoError(t, inst.Dehydrate(ctx))
			require.True(t, inst.Dehydrated())
			assert.False(t, other.Dehydrated(), "only the instance asked")
			assert.Equal(t, engine.Active, inst.State(), "State reads a dry instance")
			assert.Equal(t, awake, inst.Variables(), "Variables reads a dry instance from its state")
			assert.True(t, inst.Dehydrated(), "reading State and Variables leaves it dry")
			require.NoError(t, inst.Dehydrate(ctx), "a dry instance: nothing to do")

			got, err := inst.Tokens(ctx)
			require.NoError(t, err)
			assert.Equal(t, toks, got)
			assert.False(t, inst.Dehydrated(), "a read wakes it; without WithDehydration it stays awake")
			assert.Equal(t, hist, history(inst))

			n, err := e.Dehydrate(ctx)
			require.NoError(t, err)
			assert.Equal(t, 2, n)
			require.NoError(t, e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: "b"}))
			st, err := other.Wait(ctx)
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, st, "a correlated message wakes it and it goes on")
			assert.ErrorIs(t, other.Dehydrate(ctx), engine.ErrInstanceEnded)
			assert.True(t, inst.Dehydrated())
			require.NoError(t, inst.Cancel(ctx))
			st, err = inst.Wait(ctx)
			require.NoError(t, err)
			assert.Equal(t, engine.Terminated, st, "a cancel wakes it and ends it")
		})
	}
}

// TestDehydration_Race: every instance is dry when a message, a timer and
// a signal race for its event-based gateway, with reads on the side,
// again and again: the first delivery wakes it, once, and exactly one arm
// wins (SRD-027: first delivery wins, as when it was awake). Run under
// -race, where two loops woken for one instance would be caught writing
// its state. With a store, the dry instance's document is in the store
// only, and the wake reads it from there.
func TestDehydration_Race(t *testing.T) {
	const rounds = 150
	variants := []bool{false} // without a store, then with one where bbolt builds
	if openBoltStore != nil {
		variants = append(variants, true)
	}
	for _, m := range modes {
		for _, stored := range variants {
			name := m.name
			if stored {
				name += "/stored"
			}
			t.Run(name, func(t *testing.T) {
				dehydrationRace(t, m.r, stored, rounds)
			})
		}
	}
}

func dehydrationRace(t *testing.T, r engine.Resumption, stored bool, rounds int) {
	opts := []engine.Option{engine.WithResumption(r), engine.WithDehydration(0)}
	if stored {
		opts = append(opts, engine.WithStore(openBoltStore(t)))
	}
	e := newEngine(t, opts...)
	deploy(t, e, gatewayThenJobProcess)
	wins := map[string]int{}
	for i := range rounds {
		key := fmt.Sprint("k", i)
		inst := start(t, e, map[string]any{"key": key})
		require.True(t, inst.Dehydrated(), "round %d: dry once idle", i)
		var wg sync.WaitGroup
		wg.Add(5)
		go func() {
			defer wg.Done()
			assert.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: key}))
		}()
		go func() { defer wg.Done(); assert.NoError(t, e.Advance(ctxT(t), time.Hour)) }()
		go func() { defer wg.Done(); assert.NoError(t, e.BroadcastSignal(ctxT(t), "stop", nil)) }()
		go func() { defer wg.Done(); _, err := inst.Tokens(ctxT(t)); assert.NoError(t, err) }()
		go func() { defer wg.Done(); assert.NotNil(t, inst.Variables()) }()
		wg.Wait()
		require.NoError(t, e.Settle(ctxT(t)))
		require.Equal(t, openSubs{}, openSubsOf(e), "round %d: the losing arms' subscriptions are gone", i)
		require.True(t, inst.Dehydrated(), "round %d: dry again once idle", i)
		completeAfter(t, e)
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		won := 0
		for _, end := range []string{"endMsg", "endTimer", "endSignal"} {
			if leftSet(inst)[end] {
				won++
				wins[end]++
			}
		}
		require.Equal(t, 1, won, "round %d: exactly one arm wins", i)
	}
	t.Logf("wins over %d rounds: %v", rounds, wins)
}

// TestWithDehydration_IdleTime: with an idle time, an idle instance is
// dehydrated by the engine's sweep, which ends with Close.
func TestWithDehydration_IdleTime(t *testing.T) {
	e := newEngine(t, engine.WithDehydration(time.Millisecond))
	deploy(t, e, catchProcess)
	inst := start(t, e, map[string]any{"key": "a"})
	ctx := ctxT(t)
	for !inst.Dehydrated() { // the sweep runs on the wall clock: wait for it
		select {
		case <-ctx.Done():
			t.Fatal("an instance idle for 1 ms was not dehydrated")
		case <-time.After(time.Millisecond):
		}
	}
	require.NoError(t, e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: "a"}))
	st, err := inst.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st)
}

func TestWithDehydration_Negative(t *testing.T) {
	_, err := engine.New(engine.WithDehydration(-time.Second))
	require.ErrorContains(t, err, "WithDehydration(-1s): must not be negative")
}

// BenchmarkRehydrate measures a read (Tokens) of an instance waiting at a
// message catch, awake and dehydrated: the difference is what rehydrating
// costs the first input after an instance was dehydrated (dehydrating it
// again, outside the timer, is not counted).
// BenchmarkCorrelateDry measures a message correlated to an instance
// parked on a catch, awake or dehydrated, until the instance completes:
// the wake path with its delivery to the track, which BenchmarkRehydrate
// (a read) does not take.
func BenchmarkCorrelateDry(b *testing.B) {
	for _, m := range modes {
		for _, dry := range []bool{false, true} {
			name := m.name + "/awake"
			if dry {
				name = m.name + "/dehydrated"
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(m.r))
				require.NoError(b, err)
				defer e.Close(ctx)
				_, err = e.Deploy("catch.bpmn", []byte(catchProcess))
				require.NoError(b, err)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					b.StopTimer()
					key := fmt.Sprint("k", i)
					i++
					inst, err := e.Start(ctx, "p", map[string]any{"key": key})
					require.NoError(b, err)
					require.NoError(b, e.Settle(ctx))
					if dry {
						require.NoError(b, inst.Dehydrate(ctx))
					}
					b.StartTimer()
					require.NoError(b, e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: key}))
					if _, err := inst.Wait(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkRehydrate(b *testing.B) {
	for _, m := range modes {
		for _, dry := range []bool{false, true} {
			name := m.name + "/awake"
			if dry {
				name = m.name + "/dehydrated"
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(m.r))
				require.NoError(b, err)
				defer e.Close(ctx)
				_, err = e.Deploy("catch.bpmn", []byte(catchProcess))
				require.NoError(b, err)
				inst, err := e.Start(ctx, "p", map[string]any{"key": "a"})
				require.NoError(b, err)
				require.NoError(b, e.Settle(ctx))
				b.ReportAllocs()
				for b.Loop() {
					if dry {
						b.StopTimer()
						if err := inst.Dehydrate(ctx); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					if _, err := inst.Tokens(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
