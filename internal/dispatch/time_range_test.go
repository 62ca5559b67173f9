package dispatch

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// TestModule_RejectsTimesOutOfRange checks that advance and
// publish_message refuse instants past clock.Max with an error naming the
// limit, and that every later response still carries an RFC 3339 clock.
func TestModule_RejectsTimesOutOfRange(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	limit := formatTime(clock.Max)
	for _, tc := range []struct {
		op, req string
		code    wire.Code
	}{
		{"advance", `{"to":"2263-01-01T00:00:00Z"}`, wire.CodeTimeOutOfRange},
		{"advance", `{"to":"+10000-01-01T00:00:00Z"}`, wire.CodeBadRequest},
		{"advance", `{"byMs":9e12}`, wire.CodeTimeOutOfRange},
		{"publish_message", `{"name":"m","ttlMs":9e12}`, wire.CodeTimeOutOfRange},
		{"publish_message", `{"name":"m","ttlMs":1e300}`, wire.CodeBadRequest},
	} {
		env := callT(t, m, tc.op, tc.req)
		require.Equal(t, tc.code, errCode(env), "%s %s: %v", tc.op, tc.req, env)
		assert.Contains(t, env["error"].(map[string]any)["message"], limit, "%s %s names the limit", tc.op, tc.req)
		assert.Equal(t, "2026-01-01T00:00:00Z", env["now"], "nothing moved")
	}
	env := callT(t, m, "advance", `{"to":"`+limit+`"}`)
	require.Equal(t, true, env["ok"], "%v", env)
	assert.Equal(t, limit, env["now"])
}

// TestLimits_SDKInStep keeps the SDK's copies of the engine's limits in
// step: the time range and the variable depth.
func TestLimits_SDKInStep(t *testing.T) {
	src, err := os.ReadFile("../../sdk-js/src/engine.ts")
	require.NoError(t, err)
	assert.Contains(t, string(src), "'"+formatTime(clock.Min)+"'")
	assert.Contains(t, string(src), "'"+formatTime(clock.Max)+"'")
	src, err = os.ReadFile("../../sdk-js/src/module.ts")
	require.NoError(t, err)
	assert.Contains(t, string(src), fmt.Sprintf("MAX_VARIABLE_DEPTH = %d;", engine.MaxVariableDepth))
}
