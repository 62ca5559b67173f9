package dispatch

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// TestModule_DeployCarriesBytes checks the two forms of a deploy request:
// xmlBase64 carries any document unchanged (ISO-8859-1 included), and xml
// text that declares an encoding other than UTF-8 is refused rather than
// decoded wrongly.
func TestModule_DeployCarriesBytes(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	latin1, err := os.ReadFile("../../engine/testdata/latin1.bpmn")
	require.NoError(t, err)

	req := func(fields map[string]any) string {
		data, err := json.Marshal(fields)
		require.NoError(t, err)
		return string(data)
	}
	for _, tc := range []struct {
		name, req, names string
	}{
		{"both", req(map[string]any{"xml": "<x/>", "xmlBase64": "PHgvPg=="}), `"xmlBase64"`},
		{"neither", `{"name":"a.bpmn"}`, `"xmlBase64"`},
		{"bad base64", req(map[string]any{"xmlBase64": "not base64!"}), `"xmlBase64"`},
		{"latin1 as text", req(map[string]any{"xml": string(latin1)}), "ISO-8859-1"},
	} {
		env := callT(t, m, "deploy", tc.req)
		require.Equal(t, wire.CodeBadRequest, errCode(env), "%s: %v", tc.name, env)
		assert.Contains(t, env["error"].(map[string]any)["message"], tc.names, tc.name)
	}

	env := callT(t, m, "deploy", req(map[string]any{"name": "latin1.bpmn", "xmlBase64": base64.StdEncoding.EncodeToString(latin1)}))
	require.Equal(t, true, env["ok"], "%v", env)
	procs := env["result"].(map[string]any)["processes"].([]any)
	assert.Equal(t, "Größenprüfung für Bücher", procs[0].(map[string]any)["name"])

	env = callT(t, m, "deploy", req(map[string]any{"xml": `<?xml version="1.0" encoding="ISO-8859-1"?><x/>`}))
	assert.Equal(t, wire.CodeDeployFailed, errCode(env), "ASCII text is the same in any ASCII encoding: the engine decides")
}
