package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// callT runs op natively (the exports are thin wrappers around call) and
// decodes the envelope.
func callT(t *testing.T, m *module, op, req string) map[string]any {
	t.Helper()
	var env map[string]any
	require.NoError(t, json.Unmarshal(m.call(op, []byte(req)), &env))
	require.Contains(t, env, "events")
	require.Contains(t, env, "now")
	require.Contains(t, env, "nextDeadline")
	return env
}

func errCode(env map[string]any) string {
	if e, ok := env["error"].(map[string]any); ok {
		return e["code"].(string)
	}
	return ""
}

func TestModule_Call(t *testing.T) {
	m := newModule()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	xml, err := os.ReadFile("../engine/testdata/order.bpmn")
	require.NoError(t, err)
	req, _ := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(xml)})
	env := callT(t, m, "deploy", string(req))
	require.Equal(t, true, env["ok"], "%v", env)

	env = callT(t, m, "start", `{"processId":"order","variables":{"amount":5}}`)
	require.Equal(t, true, env["ok"], "%v", env)
	assert.NotEmpty(t, env["events"])
	key := env["result"].(map[string]any)["instanceKey"].(float64)
	assert.Positive(t, key)

	env = callT(t, m, "call", `{"op":"jobs","request":{"type":"check-order"}}`)
	require.Equal(t, true, env["ok"], "%v", env)
	assert.Len(t, env["result"], 1)
	assert.Empty(t, env["events"], "a read produces no events")

	for _, tc := range []struct{ op, req, code string }{
		{"start", `{`, codeBadRequest},
		{"start", `{"processId":"order","extra":1}`, codeBadRequest},
		{"instance", `{"instanceKey":12345}`, codeUnknownInstance},
		{"complete_job", `{"jobKey":12345}`, codeUnknownJob},
		{"nope", `{}`, codeUnknownOp},
		{"call", `{"op":"call"}`, codeUnknownOp},
		{"deploy", `{"xml":"<x/>"}`, codeDeployFailed},
		{"advance", `{"to":"yesterday"}`, codeBadRequest},
	} {
		assert.Equal(t, tc.code, errCode(callT(t, m, tc.op, tc.req)), "%s %s", tc.op, tc.req)
	}
}

func TestModule_PanicBecomesInternalError(t *testing.T) {
	m := newModule()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	operations["test_panic"] = func(context.Context, *module, []byte) (any, error) { panic("boom") }
	t.Cleanup(func() { delete(operations, "test_panic") })
	env := callT(t, m, "test_panic", `{}`)
	assert.Equal(t, codeInternal, errCode(env))
	assert.Contains(t, env["error"].(map[string]any)["message"], "boom")
	assert.Equal(t, true, callT(t, m, "now", ``)["ok"], "the module stays usable")
}

func TestModule_Oversized(t *testing.T) {
	m := newModule()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	assert.Equal(t, codeBadRequest, errCode(callT(t, m, "start", string(make([]byte, maxRequest+1)))))
	assert.Equal(t, abiVersion, 1)
}

func TestResponse_EncodeMatchesEncodingJSON(t *testing.T) {
	m := newModule()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	xml, err := os.ReadFile("../engine/testdata/order.bpmn")
	require.NoError(t, err)
	req, _ := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(xml)})
	m.call("deploy", req)
	resp := m.run("start", []byte(`{"processId":"order","variables":{"amount":5,"s":"<\"é\">"}}`))
	resp.Events = m.eng.DrainEvents()
	resp.Now = "2026-01-01T00:00:00Z"
	got, err := resp.encode()
	require.NoError(t, err)
	want, err := json.Marshal(resp)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
}

// TestEventTypes_DocumentedEverywhere keeps the ABI document and the SDK's
// typed list in step with the engine's event types.
func TestEventTypes_DocumentedEverywhere(t *testing.T) {
	abi, err := os.ReadFile("ABI.md")
	require.NoError(t, err)
	sdk, err := os.ReadFile("../sdk-js/src/types.ts")
	require.NoError(t, err)
	for _, typ := range engine.EventTypes() {
		assert.Contains(t, string(abi), "`"+string(typ)+"`", "ABI.md lists %s", typ)
		assert.Contains(t, string(sdk), "'"+string(typ)+"'", "sdk-js/src/types.ts lists %s", typ)
	}
}
