package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// forkOfThree is a process that forks into three waiting branches.
const forkOfThree = `<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">
<bpmn:process id="fork3" isExecutable="true">
<bpmn:startEvent id="s"/><bpmn:parallelGateway id="g"/>
<bpmn:userTask id="a"/><bpmn:userTask id="b"/><bpmn:userTask id="c"/><bpmn:endEvent id="e"/>
<bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="g"/>
<bpmn:sequenceFlow id="f1" sourceRef="g" targetRef="a"/><bpmn:sequenceFlow id="f2" sourceRef="g" targetRef="b"/><bpmn:sequenceFlow id="f3" sourceRef="g" targetRef="c"/>
<bpmn:sequenceFlow id="f4" sourceRef="a" targetRef="e"/><bpmn:sequenceFlow id="f5" sourceRef="b" targetRef="e"/><bpmn:sequenceFlow id="f6" sourceRef="c" targetRef="e"/>
</bpmn:process></bpmn:definitions>`

// TestModule_ConfigureLimits: configure's limits reach the engine (here the
// live-token budget), are refused when invalid or late, and leave the
// module usable when refused.
func TestModule_ConfigureLimits(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	for req, want := range map[string]string{
		`{"limits":{"maxTokens":-1}}`:  "limits.maxTokens (-1): must not be negative",
		`{"limits":{"maxToken":3}}`:    `unknown field "maxToken"`,
		`{"limits":{"maxTokens":"3"}}`: `field "limits.maxTokens"`,
	} {
		env := callT(t, m, "configure", req)
		require.Equal(t, wire.CodeBadRequest, errCode(env), req)
		assert.Contains(t, env["error"].(map[string]any)["message"], want, req)
	}

	require.Equal(t, true, callT(t, m, "configure", `{"limits":{"maxTokens":2}}`)["ok"])
	deploy, _ := json.Marshal(map[string]any{"name": "fork3.bpmn", "xml": forkOfThree})
	require.Equal(t, true, callT(t, m, "deploy", string(deploy))["ok"])
	env := callT(t, m, "start", `{"processId":"fork3"}`)
	require.Equal(t, true, env["ok"], "%v", env)
	env = callT(t, m, "incidents", `{}`)
	incs := env["result"].([]any)
	require.Len(t, incs, 1, "three tokens pass the limit of two")
	assert.True(t, strings.Contains(incs[0].(map[string]any)["message"].(string), "limits.maxTokens"), "%v", incs[0])

	env = callT(t, m, "configure", `{"limits":{"maxTokens":5}}`)
	assert.Equal(t, wire.CodeBadRequest, errCode(env), "limits are fixed once something is deployed")
}
