package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// settleWithin settles e, failing the test if that takes longer than d (a
// model that never settles must fail the test, not hang it).
func settleWithin(t *testing.T, e *engine.Engine, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	require.NoError(t, e.Settle(ctx), "the engine did not settle")
}

// balanced asserts that every element instance the history entered was
// left or terminated exactly once, and returns the terminated elements in
// the order they were terminated.
func balanced(t *testing.T, inst *engine.Instance) []string {
	t.Helper()
	open := map[string]int{}
	var terminated []string
	for _, ev := range history(inst) {
		switch ev.Type {
		case engine.ElementEntered:
			open[ev.ElementID]++
		case engine.ElementLeft:
			open[ev.ElementID]--
		case engine.ElementTerminated:
			open[ev.ElementID]--
			terminated = append(terminated, ev.ElementID)
		}
	}
	for id, n := range open {
		assert.Zero(t, n, "element %s: entered minus (left + terminated)", id)
	}
	return terminated
}

// rethrowModel: a sub-process whose work task's error is caught by an
// event sub-process (trigger) that rethrows it (rethrow); the sub-process
// carries a boundary event (outer) for the same code.
func rethrowModel(trigger, rethrow, outer string) string {
	esp := `<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es">` + trigger + `</bpmn:startEvent>` +
		`<bpmn:endEvent id="again">` + rethrow + `</bpmn:endEvent>` + flows("es", "again") + `</bpmn:subProcess>`
	throw := `<bpmn:endEvent id="fail">` + rethrow + `</bpmn:endEvent>`
	decls := `<bpmn:error id="Err" errorCode="E"/><bpmn:escalation id="Esc" escalationCode="E"/>`
	body := `<bpmn:startEvent id="s"/><bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>` + throw + flows("ss", "fail") + esp + `</bpmn:subProcess>` +
		`<bpmn:endEvent id="e"/>` + flows("s", "sub", "sub", "e")
	if outer != "" {
		body += `<bpmn:boundaryEvent id="outer" attachedToRef="sub">` + outer + `</bpmn:boundaryEvent>` +
			`<bpmn:endEvent id="handled"/>` + flows("outer", "handled")
	}
	return defs(decls, body)
}

// TestEventSubProcess_RethrowGoesToEnclosingScope: an error or escalation
// thrown inside an interrupting event sub-process is not caught again by
// the event sub-processes of the scope it interrupted: it goes to the
// scope's boundary events and upwards (BPMN 2.0 §10.3.5: one interrupting
// event sub-process per scope activation).
func TestEventSubProcess_RethrowGoesToEnclosingScope(t *testing.T) {
	errDef, escDef := `<bpmn:errorEventDefinition errorRef="Err"/>`, `<bpmn:escalationEventDefinition escalationRef="Esc"/>`
	for _, tc := range []struct {
		name, trigger, rethrow, outer string
	}{
		{"error same code", errDef, errDef, errDef},
		{"error catch-all", `<bpmn:errorEventDefinition/>`, errDef, errDef},
		{"escalation same code", escDef, escDef, escDef},
		{"escalation catch-all", `<bpmn:escalationEventDefinition/>`, escDef, escDef},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, rethrowModel(tc.trigger, tc.rethrow, tc.outer))
			inst, err := e.Start(ctxT(t), "p", nil)
			require.NoError(t, err)
			settleWithin(t, e, 2*time.Second)
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, 1, count(inst, engine.ElementEntered, "esp"), "the event sub-process ran once")
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "handled"), "the boundary of the sub-process caught the rethrow")
			assert.Equal(t, 0, count(inst, engine.ElementLeft, "e"))
			balanced(t, inst)
		})
	}
	t.Run("uncaught error rethrown at the process level", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, rethrowModel(`<bpmn:errorEventDefinition/>`, errDef, ""))
		inst, err := e.Start(ctxT(t), "p", nil)
		require.NoError(t, err)
		settleWithin(t, e, 2*time.Second)
		incs := incidents(inst)
		require.Len(t, incs, 1)
		assert.Equal(t, "again", incs[0].ElementID, "the rethrow holds its token with an incident")
		assert.Equal(t, 1, count(inst, engine.ElementEntered, "esp"))
	})
}

// espNonInterrupting is a non-interrupting message event sub-process with
// a job (handle).
const espNonInterrupting = `<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es" isInterrupting="false">` +
	`<bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:startEvent><bpmn:subProcess id="inner"><bpmn:startEvent id="is"/>` +
	`<bpmn:serviceTask id="handle"><bpmn:extensionElements><zeebe:taskDefinition type="handle"/></bpmn:extensionElements></bpmn:serviceTask>` +
	`<bpmn:endEvent id="ie"/><bpmn:sequenceFlow id="i1" sourceRef="is" targetRef="handle"/><bpmn:sequenceFlow id="i2" sourceRef="handle" targetRef="ie"/>` +
	`</bpmn:subProcess><bpmn:endEvent id="ee"/><bpmn:sequenceFlow id="e1" sourceRef="es" targetRef="inner"/>` +
	`<bpmn:sequenceFlow id="e2" sourceRef="inner" targetRef="ee"/></bpmn:subProcess>`

// TestInterrupt_TerminatesRunningEventSubProcess: whatever interrupts a
// scope (an interrupting boundary, an interrupting event sub-process, a
// terminate end event, an error caught outside, cancellation) terminates
// an event sub-process running in it, innermost element first, so every
// element entered is left or terminated.
func TestInterrupt_TerminatesRunningEventSubProcess(t *testing.T) {
	decls := goMessage + `<bpmn:signal id="Sig" name="stop"/><bpmn:error id="Err" errorCode="E"/>`
	// sub holds the work task, the running event sub-process, and what the
	// case adds inside; after is what the case attaches outside.
	model := func(inside, after string) string {
		return defs(decls, `<bpmn:startEvent id="s"/><bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+task("work", "work")+
			`<bpmn:endEvent id="se"/>`+flows("ss", "work", "work", "se")+espNonInterrupting+inside+`</bpmn:subProcess>`+
			`<bpmn:endEvent id="e"/>`+flows("s", "sub", "sub", "e")+after)
	}
	stopBoundary := `<bpmn:boundaryEvent id="b" attachedToRef="sub"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:boundaryEvent>` +
		`<bpmn:endEvent id="be"/>` + flows("b", "be")
	for _, tc := range []struct {
		name      string
		xml       string
		interrupt func(t *testing.T, e *engine.Engine, inst *engine.Instance)
		state     engine.State
		// last is the scope terminated last (after the event sub-process).
		last string
	}{
		{"interrupting boundary", model("", stopBoundary), func(t *testing.T, e *engine.Engine, _ *engine.Instance) {
			require.NoError(t, e.BroadcastSignal(ctxT(t), "stop", nil))
		}, engine.Completed, "sub"},
		{"interrupting event sub-process", model(`<bpmn:subProcess id="kill" triggeredByEvent="true"><bpmn:startEvent id="ks">`+
			`<bpmn:signalEventDefinition signalRef="Sig"/></bpmn:startEvent><bpmn:endEvent id="ke"/>`+flows("ks", "ke")+`</bpmn:subProcess>`, ""),
			func(t *testing.T, e *engine.Engine, _ *engine.Instance) {
				require.NoError(t, e.BroadcastSignal(ctxT(t), "stop", nil))
			}, engine.Completed, "esp"},
		{"terminate end event", defs(decls, `<bpmn:startEvent id="s"/><bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+task("work", "work")+
			`<bpmn:endEvent id="se"><bpmn:terminateEventDefinition/></bpmn:endEvent>`+flows("ss", "work", "work", "se")+espNonInterrupting+`</bpmn:subProcess>`+
			`<bpmn:endEvent id="e"/>`+flows("s", "sub", "sub", "e")), func(t *testing.T, e *engine.Engine, _ *engine.Instance) {
			require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "work").Key, nil))
		}, engine.Completed, "esp"},
		{"error caught by a boundary", model("", `<bpmn:boundaryEvent id="b" attachedToRef="sub"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:boundaryEvent>`+
			`<bpmn:endEvent id="be"/>`+flows("b", "be")), func(t *testing.T, e *engine.Engine, _ *engine.Instance) {
			require.NoError(t, e.ThrowError(ctxT(t), jobOf(t, e, "work").Key, "E", "", nil))
		}, engine.Completed, "sub"},
		{"cancel", model("", ""), func(t *testing.T, _ *engine.Engine, inst *engine.Instance) {
			require.NoError(t, inst.Cancel(ctxT(t)))
		}, engine.Terminated, "sub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, tc.xml)
			inst := start(t, e, map[string]any{"key": "k"})
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
			jobOf(t, e, "handle") // the event sub-process runs
			tc.interrupt(t, e, inst)
			require.NoError(t, e.Settle(ctxT(t)))
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, tc.state, st)
			terminated := balanced(t, inst)
			pos := map[string]int{}
			for i, id := range terminated {
				pos[id] = i + 1
			}
			require.NotZero(t, pos["handle"], "terminated: %v", terminated)
			assert.Less(t, pos["handle"], pos["inner"], "innermost first: %v", terminated)
			assert.Less(t, pos["inner"], pos["esp"], "innermost first: %v", terminated)
			if tc.last != "esp" {
				assert.Less(t, pos["esp"], pos[tc.last], "innermost first: %v", terminated)
			}
			assert.Empty(t, e.Jobs(engine.JobFilter{}), "no job left behind")
		})
	}
}

// TestSimultaneousHandlers_InterruptingWins: one event that reaches an
// interrupting and a non-interrupting handler of the same scope (event
// sub-process starts) or of the same activity (boundary events) starts
// only the interrupting one, whatever the document order.
func TestSimultaneousHandlers_InterruptingWins(t *testing.T) {
	decls := goMessage + `<bpmn:signal id="Sig" name="alarm"/>`
	signal := `<bpmn:signalEventDefinition signalRef="Sig"/>`
	message := `<bpmn:messageEventDefinition messageRef="Msg_go"/>`
	timer := `<bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition>`
	espOf := func(id, interrupting, def string) string {
		return `<bpmn:subProcess id="` + id + `" triggeredByEvent="true"><bpmn:startEvent id="` + id + `_s" isInterrupting="` + interrupting + `">` + def +
			`</bpmn:startEvent><bpmn:endEvent id="` + id + `_e"/>` + flows(id+"_s", id+"_e") + `</bpmn:subProcess>`
	}
	boundaryOf := func(id, interrupting, def string) string {
		return `<bpmn:boundaryEvent id="` + id + `" attachedToRef="work" cancelActivity="` + interrupting + `">` + def + `</bpmn:boundaryEvent>` +
			`<bpmn:endEvent id="` + id + `_e"/>` + flows(id, id+"_e")
	}
	main := `<bpmn:startEvent id="s"/>` + task("work", "work") + `<bpmn:endEvent id="e"/>` + flows("s", "work", "work", "e")
	fire := map[string]func(t *testing.T, e *engine.Engine){
		"signal": func(t *testing.T, e *engine.Engine) { require.NoError(t, e.BroadcastSignal(ctxT(t), "alarm", nil)) },
		"message": func(t *testing.T, e *engine.Engine) {
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
		},
		"timer": func(t *testing.T, e *engine.Engine) { require.NoError(t, e.Advance(ctxT(t), time.Minute)) },
	}
	defsOf := map[string]string{"signal": signal, "message": message, "timer": timer}
	for _, trigger := range []string{"signal", "message", "timer"} {
		for _, shape := range []string{"event sub-processes", "boundary events"} {
			for _, order := range []string{"interrupting first", "non-interrupting first"} {
				t.Run(trigger+"/"+shape+"/"+order, func(t *testing.T) {
					def := defsOf[trigger]
					of := espOf
					if shape == "boundary events" {
						of = boundaryOf
					}
					handlers := of("int", "true", def) + of("non", "false", def)
					if order == "non-interrupting first" {
						handlers = of("non", "false", def) + of("int", "true", def)
					}
					e := newEngine(t)
					deploy(t, e, defs(decls, main+handlers))
					inst := start(t, e, map[string]any{"key": "k"})
					fire[trigger](t, e)
					require.NoError(t, e.Settle(ctxT(t)))
					st, _ := inst.Wait(ctxT(t))
					require.Equal(t, engine.Completed, st)
					assert.Equal(t, 1, count(inst, engine.ElementLeft, "int_e"), "the interrupting handler ran")
					assert.Equal(t, 0, count(inst, engine.ElementEntered, "non_e"), "the non-interrupting one did not start")
					assert.Equal(t, 0, count(inst, engine.ElementEntered, "non"), "the non-interrupting one did not start")
					assert.Equal(t, 0, count(inst, engine.ElementLeft, "e"))
					balanced(t, inst)
					assert.Equal(t, engine.Stats{}, e.Stats())
				})
			}
		}
	}
}

// TestSimultaneousHandlers_ConditionalInterruptingWins: one change of
// variables that makes an interrupting and a non-interrupting conditional
// event sub-process of one scope true starts only the interrupting one,
// whatever the document order.
func TestSimultaneousHandlers_ConditionalInterruptingWins(t *testing.T) {
	espOf := func(id, interrupting string) string {
		return `<bpmn:subProcess id="` + id + `" triggeredByEvent="true"><bpmn:startEvent id="` + id + `_s" isInterrupting="` + interrupting + `">` +
			`<bpmn:conditionalEventDefinition><bpmn:condition xsi:type="bpmn:tFormalExpression">= ready = true</bpmn:condition></bpmn:conditionalEventDefinition>` +
			`</bpmn:startEvent><bpmn:endEvent id="` + id + `_e"/>` + flows(id+"_s", id+"_e") + `</bpmn:subProcess>`
	}
	main := `<bpmn:startEvent id="s"/>` + task("set", "set") + task("work", "work") + `<bpmn:endEvent id="e"/>` + flows("s", "set", "set", "work", "work", "e")
	for _, order := range []string{"interrupting first", "non-interrupting first"} {
		t.Run(order, func(t *testing.T) {
			handlers := espOf("int", "true") + espOf("non", "false")
			if order == "non-interrupting first" {
				handlers = espOf("non", "false") + espOf("int", "true")
			}
			xml := strings.Replace(defs(``, main+handlers), `<bpmn:definitions `, `<bpmn:definitions xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" `, 1)
			e := newEngine(t)
			deploy(t, e, xml)
			inst := start(t, e, map[string]any{"ready": false})
			require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "set").Key, map[string]any{"ready": true}))
			require.NoError(t, e.Settle(ctxT(t)))
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "int_e"), "the interrupting handler ran")
			assert.Equal(t, 0, count(inst, engine.ElementEntered, "non"), "the non-interrupting one did not start")
			balanced(t, inst)
		})
	}
}

// TestInterrupt_TokenAtJoinWasNeverEntered: a token waiting at a parallel
// join has not entered it (the join is entered when it fires), so an
// interrupt records no termination of the join for it.
func TestInterrupt_TokenAtJoinWasNeverEntered(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+task("a", "a")+
		`<bpmn:intermediateThrowEvent id="b"/><bpmn:parallelGateway id="join"/><bpmn:endEvent id="e"/>`+
		flows("s", "fork", "fork", "a", "fork", "b", "a", "join", "b", "join", "join", "e")))
	inst := start(t, e, nil)
	require.NoError(t, inst.Cancel(ctxT(t)))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Terminated, st)
	assert.Equal(t, []string{"a"}, balanced(t, inst))
}

// TestEventSubProcess_ErrorFromNonInterruptingIsCaughtInItsScope: a
// non-interrupting event sub-process does not interrupt its scope, so an
// error thrown inside it is caught by the scope's error event sub-process
// (as in Zeebe), which then interrupts the scope, the thrower included.
func TestEventSubProcess_ErrorFromNonInterruptingIsCaughtInItsScope(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage+`<bpmn:error id="Err" errorCode="E"/>`, `<bpmn:startEvent id="s"/>`+task("work", "work")+`<bpmn:endEvent id="e"/>`+
		flows("s", "work", "work", "e")+
		`<bpmn:subProcess id="notify" triggeredByEvent="true"><bpmn:startEvent id="ns" isInterrupting="false"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:startEvent>`+
		`<bpmn:endEvent id="fail"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:endEvent>`+flows("ns", "fail")+`</bpmn:subProcess>`+
		`<bpmn:subProcess id="recover" triggeredByEvent="true"><bpmn:startEvent id="rs"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:startEvent>`+
		`<bpmn:endEvent id="re"/>`+flows("rs", "re")+`</bpmn:subProcess>`))
	inst := start(t, e, map[string]any{"key": "k"})
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
	settleWithin(t, e, 2*time.Second)
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "recover"))
	assert.Equal(t, []string{"work", "fail", "notify"}, balanced(t, inst), "the scope was interrupted, innermost first")
}
