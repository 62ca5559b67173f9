package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// heardSignal is a process started by signal name, which waits at a job
// of type "heard-"+name.
func heardSignal(name string) string {
	return `<bpmn:process id="on_` + name + `" isExecutable="true"><bpmn:startEvent id="got_` + name + `">` +
		`<bpmn:signalEventDefinition signalRef="Sig_` + name + `"/></bpmn:startEvent>` + task("heard_"+name, "heard-"+name) +
		flows("got_"+name, "heard_"+name) + `</bpmn:process>`
}

// signalDecl declares the signals named.
func signalDecl(names ...string) string {
	out := ""
	for _, n := range names {
		out += `<bpmn:signal id="Sig_` + n + `" name="` + n + `"/>`
	}
	return out
}

// multiDefs is defs with further processes after p.
func multiDefs(decls, body, more string) string {
	doc := defs(decls, body)
	return doc[:len(doc)-len(`</bpmn:definitions>`)] + more + `</bpmn:definitions>`
}

// thrownOrder returns the names of the messages published and signals
// broadcast in inst's history, in order.
func thrownOrder(inst *engine.Instance) []string {
	var out []string
	for _, ev := range history(inst) {
		if ev.Type == engine.MessagePublished || ev.Type == engine.SignalBroadcast || ev.Type == engine.EscalationThrown || ev.Type == engine.ErrorThrown {
			out = append(out, ev.Name)
		}
	}
	return out
}

// TestMultipleThrow_IntermediateThrowsEveryDefinitionInOrder: a multiple
// intermediate throw event (BPMN 2.0 §10.5) throws each of its
// definitions, in document order, and each reaches its catch.
func TestMultipleThrow_IntermediateThrowsEveryDefinitionInOrder(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage+signalDecl("s1"), `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+
		`<bpmn:intermediateCatchEvent id="wm"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:intermediateCatchEvent id="ws"><bpmn:signalEventDefinition signalRef="Sig_s1"/></bpmn:intermediateCatchEvent>`+
		task("work", "work")+
		`<bpmn:intermediateThrowEvent id="both"><bpmn:signalEventDefinition signalRef="Sig_s1"/><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:endEvent id="e1"/><bpmn:endEvent id="e2"/><bpmn:endEvent id="e3"/>`+
		flows("s", "fork", "fork", "wm", "fork", "ws", "fork", "work", "wm", "e1", "ws", "e2", "work", "both", "both", "e3")))
	inst := start(t, e, map[string]any{"key": "k"})
	complete(t, e, "work")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, []string{"s1", "go"}, thrownOrder(inst), "document order")
	assert.Subset(t, completed(inst), []string{"wm", "ws", "both", "e3"})
}

// TestMultipleThrow_EndEventWithTerminate: a multiple end event throws its
// signal, then its terminate definition ends the instance.
func TestMultipleThrow_EndEventWithTerminate(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, multiDefs(signalDecl("s1"), `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+task("hold", "hold")+task("work", "work")+
		`<bpmn:endEvent id="e1"/><bpmn:endEvent id="stop"><bpmn:signalEventDefinition signalRef="Sig_s1"/><bpmn:terminateEventDefinition/></bpmn:endEvent>`+
		flows("s", "fork", "fork", "hold", "fork", "work", "hold", "e1", "work", "stop"), heardSignal("s1")))
	inst := start(t, e, nil)
	complete(t, e, "work")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, []string{"heard-s1"}, jobTypes(e), "the signal was thrown and the terminate withdrew hold")
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "hold"))
}

// TestMultipleThrow_ErrorWithdrawsTheThrower: an error among the
// definitions of a multiple end event interrupts the sub-process, and its
// boundary event catches it; the signals before and after it are thrown,
// the escalation after it is not (no token is left to raise it).
func TestMultipleThrow_ErrorWithdrawsTheThrower(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, multiDefs(signalDecl("s1", "s2")+`<bpmn:error id="Err" errorCode="E1"/><bpmn:escalation id="Esc" escalationCode="X"/>`,
		`<bpmn:startEvent id="s"/><bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+
			`<bpmn:endEvent id="fail"><bpmn:signalEventDefinition signalRef="Sig_s1"/><bpmn:errorEventDefinition errorRef="Err"/>`+
			`<bpmn:escalationEventDefinition escalationRef="Esc"/><bpmn:signalEventDefinition signalRef="Sig_s2"/></bpmn:endEvent>`+
			flows("ss", "fail")+`</bpmn:subProcess>`+
			`<bpmn:boundaryEvent id="caught" attachedToRef="sub"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:boundaryEvent>`+
			`<bpmn:endEvent id="normal"/><bpmn:endEvent id="handled"/>`+flows("s", "sub", "sub", "normal", "caught", "handled"),
		heardSignal("s1")+heardSignal("s2")))
	inst := start(t, e, nil)
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, []string{"s1", "E1", "s2"}, thrownOrder(inst))
	assert.Contains(t, completed(inst), "handled")
	assert.NotContains(t, completed(inst), "normal")
	assert.ElementsMatch(t, []string{"heard-s1", "heard-s2"}, jobTypes(e))
}

// TestMultipleThrow_NonInterruptingEscalationLetsItGoOn: an escalation a
// non-interrupting handler catches leaves the thrower alive, so the
// definitions after it are thrown and the token goes on.
func TestMultipleThrow_NonInterruptingEscalationLetsItGoOn(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, multiDefs(signalDecl("s1")+`<bpmn:escalation id="Esc" escalationCode="X"/>`,
		`<bpmn:startEvent id="s"/><bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+
			`<bpmn:intermediateThrowEvent id="up"><bpmn:escalationEventDefinition escalationRef="Esc"/><bpmn:signalEventDefinition signalRef="Sig_s1"/></bpmn:intermediateThrowEvent>`+
			`<bpmn:endEvent id="se"/>`+flows("ss", "up", "up", "se")+`</bpmn:subProcess>`+
			`<bpmn:boundaryEvent id="noted" attachedToRef="sub" cancelActivity="false"><bpmn:escalationEventDefinition escalationRef="Esc"/></bpmn:boundaryEvent>`+
			`<bpmn:endEvent id="normal"/><bpmn:endEvent id="side"/>`+flows("s", "sub", "sub", "normal", "noted", "side"),
		heardSignal("s1")))
	inst := start(t, e, nil)
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, []string{"X", "s1"}, thrownOrder(inst))
	assert.Subset(t, completed(inst), []string{"up", "se", "normal", "side"})
	assert.Equal(t, []string{"heard-s1"}, jobTypes(e))
}

// TestMultipleThrow_Refused: a compensation or cancel definition beside
// others, or a job type on a multiple throw event, is refused at deploy
// with the reason (each stays an event of its own).
func TestMultipleThrow_Refused(t *testing.T) {
	for name, body := range map[string]string{
		"compensation": compensated("a") + `<bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition signalRef="Sig_s1"/>` + compensateThrow + `</bpmn:intermediateThrowEvent>`,
		"job type": task("a", "a") + `<bpmn:intermediateThrowEvent id="t"><bpmn:extensionElements><zeebe:taskDefinition type="send"/></bpmn:extensionElements>` +
			`<bpmn:signalEventDefinition signalRef="Sig_s1"/><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateThrowEvent>`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			_, err := e.Deploy("m.bpmn", []byte(defs(goMessage+signalDecl("s1"), `<bpmn:startEvent id="s"/>`+body+`<bpmn:endEvent id="end"/>`+flows("s", "a", "a", "t", "t", "end"))))
			var de *engine.DeployError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, "t", de.Problems[0].ElementID)
			assert.Equal(t, "FT.unsupported", de.Problems[0].RuleID)
			assert.Contains(t, de.Problems[0].Rule, "event of its own")
		})
	}
}
