package engine_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// nested returns a value of depth levels of arrays around 1.
func nested(depth int) any {
	var v any = 1.0
	for range depth {
		v = []any{v}
	}
	return v
}

// TestEngine_VariableDepthLimit checks that every call taking variables
// rejects a value nested deeper than MaxVariableDepth, a self-containing
// map included, with ErrBadVariables naming the variable and the limit,
// accepts one exactly at the limit, and that the engine still runs a
// normal instance afterwards.
func TestEngine_VariableDepthLimit(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t)
	deployFile(t, e, "order.bpmn")

	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	type deep struct {
		Next any `json:"next"`
	}
	typed := deep{}
	for range engine.MaxVariableDepth + 5 {
		typed = deep{Next: typed}
	}
	for name, v := range map[string]any{
		"arrays":       nested(engine.MaxVariableDepth + 1),
		"10k arrays":   nested(10_000),
		"cycle":        cyclic,
		"typed struct": typed,
	} {
		vars := map[string]any{"deep": v}
		for call, err := range map[string]error{
			"Start":           func() error { _, err := e.Start(ctx, "order", vars); return err }(),
			"PublishMessage":  e.PublishMessage(ctx, engine.Message{Name: "m", Variables: vars}),
			"BroadcastSignal": e.BroadcastSignal(ctx, "s", vars),
			"CompleteJob":     e.CompleteJob(ctx, 1, vars),
			"ThrowError":      e.ThrowError(ctx, 1, "E", "", vars),
		} {
			require.ErrorIs(t, err, engine.ErrBadVariables, "%s %s", call, name)
			assert.Contains(t, err.Error(), `"deep"`, "%s %s names the variable", call, name)
			assert.Contains(t, err.Error(), fmt.Sprint(engine.MaxVariableDepth), "%s %s names the limit", call, name)
		}
	}
	assert.Empty(t, e.Instances(), "nothing started")

	inst, err := e.Start(ctx, "order", map[string]any{"amount": 1, "deep": nested(engine.MaxVariableDepth)})
	require.NoError(t, err, "a value exactly at the limit is accepted")
	work(t, e, nil)
	assert.Equal(t, engine.Completed, inst.State())
	assert.Equal(t, nested(engine.MaxVariableDepth), inst.Variables()["deep"])
}
