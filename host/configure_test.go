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

// chainModel is start → n exclusive gateways in a row → end.
func chainModel(id string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t"><bpmn:process id="%s" isExecutable="true"><bpmn:startEvent id="s"/>`, id)
	prev := "s"
	for i := range n {
		g := fmt.Sprint("g", i)
		fmt.Fprintf(&b, `<bpmn:exclusiveGateway id="%s"/><bpmn:sequenceFlow id="f%d" sourceRef="%s" targetRef="%s"/>`, g, i, prev, g)
		prev = g
	}
	fmt.Fprintf(&b, `<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="fe" sourceRef="%s" targetRef="e"/></bpmn:process></bpmn:definitions>`, prev)
	return []byte(b.String())
}

// TestEngine_WithLimits checks that the host passes the limits to the
// module's engine, like engine.WithLimits natively.
func TestEngine_WithLimits(t *testing.T) {
	ctx := ctxT(t)
	_, err := host.New(ctx, host.WithLimits(engine.Limits{MaxSteps: -1}))
	require.ErrorIs(t, err, host.ErrBadRequest)

	e := newHost(t, host.WithLimits(engine.Limits{MaxSteps: 10}))
	_, err = e.Deploy(ctx, "long.bpmn", chainModel("long", 20))
	require.NoError(t, err)
	_, err = e.Deploy(ctx, "short.bpmn", chainModel("short", 3))
	require.NoError(t, err)
	key, err := e.Start(ctx, "long", nil)
	require.NoError(t, err)
	info, err := e.Instance(ctx, key)
	require.NoError(t, err)
	require.Len(t, info.Incidents, 1, "20 gateways pass the limit of 10 steps")
	key, err = e.Start(ctx, "short", nil)
	require.NoError(t, err)
	state, err := e.State(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
}
