package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// instantiatingDefs: process "p" begins at an element with
// instantiate="true" (first), which leads to a job of type "w".
func instantiatingDefs(first, flowsFromFirst string) string {
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">` +
		`<bpmn:message id="M" name="order"/><bpmn:signal id="S" name="ping"/>` +
		`<bpmn:process id="p" isExecutable="true">` + first + task("work", "w") + `<bpmn:endEvent id="e"/>` +
		flowsFromFirst + flows("work", "e") + `</bpmn:process></bpmn:definitions>`
}

func TestInstantiate_ReceiveTaskStartsInstancePastIt(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, instantiatingDefs(`<bpmn:receiveTask id="r" messageRef="M" instantiate="true"/>`, flows("r", "work")))
	_, err := e.Start(ctxT(t), "p", nil)
	require.ErrorIs(t, err, engine.ErrNoNoneStart, "only its message starts the process")
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "order", CorrelationKey: "o-1", Variables: map[string]any{"n": 1}}))
	require.NoError(t, e.Settle(ctxT(t)))
	j := jobOf(t, e, "w")
	assert.Equal(t, 1.0, j.Variables["n"], "the message's variables are the instance's")
	inst, ok := e.Instance(j.InstanceKey)
	require.True(t, ok)
	var trace []string
	for _, ev := range history(inst) {
		trace = append(trace, string(ev.Type)+" "+ev.ElementID)
	}
	assert.Equal(t, []string{"instanceStarted ", "messageCorrelated r", "elementEntered r", "elementLeft r", "flowTaken sf_r_work",
		"elementEntered work", "jobCreated work"}, trace)
	assert.Equal(t, []engine.Token{{ID: 1, ElementID: "work", Waiting: "job", JobKey: j.Key}}, tokens(t, inst))
}

func TestInstantiate_EventGatewayStartsAtTheArmThatFired(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, instantiatingDefs(`<bpmn:eventBasedGateway id="g" instantiate="true"/>`+
		`<bpmn:intermediateCatchEvent id="bySignal"><bpmn:signalEventDefinition signalRef="S"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:receiveTask id="byMessage" messageRef="M"/>`,
		flows("g", "bySignal", "g", "byMessage", "bySignal", "work", "byMessage", "work")))
	require.NoError(t, e.BroadcastSignal(ctxT(t), "ping", nil))
	require.NoError(t, e.Settle(ctxT(t)))
	inst, ok := e.Instance(jobOf(t, e, "w").InstanceKey)
	require.True(t, ok)
	assert.Equal(t, []string{"g", "bySignal"}, left(inst), "the gateway and the arm that fired are passed")
	assert.Zero(t, count(inst, engine.ElementEntered, "byMessage"), "the other arm is not entered")

	// The triggers survive a checkpoint: the restored engine starts the
	// next instance at the other arm.
	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(ctxT(t)) })
	require.NoError(t, r.PublishMessage(ctxT(t), engine.Message{Name: "order"}))
	require.NoError(t, r.Settle(ctxT(t)))
	jobs := r.Jobs(engine.JobFilter{Type: "w"})
	require.Len(t, jobs, 2)
	second, ok := r.Instance(jobs[1].InstanceKey)
	require.True(t, ok)
	assert.Equal(t, []string{"g", "byMessage"}, left(second))
}

// left lists the elements inst left, in order.
func left(inst *engine.Instance) []string {
	var out []string
	for _, ev := range history(inst) {
		if ev.Type == engine.ElementLeft {
			out = append(out, ev.ElementID)
		}
	}
	return out
}

func TestInstantiate_LoopingReceiveTaskIsRefused(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("loop.bpmn", []byte(instantiatingDefs(`<bpmn:receiveTask id="r" messageRef="M" instantiate="true">`+
		`<bpmn:standardLoopCharacteristics/></bpmn:receiveTask>`, flows("r", "work"))))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "r", de.ElementID)
	assert.Contains(t, de.Rule, "instantiating bpmn:receiveTask with loop characteristics")
}

func TestInstantiate_ParallelEventGatewayIsRefused(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("par.bpmn", []byte(instantiatingDefs(`<bpmn:eventBasedGateway id="g" instantiate="true" eventGatewayType="Parallel"/>`+
		`<bpmn:intermediateCatchEvent id="bySignal"><bpmn:signalEventDefinition signalRef="S"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:receiveTask id="byMessage" messageRef="M"/>`,
		flows("g", "bySignal", "g", "byMessage", "bySignal", "work", "byMessage", "work"))))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "g", de.ElementID)
	assert.Contains(t, de.Rule, `eventGatewayType="Parallel"`)
}
