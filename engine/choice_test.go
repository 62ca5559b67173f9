package engine_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// choiceModel routes out of a gateway of kind (exclusiveGateway or
// inclusiveGateway) by amount: big when amount > 100, rush when rush is
// true, else the default small; each path is a task of its own type.
func choiceModel(kind string) string {
	return modifyModel(`<bpmn:startEvent id="start"/>` +
		`<bpmn:` + kind + ` id="gw" default="f_small"/>` + task("big", "big") + task("small", "small") + task("rush", "rush") +
		seqFlow("f0", "start", "gw") +
		`<bpmn:sequenceFlow id="f_big" sourceRef="gw" targetRef="big"><bpmn:conditionExpression>= amount &gt; 100</bpmn:conditionExpression></bpmn:sequenceFlow>` +
		`<bpmn:sequenceFlow id="f_rush" sourceRef="gw" targetRef="rush"><bpmn:conditionExpression>= rush</bpmn:conditionExpression></bpmn:sequenceFlow>` +
		seqFlow("f_small", "gw", "small"))
}

func startChoosing(t *testing.T, kind string, vars map[string]any) (*engine.Engine, *engine.Instance) {
	t.Helper()
	e := newEngine(t)
	e.SetGatewayChoices(true)
	_, err := e.Deploy("m.bpmn", []byte(choiceModel(kind)))
	require.NoError(t, err)
	inst, err := e.Start(ctxT(t), "p", vars)
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	return e, inst
}

func instanceJobTypes(e *engine.Engine, key int64) []string {
	var out []string
	for _, j := range e.Jobs(engine.JobFilter{InstanceKey: key}) {
		out = append(out, j.Type)
	}
	return out
}

func TestGatewayChoice_StopsBeforeRoutingAndTakesTheFlowChosen(t *testing.T) {
	e, inst := startChoosing(t, "exclusiveGateway", map[string]any{"amount": 250, "rush": false})
	toks := tokens(t, inst)
	require.Len(t, toks, 1)
	tok := toks[0]
	assert.Equal(t, "gw", tok.ElementID)
	assert.Equal(t, engine.WaitChoice, tok.Waiting)
	assert.Equal(t, &engine.Choice{Holds: []string{"f_big"}, Takes: []string{"f_big"}}, tok.Choice, "the conditions are shown, not applied")
	assert.Empty(t, instanceJobTypes(e, inst.Key()), "nothing has been routed yet")
	for _, ev := range history(inst) {
		assert.False(t, ev.Type == engine.FlowTaken && ev.FlowID != "f0", "no flow out of the gateway yet: %+v", ev)
	}

	require.NoError(t, e.ChooseFlows(ctxT(t), inst.Key(), tok.ID, []string{"f_small"}))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, []string{"small"}, instanceJobTypes(e, inst.Key()), "the choice overrides the condition that holds")
	var chosen []engine.Event
	var taken []string
	for _, ev := range history(inst) {
		switch ev.Type {
		case engine.FlowsChosen:
			chosen = append(chosen, ev)
		case engine.FlowTaken:
			taken = append(taken, ev.FlowID)
		}
	}
	require.Len(t, chosen, 1)
	assert.Equal(t, "gw", chosen[0].ElementID)
	assert.Equal(t, tok.ID, chosen[0].TokenID)
	assert.Equal(t, "chose f_small; the conditions would take f_big", chosen[0].Message)
	assert.Equal(t, []string{"f0", "f_small"}, taken, "the path taken is the one chosen")
}

func TestGatewayChoice_Inclusive(t *testing.T) {
	e, inst := startChoosing(t, "inclusiveGateway", map[string]any{"amount": 250, "rush": true})
	tok := tokens(t, inst)[0]
	assert.Equal(t, &engine.Choice{Holds: []string{"f_big", "f_rush"}, Takes: []string{"f_big", "f_rush"}}, tok.Choice)
	// Asked in another order, taken in document order.
	require.NoError(t, e.ChooseFlows(ctxT(t), inst.Key(), tok.ID, []string{"f_small", "f_rush"}))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.ElementsMatch(t, []string{"small", "rush"}, instanceJobTypes(e, inst.Key()))
}

func TestGatewayChoice_NoFlowsLetsTheConditionsDecide(t *testing.T) {
	e, inst := startChoosing(t, "exclusiveGateway", map[string]any{"amount": 5, "rush": false})
	tok := tokens(t, inst)[0]
	assert.Equal(t, &engine.Choice{Holds: []string{}, Takes: []string{"f_small"}}, tok.Choice, "only the default is left")
	require.NoError(t, e.ChooseFlows(ctxT(t), inst.Key(), tok.ID, nil))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, []string{"small"}, instanceJobTypes(e, inst.Key()))
	for _, ev := range history(inst) {
		assert.NotEqual(t, engine.FlowsChosen, ev.Type, "nothing was overridden")
	}
}

func TestGatewayChoice_ConditionErrorIsShownNotRaised(t *testing.T) {
	e, inst := startChoosing(t, "exclusiveGateway", map[string]any{"amount": "lots"})
	tok := tokens(t, inst)[0]
	require.Equal(t, engine.WaitChoice, tok.Waiting, "no incident while a person chooses")
	assert.NotEmpty(t, tok.Choice.Error)
	assert.Empty(t, tok.Choice.Takes)
	require.NoError(t, e.ChooseFlows(ctxT(t), inst.Key(), tok.ID, []string{"f_big"}))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, []string{"big"}, instanceJobTypes(e, inst.Key()))
}

func TestGatewayChoice_BadChoicesChangeNothing(t *testing.T) {
	e, inst := startChoosing(t, "exclusiveGateway", map[string]any{"amount": 250, "rush": false})
	tok := tokens(t, inst)[0]
	for name, c := range map[string]struct {
		token int
		flows []string
	}{
		"two flows out of an exclusive gateway": {tok.ID, []string{"f_big", "f_small"}},
		"a flow of another element":             {tok.ID, []string{"f0"}},
		"a flow twice":                          {tok.ID, []string{"f_big", "f_big"}},
		"no such token":                         {tok.ID + 7, []string{"f_big"}},
	} {
		err := e.ChooseFlows(ctxT(t), inst.Key(), c.token, c.flows)
		assert.ErrorIs(t, err, engine.ErrBadChoice, name)
		assert.ErrorIs(t, err, engine.ErrBadModification, name)
	}
	assert.Equal(t, []engine.Token{tok}, tokens(t, inst), "still waiting for the choice")
	_, err := e.Start(ctxT(t), "p", map[string]any{"amount": 1, "rush": false})
	require.NoError(t, err)
	err = e.ChooseFlows(ctxT(t), 999999, tok.ID, nil)
	assert.True(t, errors.Is(err, engine.ErrUnknownInstance), "%v", err)
}

func TestGatewayChoice_OffRoutesAsBefore(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("m.bpmn", []byte(choiceModel("exclusiveGateway")))
	require.NoError(t, err)
	inst, err := e.Start(ctxT(t), "p", map[string]any{"amount": 250, "rush": false})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, []string{"big"}, instanceJobTypes(e, inst.Key()))
	err = e.ChooseFlows(ctxT(t), inst.Key(), tokens(t, inst)[0].ID, []string{"f_small"})
	assert.ErrorIs(t, err, engine.ErrBadChoice, "a token at a job waits for no choice")
}

// A token waiting for a choice is a continuation like any other: a
// checkpoint keeps it, and the restored engine routes it by the choice.
func TestGatewayChoice_SurvivesCheckpoint(t *testing.T) {
	e, inst := startChoosing(t, "exclusiveGateway", map[string]any{"amount": 250, "rush": false})
	tok := tokens(t, inst)[0]
	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(ctxT(t)) })
	ri, ok := r.Instance(inst.Key())
	require.True(t, ok)
	assert.Equal(t, []engine.Token{tok}, tokens(t, ri))
	require.NoError(t, r.ChooseFlows(ctxT(t), inst.Key(), tok.ID, []string{"f_small"}))
	require.NoError(t, r.Settle(ctxT(t)))
	assert.Equal(t, []string{"small"}, instanceJobTypes(r, inst.Key()))
}
