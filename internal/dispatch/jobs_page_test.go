package dispatch

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModule_JobsPage: jobs takes a page (afterKey, limit) of the jobs in
// key order, and refuses a negative limit.
func TestModule_JobsPage(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	xml, err := os.ReadFile("../../engine/testdata/order.bpmn")
	require.NoError(t, err)
	req, _ := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(xml)})
	require.Equal(t, true, callT(t, m, "deploy", string(req))["ok"])
	for range 5 {
		require.Equal(t, true, callT(t, m, "start", `{"processId":"order","variables":{"amount":5}}`)["ok"])
	}
	keys := func(req string) []float64 {
		env := callT(t, m, "jobs", req)
		require.Equal(t, true, env["ok"], "%v", env)
		var out []float64
		for _, j := range env["result"].([]any) {
			out = append(out, j.(map[string]any)["key"].(float64))
		}
		return out
	}
	all := keys(`{}`)
	require.GreaterOrEqual(t, len(all), 5)
	require.Equal(t, all[:2], keys(`{"limit":2}`))
	after, _ := json.Marshal(map[string]any{"afterKey": int64(all[1]), "limit": 2})
	require.Equal(t, all[2:4], keys(string(after)))
	after, _ = json.Marshal(map[string]any{"afterKey": int64(all[len(all)-1])})
	require.Empty(t, keys(string(after)))
	env := callT(t, m, "jobs", `{"limit":-1}`)
	require.Equal(t, "BAD_REQUEST", env["error"].(map[string]any)["code"], "%v", env)
}
