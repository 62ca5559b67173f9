package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/partitioned"
)

// keyedCatch waits for message "m" correlated by the variable key.
const keyedCatch = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:message id="M" name="m"><bpmn:extensionElements><zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="s"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="e"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="e"/>
  </bpmn:process>
</bpmn:definitions>`

// The calls a cluster partition uses to correlate across partitions: the
// open waits, a message for one named instance (only while it waits),
// which processes a publication served, and a buffered message taken for
// a process and handed back.
func TestPartitioned_CrossPartitionCorrelation(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	deploy(t, e, keyedCatch)
	first := start(t, e, map[string]any{"key": "k"})
	second := start(t, e, map[string]any{"key": "k"})
	assert.Equal(t, []engine.MessageSubscription{
		{InstanceKey: first.Key(), ProcessID: "p", Name: "m", CorrelationKey: "k"},
		{InstanceKey: second.Key(), ProcessID: "p", Name: "m", CorrelationKey: "k"},
	}, partitioned.MessageSubscriptions(e))

	// The second, not the oldest: the caller names the instance.
	ok, err := partitioned.CorrelateMessageTo(ctx, e, second.Key(), engine.Message{Name: "m", CorrelationKey: "k", Variables: map[string]any{"n": 2}})
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, e.Settle(ctx))
	assert.Equal(t, engine.Completed, second.State())
	assert.Equal(t, 2.0, second.Variables()["n"])
	assert.Equal(t, engine.Active, first.State())
	ok, err = partitioned.CorrelateMessageTo(ctx, e, second.Key(), engine.Message{Name: "m", CorrelationKey: "k"})
	require.NoError(t, err)
	assert.False(t, ok, "the wait is gone")
	ok, err = partitioned.CorrelateMessageTo(ctx, e, first.Key(), engine.Message{Name: "m", CorrelationKey: "other"})
	require.NoError(t, err)
	assert.False(t, ok, "no wait for that key")
	_, err = partitioned.CorrelateMessageTo(ctx, e, first.Key(), engine.Message{})
	require.ErrorIs(t, err, engine.ErrInvalidArgument)

	pub, err := partitioned.PublishMessageServed(ctx, e, engine.Message{Name: "m", CorrelationKey: "k"})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"p": true}, pub.Served)
	require.Len(t, pub.Correlated, 1)
	assert.Equal(t, first.Key(), pub.Correlated[0].Key())
	assert.Empty(t, pub.Started)
	require.NoError(t, e.Settle(ctx))
	assert.Equal(t, engine.Completed, first.State())
	assert.Empty(t, partitioned.MessageSubscriptions(e))

	// A buffered message: taken for p once, handed back, taken again.
	pub, err = partitioned.PublishMessageServed(ctx, e, engine.Message{Name: "m", CorrelationKey: "b", TTL: time.Minute, MessageID: "x",
		Variables: map[string]any{"n": 3}})
	require.NoError(t, err)
	assert.Empty(t, pub.Served)
	assert.Empty(t, pub.Correlated)
	assert.Empty(t, pub.Started)
	b, ok := partitioned.ClaimBufferedMessage(e, "m", "b", "p")
	require.True(t, ok)
	require.NoError(t, b.Commit(ctx))
	assert.Equal(t, "x", b.MessageID())
	assert.Equal(t, 3.0, b.Variables()["n"])
	_, ok = partitioned.ClaimBufferedMessage(e, "m", "b", "p")
	assert.False(t, ok, "taken for p already")
	require.NoError(t, b.Release(ctx))
	// Handed back: a wait of p opened here now receives it.
	third := start(t, e, map[string]any{"key": "b"})
	assert.Equal(t, engine.Completed, third.State())
	assert.Equal(t, 3.0, third.Variables()["n"])
	_, ok = partitioned.ClaimBufferedMessage(e, "m", "b", "p")
	assert.False(t, ok)

	// A message start event counts as reaching its process.
	_, err = e.Deploy("start.bpmn", []byte(messageStarted))
	require.NoError(t, err)
	pub, err = partitioned.PublishMessageServed(ctx, e, engine.Message{Name: "go", CorrelationKey: "s"})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"started": true}, pub.Served)
	assert.Empty(t, pub.Correlated)
	require.Len(t, pub.Started, 1)
	assert.Equal(t, "started", pub.Started[0].ProcessID())
}

// messageStarted starts on message "go".
const messageStarted = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d2" targetNamespace="t">
  <bpmn:message id="Go" name="go"/>
  <bpmn:process id="started" isExecutable="true">
    <bpmn:startEvent id="s"><bpmn:messageEventDefinition messageRef="Go"/></bpmn:startEvent>
    <bpmn:endEvent id="e"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="e"/>
  </bpmn:process>
</bpmn:definitions>`
