package host_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// nested returns a value of depth levels of arrays around 1.
func nested(depth int) any {
	var v any = 1.0
	for range depth {
		v = []any{v}
	}
	return v
}

// TestEngine_StrictRequests checks, through wazero, the module's strict
// decoding (exact-case names, duplicate keys) and its one nesting limit
// for variables, engine.MaxVariableDepth, and that a normal instance still
// completes afterwards.
func TestEngine_StrictRequests(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
	limit := fmt.Sprint(engine.MaxVariableDepth)
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for name, v := range map[string]any{"over": nested(engine.MaxVariableDepth + 1), "3k": nested(3_000), "10k": nested(10_000), "cycle": cyclic} {
		// The Go API reports what the native engine does, before encoding.
		_, err := e.Start(ctx, "order", map[string]any{"deep": v})
		require.ErrorIs(t, err, engine.ErrBadVariables, name)
		assert.Contains(t, err.Error(), limit, name)
		require.ErrorIs(t, e.BroadcastSignal(ctx, "s", map[string]any{"deep": v}), engine.ErrBadVariables, name)
		require.ErrorIs(t, e.PublishMessage(ctx, engine.Message{Name: "m", Variables: map[string]any{"deep": v}}), engine.ErrBadVariables, name)
		require.ErrorIs(t, e.CompleteJob(ctx, 1, map[string]any{"deep": v}), engine.ErrBadVariables, name)
		require.ErrorIs(t, e.ThrowError(ctx, 1, "E", "", map[string]any{"deep": v}), engine.ErrBadVariables, name)
	}
	// Raw JSON reaches the module, which checks the bytes before decoding.
	for _, depth := range []int{engine.MaxVariableDepth + 1, 3_000, 10_000} {
		req := `{"processId":"order","variables":{"deep":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}`
		_, err := e.Call(ctx, "start", []byte(req))
		require.ErrorIs(t, err, engine.ErrBadVariables, "depth %d: the same error as natively", depth)
		assert.Contains(t, err.Error(), limit, "depth %d", depth)
	}
	for _, req := range []string{
		`{"PROCESSID":"order"}`,
		`{"processId":"order","processId":"order"}`,
		`{"processId":"order","variables":{"a":1,"a":2}}`,
	} {
		_, err := e.Call(ctx, "start", []byte(req))
		require.ErrorIs(t, err, host.ErrBadRequest, req)
	}
	_, err = e.Call(ctx, "start", []byte(`{"processId":"order","variables":{"deep":`+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)+`}}`))
	require.ErrorIs(t, err, engine.ErrBadVariables, "100,000 levels: rejected before decoding, no trap")
	require.NoError(t, e.Trapped())

	key, err := e.Start(ctx, "order", map[string]any{"amount": 1, "deep": nested(engine.MaxVariableDepth)})
	require.NoError(t, err, "a value exactly at the limit is accepted")
	completeAllHost(t, e)
	info, err := e.Instance(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, info.State)
	assert.Equal(t, nested(engine.MaxVariableDepth), info.Variables["deep"])
}

func completeAllHost(t *testing.T, e *host.Engine) {
	t.Helper()
	ctx := ctxT(t)
	for range 100 {
		jobs, err := e.Jobs(ctx, engine.JobFilter{})
		require.NoError(t, err)
		if len(jobs) == 0 {
			return
		}
		for _, j := range jobs {
			require.NoError(t, e.CompleteJob(ctx, j.Key, nil))
		}
	}
	t.Fatal("jobs never ran out")
}
