package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// TestWithStore_OperatorCommandsAreDurable: an activation, variables set
// from outside and a modification are committed when their calls return,
// so an engine reopened from the store holds them.
func TestWithStore_OperatorCommandsAreDurable(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	_, err = e.Deploy("job.bpmn", []byte(jobXML))
	require.NoError(t, err)
	inst, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	held, err := e.ActivateJobs(ctx, "work", "w", time.Hour, 1)
	require.NoError(t, err)
	require.Len(t, held, 1)
	require.NoError(t, e.SetVariables(ctx, inst.Key(), map[string]any{"fixed": true}, Scope{}))
	require.NoError(t, e.Close(ctx))

	r, err := New(WithStore(m))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	none, err := r.ActivateJobs(ctx, "work", "w2", time.Hour, 1)
	require.NoError(t, err)
	require.Empty(t, none, "the activation was stored")
	again, ok := r.Instance(inst.Key())
	require.True(t, ok)
	require.Equal(t, true, again.Variables()["fixed"])
	require.NoError(t, r.CompleteJob(ctx, held[0].Key, nil, JobActivation(held[0].Activation)))
}
