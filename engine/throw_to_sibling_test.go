package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// siblingThrowProcess: a parallel fork whose first branch throws what the
// second branch waits for. waiter is the second branch's element (id
// "wait"), thrower the first's (id "throw"); decls declares what they name.
func siblingThrowProcess(decls, waiter, thrower string) string {
	return defs(decls, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+thrower+waiter+
		`<bpmn:endEvent id="e1"/><bpmn:endEvent id="e2"/>`+
		`<bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="fork"/>`+
		`<bpmn:sequenceFlow id="f1" sourceRef="fork" targetRef="throw"/><bpmn:sequenceFlow id="f2" sourceRef="fork" targetRef="wait"/>`+
		`<bpmn:sequenceFlow id="f3" sourceRef="throw" targetRef="e1"/><bpmn:sequenceFlow id="f4" sourceRef="wait" targetRef="e2"/>`)
}

const (
	pingSignal  = `<bpmn:signal id="Sig" name="ping"/>`
	pingMessage = `<bpmn:message id="Msg" name="ping"><bpmn:extensionElements><zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>`
	signalThrow = `<bpmn:intermediateThrowEvent id="throw"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:intermediateThrowEvent>`
	signalCatch = `<bpmn:intermediateCatchEvent id="wait"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:intermediateCatchEvent>`
)

// TestThrow_ReachesSiblingThatEnteredItsCatch: a token the history shows
// at a catch (or in an activity with a boundary event, or at an event-based
// gateway) when a sibling throws must receive what the sibling throws
// (BPMN 2.0 §10.5.1: a catch is subscribed while its token is there). The
// waiting branch is entered in the same step as the throwing one, before
// the throw, in every run.
func TestThrow_ReachesSiblingThatEnteredItsCatch(t *testing.T) {
	const rounds = 30
	for _, tc := range []struct {
		name, xml string
		// done is the element the waiting branch passes once it caught.
		done string
	}{
		{"signal catch", siblingThrowProcess(pingSignal, signalCatch, signalThrow), "wait"},
		{"signal end event to catch", defs(pingSignal, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+
			`<bpmn:endEvent id="throw"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:endEvent>`+signalCatch+
			`<bpmn:endEvent id="e2"/><bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="fork"/>`+
			`<bpmn:sequenceFlow id="f1" sourceRef="fork" targetRef="throw"/><bpmn:sequenceFlow id="f2" sourceRef="fork" targetRef="wait"/>`+
			`<bpmn:sequenceFlow id="f4" sourceRef="wait" targetRef="e2"/>`), "wait"},
		{"message catch", siblingThrowProcess(pingMessage,
			`<bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="Msg"/></bpmn:intermediateCatchEvent>`,
			`<bpmn:intermediateThrowEvent id="throw"><bpmn:messageEventDefinition messageRef="Msg"/></bpmn:intermediateThrowEvent>`), "wait"},
		{"receive task", siblingThrowProcess(pingMessage, `<bpmn:receiveTask id="wait" messageRef="Msg"/>`,
			`<bpmn:intermediateThrowEvent id="throw"><bpmn:messageEventDefinition messageRef="Msg"/></bpmn:intermediateThrowEvent>`), "wait"},
		{"event-based gateway", defs(pingSignal, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+signalThrow+
			`<bpmn:eventBasedGateway id="wait"/>`+
			`<bpmn:intermediateCatchEvent id="onSig"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:intermediateCatchEvent>`+
			`<bpmn:intermediateCatchEvent id="onTimer"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>`+
			`<bpmn:endEvent id="e1"/><bpmn:endEvent id="e2"/><bpmn:endEvent id="e3"/>`+
			`<bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="fork"/>`+
			`<bpmn:sequenceFlow id="f1" sourceRef="fork" targetRef="throw"/><bpmn:sequenceFlow id="f2" sourceRef="fork" targetRef="wait"/>`+
			`<bpmn:sequenceFlow id="f3" sourceRef="throw" targetRef="e1"/>`+
			`<bpmn:sequenceFlow id="a1" sourceRef="wait" targetRef="onSig"/><bpmn:sequenceFlow id="a2" sourceRef="wait" targetRef="onTimer"/>`+
			`<bpmn:sequenceFlow id="b1" sourceRef="onSig" targetRef="e2"/><bpmn:sequenceFlow id="b2" sourceRef="onTimer" targetRef="e3"/>`), "onSig"},
		{"signal boundary of a job task", siblingThrowProcess(pingSignal,
			`<bpmn:serviceTask id="wait"><bpmn:extensionElements><zeebe:taskDefinition type="w"/></bpmn:extensionElements></bpmn:serviceTask>`+
				`<bpmn:boundaryEvent id="onSig" attachedToRef="wait"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:boundaryEvent>`+
				`<bpmn:endEvent id="e3"/><bpmn:sequenceFlow id="b1" sourceRef="onSig" targetRef="e3"/>`, signalThrow), "onSig"},
		{"signal boundary of a sub-process", siblingThrowProcess(pingSignal,
			`<bpmn:subProcess id="wait"><bpmn:startEvent id="ss"/><bpmn:serviceTask id="inner"><bpmn:extensionElements><zeebe:taskDefinition type="w"/></bpmn:extensionElements></bpmn:serviceTask>`+
				`<bpmn:endEvent id="se"/><bpmn:sequenceFlow id="s1" sourceRef="ss" targetRef="inner"/><bpmn:sequenceFlow id="s2" sourceRef="inner" targetRef="se"/></bpmn:subProcess>`+
				`<bpmn:boundaryEvent id="onSig" attachedToRef="wait"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:boundaryEvent>`+
				`<bpmn:endEvent id="e3"/><bpmn:sequenceFlow id="b1" sourceRef="onSig" targetRef="e3"/>`, signalThrow), "onSig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, tc.xml)
			for i := range rounds {
				inst := start(t, e, map[string]any{"key": "k"})
				require.Equal(t, engine.Completed, inst.State(), "round %d: the waiting branch missed the throw; tokens %v", i, tokens(t, inst))
				assert.True(t, leftSet(inst)[tc.done], "round %d", i)
			}
		})
	}
}

// TestIncident_AtAWaitStateIsSetUpAgainOnResolve: a wait the loop set up on
// entry that failed (here a job whose retries expression is not a number)
// holds the token with an incident; resolving it makes the loop set the
// wait up again with the variables as they are now.
func TestIncident_AtAWaitStateIsSetUpAgainOnResolve(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+
		`<bpmn:serviceTask id="w"><bpmn:extensionElements><zeebe:taskDefinition type="w" retries="= r"/></bpmn:extensionElements></bpmn:serviceTask>`+
		`<bpmn:serviceTask id="fix"><bpmn:extensionElements><zeebe:taskDefinition type="fix"/></bpmn:extensionElements></bpmn:serviceTask>`+
		`<bpmn:endEvent id="e1"/><bpmn:endEvent id="e2"/>`+
		`<bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="fork"/><bpmn:sequenceFlow id="f1" sourceRef="fork" targetRef="w"/>`+
		`<bpmn:sequenceFlow id="f2" sourceRef="fork" targetRef="fix"/><bpmn:sequenceFlow id="f3" sourceRef="w" targetRef="e1"/>`+
		`<bpmn:sequenceFlow id="f4" sourceRef="fix" targetRef="e2"/>`))
	inst := start(t, e, map[string]any{"r": "many"})
	incs := incidents(inst)
	require.Len(t, incs, 1)
	assert.Equal(t, "w", incs[0].ElementID)
	require.NoError(t, e.ResolveIncident(ctxT(t), incs[0].Key))
	require.NoError(t, e.Settle(ctxT(t)))
	incs = incidents(inst)
	require.Len(t, incs, 1, "set up again with the same variables, it fails again")
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "fix").Key, map[string]any{"r": 2}))
	require.NoError(t, e.ResolveIncident(ctxT(t), incs[0].Key))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Empty(t, incidents(inst))
	job := jobOf(t, e, "w")
	assert.Equal(t, 2, job.Retries)
	require.NoError(t, e.CompleteJob(ctxT(t), job.Key, nil))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
}
