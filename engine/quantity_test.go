package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// quantityDefs: process "p" forks into forks parallel branches that all
// flow into activity, which leads to end event "e".
func quantityDefs(activity string, forks int) string {
	body := `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>` + activity + `<bpmn:endEvent id="e"/>` + flows("s", "fork", "a", "e")
	for i := range forks {
		body += `<bpmn:sequenceFlow id="in` + string(rune('0'+i)) + `" sourceRef="fork" targetRef="a"/>`
	}
	return defs(``, body)
}

func TestStartQuantity_StartsOnceEnoughTokensArrived(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, quantityDefs(`<bpmn:serviceTask id="a" startQuantity="2"><bpmn:extensionElements><zeebe:taskDefinition type="w"/></bpmn:extensionElements></bpmn:serviceTask>`, 4))
	inst := start(t, e, nil)
	jobs := e.Jobs(engine.JobFilter{Type: "w"})
	require.Len(t, jobs, 2, "four tokens start the activity twice")
	assert.Equal(t, 2, count(inst, engine.TokenMerged, "a"))
	assert.Equal(t, 2, count(inst, engine.ElementEntered, "a"), "a token waiting for partners has not entered the activity")
	for _, j := range jobs {
		require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
	}
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
	assert.Equal(t, 2, count(inst, engine.ElementLeft, "e"))
}

func TestStartQuantity_WaitingTokensSurviveCheckpoint(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, quantityDefs(`<bpmn:task id="a" startQuantity="3"/>`, 2))
	inst := start(t, e, nil)
	assert.Equal(t, []engine.Token{{ID: 1, ElementID: "a", Waiting: "join"}, {ID: 2, ElementID: "a", Waiting: "join"}}, tokens(t, inst),
		"two of three tokens: the activity has not started")
	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(ctxT(t)) })
	restored, ok := r.Instance(inst.Key())
	require.True(t, ok)
	assert.Equal(t, tokens(t, inst), tokens(t, restored))
}

func TestCompletionQuantity_SendsTokensOnEveryFlow(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:task id="a" completionQuantity="3"/>`+task("x", "x")+task("y", "y")+
		flows("s", "a", "a", "x", "a", "y")))
	inst := start(t, e, nil)
	assert.Len(t, e.Jobs(engine.JobFilter{Type: "x"}), 3)
	assert.Len(t, e.Jobs(engine.JobFilter{Type: "y"}), 3)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "a"), "the activity completes once")
}

func TestStartQuantity_RefusedOnMultiInstance(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("q.bpmn", []byte(quantityDefs(`<bpmn:task id="a" startQuantity="2"><bpmn:multiInstanceLoopCharacteristics>`+
		`<bpmn:loopCardinality>2</bpmn:loopCardinality></bpmn:multiInstanceLoopCharacteristics></bpmn:task>`, 2)))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "a", de.ElementID)
	assert.Contains(t, de.Rule, `startQuantity="2" on a looping or multi-instance activity`)
}

func TestStartQuantity_WaitStatesStartOnce(t *testing.T) {
	for name, activity := range map[string]string{
		"sub-process": `<bpmn:subProcess id="a" startQuantity="2"><bpmn:startEvent id="ss"/>` + task("inner", "w") + `<bpmn:endEvent id="se"/>` +
			flows("ss", "inner", "inner", "se") + `</bpmn:subProcess>`,
		"receive task": `<bpmn:receiveTask id="a" startQuantity="2" messageRef="Msg_go"/>`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, defs(goMessage, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+activity+`<bpmn:endEvent id="e"/>`+
				flows("s", "fork", "a", "e")+`<bpmn:sequenceFlow id="in0" sourceRef="fork" targetRef="a"/><bpmn:sequenceFlow id="in1" sourceRef="fork" targetRef="a"/>`))
			inst := start(t, e, map[string]any{"key": "k"})
			if j := e.Jobs(engine.JobFilter{Type: "w"}); len(j) > 0 {
				require.Len(t, j, 1, "one sub-process for two tokens")
				require.NoError(t, e.CompleteJob(ctxT(t), j[0].Key, nil))
			} else {
				require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
			}
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "a"))
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "e"))
		})
	}
}
