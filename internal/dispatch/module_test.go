package dispatch

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// callT runs op natively (the exports are thin wrappers around call) and
// decodes the envelope.
func callT(t *testing.T, m *Module, op, req string) map[string]any {
	t.Helper()
	var env map[string]any
	require.NoError(t, json.Unmarshal(m.Call(op, []byte(req)), &env))
	require.Contains(t, env, "events")
	require.Contains(t, env, "now")
	require.Contains(t, env, "nextDeadline")
	return env
}

func errCode(env map[string]any) wire.Code {
	if e, ok := env["error"].(map[string]any); ok {
		return wire.Code(e["code"].(string))
	}
	return ""
}

func TestModule_Call(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	xml, err := os.ReadFile("../../engine/testdata/order.bpmn")
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

	for _, tc := range []struct {
		op, req string
		code    wire.Code
	}{
		{"start", `{`, wire.CodeBadRequest},
		{"start", `{"processId":"order","extra":1}`, wire.CodeBadRequest},
		{"instance", `{"instanceKey":12345}`, wire.CodeUnknownInstance},
		{"complete_job", `{"jobKey":12345}`, wire.CodeUnknownJob},
		{"nope", `{}`, wire.CodeUnknownOperation},
		{"call", `{"op":"call"}`, wire.CodeUnknownOperation},
		{"deploy", `{"xml":"<x/>"}`, wire.CodeDeployFailed},
		{"advance", `{"to":"yesterday"}`, wire.CodeBadRequest},
	} {
		assert.Equal(t, tc.code, errCode(callT(t, m, tc.op, tc.req)), "%s %s", tc.op, tc.req)
	}
}

func TestModule_PanicBecomesInternalError(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	operations["test_panic"] = func(context.Context, *Module, []byte) (any, error) { panic("boom") }
	t.Cleanup(func() { delete(operations, "test_panic") })
	env := callT(t, m, "test_panic", `{}`)
	assert.Equal(t, wire.CodeInternal, errCode(env))
	assert.Contains(t, env["error"].(map[string]any)["message"], "boom")
	assert.Equal(t, true, callT(t, m, "now", ``)["ok"], "the module stays usable")
}

func TestModule_Oversized(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	assert.Equal(t, wire.CodeBadRequest, errCode(callT(t, m, "start", string(make([]byte, maxRequest+1)))))
	assert.Equal(t, abiVersion, 1)
}

func TestResponse_EncodeMatchesEncodingJSON(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	xml, err := os.ReadFile("../../engine/testdata/order.bpmn")
	require.NoError(t, err)
	req, _ := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(xml)})
	m.Call("deploy", req)
	resp := m.run("start", []byte(`{"processId":"order","variables":{"amount":5,"s":"<\"é\">"}}`))
	resp.Events = m.eng.DrainEvents()
	resp.Now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got, err := encode(&resp)
	require.NoError(t, err)
	want, err := json.Marshal(resp)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
}

// TestConcurrent_Operations: the operations a served module may run
// concurrently are operations, and none of those that change the module.
func TestConcurrent_Operations(t *testing.T) {
	n := 0
	for _, op := range Operations() {
		if Concurrent(op) {
			n++
		}
	}
	if n != 25 {
		t.Errorf("%d concurrent operations among Operations(), want the 25 Concurrent names", n)
	}
	for _, op := range []string{"deploy", "configure", "restore", "checkpoint", "call", "advance", "nope"} {
		if Concurrent(op) {
			t.Errorf("%s may run concurrently, but it changes the module or runs others", op)
		}
	}
}
