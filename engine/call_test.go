package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// callDefs: parent process "p" calls "child" from call activity "call";
// the child waits for a job of type "c".
func callDefs(callExtra, callBoundary string) string {
	boundaryFlow := ""
	if callBoundary != "" {
		boundaryFlow = `<bpmn:endEvent id="late"/>` + flows("b", "late")
	}
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">` +
		`<bpmn:process id="child" isExecutable="true"><bpmn:startEvent id="cs"/>` + task("cwork", "c") + `<bpmn:endEvent id="ce"/>` +
		flows("cs", "cwork", "cwork", "ce") + `</bpmn:process>` +
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/>` +
		`<bpmn:callActivity id="call"><bpmn:extensionElements><zeebe:calledElement processId="= target"/>` + callExtra +
		`</bpmn:extensionElements></bpmn:callActivity>` + callBoundary +
		`<bpmn:endEvent id="e"/>` + flows("s", "call", "call", "e") + boundaryFlow +
		`</bpmn:process></bpmn:definitions>`
}

func TestCallActivity_RunsChildAndHandsBackVariables(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, callDefs(``, ``))
	parent := start(t, e, map[string]any{"target": "child", "order": "o-1"})
	j := jobOf(t, e, "c")
	assert.Equal(t, "o-1", j.Variables["order"], "the child sees the parent's variables")
	assert.NotEqual(t, parent.Key(), j.InstanceKey, "the job belongs to the called instance")
	assert.Equal(t, []engine.Token{{ID: 1, ElementID: "call", Waiting: "call"}}, tokens(t, parent))
	require.NoError(t, e.CompleteJob(ctxT(t), j.Key, map[string]any{"result": 42}))
	st, _ := parent.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 42.0, parent.Variables()["result"], "without output mappings every child variable comes back")
	assert.Equal(t, 1, count(parent, engine.CallStarted, "call"))
	assert.Equal(t, engine.Stats{}, e.Stats())
}

func TestCallActivity_Mappings(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, callDefs(`<zeebe:ioMapping><zeebe:input source="= 7" target="seed"/>`+
		`<zeebe:output source="= result * 2" target="doubled"/></zeebe:ioMapping>`, ``))
	parent := start(t, e, map[string]any{"target": "child"})
	j := jobOf(t, e, "c")
	assert.Equal(t, 7.0, j.Variables["seed"])
	require.NoError(t, e.CompleteJob(ctxT(t), j.Key, map[string]any{"result": 21}))
	st, _ := parent.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 42.0, parent.Variables()["doubled"])
	assert.NotContains(t, parent.Variables(), "result", "with output mappings only their targets come back")
}

func TestCallActivity_InterruptingBoundaryCancelsChild(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, callDefs(``, timerBoundary("b", "call", "true", `<bpmn:timeDuration>PT1H</bpmn:timeDuration>`)))
	parent := start(t, e, map[string]any{"target": "child"})
	child, ok := e.Instance(jobOf(t, e, "c").InstanceKey)
	require.True(t, ok)
	require.NoError(t, e.Advance(ctxT(t), time.Hour))
	st, _ := parent.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(parent, engine.ElementLeft, "late"))
	cst, _ := child.Wait(ctxT(t))
	assert.Equal(t, engine.Terminated, cst, "the called instance is cancelled with its call activity")
	assert.Equal(t, engine.Stats{}, e.Stats())
}

func TestCallActivity_CancelParentCancelsChild(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, callDefs(``, ``))
	parent := start(t, e, map[string]any{"target": "child"})
	child, _ := e.Instance(jobOf(t, e, "c").InstanceKey)
	require.NoError(t, parent.Cancel(ctxT(t)))
	cst, _ := child.Wait(ctxT(t))
	assert.Equal(t, engine.Terminated, cst)
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, engine.Stats{}, e.Stats())
}

func TestCallActivity_ChildCancelledOpensIncident(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, callDefs(``, ``))
	parent := start(t, e, map[string]any{"target": "child"})
	child, _ := e.Instance(jobOf(t, e, "c").InstanceKey)
	require.NoError(t, child.Cancel(ctxT(t)))
	require.NoError(t, e.Settle(ctxT(t)))
	incs := incidents(parent)
	require.Len(t, incs, 1)
	assert.Equal(t, "call", incs[0].ElementID)
	assert.Contains(t, incs[0].Message, "terminated")
}

func TestCallActivity_UnknownProcessOpensIncident(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, callDefs(``, ``))
	parent := start(t, e, map[string]any{"target": "nowhere"})
	incs := incidents(parent)
	require.Len(t, incs, 1)
	assert.Contains(t, incs[0].Message, `"nowhere"`)
	assert.Contains(t, incs[0].Message, "unknown process")
}

func TestCallActivity_DeployRejectsCallToEventOnlyProcess(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("calls.bpmn", []byte(`<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">`+
		`<bpmn:message id="M" name="m"/>`+
		`<bpmn:process id="callee" isExecutable="true"><bpmn:startEvent id="cs"><bpmn:messageEventDefinition messageRef="M"/></bpmn:startEvent>`+
		`<bpmn:endEvent id="ce"/>`+flows("cs", "ce")+`</bpmn:process>`+
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/><bpmn:callActivity id="call" calledElement="callee"/>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "call", "call", "e")+`</bpmn:process></bpmn:definitions>`))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "call", de.ElementID)
	assert.Contains(t, de.Rule, "no none start event")
}

func TestCallActivity_RecursionIsBounded(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">`+
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/><bpmn:callActivity id="again" calledElement="p"/>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "again", "again", "e")+`</bpmn:process></bpmn:definitions>`)
	_ = start(t, e, nil)
	incs := openIncidents(e)
	require.Len(t, incs, 1)
	assert.Contains(t, incs[0].Message, "nest deeper than")
	assert.Equal(t, runtimeMaxCallDepth+1, e.Stats().Instances, "the chain stops at the bound")
}

const runtimeMaxCallDepth = 64 // runtime.MaxCallDepth

// errorCallDefs: "p" calls "child" from "call", which has the boundary
// events callBoundary (their flows to end event "caught" included); the
// child's job "c" goes on to end event childEnd.
func errorCallDefs(childEnd, callBoundary string) string {
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">` +
		`<bpmn:error id="E1" errorCode="E1"/><bpmn:error id="E2" errorCode="E2"/><bpmn:escalation id="X" escalationCode="X"/>` +
		`<bpmn:process id="child" isExecutable="true"><bpmn:startEvent id="cs"/>` + task("cwork", "c") + childEnd +
		flows("cs", "cwork", "cwork", "ce") + `</bpmn:process>` +
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/>` +
		`<bpmn:callActivity id="call"><bpmn:extensionElements><zeebe:calledElement processId="child"/></bpmn:extensionElements></bpmn:callActivity>` +
		callBoundary + `<bpmn:endEvent id="e"/><bpmn:endEvent id="caught"/>` + flows("s", "call", "call", "e", "b", "caught") +
		`</bpmn:process></bpmn:definitions>`
}

func TestCallActivity_ChildErrorReachesCallBoundary(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, errorCallDefs(`<bpmn:endEvent id="ce"/>`,
		`<bpmn:boundaryEvent id="b" attachedToRef="call"><bpmn:errorEventDefinition errorRef="E1"/></bpmn:boundaryEvent>`))
	parent := start(t, e, nil)
	j := jobOf(t, e, "c")
	child, ok := e.Instance(j.InstanceKey)
	require.True(t, ok)
	require.NoError(t, e.ThrowError(ctxT(t), j.Key, "E1", "out of stock", map[string]any{"missing": "bolts"}))
	st, _ := parent.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(parent, engine.ErrorCaught, "b"))
	assert.Equal(t, 1, count(parent, engine.ElementLeft, "caught"))
	assert.Equal(t, "out of stock", parent.Variables()["errorMessage"])
	assert.Equal(t, "bolts", parent.Variables()["missing"], "the error's variables are set where it is caught")
	cst, _ := child.Wait(ctxT(t))
	assert.Equal(t, engine.Terminated, cst, "the called instance ends with its interrupted call activity")
	assert.Empty(t, openIncidents(e))
	assert.Equal(t, engine.Stats{}, e.Stats())
}

func TestCallActivity_UncaughtChildErrorIsIncidentInChild(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, errorCallDefs(`<bpmn:endEvent id="ce"><bpmn:errorEventDefinition errorRef="E1"/></bpmn:endEvent>`,
		`<bpmn:boundaryEvent id="b" attachedToRef="call"><bpmn:errorEventDefinition errorRef="E2"/></bpmn:boundaryEvent>`))
	parent := start(t, e, nil)
	j := jobOf(t, e, "c")
	require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
	require.NoError(t, e.Settle(ctxT(t)))
	incs := openIncidents(e)
	require.Len(t, incs, 1)
	assert.Equal(t, j.InstanceKey, incs[0].InstanceKey, "the incident is where the error was thrown")
	assert.Equal(t, "ce", incs[0].ElementID)
	assert.Contains(t, incs[0].Message, `unhandled BPMN error "E1"`)
	assert.Equal(t, []engine.Token{{ID: 1, ElementID: "call", Waiting: "call"}}, tokens(t, parent))
	assert.Zero(t, count(parent, engine.ErrorCaught, "b"), "a boundary for another code does not catch it")
}

func TestCallActivity_ChildEscalationGoesOnAfterNonInterruptingCatch(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, errorCallDefs(`<bpmn:endEvent id="ce"><bpmn:escalationEventDefinition escalationRef="X"/></bpmn:endEvent>`,
		`<bpmn:boundaryEvent id="b" attachedToRef="call" cancelActivity="false"><bpmn:escalationEventDefinition/></bpmn:boundaryEvent>`))
	parent := start(t, e, nil)
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "c").Key, map[string]any{"done": true}))
	st, _ := parent.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(parent, engine.EscalationCaught, "b"))
	assert.Equal(t, 1, count(parent, engine.ElementLeft, "caught"), "the boundary path ran")
	assert.Equal(t, 1, count(parent, engine.ElementLeft, "call"), "the called instance completed after the escalation")
	assert.Equal(t, true, parent.Variables()["done"])
}

func TestCallActivity_GlobalTaskRunsInItsPlace(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" `+
		`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">`+
		`<bpmn:globalScriptTask id="review" scriptFormat="text"><bpmn:extensionElements><zeebe:taskDefinition type="reviewer"/></bpmn:extensionElements>`+
		`<bpmn:script>check it</bpmn:script></bpmn:globalScriptTask>`+
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/>`+
		`<bpmn:callActivity id="call" calledElement="review"><bpmn:extensionElements><zeebe:ioMapping><zeebe:output source="= verdict" target="outcome"/></zeebe:ioMapping></bpmn:extensionElements></bpmn:callActivity>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "call", "call", "e")+`</bpmn:process></bpmn:definitions>`)
	inst := start(t, e, nil)
	j := jobOf(t, e, "reviewer")
	assert.Equal(t, "call", j.ElementID, "the call activity performs the global task's job itself")
	assert.Equal(t, inst.Key(), j.InstanceKey, "in the calling instance: no instance is started")
	require.NoError(t, e.CompleteJob(ctxT(t), j.Key, map[string]any{"verdict": "ok"}))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, "ok", inst.Variables()["outcome"], "the call activity's own mappings apply")
	assert.Zero(t, count(inst, engine.CallStarted, "call"))
}

func TestCallActivity_ChildErrorReachesMultiInstanceBoundary(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" `+
		`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t"><bpmn:error id="E1" errorCode="E1"/>`+
		`<bpmn:process id="child" isExecutable="true"><bpmn:startEvent id="cs"/>`+task("cwork", "c")+`<bpmn:endEvent id="ce"/>`+
		flows("cs", "cwork", "cwork", "ce")+`</bpmn:process>`+
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/>`+
		`<bpmn:callActivity id="call"><bpmn:extensionElements><zeebe:calledElement processId="child"/></bpmn:extensionElements>`+
		`<bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>2</bpmn:loopCardinality></bpmn:multiInstanceLoopCharacteristics></bpmn:callActivity>`+
		`<bpmn:boundaryEvent id="b" attachedToRef="call"><bpmn:errorEventDefinition errorRef="E1"/></bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:endEvent id="caught"/>`+flows("s", "call", "call", "e", "b", "caught")+
		`</bpmn:process></bpmn:definitions>`)
	parent := start(t, e, nil)
	jobs := e.Jobs(engine.JobFilter{Type: "c"})
	require.Len(t, jobs, 2)
	require.NoError(t, e.ThrowError(ctxT(t), jobs[1].Key, "E1", "", nil))
	st, _ := parent.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(parent, engine.ElementLeft, "caught"))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Empty(t, e.Jobs(engine.JobFilter{}), "both called instances ended with the body")
	assert.Equal(t, engine.Stats{}, e.Stats())
}

func TestCallActivity_ResolvedUnhandledErrorIsThrownAgain(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, errorCallDefs(`<bpmn:endEvent id="ce"><bpmn:errorEventDefinition errorRef="E1"/></bpmn:endEvent>`,
		`<bpmn:boundaryEvent id="b" attachedToRef="call"><bpmn:errorEventDefinition errorRef="E2"/></bpmn:boundaryEvent>`))
	parent := start(t, e, nil)
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "c").Key, nil))
	require.NoError(t, e.Settle(ctxT(t)))
	incs := openIncidents(e)
	require.Len(t, incs, 1)
	require.NoError(t, e.ResolveIncident(ctxT(t), incs[0].Key))
	require.NoError(t, e.Settle(ctxT(t)))
	again := openIncidents(e)
	require.Len(t, again, 1, "nobody catches it the second time either")
	assert.Equal(t, "ce", again[0].ElementID)
	assert.NotEqual(t, incs[0].Key, again[0].Key)
	assert.Equal(t, []engine.Token{{ID: 1, ElementID: "call", Waiting: "call"}}, tokens(t, parent))
}
