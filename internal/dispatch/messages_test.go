package dispatch

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// messageJobXML waits on message "go" by key, then on a job "after";
// messageStartXML is started by message "go" and ends at once.
const messageJobXML = `<?xml version="1.0" encoding="UTF-8"?>
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

// TestPublishMessage_Result checks publish_message's result: each
// instance the message reached, settled, with its state and jobs, so
// that the caller goes on without an instance or jobs call; an empty
// object when it reached none.
func TestPublishMessage_Result(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	req, _ := json.Marshal(map[string]any{"name": "m.bpmn", "xml": messageJobXML})
	require.Equal(t, true, callT(t, m, "deploy", string(req))["ok"])
	env := callT(t, m, "start", `{"processId":"waits","variables":{"key":"k1"}}`)
	require.Equal(t, true, env["ok"], "%v", env)
	waiting := env["result"].(map[string]any)["instanceKey"].(float64)

	env = callT(t, m, "publish_message", `{"name":"go","correlationKey":"k1"}`)
	require.Equal(t, true, env["ok"], "%v", env)
	got := env["result"].(map[string]any)["instances"].([]any)
	require.Len(t, got, 2, "%v", env["result"])
	first, second := got[0].(map[string]any), got[1].(map[string]any)
	assert.Equal(t, waiting, first["instanceKey"], "first the instance it was correlated to")
	assert.Equal(t, "active", first["state"])
	jobs := first["jobs"].([]any)
	require.Len(t, jobs, 1, "the job after the catch, created by the time the call returned")
	assert.Equal(t, "after", jobs[0].(map[string]any)["type"])
	assert.Greater(t, second["instanceKey"], waiting, "then the instance it started")
	assert.Equal(t, "completed", second["state"])
	assert.NotContains(t, second, "jobs")

	for _, r := range []string{`{"name":"nobody"}`, `{"name":"nobody","ttlMs":1000}`} {
		env = callT(t, m, "publish_message", r)
		require.Equal(t, true, env["ok"], "%v", env)
		assert.Equal(t, map[string]any{}, env["result"], "%s reached nobody", r)
	}
}
