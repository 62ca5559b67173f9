package host_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestEngine_GatewayChoices stops a token before a gateway routes and
// routes it by the flow chosen, through the module, as the native engine
// does (engine/choice_test.go).
func TestEngine_GatewayChoices(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "sub.bpmn", []byte(subScopeXML))
	require.NoError(t, err)
	require.NoError(t, e.SetGatewayChoices(ctx, true))
	key, err := e.Start(ctx, "p", map[string]any{"amount": 500})
	require.NoError(t, err)
	jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: key})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	err = e.CompleteJob(ctx, jobs[0].Key, nil)
	require.NoError(t, err)

	toks, err := e.Tokens(ctx, key)
	require.NoError(t, err)
	require.Len(t, toks, 1)
	assert.Equal(t, engine.WaitChoice, toks[0].Waiting)
	assert.Equal(t, &engine.Choice{Holds: []string{"f3"}, Takes: []string{"f3"}}, toks[0].Choice)
	err = e.ChooseFlows(ctx, key, toks[0].ID, []string{"f3", "f4"})
	assert.ErrorIs(t, err, engine.ErrBadModification)

	require.NoError(t, e.ChooseFlows(ctx, key, toks[0].ID, []string{"f4"}))
	hist, err := e.History(ctx, key)
	require.NoError(t, err)
	var chosen, ended []string
	for _, ev := range hist {
		switch ev.Type {
		case engine.FlowsChosen:
			chosen = append(chosen, ev.Message)
		case engine.ElementLeft:
			if ev.ElementType == "endEvent" {
				ended = append(ended, ev.ElementID)
			}
		}
	}
	assert.Equal(t, []string{"chose f4; the conditions would take f3"}, chosen)
	assert.Equal(t, []string{"subEnd", "small"}, ended)
}
