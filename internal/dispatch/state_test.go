package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
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

// TestModule_CheckpointRestoreInstance: checkpoint with instanceKey writes
// one instance's document, and restore with instance adds it to a module
// that runs instances of its own; a second time is KEY_IN_USE.
func TestModule_CheckpointRestoreInstance(t *testing.T) {
	xml, err := os.ReadFile("../../engine/testdata/order.bpmn")
	require.NoError(t, err)
	deploy, _ := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(xml)})
	module := func() *Module {
		m := New()
		t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
		require.Equal(t, true, callT(t, m, "deploy", string(deploy))["ok"])
		return m
	}
	src, dst := module(), module()
	for range 3 {
		require.Equal(t, true, callT(t, src, "start", `{"processId":"order","variables":{"amount":1}}`)["ok"])
	}
	started := callT(t, src, "start", `{"processId":"order","variables":{"amount":5}}`)
	require.Equal(t, true, started["ok"], "%v", started)
	key := int64(started["result"].(map[string]any)["instanceKey"].(float64))
	require.Equal(t, true, callT(t, dst, "start", `{"processId":"order","variables":{"amount":7}}`)["ok"])

	env := callT(t, src, "checkpoint", fmt.Sprintf(`{"instanceKey":%d}`, key))
	require.Equal(t, true, env["ok"], "%v", env)
	state, err := json.Marshal(env["result"].(map[string]any)["state"])
	require.NoError(t, err)
	var doc struct {
		Instances []struct {
			Key int64 `json:"key"`
		} `json:"instances"`
	}
	require.NoError(t, json.Unmarshal(state, &doc))
	require.Len(t, doc.Instances, 1, "one instance's document")

	env = callT(t, dst, "restore", `{"instance":true,"state":`+string(state)+`}`)
	require.Equal(t, true, env["ok"], "%v", env)
	inst := callT(t, dst, "instance", fmt.Sprintf(`{"instanceKey":%d}`, key))
	require.Equal(t, true, inst["ok"], "%v", inst)
	assert.Equal(t, "active", inst["result"].(map[string]any)["state"])
	assert.Equal(t, wire.CodeKeyInUse, errCode(callT(t, dst, "restore", `{"instance":true,"state":`+string(state)+`}`)))
	assert.Equal(t, wire.CodeUnknownInstance, errCode(callT(t, src, "checkpoint", `{"instanceKey":999}`)))
	assert.Equal(t, wire.CodeBadRequest, errCode(callT(t, dst, "restore", `{"instance":true}`)))
}

// TestRestore_Served: a served engine refuses restore, whole and with
// instance, as the docs say: its state lives in its store, and nothing
// is added.
func TestRestore_Served(t *testing.T) {
	xml, err := os.ReadFile("../../engine/testdata/order.bpmn")
	require.NoError(t, err)
	deploy, _ := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(xml)})
	src := New()
	t.Cleanup(func() { _ = src.eng.Close(context.Background()) })
	require.Equal(t, true, callT(t, src, "deploy", string(deploy))["ok"])
	started := callT(t, src, "start", `{"processId":"order","variables":{"amount":5}}`)
	require.Equal(t, true, started["ok"], "%v", started)
	key := int64(started["result"].(map[string]any)["instanceKey"].(float64))
	env := callT(t, src, "checkpoint", fmt.Sprintf(`{"instanceKey":%d}`, key))
	require.Equal(t, true, env["ok"], "%v", env)
	state, err := json.Marshal(env["result"].(map[string]any)["state"])
	require.NoError(t, err)

	eng, err := engine.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	served := NewServed(eng, clock.Real{})
	assert.Equal(t, wire.CodeUnsupported, errCode(callT(t, served, "restore", `{"instance":true,"state":`+string(state)+`}`)))
	assert.Equal(t, wire.CodeUnsupported, errCode(callT(t, served, "restore", `{"state":`+string(state)+`}`)))
	assert.Equal(t, wire.CodeUnknownInstance, errCode(callT(t, served, "instance", fmt.Sprintf(`{"instanceKey":%d}`, key))), "nothing added")
}
