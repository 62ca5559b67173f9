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

// TestModule_GatewayChoices: configure gatewayChoices stops tokens before
// a diverging gateway routes, choose_flows routes them, and the setting
// is the module's: it holds across a restore, which replaces the engine.
func TestModule_GatewayChoices(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	xml, err := os.ReadFile("testdata/choice.bpmn")
	require.NoError(t, err)
	req, _ := json.Marshal(map[string]any{"name": "choice.bpmn", "xml": string(xml)})
	require.Equal(t, true, callT(t, m, "deploy", string(req))["ok"])
	require.Equal(t, true, callT(t, m, "configure", `{"gatewayChoices":true}`)["ok"])
	state, err := json.Marshal(callT(t, m, "checkpoint", `{}`)["result"].(map[string]any)["state"])
	require.NoError(t, err)
	require.Equal(t, true, callT(t, m, "restore", `{"state":`+string(state)+`}`)["ok"])

	env := callT(t, m, "start", `{"processId":"choice","variables":{"amount":250}}`)
	require.Equal(t, true, env["ok"], "%v", env)
	key := env["result"].(map[string]any)["instanceKey"]
	toks := callT(t, m, "tokens", `{"instanceKey":`+jsonOf(t, key)+`}`)["result"].([]any)
	require.Len(t, toks, 1)
	tok := toks[0].(map[string]any)
	assert.Equal(t, "choice", tok["waiting"])
	assert.Equal(t, map[string]any{"holds": []any{"big"}, "takes": []any{"big"}}, tok["choice"])

	assert.Equal(t, wire.CodeBadRequest, errCode(callT(t, m, "choose_flows", `{"instanceKey":`+jsonOf(t, key)+`}`)), "tokenId is required")
	assert.Equal(t, wire.CodeBadModification, errCode(callT(t, m, "choose_flows", `{"instanceKey":`+jsonOf(t, key)+`,"tokenId":1,"flowIds":["nowhere"]}`)))
	env = callT(t, m, "choose_flows", `{"instanceKey":`+jsonOf(t, key)+`,"tokenId":1,"flowIds":["small"]}`)
	require.Equal(t, true, env["ok"], "%v", env)
	var types []string
	for _, ev := range env["events"].([]any) {
		types = append(types, ev.(map[string]any)["type"].(string))
	}
	assert.Equal(t, []string{"flowsChosen", "elementLeft", "flowTaken", "elementEntered", "elementLeft", "instanceCompleted"}, types)

	require.Equal(t, true, callT(t, m, "configure", `{"gatewayChoices":false}`)["ok"])
	env = callT(t, m, "start", `{"processId":"choice","variables":{"amount":250}}`)
	assert.Equal(t, "completed", env["result"].(map[string]any)["state"], "%v", env)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
