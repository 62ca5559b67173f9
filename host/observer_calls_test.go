package host_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// timerJobXML waits an hour, then runs a job of type "work".
const timerJobXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="tj" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>
    <bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="work"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="done"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="work"/>
    <bpmn:sequenceFlow id="f3" sourceRef="work" targetRef="done"/>
  </bpmn:process>
</bpmn:definitions>`

// TestEngine_ObserverCallsAnything: the host runs an observer on the
// calling goroutine after the call has released the module, and its
// Settle and Advance wait for no observer, so an observer may make every
// call, Settle, Advance and Close included (natively, Advance and Close
// return engine.ErrCalledFromObserver instead).
func TestEngine_ObserverCallsAnything(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "tj.bpmn", []byte(timerJobXML))
	require.NoError(t, err)
	var errs []error
	e.Subscribe(func(ev engine.Event) {
		switch ev.Type {
		case engine.TimerScheduled:
			errs = append(errs, e.Settle(ctx), e.Advance(ctx, time.Hour))
		case engine.JobCreated:
			errs = append(errs, e.CompleteJob(ctx, ev.JobKey, nil), e.Settle(ctx))
		case engine.InstanceCompleted:
			errs = append(errs, e.Close(ctx))
		}
	})
	key, err := e.Start(ctx, "tj", nil)
	require.NoError(t, err)
	assert.Equal(t, make([]error, 5), errs, "every call from the observer returned nil")
	_, err = e.State(ctx, key)
	require.ErrorIs(t, err, engine.ErrClosed, "the observer closed the engine")
}
