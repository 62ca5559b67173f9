package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// Every key a partition's engine hands out names the partition, stays
// below 2^53, and goes on in the partition's range after a restore.
func TestWithKeySpace(t *testing.T) {
	vc := clock.NewVirtual(clock.Epoch)
	e, err := engine.New(engine.WithClock(vc), engine.WithKeySpace(7))
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(ctxT(t)) })
	d, err := e.Deploy("two.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	inst, err := e.Start(ctxT(t), "p", map[string]any{"key": "k"})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	job := oneJob(t, e, "a")
	keys := []int64{d.Processes[0].Key, inst.Key(), job.Key}
	for _, k := range keys {
		assert.Equal(t, 7, engine.PartitionOf(k), "key %d", k)
		assert.Less(t, k, int64(1)<<53, "key %d", k)
	}
	r, _ := restored(t, e, engine.WithKeySpace(7))
	inst2, err := r.Start(ctxT(t), "p", map[string]any{"key": "k2"})
	require.NoError(t, err)
	assert.Equal(t, 7, engine.PartitionOf(inst2.Key()))
	assert.Greater(t, inst2.Key(), job.Key, "keys go on after the restored ones")

	_, err = engine.Restore(mustCheckpoint(t, e), engine.WithKeySpace(8))
	require.ErrorIs(t, err, engine.ErrBadState, "a partition's document restored into another key space")

	_, err = engine.New(engine.WithKeySpace(engine.MaxPartitions + 1))
	require.ErrorContains(t, err, "WithKeySpace")
	plain, err := engine.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = plain.Close(ctxT(t)) })
	d, err = plain.Deploy("two.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	assert.Equal(t, int64(1), d.Processes[0].Key, "without a key space keys count from 1")
	assert.Equal(t, 0, engine.PartitionOf(d.Processes[0].Key))
}

func mustCheckpoint(t *testing.T, e *engine.Engine) []byte {
	t.Helper()
	doc, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	return doc
}

// startsXML starts by a timer (PT1M after deploy) or a signal "go", and
// waits for the signal "go" once started.
const startsXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">
  <bpmn:signal id="Go" name="go"/>
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="by_timer"><bpmn:timerEventDefinition><bpmn:timeCycle>R1/PT1M</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:startEvent>
    <bpmn:startEvent id="by_signal"><bpmn:signalEventDefinition signalRef="Go"/></bpmn:startEvent>
    <bpmn:startEvent id="plain"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:signalEventDefinition signalRef="Go"/></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="done"/>
    <bpmn:endEvent id="timer_done"/>
    <bpmn:endEvent id="signal_done"/>
    <bpmn:sequenceFlow id="f1" sourceRef="plain" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="done"/>
    <bpmn:sequenceFlow id="f3" sourceRef="by_timer" targetRef="timer_done"/>
    <bpmn:sequenceFlow id="f4" sourceRef="by_signal" targetRef="signal_done"/>
  </bpmn:process>
</bpmn:definitions>`

// An engine WithoutTimerAndSignalStarts starts no instance by a timer or
// a signal start event, while a signal still reaches the instances that
// wait for it; without the option both start one.
func TestWithoutTimerAndSignalStarts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []engine.Option
		starts int
	}{
		{"default", nil, 2},
		{"without", []engine.Option{engine.WithoutTimerAndSignalStarts()}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vc := clock.NewVirtual(clock.Epoch)
			e, err := engine.New(append(tc.opts, engine.WithClock(vc))...)
			require.NoError(t, err)
			t.Cleanup(func() { _ = e.Close(ctxT(t)) })
			_, err = e.Deploy("starts.bpmn", []byte(startsXML))
			require.NoError(t, err)
			waiting, err := e.Start(ctxT(t), "p", nil)
			require.NoError(t, err)
			require.NoError(t, e.Settle(ctxT(t)))
			require.NoError(t, e.BroadcastSignal(ctxT(t), "go", nil))
			require.NoError(t, e.Advance(ctxT(t), 2*time.Minute))
			require.NoError(t, e.Settle(ctxT(t)))
			assert.Equal(t, engine.Completed, waiting.State(), "the broadcast reached the waiting instance")
			assert.Len(t, e.Instances(), 0)
			m := e.Metrics()
			require.Len(t, m.Processes, 1)
			assert.Equal(t, 1+tc.starts, m.Processes[0].Completed, "instances: the started one, plus those the timer and the signal started")
		})
	}
}

// A document holding a scheduled timer start event restored
// WithoutTimerAndSignalStarts does not fire it.
func TestWithoutTimerAndSignalStarts_Restore(t *testing.T) {
	vc := clock.NewVirtual(clock.Epoch)
	e, err := engine.New(engine.WithClock(vc))
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(ctxT(t)) })
	_, err = e.Deploy("starts.bpmn", []byte(startsXML))
	require.NoError(t, err)
	r, err := engine.Restore(mustCheckpoint(t, e), engine.WithoutTimerAndSignalStarts())
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(ctxT(t)) })
	_, pending := r.NextDeadline()
	assert.False(t, pending, "no timer start scheduled")
	require.NoError(t, r.Advance(ctxT(t), 2*time.Minute))
	require.NoError(t, r.Settle(ctxT(t)))
	assert.Empty(t, r.Metrics().Processes, "no instance started")
}
