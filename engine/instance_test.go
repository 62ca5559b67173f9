package engine_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestInstance_MethodSet pins what an Instance offers: reads that return
// copies, Wait, Cancel, and dehydration (which changes how the instance is
// kept, never what it does). Nothing hands out the deployed model or lets a
// caller deliver events past the Engine's operations.
func TestInstance_MethodSet(t *testing.T) {
	typ := reflect.TypeFor[*engine.Instance]()
	var got []string
	for i := range typ.NumMethod() {
		got = append(got, typ.Method(i).Name)
	}
	want := []string{"Cancel", "Dehydrate", "Dehydrated", "Done", "History", "Incidents", "Key", "Message", "ProcessID", "State", "Tokens", "Variables", "Wait"}
	slices.Sort(want)
	assert.Equal(t, want, got)
}

// TestInstance_ReadsAreCopies changes everything an instance hands out
// and checks that the instance and later instances are unchanged.
func TestInstance_ReadsAreCopies(t *testing.T) {
	e := newEngine(t)
	deployFile(t, e, "order.bpmn")
	ctx := ctxT(t)
	inst, err := e.Start(ctx, "order", map[string]any{"amount": 250.0, "items": []any{"a"}})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctx))

	vars := inst.Variables()
	vars["amount"] = 1.0
	vars["items"].([]any)[0] = "changed"
	h, err := inst.History(ctx)
	require.NoError(t, err)
	h[0].ProcessID = "changed"
	h[0].Variables["amount"] = 2.0
	toks, err := inst.Tokens(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, toks)
	toks[0].ElementID = "changed"

	assert.Equal(t, map[string]any{"amount": 250.0, "items": []any{"a"}}, inst.Variables())
	h2, err := inst.History(ctx)
	require.NoError(t, err)
	assert.Equal(t, "order", h2[0].ProcessID)
	assert.Equal(t, 250.0, h2[0].Variables["amount"])
	toks2, err := inst.Tokens(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, "changed", toks2[0].ElementID)

	other, err := e.Start(ctx, "order", nil)
	require.NoError(t, err)
	assert.Equal(t, "order", other.ProcessID())
	again, ok := e.Instance(inst.Key())
	require.True(t, ok)
	assert.Equal(t, inst.Key(), again.Key(), "a lookup finds the same instance")
}

// TestInstance_ReadsHonourContext checks that the reads answered by an
// instance's loop return a context's error instead of waiting.
func TestInstance_ReadsHonourContext(t *testing.T) {
	e := newEngine(t)
	deployFile(t, e, "order.bpmn")
	inst, err := e.Start(ctxT(t), "order", map[string]any{"amount": 1.0})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = inst.History(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = inst.Incidents(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = e.Incidents(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = inst.Tokens(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}
