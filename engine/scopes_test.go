package engine_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

func flows(pairs ...string) string {
	out := ""
	for i := 0; i+1 < len(pairs); i += 2 {
		out += fmt.Sprintf(`<bpmn:sequenceFlow id="sf_%s_%s" sourceRef="%s" targetRef="%s"/>`, pairs[i], pairs[i+1], pairs[i], pairs[i+1])
	}
	return out
}

func task(id, typ string) string {
	return `<bpmn:serviceTask id="` + id + `"><bpmn:extensionElements><zeebe:taskDefinition type="` + typ + `"/></bpmn:extensionElements></bpmn:serviceTask>`
}

func timerBoundary(id, attachedTo, interrupting, timer string) string {
	return `<bpmn:boundaryEvent id="` + id + `" attachedToRef="` + attachedTo + `" cancelActivity="` + interrupting + `">` +
		`<bpmn:timerEventDefinition>` + timer + `</bpmn:timerEventDefinition></bpmn:boundaryEvent>`
}

func jobOf(t *testing.T, e *engine.Engine, typ string) engine.Job {
	t.Helper()
	require.NoError(t, e.Settle(ctxT(t)))
	jobs := e.Jobs(engine.JobFilter{Type: typ})
	require.Len(t, jobs, 1, "jobs of type %s", typ)
	return jobs[0]
}

func count(inst *engine.Instance, typ engine.EventType, element string) int {
	n := 0
	for _, ev := range history(inst) {
		if ev.Type == typ && ev.ElementID == element {
			n++
		}
	}
	return n
}

func TestSubProcess_ScopeAndVariables(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+
		`<bpmn:subProcess id="sub"><bpmn:extensionElements><zeebe:ioMapping><zeebe:input source="= 1" target="local"/></zeebe:ioMapping></bpmn:extensionElements>`+
		`<bpmn:startEvent id="ss"/>`+task("work", "work")+`<bpmn:endEvent id="se"/>`+flows("ss", "work", "work", "se")+`</bpmn:subProcess>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "sub", "sub", "e")))
	inst := start(t, e, map[string]any{"shared": "before"})
	j := jobOf(t, e, "work")
	assert.Equal(t, 1.0, j.Variables["local"], "reads see the sub-process's local variables")
	assert.Equal(t, "before", j.Variables["shared"], "and fall through to the process scope")
	assert.Equal(t, []engine.Token{{ID: 1, ElementID: "sub", Waiting: "scope"}, {ID: 2, ElementID: "work", Waiting: "job", JobKey: j.Key}}, tokens(t, inst))
	require.NoError(t, e.CompleteJob(ctxT(t), j.Key, map[string]any{"local": 2, "shared": "after", "fresh": true}))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, map[string]any{"shared": "after", "fresh": true}, inst.Variables(),
		"a write goes to the nearest scope holding the name, else to the process")
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "sub"))
}

func TestSubProcess_TerminateEndsOnlyItsScope(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+
		`<bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/><bpmn:parallelGateway id="fork"/>`+task("slow", "slow")+
		`<bpmn:endEvent id="kill"><bpmn:terminateEventDefinition/></bpmn:endEvent>`+flows("ss", "fork", "fork", "slow", "fork", "kill")+`</bpmn:subProcess>`+
		task("after", "after")+`<bpmn:endEvent id="e"/>`+flows("s", "sub", "sub", "after", "after", "e")))
	inst := start(t, e, nil)
	assert.Empty(t, e.Jobs(engine.JobFilter{Type: "slow"}), "the terminate withdrew the slow branch and its job")
	j := jobOf(t, e, "after")
	require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "slow"))
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "sub"), "the sub-process completes normally")
}

func TestBoundary_TimerInterruptsJobTask(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+task("work", "work")+
		timerBoundary("timeout", "work", "true", `<bpmn:timeDuration>PT10M</bpmn:timeDuration>`)+
		`<bpmn:endEvent id="done"/><bpmn:endEvent id="late"/>`+flows("s", "work", "work", "done", "timeout", "late")))
	inst := start(t, e, nil)
	j := jobOf(t, e, "work")
	require.NoError(t, e.Advance(ctxT(t), 10*time.Minute))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "late"))
	assert.Equal(t, 0, count(inst, engine.ElementLeft, "done"))
	assert.Equal(t, 1, count(inst, engine.JobCanceled, "work"))
	require.ErrorIs(t, e.CompleteJob(ctxT(t), j.Key, nil), engine.ErrUnknownJob, "the interrupted job is gone")
}

func TestBoundary_NonInterruptingTimerCycle(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+task("approve", "approve")+
		timerBoundary("remind", "approve", "false", `<bpmn:timeCycle>R3/PT1H</bpmn:timeCycle>`)+
		`<bpmn:endEvent id="done"/><bpmn:endEvent id="reminded"/>`+flows("s", "approve", "approve", "done", "remind", "reminded")))
	inst := start(t, e, nil)
	require.NoError(t, e.Advance(ctxT(t), 5*time.Hour))
	assert.Equal(t, 3, count(inst, engine.ElementLeft, "reminded"), "R3 fires three times while the task runs")
	assert.Equal(t, engine.Active, inst.State())
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "approve").Key, nil))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
}

func TestBoundary_NonInterruptingTimerStopsWithActivity(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+task("approve", "approve")+
		timerBoundary("remind", "approve", "false", `<bpmn:timeCycle>R/PT1H</bpmn:timeCycle>`)+
		`<bpmn:endEvent id="done"/><bpmn:endEvent id="reminded"/>`+flows("s", "approve", "approve", "done", "remind", "reminded")))
	inst := start(t, e, nil)
	require.NoError(t, e.Advance(ctxT(t), 2*time.Hour))
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "approve").Key, nil))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	_, pending := e.NextDeadline()
	assert.False(t, pending, "the cycle ends when the activity is left")
	assert.Equal(t, 2, count(inst, engine.ElementLeft, "reminded"))
}

// subWithBoundary: a sub-process with a job inside and a boundary of the
// given definition on the sub-process.
func subWithBoundary(boundary string) string {
	return defs(goMessage+`<bpmn:signal id="Sig" name="stop"/><bpmn:error id="Err" errorCode="E1"/><bpmn:escalation id="Esc" escalationCode="UP"/>`,
		`<bpmn:startEvent id="s"/>`+
			`<bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+task("inner", "inner")+`<bpmn:endEvent id="se"/>`+flows("ss", "inner", "inner", "se")+`</bpmn:subProcess>`+
			boundary+`<bpmn:endEvent id="normal"/><bpmn:endEvent id="handled"/>`+flows("s", "sub", "sub", "normal", "b", "handled"))
}

func TestBoundary_MessageInterruptsSubProcess(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, subWithBoundary(`<bpmn:boundaryEvent id="b" attachedToRef="sub"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:boundaryEvent>`))
	inst := start(t, e, map[string]any{"key": "k"})
	jobOf(t, e, "inner")
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "handled"))
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "inner"))
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "sub"))
	assert.Empty(t, e.Jobs(engine.JobFilter{}))
}

func TestBoundary_SignalNonInterruptingOnReceiveTask(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage+`<bpmn:signal id="Sig" name="ping"/>`, `<bpmn:startEvent id="s"/><bpmn:receiveTask id="recv" messageRef="Msg_go"/>`+
		`<bpmn:boundaryEvent id="b" attachedToRef="recv" cancelActivity="false"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:endEvent id="pinged"/>`+flows("s", "recv", "recv", "e", "b", "pinged")))
	inst := start(t, e, map[string]any{"key": "k"})
	require.NoError(t, e.BroadcastSignal(ctxT(t), "ping", nil))
	require.NoError(t, e.BroadcastSignal(ctxT(t), "ping", nil))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, 2, count(inst, engine.ElementLeft, "pinged"))
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
	require.NoError(t, e.BroadcastSignal(ctxT(t), "ping", nil))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, 2, count(inst, engine.ElementLeft, "pinged"), "the boundary closed with its activity")
}

func TestError_ThrownByJobCaughtByBoundary(t *testing.T) {
	for _, tc := range []struct {
		name, code, want string
	}{
		{"coded catch wins over catch-all", "NO_STOCK", "noStock"},
		{"catch-all takes other codes", "OTHER", "anyError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, defs(`<bpmn:error id="E_stock" errorCode="NO_STOCK"/>`, `<bpmn:startEvent id="s"/>`+task("reserve", "reserve")+
				`<bpmn:boundaryEvent id="any" attachedToRef="reserve"><bpmn:errorEventDefinition/></bpmn:boundaryEvent>`+
				`<bpmn:boundaryEvent id="stock" attachedToRef="reserve"><bpmn:errorEventDefinition errorRef="E_stock"/></bpmn:boundaryEvent>`+
				`<bpmn:endEvent id="ok"/><bpmn:endEvent id="noStock"/><bpmn:endEvent id="anyError"/>`+
				flows("s", "reserve", "reserve", "ok", "stock", "noStock", "any", "anyError")))
			inst := start(t, e, nil)
			require.NoError(t, e.ThrowError(ctxT(t), jobOf(t, e, "reserve").Key, tc.code, "sorry", nil))
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, 1, count(inst, engine.ElementLeft, tc.want))
			assert.Equal(t, tc.code, inst.Variables()["errorCode"], "error variables reach the handler")
			assert.Equal(t, "sorry", inst.Variables()["errorMessage"])
		})
	}
}

func TestError_EndEventPropagatesThroughTwoLevels(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(`<bpmn:error id="Err" errorCode="E1"/>`, `<bpmn:startEvent id="s"/>`+
		`<bpmn:subProcess id="outer"><bpmn:startEvent id="os"/>`+
		`<bpmn:subProcess id="inner"><bpmn:startEvent id="is"/><bpmn:parallelGateway id="fork"/>`+task("busy", "busy")+
		`<bpmn:endEvent id="fail"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:endEvent>`+flows("is", "fork", "fork", "busy", "fork", "fail")+`</bpmn:subProcess>`+
		`<bpmn:endEvent id="oe"/>`+flows("os", "inner", "inner", "oe")+`</bpmn:subProcess>`+
		`<bpmn:boundaryEvent id="caught" attachedToRef="outer"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:endEvent id="recovered"/>`+flows("s", "outer", "outer", "e", "caught", "recovered")))
	inst := start(t, e, nil)
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "recovered"))
	assert.Equal(t, 0, count(inst, engine.ElementLeft, "e"))
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "busy"), "the sibling branch inside is withdrawn")
	assert.Equal(t, 1, count(inst, engine.JobCanceled, "busy"))
	assert.Empty(t, e.Jobs(engine.JobFilter{}))
}

func TestError_UncaughtOpensIncident(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(`<bpmn:error id="Err" errorCode="BOOM"/>`, `<bpmn:startEvent id="s"/>`+
		`<bpmn:endEvent id="fail"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:endEvent>`+flows("s", "fail")))
	inst := start(t, e, nil)
	incs := incidents(inst)
	require.Len(t, incs, 1)
	assert.Equal(t, "fail", incs[0].ElementID)
	assert.Contains(t, incs[0].Message, "BOOM")
}

func TestEscalation_NonInterruptingAndUncaught(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(`<bpmn:escalation id="Esc" escalationCode="UP"/><bpmn:escalation id="Other" escalationCode="NOBODY"/>`, `<bpmn:startEvent id="s"/>`+
		`<bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+
		`<bpmn:intermediateThrowEvent id="up"><bpmn:escalationEventDefinition escalationRef="Esc"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:intermediateThrowEvent id="lost"><bpmn:escalationEventDefinition escalationRef="Other"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:endEvent id="se"/>`+flows("ss", "up", "up", "lost", "lost", "se")+`</bpmn:subProcess>`+
		`<bpmn:boundaryEvent id="b" attachedToRef="sub" cancelActivity="false"><bpmn:escalationEventDefinition escalationRef="Esc"/></bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:endEvent id="escalated"/>`+flows("s", "sub", "sub", "e", "b", "escalated")))
	inst := start(t, e, nil)
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st, "an uncaught escalation is not a failure")
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "escalated"))
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "e"), "the sub-process went on after the non-interrupting catch")
}

func TestEventSubProcess_Starts(t *testing.T) {
	main := `<bpmn:startEvent id="s"/>` + task("work", "work") + `<bpmn:endEvent id="e"/>` + flows("s", "work", "work", "e")
	esp := func(interrupting, definition string) string {
		return `<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es" isInterrupting="` + interrupting + `">` + definition +
			`</bpmn:startEvent>` + task("handle", "handle") + `<bpmn:endEvent id="ee"/>` + flows("es", "handle", "handle", "ee") + `</bpmn:subProcess>`
	}
	decls := goMessage + `<bpmn:signal id="Sig" name="alarm"/><bpmn:error id="Err" errorCode="E"/>`
	for _, tc := range []struct {
		name         string
		interrupting string
		definition   string
		fire         func(t *testing.T, e *engine.Engine)
	}{
		{"message interrupting", "true", `<bpmn:messageEventDefinition messageRef="Msg_go"/>`, func(t *testing.T, e *engine.Engine) {
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
		}},
		{"timer non-interrupting", "false", `<bpmn:timerEventDefinition><bpmn:timeDuration>PT5M</bpmn:timeDuration></bpmn:timerEventDefinition>`,
			func(t *testing.T, e *engine.Engine) { require.NoError(t, e.Advance(ctxT(t), 5*time.Minute)) }},
		{"signal non-interrupting", "false", `<bpmn:signalEventDefinition signalRef="Sig"/>`, func(t *testing.T, e *engine.Engine) {
			require.NoError(t, e.BroadcastSignal(ctxT(t), "alarm", nil))
		}},
		{"error", "true", `<bpmn:errorEventDefinition errorRef="Err"/>`, func(t *testing.T, e *engine.Engine) {
			require.NoError(t, e.ThrowError(ctxT(t), jobOf(t, e, "work").Key, "E", "failed", nil))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, defs(decls, main+esp(tc.interrupting, tc.definition)))
			inst := start(t, e, map[string]any{"key": "k"})
			tc.fire(t, e)
			require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "handle").Key, nil))
			if tc.interrupting == "false" {
				require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "work").Key, nil))
			}
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "esp"))
			if tc.interrupting == "true" {
				assert.Equal(t, 0, count(inst, engine.ElementLeft, "e"), "an interrupting event sub-process cancels the main flow")
			} else {
				assert.Equal(t, 1, count(inst, engine.ElementLeft, "e"), "a non-interrupting one runs beside it")
			}
			_, pending := e.NextDeadline()
			assert.False(t, pending, "no timer left behind")
		})
	}
}

// TestBoundary_JobCompletionRacesInterruptingTimer: a job completes while
// its interrupting timer fires; exactly one of them wins, every time.
func TestBoundary_JobCompletionRacesInterruptingTimer(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+task("work", "work")+
		timerBoundary("timeout", "work", "true", `<bpmn:timeDuration>PT1M</bpmn:timeDuration>`)+
		`<bpmn:endEvent id="done"/><bpmn:endEvent id="late"/>`+flows("s", "work", "work", "done", "timeout", "late")))
	outcomes := map[string]int{}
	for i := range 500 {
		inst := start(t, e, nil)
		j := jobOf(t, e, "work")
		var wg sync.WaitGroup
		wg.Add(2)
		var completeErr error
		go func() { defer wg.Done(); completeErr = e.CompleteJob(ctxT(t), j.Key, nil) }()
		go func() { defer wg.Done(); assert.NoError(t, e.Advance(ctxT(t), time.Minute)) }()
		wg.Wait()
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		done, late := count(inst, engine.ElementLeft, "done"), count(inst, engine.ElementLeft, "late")
		require.Equal(t, 1, done+late, "round %d: exactly one path", i)
		if late == 1 {
			require.ErrorIs(t, completeErr, engine.ErrUnknownJob, "round %d: the timer won, so the completion was refused", i)
			outcomes["timer"]++
		} else {
			require.NoError(t, completeErr)
			outcomes["job"]++
		}
		_, pending := e.NextDeadline()
		require.False(t, pending, "round %d: no timer left", i)
	}
	t.Logf("outcomes over 500 rounds: %v", outcomes)
}

// TestEventSubProcess_InsideSubProcess: an interrupting event sub-process in
// a sub-process interrupts only that sub-process, which then completes
// when the event sub-process does, and the process goes on.
func TestEventSubProcess_InsideSubProcess(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage, `<bpmn:startEvent id="s"/>`+
		`<bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+task("work", "work")+`<bpmn:endEvent id="se"/>`+flows("ss", "work", "work", "se")+
		`<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:startEvent>`+
		`<bpmn:endEvent id="ee"/>`+flows("es", "ee")+`</bpmn:subProcess></bpmn:subProcess>`+
		task("after", "after")+`<bpmn:endEvent id="e"/>`+flows("s", "sub", "sub", "after", "after", "e")))
	inst := start(t, e, map[string]any{"key": "k"})
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "after").Key, nil))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(inst, engine.ElementTerminated, "work"))
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "sub"), "the sub-process completes after its event sub-process")
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "e"))
	assert.Equal(t, engine.Stats{}, e.Stats())
}

// TestEventSubProcess_EscalationStart: a non-interrupting escalation start
// catches an escalation thrown in the process scope.
func TestEventSubProcess_EscalationStart(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(`<bpmn:escalation id="Esc" escalationCode="LATE"/>`, `<bpmn:startEvent id="s"/>`+
		`<bpmn:intermediateThrowEvent id="up"><bpmn:escalationEventDefinition escalationRef="Esc"/></bpmn:intermediateThrowEvent>`+
		task("work", "work")+`<bpmn:endEvent id="e"/>`+flows("s", "up", "up", "work", "work", "e")+
		`<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es" isInterrupting="false">`+
		`<bpmn:escalationEventDefinition escalationRef="Esc"/></bpmn:startEvent>`+task("notify", "notify")+`<bpmn:endEvent id="ee"/>`+
		flows("es", "notify", "notify", "ee")+`</bpmn:subProcess>`))
	inst := start(t, e, nil)
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "notify").Key, nil))
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "work").Key, nil))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "esp"))
	assert.Equal(t, "LATE", inst.Variables()["escalationCode"])
}

func loopProcess(loop string) string {
	return defs(``, `<bpmn:startEvent id="s"/><bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="w"/></bpmn:extensionElements>`+
		loop+`</bpmn:serviceTask><bpmn:endEvent id="e"/>`+flows("s", "work", "work", "e"))
}

// TestStandardLoop: a do-while by default, a while with testBefore, capped
// by loopMaximum; each iteration after the first is recorded as the task
// left and entered again.
func TestStandardLoop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		loop  string
		start float64
		runs  int
	}{
		{"runs once even when false (do-while)", `<bpmn:standardLoopCharacteristics><bpmn:loopCondition>n &lt; 3</bpmn:loopCondition></bpmn:standardLoopCharacteristics>`, 5, 1},
		{"repeats while the condition holds", `<bpmn:standardLoopCharacteristics><bpmn:loopCondition>= n &lt; 3</bpmn:loopCondition></bpmn:standardLoopCharacteristics>`, 0, 3},
		{"testBefore can skip it", `<bpmn:standardLoopCharacteristics testBefore="true"><bpmn:loopCondition>= n &lt; 3</bpmn:loopCondition></bpmn:standardLoopCharacteristics>`, 5, 0},
		{"loopMaximum caps it", `<bpmn:standardLoopCharacteristics loopMaximum="2"><bpmn:loopCondition>true</bpmn:loopCondition></bpmn:standardLoopCharacteristics>`, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, loopProcess(tc.loop))
			inst := start(t, e, map[string]any{"n": tc.start})
			runs := 0
			for {
				jobs := e.Jobs(engine.JobFilter{Type: "w"})
				if len(jobs) == 0 {
					break
				}
				runs++
				require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, map[string]any{"n": tc.start + float64(runs)}))
				require.NoError(t, e.Settle(ctxT(t)))
			}
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, tc.runs, runs)
			assert.Equal(t, max(tc.runs, 1), count(inst, engine.ElementLeft, "work"), "one elementLeft per iteration")
		})
	}
	_, err := newEngine(t).Deploy("noend.bpmn", []byte(loopProcess(`<bpmn:standardLoopCharacteristics/>`)))
	require.ErrorContains(t, err, "needs a loopCondition or a loopMaximum")
}

func TestConditionalEvents(t *testing.T) {
	cond := func(c string) string {
		return `<bpmn:conditionalEventDefinition><bpmn:condition>` + c + `</bpmn:condition></bpmn:conditionalEventDefinition>`
	}
	t.Run("intermediate catch fires at once when the condition holds, else when it turns true", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+task("set", "set")+`<bpmn:endEvent id="e1"/>`+
			`<bpmn:intermediateCatchEvent id="wait">`+cond(`= ready`)+`</bpmn:intermediateCatchEvent><bpmn:endEvent id="e2"/>`+
			flows("s", "fork", "fork", "set", "set", "e1", "fork", "wait", "wait", "e2")))
		now := start(t, e, map[string]any{"ready": true})
		require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "set").Key, nil))
		st, _ := now.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		later := start(t, e, map[string]any{"ready": false})
		assert.Equal(t, []engine.Token{{ID: 1, ElementID: "set", Waiting: "job", JobKey: jobOf(t, e, "set").Key}, {ID: 2, ElementID: "wait", Waiting: "event"}}, tokens(t, later))
		require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "set").Key, map[string]any{"ready": true}))
		st, _ = later.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		assert.Equal(t, 1, count(later, engine.ConditionSatisfied, "wait"))
	})
	t.Run("non-interrupting boundary fires on each change to true", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+
			`<bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+task("a", "a")+task("b", "b")+task("c", "c")+`<bpmn:endEvent id="se"/>`+
			flows("ss", "a", "a", "b", "b", "c", "c", "se")+`</bpmn:subProcess>`+
			`<bpmn:boundaryEvent id="hot" attachedToRef="sub" cancelActivity="false">`+cond(`= temp &gt; 30`)+`</bpmn:boundaryEvent>`+
			`<bpmn:endEvent id="e"/><bpmn:endEvent id="alarm"/>`+flows("s", "sub", "sub", "e", "hot", "alarm")))
		inst := start(t, e, map[string]any{"temp": 20})
		require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "a").Key, map[string]any{"temp": 35})) // false -> true: fires
		require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "b").Key, map[string]any{"temp": 40})) // still true: no edge
		require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "c").Key, nil))
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		assert.Equal(t, 1, count(inst, engine.ElementLeft, "alarm"))
		assert.Equal(t, 1, count(inst, engine.ElementLeft, "e"))
	})
	t.Run("interrupting boundary already true on entry fires at once", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+task("work", "w")+
			`<bpmn:boundaryEvent id="stop" attachedToRef="work">`+cond(`= halt`)+`</bpmn:boundaryEvent>`+
			`<bpmn:endEvent id="e"/><bpmn:endEvent id="halted"/>`+flows("s", "work", "work", "e", "stop", "halted")))
		inst := start(t, e, map[string]any{"halt": true})
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		assert.Equal(t, 1, count(inst, engine.ElementLeft, "halted"))
		assert.Equal(t, engine.Stats{}, e.Stats())
	})
	t.Run("event sub-process start", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+task("work", "w")+`<bpmn:endEvent id="e"/>`+flows("s", "work", "work", "e")+
			`<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es" isInterrupting="false">`+cond(`= flag`)+
			`</bpmn:startEvent><bpmn:endEvent id="ee"/>`+flows("es", "ee")+`</bpmn:subProcess>`))
		inst := start(t, e, map[string]any{"flag": false})
		require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "w").Key, map[string]any{"flag": true}))
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		assert.Equal(t, 1, count(inst, engine.ElementLeft, "esp"), "the variable change starts it before the main token moves on")
	})
}

// TestSignalThrownInsideIsCaughtByOwnBoundary: a signal end event inside a
// sub-process reaches the interrupting signal boundary of that same
// sub-process before the sub-process can complete, every time.
func TestSignalThrownInsideIsCaughtByOwnBoundary(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(`<bpmn:signal id="Sig" name="ping"/>`, `<bpmn:startEvent id="s"/>`+
		`<bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/><bpmn:endEvent id="se">`+SIG+`</bpmn:endEvent>`+flows("ss", "se")+`</bpmn:subProcess>`+
		`<bpmn:boundaryEvent id="b" attachedToRef="sub">`+SIG+`</bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="normal"/><bpmn:endEvent id="caught"/>`+flows("s", "sub", "sub", "normal", "b", "caught")))
	for i := range 300 {
		inst := start(t, e, nil)
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		require.Equal(t, 1, count(inst, engine.ElementLeft, "caught"), "round %d", i)
	}
}

const SIG = `<bpmn:signalEventDefinition signalRef="Sig"/>`
