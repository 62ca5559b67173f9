package dispatch

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/internal/wire"
)

func TestModule_CheckpointRestore(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	xml, err := os.ReadFile("../../engine/testdata/order.bpmn")
	require.NoError(t, err)
	req, _ := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(xml)})
	require.Equal(t, true, callT(t, m, "deploy", string(req))["ok"])
	require.Equal(t, true, callT(t, m, "start", `{"processId":"order","variables":{"amount":5}}`)["ok"])
	require.Equal(t, true, callT(t, m, "advance", `{"byMs":60000}`)["ok"])

	env := callT(t, m, "checkpoint", `{}`)
	require.Equal(t, true, env["ok"], "%v", env)
	state, err := json.Marshal(env["result"].(map[string]any)["state"])
	require.NoError(t, err)
	jobs := callT(t, m, "jobs", `{}`)["result"]

	// A fresh module takes the state: the same jobs, the same clock.
	m2 := New()
	t.Cleanup(func() { _ = m2.eng.Close(context.Background()) })
	env = callT(t, m2, "restore", `{"state":`+string(state)+`}`)
	require.Equal(t, true, env["ok"], "%v", env)
	assert.Equal(t, "2026-01-01T00:01:00Z", env["now"])
	assert.Equal(t, jobs, callT(t, m2, "jobs", `{}`)["result"])

	// A document it cannot read leaves the engine as it was.
	for _, bad := range []string{`{"state":{"format":"flowtrack-state","version":9}}`, `{"state":{"format":"other","version":1}}`} {
		env = callT(t, m2, "restore", bad)
		assert.Equal(t, wire.CodeBadState, errCode(env), "%v", env)
	}
	assert.Equal(t, wire.CodeBadRequest, errCode(callT(t, m2, "restore", `{}`)))
	assert.Equal(t, jobs, callT(t, m2, "jobs", `{}`)["result"])
}
