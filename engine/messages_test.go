package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestErrors_NoStackedPrefixes checks that error messages name the file,
// the call and the package once each.
func TestErrors_NoStackedPrefixes(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	for _, doc := range []string{"<x/>", "<bpmn:definitions", ""} {
		_, err := e.Deploy("x.bpmn", []byte(doc))
		require.Error(t, err)
		assert.Equal(t, 1, strings.Count(err.Error(), "x.bpmn"), "%q", err)
	}
	errs := []error{
		e.PublishMessage(ctx, engine.Message{Name: "m", TTL: 290 * 365 * 24 * time.Hour}),
		e.AdvanceTo(ctx, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)),
		e.PublishMessage(ctx, engine.Message{Name: "m", Variables: map[string]any{"x": func() {}}}),
		e.CompleteJob(ctx, 99, nil),
	}
	_, err := engine.New(engine.WithLimits(engine.Limits{MaxTokens: -1}))
	errs = append(errs, err)
	for _, err := range errs {
		require.Error(t, err)
		assert.LessOrEqual(t, strings.Count(err.Error(), "flowtrack:"), 1, "%q", err)
		assert.NotContains(t, err.Error(), "ends at flowtrack", "%q", err)
	}
}

// reachXML has a process waiting on message "go" by key and another
// started by message "go", each with a job after the message.
const reachXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:message id="Msg" name="go"><bpmn:extensionElements><zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>
  <bpmn:process id="waits" isExecutable="true">
    <bpmn:startEvent id="s1"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="Msg"/></bpmn:intermediateCatchEvent>
    <bpmn:serviceTask id="after"><bpmn:extensionElements><zeebe:taskDefinition type="after"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="e1"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s1" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="after"/>
    <bpmn:sequenceFlow id="f3" sourceRef="after" targetRef="e1"/>
  </bpmn:process>
  <bpmn:process id="starts" isExecutable="true">
    <bpmn:startEvent id="s2"><bpmn:messageEventDefinition messageRef="Msg"/></bpmn:startEvent>
    <bpmn:endEvent id="e2"/>
    <bpmn:sequenceFlow id="f4" sourceRef="s2" targetRef="e2"/>
  </bpmn:process>
</bpmn:definitions>`

// TestEngine_PublishMessageReached checks which instances a publication
// reports: the waiting one it was correlated to, then the one it started;
// none for a message buffered or dropped. Both resumption modes.
func TestEngine_PublishMessageReached(t *testing.T) {
	for name, r := range map[string]engine.Resumption{"goroutines": engine.ResumeGoroutines, "direct": engine.ResumeDirect} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, engine.WithResumption(r))
			ctx := ctxT(t)
			_, err := e.Deploy("reach.bpmn", []byte(reachXML))
			require.NoError(t, err)
			waiting, err := e.Start(ctx, "waits", map[string]any{"key": "k1"})
			require.NoError(t, err)
			require.NoError(t, e.Settle(ctx))

			got, err := e.PublishMessageReached(ctx, engine.Message{Name: "go", CorrelationKey: "k1"})
			require.NoError(t, err)
			require.Len(t, got, 2, "the waiting instance and the started one")
			assert.Equal(t, waiting.Key(), got[0].Key(), "first the instance it was correlated to")
			assert.Equal(t, "starts", got[1].ProcessID(), "then the instance it started")
			require.NoError(t, e.Settle(ctx))
			jobs := e.Jobs(engine.JobFilter{InstanceKey: got[0].Key()})
			require.Len(t, jobs, 1)
			assert.Equal(t, "after", jobs[0].Type, "the reached instance went on past its catch")
			st, err := got[1].Wait(ctx)
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, st)

			// The start event's instance by key k1 ended, so a second
			// publication starts another; with no waiting instance that is all.
			got, err = e.PublishMessageReached(ctx, engine.Message{Name: "go", CorrelationKey: "k1"})
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, "starts", got[0].ProcessID())

			// A message no process takes reaches nobody, buffered or not.
			for _, ttl := range []time.Duration{0, time.Minute} {
				got, err = e.PublishMessageReached(ctx, engine.Message{Name: "nobody", CorrelationKey: "k1", TTL: ttl})
				require.NoError(t, err)
				assert.Empty(t, got, "ttl %s", ttl)
			}
			_, err = e.PublishMessageReached(ctx, engine.Message{})
			require.ErrorIs(t, err, engine.ErrInvalidArgument)
		})
	}
}
