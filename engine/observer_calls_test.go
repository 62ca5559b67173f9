package engine_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// observerJobXML runs one job of type "work", then ends.
const observerJobXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="oj" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="work"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="done"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="work"/>
    <bpmn:sequenceFlow id="f2" sourceRef="work" targetRef="done"/>
  </bpmn:process>
</bpmn:definitions>`

// safetyCtx is a deadline that only turns a hang into a failure: the
// tests assert that calls return nil or a named error, never how fast.
func safetyCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var resumptions = map[string]engine.Resumption{"goroutines": engine.ResumeGoroutines, "direct": engine.ResumeDirect}

// TestEngine_ObserverSettles: an observer that completes a job and then
// settles sees the effect of its command when Settle returns, in both
// resumption modes: Settle called from an observer does not wait for that
// observer's own records (it could not: they wait for it to return).
func TestEngine_ObserverSettles(t *testing.T) {
	for name, mode := range resumptions {
		t.Run(name, func(t *testing.T) {
			ctx := safetyCtx(t)
			e := newEngine(t, engine.WithResumption(mode))
			_, err := e.Deploy("oj.bpmn", []byte(observerJobXML))
			require.NoError(t, err)
			type result struct {
				settle error
				state  engine.State
			}
			results := make(chan result, 1)
			unsubscribe := e.Subscribe(func(ev engine.Event) {
				if ev.Type != engine.JobCreated {
					return
				}
				if err := e.CompleteJob(ctx, ev.JobKey, nil); err != nil {
					results <- result{settle: err}
					return
				}
				err := e.Settle(ctx)
				inst, ok := e.Instance(ev.InstanceKey)
				if !ok {
					results <- result{settle: fmt.Errorf("instance %d not found", ev.InstanceKey)}
					return
				}
				results <- result{settle: err, state: inst.State()}
			})
			_, err = e.Start(ctx, "oj", nil)
			require.NoError(t, err)
			r := <-results
			require.NoError(t, r.settle, "Settle from an observer returns")
			assert.Equal(t, engine.Completed, r.state, "the observer's command took effect before its Settle returned")
			require.NoError(t, e.Settle(ctx))
			require.NoError(t, unsubscribe())
		})
	}
}

// TestEngine_ObserversSettleTogether: two observers that both settle from
// the same record do not wait for each other; an outside Settle waits for
// both to return.
func TestEngine_ObserversSettleTogether(t *testing.T) {
	ctx := safetyCtx(t)
	e := newEngine(t)
	_, err := e.Deploy("oj.bpmn", []byte(observerJobXML))
	require.NoError(t, err)
	var mu sync.Mutex
	var settled []error
	observer := func(ev engine.Event) {
		if ev.Type != engine.JobCreated {
			return
		}
		err := e.Settle(ctx)
		mu.Lock()
		settled = append(settled, err)
		mu.Unlock()
	}
	stop1 := e.Subscribe(observer)
	stop2 := e.Subscribe(observer)
	_, err = e.Start(ctx, "oj", nil)
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctx), "the outside Settle returns once both observers have")
	mu.Lock()
	assert.Equal(t, []error{nil, nil}, settled, "both observers settled, and before the outside Settle returned")
	mu.Unlock()
	require.NoError(t, stop1())
	require.NoError(t, stop2())
}

// TestEngine_ObserverCannotAdvanceOrClose: AdvanceTo, Advance and Close
// wait for every observer to return, so from an observer they return
// ErrCalledFromObserver at once, and change nothing: the clock stays, the
// engine stays open.
func TestEngine_ObserverCannotAdvanceOrClose(t *testing.T) {
	ctx := safetyCtx(t)
	e := newEngine(t)
	_, err := e.Deploy("oj.bpmn", []byte(observerJobXML))
	require.NoError(t, err)
	errs := make(chan []error, 1)
	unsubscribe := e.Subscribe(func(ev engine.Event) {
		if ev.Type != engine.JobCreated {
			return
		}
		errs <- []error{
			e.Advance(ctx, time.Hour),
			e.AdvanceTo(ctx, clock.Epoch.Add(time.Hour)),
			e.Close(ctx),
		}
	})
	_, err = e.Start(ctx, "oj", nil)
	require.NoError(t, err)
	for i, err := range <-errs {
		require.ErrorIs(t, err, engine.ErrCalledFromObserver, "call %d", i)
	}
	require.NoError(t, e.Settle(ctx), "the engine is still open")
	assert.Equal(t, clock.Epoch, e.Now(), "the clock did not move")
	require.NoError(t, unsubscribe())
}

// TestEngine_ObserverSettlesDuringAdvance: an observer that settles while
// AdvanceTo runs returns, and so does AdvanceTo.
func TestEngine_ObserverSettlesDuringAdvance(t *testing.T) {
	ctx := safetyCtx(t)
	e := newEngine(t)
	xml, err := os.ReadFile("testdata/two_timers.bpmn") // waits an hour, job "work", an hour, job "last"
	require.NoError(t, err)
	_, err = e.Deploy("two_timers.bpmn", xml)
	require.NoError(t, err)
	settled := make(chan error, 4)
	unsubscribe := e.Subscribe(func(ev engine.Event) {
		if ev.Type == engine.JobCreated {
			err := e.CompleteJob(ctx, ev.JobKey, nil)
			if err == nil {
				err = e.Settle(ctx)
			}
			settled <- err
		}
	})
	inst, err := e.Start(ctx, "tt", nil)
	require.NoError(t, err)
	require.NoError(t, e.Advance(ctx, 3*time.Hour))
	require.NoError(t, <-settled)
	require.NoError(t, <-settled)
	assert.Equal(t, engine.Completed, inst.State(), "both timers fired in the one advance, the second after the observer completed the first job")
	require.NoError(t, unsubscribe())
}
