package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// compensated builds task id (job type id) with a compensation boundary
// event associated with handler "undo_"+id (job type "undo-"+id).
func compensated(id string) string {
	return task(id, id) + `<bpmn:boundaryEvent id="` + id + `_comp" attachedToRef="` + id + `"><bpmn:compensateEventDefinition/></bpmn:boundaryEvent>` +
		`<bpmn:serviceTask id="undo_` + id + `" isForCompensation="true"><bpmn:extensionElements><zeebe:taskDefinition type="undo-` + id + `"/></bpmn:extensionElements></bpmn:serviceTask>` +
		`<bpmn:association id="as_` + id + `" sourceRef="` + id + `_comp" targetRef="undo_` + id + `"/>`
}

const compensateThrow = `<bpmn:compensateEventDefinition/>`

// complete completes the one open job of type typ.
func complete(t *testing.T, e *engine.Engine, typ string) {
	t.Helper()
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, typ).Key, nil))
	require.NoError(t, e.Settle(ctxT(t)))
}

// jobTypes returns the types of the open jobs.
func jobTypes(e *engine.Engine) []string {
	var out []string
	for _, j := range e.Jobs(engine.JobFilter{}) {
		out = append(out, j.Type)
	}
	return out
}

// TestCompensation_EachIterationOnce: a looping activity is compensated
// once per completed iteration, and a second throw finds nothing left to
// compensate.
func TestCompensation_EachIterationOnce(t *testing.T) {
	e := newEngine(t)
	loop := `<bpmn:standardLoopCharacteristics loopMaximum="2"/>`
	body := compensated("a")
	body = body[:len(`<bpmn:serviceTask id="a">`)] + loop + body[len(`<bpmn:serviceTask id="a">`):]
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+body+
		`<bpmn:intermediateThrowEvent id="first">`+compensateThrow+`</bpmn:intermediateThrowEvent>`+
		`<bpmn:intermediateThrowEvent id="again">`+compensateThrow+`</bpmn:intermediateThrowEvent><bpmn:endEvent id="end"/>`+
		flows("s", "a", "a", "first", "first", "again", "again", "end")))
	inst := start(t, e, nil)
	complete(t, e, "a")
	complete(t, e, "a")
	complete(t, e, "undo-a")
	complete(t, e, "undo-a")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, 2, count(inst, engine.ElementLeft, "undo_a"), "one handler per completed iteration")
	assert.Equal(t, 2, count(inst, engine.ElementLeft, "a_comp"))
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "again"), "the second throw compensates nothing and goes on")
}

// TestCompensation_OnlyCompletedActivities: an activity that is still
// running, or was interrupted, is not compensated.
func TestCompensation_OnlyCompletedActivities(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+compensated("a")+compensated("b")+
		`<bpmn:boundaryEvent id="stop_b" attachedToRef="b"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:boundaryEvent>`+
		compensated("c")+
		`<bpmn:intermediateThrowEvent id="undo">`+compensateThrow+`</bpmn:intermediateThrowEvent><bpmn:endEvent id="e1"/><bpmn:endEvent id="e2"/><bpmn:endEvent id="e3"/>`+
		flows("s", "fork", "fork", "a", "a", "undo", "undo", "e1", "fork", "b", "b", "e2", "stop_b", "e3", "fork", "c", "c", "e3")))
	inst := start(t, e, map[string]any{"key": "k"})
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
	require.NoError(t, e.Settle(ctxT(t)))
	complete(t, e, "a")
	assert.ElementsMatch(t, []string{"undo-a", "c"}, jobTypes(e), "b was interrupted and c still runs: only a is compensated")
	complete(t, e, "undo-a")
	complete(t, e, "c")
	assert.Empty(t, jobTypes(e), "c completed after the throw: nothing compensates it")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
}

// TestCompensation_CancelWhileHandlerRuns: cancelling the instance
// terminates the running handler and cancels its job.
func TestCompensation_CancelWhileHandlerRuns(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+compensated("a")+
		`<bpmn:endEvent id="undo">`+compensateThrow+`</bpmn:endEvent>`+flows("s", "a", "a", "undo")))
	inst := start(t, e, nil)
	complete(t, e, "a")
	require.Equal(t, []string{"undo-a"}, jobTypes(e))
	require.NoError(t, inst.Cancel(ctxT(t)))
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Terminated, state)
	assert.Empty(t, jobTypes(e))
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "undo_a"))
	assert.Equal(t, 1, count(inst, engine.JobCanceled, "undo_a"))
}

// TestCompensation_InterruptedScopeEndsIt: when the sub-process a
// compensation runs in is interrupted, its handler is terminated and
// nothing of the compensation is left in the state.
func TestCompensation_InterruptedScopeEndsIt(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage, `<bpmn:startEvent id="s"/><bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+compensated("a")+
		`<bpmn:endEvent id="undo">`+compensateThrow+`</bpmn:endEvent>`+flows("ss", "a", "a", "undo")+`</bpmn:subProcess>`+
		`<bpmn:boundaryEvent id="stop" attachedToRef="sub"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:boundaryEvent>`+
		task("after", "after")+`<bpmn:endEvent id="e"/><bpmn:endEvent id="e2"/>`+flows("s", "sub", "sub", "e", "stop", "after", "after", "e2")))
	inst := start(t, e, map[string]any{"key": "k"})
	complete(t, e, "a")
	require.Equal(t, []string{"undo-a"}, jobTypes(e))
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, []string{"after"}, jobTypes(e))
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "undo_a"))
	doc := checkpointDoc(t, e)
	assert.NotContains(t, doc, "compensations", "no compensation is left running")
	complete(t, e, "after")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
}

// TestCompensation_Checkpoint: the state document carries what is left to
// compensate and the compensation in progress, and a restored engine
// finishes it.
func TestCompensation_Checkpoint(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+compensated("a")+compensated("b")+
		`<bpmn:intermediateThrowEvent id="undo">`+compensateThrow+`</bpmn:intermediateThrowEvent><bpmn:endEvent id="end"/>`+
		flows("s", "a", "a", "b", "b", "undo", "undo", "end")))
	inst := start(t, e, nil)
	complete(t, e, "a")
	assert.Contains(t, checkpointDoc(t, e), `"compensable":[{"element":"a"}]`, "a completed: a record in the process scope")
	complete(t, e, "b")
	doc := checkpointDoc(t, e)
	assert.Contains(t, doc, `"compensations":[{"handler":2,"id":1,"pending":[{"element":"a"}],"scope":0,"token":1}]`)

	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close(context.Background())) })
	complete(t, r, "undo-b")
	complete(t, r, "undo-a")
	restored, ok := r.Instance(inst.Key())
	require.True(t, ok)
	final, err := restored.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, final)
	assert.Equal(t, 1, count(restored, engine.ElementLeft, "undo"))
}

// checkpointDoc returns e's state document as compact JSON text.
func checkpointDoc(t *testing.T, e *engine.Engine) string {
	t.Helper()
	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(state, &v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return string(out)
}

// TestTransaction_ErrorIsNotCancel: an error thrown inside a transaction
// is caught as in a sub-process: nothing is compensated.
func TestTransaction_ErrorIsNotCancel(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(`<bpmn:error id="Err" errorCode="E"/>`, `<bpmn:startEvent id="s"/><bpmn:transaction id="tx"><bpmn:startEvent id="ts"/>`+compensated("a")+
		`<bpmn:endEvent id="fail"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:endEvent>`+flows("ts", "a", "a", "fail")+`</bpmn:transaction>`+
		`<bpmn:boundaryEvent id="caught" attachedToRef="tx"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:endEvent id="e2"/>`+flows("s", "tx", "tx", "e", "caught", "e2")))
	inst := start(t, e, nil)
	complete(t, e, "a")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "caught"))
	assert.Zero(t, count(inst, engine.ElementEntered, "undo_a"))
}

// TestTransaction_CancelFromNestedSubProcess: a cancel end event in a
// sub-process inside a transaction cancels the transaction.
func TestTransaction_CancelFromNestedSubProcess(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:transaction id="tx"><bpmn:startEvent id="ts"/>`+compensated("a")+
		`<bpmn:subProcess id="inner"><bpmn:startEvent id="is"/><bpmn:endEvent id="abort"><bpmn:cancelEventDefinition/></bpmn:endEvent>`+flows("is", "abort")+`</bpmn:subProcess>`+
		`<bpmn:endEvent id="te"/>`+flows("ts", "a", "a", "inner", "inner", "te")+`</bpmn:transaction>`+
		`<bpmn:boundaryEvent id="cancelled" attachedToRef="tx"><bpmn:cancelEventDefinition/></bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:endEvent id="e2"/>`+flows("s", "tx", "tx", "e", "cancelled", "e2")))
	inst := start(t, e, nil)
	complete(t, e, "a")
	complete(t, e, "undo-a")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "cancelled"))
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "tx"))
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "inner"))
	assert.Zero(t, count(inst, engine.ElementLeft, "e"))
}

// TestCompensation_RestoreRefusesBadState: a state document whose
// compensation fields do not fit the model or the instance is refused
// with ErrBadState, never restored into an engine that would fail later.
func TestCompensation_RestoreRefusesBadState(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+compensated("a")+compensated("b")+
		`<bpmn:intermediateThrowEvent id="undo">`+compensateThrow+`</bpmn:intermediateThrowEvent><bpmn:endEvent id="end"/>`+
		flows("s", "a", "a", "b", "b", "undo", "undo", "end")))
	start(t, e, nil)
	complete(t, e, "a")
	complete(t, e, "b")
	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	doc := string(state)
	require.Contains(t, doc, `"compensations":[{"id":1,"scope":0,"pending":[{"element":"a"}],"handler":2,"token":1}]`)
	for name, edit := range map[string][2]string{
		"no handler token":      {`"handler":2`, `"handler":9`},
		"not compensable":       {`"pending":[{"element":"a"}]`, `"pending":[{"element":"end"}]`},
		"no such activity":      {`"pending":[{"element":"a"}]`, `"pending":[{"element":"nowhere"}]`},
		"no scope":              {`"id":1,"scope":0`, `"id":1,"scope":7`},
		"revived process scope": {`"handler":2,"token":1`, `"handler":2,"token":1,"revived":true`},
		"cancel without owner":  {`"handler":2,"token":1`, `"handler":2,"token":1,"cancel":"a_comp"`},
		"handler of two":        {`"handler":2,"token":1}]`, `"handler":2,"token":1},{"id":2,"scope":0,"handler":2}]`},
	} {
		t.Run(name, func(t *testing.T) {
			bad := strings.Replace(doc, edit[0], edit[1], 1)
			require.NotEqual(t, doc, bad)
			r, err := engine.Restore([]byte(bad))
			if err == nil {
				r.Close(context.Background())
			}
			assert.ErrorIs(t, err, engine.ErrBadState)
		})
	}
}

// TestTransaction_CancelOutsideRunningTransaction: a cancel end event in
// a handler compensating a transaction that has completed has no running
// transaction to cancel: an incident says so, naming the event.
func TestTransaction_CancelOutsideRunningTransaction(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:transaction id="tx"><bpmn:startEvent id="ts"/>`+task("a", "a")+
		`<bpmn:boundaryEvent id="a_comp" attachedToRef="a"><bpmn:compensateEventDefinition/></bpmn:boundaryEvent>`+
		`<bpmn:subProcess id="undo_a" isForCompensation="true"><bpmn:startEvent id="us"/><bpmn:endEvent id="abort"><bpmn:cancelEventDefinition/></bpmn:endEvent>`+flows("us", "abort")+`</bpmn:subProcess>`+
		`<bpmn:association id="as" sourceRef="a_comp" targetRef="undo_a"/><bpmn:endEvent id="te"/>`+flows("ts", "a", "a", "te")+`</bpmn:transaction>`+
		`<bpmn:boundaryEvent id="cancelled" attachedToRef="tx"><bpmn:cancelEventDefinition/></bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="undo">`+compensateThrow+`</bpmn:endEvent><bpmn:endEvent id="e2"/>`+flows("s", "tx", "tx", "undo", "cancelled", "e2")))
	inst := start(t, e, nil)
	complete(t, e, "a")
	incs := incidents(inst)
	require.Len(t, incs, 1)
	assert.Equal(t, "abort", incs[0].ElementID)
	assert.Contains(t, incs[0].Message, "no running transaction to cancel")
	require.NoError(t, inst.Cancel(ctxT(t)))
}

// TestCompensation_SubProcessHandlerReplacesContent: a sub-process with a
// compensation handler of its own is compensated by that handler alone;
// one without is compensated through its content, also when a throw names
// it (activityRef).
func TestCompensation_SubProcessHandlerReplacesContent(t *testing.T) {
	sub := func(id, inner string) string {
		return `<bpmn:subProcess id="` + id + `"><bpmn:startEvent id="` + id + `_s"/>` + compensated(inner) + `<bpmn:endEvent id="` + id + `_e"/>` +
			flows(id+"_s", inner, inner, id+"_e") + `</bpmn:subProcess>`
	}
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+sub("with", "a")+
		`<bpmn:boundaryEvent id="with_comp" attachedToRef="with"><bpmn:compensateEventDefinition/></bpmn:boundaryEvent>`+
		`<bpmn:serviceTask id="undo_with" isForCompensation="true"><bpmn:extensionElements><zeebe:taskDefinition type="undo-with"/></bpmn:extensionElements></bpmn:serviceTask>`+
		`<bpmn:association id="as_with" sourceRef="with_comp" targetRef="undo_with"/>`+sub("without", "b")+
		`<bpmn:intermediateThrowEvent id="undo_without"><bpmn:compensateEventDefinition activityRef="without"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:endEvent id="undo_rest">`+compensateThrow+`</bpmn:endEvent>`+
		flows("s", "with", "with", "without", "without", "undo_without", "undo_without", "undo_rest")))
	inst := start(t, e, nil)
	complete(t, e, "a")
	complete(t, e, "b")
	assert.Equal(t, []string{"undo-b"}, jobTypes(e), "activityRef names the sub-process without a handler: its content is compensated")
	complete(t, e, "undo-b")
	assert.Equal(t, []string{"undo-with"}, jobTypes(e), "the sub-process's own handler, not its content's")
	complete(t, e, "undo-with")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Zero(t, count(inst, engine.ElementEntered, "undo_a"))
}

// TestCompensation_MultiInstanceEventSubProcess: each completed instance
// of a multi-instance sub-process is compensated by its compensation event
// sub-process, latest first, which sees that instance's input element and
// the sub-process's own variables.
func TestCompensation_MultiInstanceEventSubProcess(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:subProcess id="ship">`+
		`<bpmn:extensionElements><zeebe:ioMapping><zeebe:input source="= &quot;T-&quot; + parcel" target="tracking"/></zeebe:ioMapping></bpmn:extensionElements>`+
		`<bpmn:multiInstanceLoopCharacteristics isSequential="true"><bpmn:extensionElements><zeebe:loopCharacteristics inputCollection="= parcels" inputElement="parcel"/></bpmn:extensionElements></bpmn:multiInstanceLoopCharacteristics>`+
		`<bpmn:startEvent id="ss"/><bpmn:endEvent id="se"/>`+flows("ss", "se")+
		`<bpmn:subProcess id="recall" triggeredByEvent="true"><bpmn:startEvent id="rs"><bpmn:compensateEventDefinition/></bpmn:startEvent>`+
		`<bpmn:scriptTask id="note"><bpmn:extensionElements><zeebe:script expression="= append(recalled, parcel + &quot;/&quot; + tracking)" resultVariable="recalled"/></bpmn:extensionElements></bpmn:scriptTask>`+
		`<bpmn:endEvent id="re"/>`+flows("rs", "note", "note", "re")+`</bpmn:subProcess></bpmn:subProcess>`+
		`<bpmn:endEvent id="undo">`+compensateThrow+`</bpmn:endEvent>`+flows("s", "ship", "ship", "undo")))
	inst := start(t, e, map[string]any{"parcels": []any{"a", "b"}, "recalled": []any{}})
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, []any{"b/T-b", "a/T-a"}, inst.Variables()["recalled"])
	assert.Equal(t, 2, count(inst, engine.ElementLeft, "recall"))
}

// TestCompensation_LeftSurvivesCheckpoint: a looping sub-process held by
// an incident on its loop condition, after an iteration completed, keeps
// what that iteration left to compensate through a checkpoint.
func TestCompensation_LeftSurvivesCheckpoint(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:subProcess id="sub">`+
		`<bpmn:standardLoopCharacteristics loopMaximum="3"><bpmn:loopCondition>= missing &gt; 1</bpmn:loopCondition></bpmn:standardLoopCharacteristics>`+
		`<bpmn:startEvent id="ss"/>`+compensated("a")+`<bpmn:endEvent id="se"/>`+flows("ss", "a", "a", "se")+`</bpmn:subProcess>`+
		`<bpmn:endEvent id="undo">`+compensateThrow+`</bpmn:endEvent>`+flows("s", "sub", "sub", "undo")))
	inst := start(t, e, nil)
	complete(t, e, "a")
	incs := incidents(inst)
	require.Len(t, incs, 1, "the loop condition cannot be evaluated")
	assert.Equal(t, "sub", incs[0].ElementID)
	doc := checkpointDoc(t, e)
	assert.Contains(t, doc, `"left":{"inner":[{"element":"a"}]}`)

	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close(context.Background())) })
	again, err := r.Checkpoint(ctxT(t))
	require.NoError(t, err)
	assert.JSONEq(t, string(state), string(again), "the restored engine writes the same document")
}

// TestCompensation_HandlerSeesTaskLocals: a task's input-mapped locals
// are kept with its record, in the checkpoint too, and its compensation
// handler runs with them: it undoes that task instance, with what the
// instance saw.
func TestCompensation_HandlerSeesTaskLocals(t *testing.T) {
	e := newEngine(t)
	a := `<bpmn:serviceTask id="a"><bpmn:extensionElements><zeebe:taskDefinition type="a"/>` +
		`<zeebe:ioMapping><zeebe:input source="= &quot;B-&quot; + id" target="booking"/></zeebe:ioMapping></bpmn:extensionElements></bpmn:serviceTask>`
	body := compensated("a")
	body = a + body[strings.Index(body, "</bpmn:serviceTask>")+len("</bpmn:serviceTask>"):]
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+body+task("w", "w")+
		`<bpmn:intermediateThrowEvent id="undo">`+compensateThrow+`</bpmn:intermediateThrowEvent><bpmn:endEvent id="end"/>`+
		flows("s", "a", "a", "w", "w", "undo", "undo", "end")))
	inst := start(t, e, map[string]any{"id": "7"})
	assert.Equal(t, "B-7", jobOf(t, e, "a").Variables["booking"])
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "a").Key, nil))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Contains(t, checkpointDoc(t, e), `"compensable":[{"element":"a","variables":{"booking":"B-7"}}]`)

	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close(context.Background())) })
	complete(t, r, "w")
	undo := jobOf(t, r, "undo-a")
	assert.Equal(t, "B-7", undo.Variables["booking"], "the handler sees the task's locals")
	assert.Equal(t, "7", undo.Variables["id"], "over the scope's variables")
	complete(t, r, "undo-a")
	restored, ok := r.Instance(inst.Key())
	require.True(t, ok)
	final, err := restored.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, final)
	assert.NotContains(t, restored.Variables(), "booking", "the locals stay local")
}

// TestTransaction_CancelCompensatesRunningSubProcessWork: cancelling a
// transaction compensates what completed inside a sub-process that was
// still running in it, latest first, then the transaction's own work.
func TestTransaction_CancelCompensatesRunningSubProcessWork(t *testing.T) {
	for name, mode := range map[string]engine.Resumption{"goroutines": engine.ResumeGoroutines, "direct": engine.ResumeDirect} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, engine.WithResumption(mode))
			deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:transaction id="tx"><bpmn:startEvent id="ts"/>`+compensated("a")+
				`<bpmn:subProcess id="inner"><bpmn:startEvent id="is"/>`+compensated("b")+`<bpmn:endEvent id="abort"><bpmn:cancelEventDefinition/></bpmn:endEvent>`+flows("is", "b", "b", "abort")+`</bpmn:subProcess>`+
				`<bpmn:endEvent id="te"/>`+flows("ts", "a", "a", "inner", "inner", "te")+`</bpmn:transaction>`+
				`<bpmn:boundaryEvent id="cancelled" attachedToRef="tx"><bpmn:cancelEventDefinition/></bpmn:boundaryEvent>`+
				`<bpmn:endEvent id="e"/><bpmn:endEvent id="e2"/>`+flows("s", "tx", "tx", "e", "cancelled", "e2")))
			inst := start(t, e, nil)
			complete(t, e, "a")
			complete(t, e, "b")
			assert.Equal(t, []string{"undo-b"}, jobTypes(e), "the running sub-process's work first")
			complete(t, e, "undo-b")
			assert.Equal(t, []string{"undo-a"}, jobTypes(e))
			complete(t, e, "undo-a")
			state, err := inst.Wait(ctxT(t))
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, state)
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "undo_b"))
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "cancelled"))
			assert.Equal(t, 1, count(inst, engine.ElementTerminated, "tx"))
			assert.Equal(t, 1, count(inst, engine.ElementTerminated, "inner"))
		})
	}
}

// TestCompensation_EventSubProcessMarkedForCompensation: a compensation
// event sub-process, and the activities in it, may be marked
// isForCompensation="true" (they are part of a compensation handler,
// started by its compensation start event, not by an association). It
// deploys and compensates its sub-process, seeing the sub-process's
// variables as they were when it completed.
func TestCompensation_EventSubProcessMarkedForCompensation(t *testing.T) {
	for _, tc := range []struct{ name, esp, inner string }{
		{"event sub-process", ` isForCompensation="true"`, ``},
		{"its activity", ``, ` isForCompensation="true"`},
		{"both", ` isForCompensation="true"`, ` isForCompensation="true"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:subProcess id="order">`+
				`<bpmn:extensionElements><zeebe:ioMapping><zeebe:input source="= &quot;R-&quot; + id" target="reservation"/></zeebe:ioMapping></bpmn:extensionElements>`+
				`<bpmn:startEvent id="os"/>`+task("reserve", "reserve")+`<bpmn:endEvent id="oe"/>`+flows("os", "reserve", "reserve", "oe")+
				`<bpmn:subProcess id="undo_order" triggeredByEvent="true"`+tc.esp+`><bpmn:startEvent id="us"><bpmn:compensateEventDefinition/></bpmn:startEvent>`+
				`<bpmn:serviceTask id="release"`+tc.inner+`><bpmn:extensionElements><zeebe:taskDefinition type="release"/>`+
				`<zeebe:ioMapping><zeebe:input source="= reservation" target="what"/><zeebe:output source="= what" target="released"/></zeebe:ioMapping></bpmn:extensionElements></bpmn:serviceTask>`+
				`<bpmn:endEvent id="ue"/>`+flows("us", "release", "release", "ue")+`</bpmn:subProcess></bpmn:subProcess>`+
				`<bpmn:endEvent id="undo">`+compensateThrow+`</bpmn:endEvent>`+flows("s", "order", "order", "undo")))
			inst := start(t, e, map[string]any{"id": "o-7"})
			complete(t, e, "reserve")
			job := jobOf(t, e, "release")
			assert.Equal(t, "R-o-7", job.Variables["what"], "the sub-process's variables, restored for its handler")
			complete(t, e, "release")
			state, err := inst.Wait(ctxT(t))
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, state)
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "undo_order"))
		})
	}
}
