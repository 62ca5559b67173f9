package engine_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// defs wraps declarations and a process body in a document.
func defs(decls, body string) string {
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">` + decls +
		`<bpmn:process id="p" isExecutable="true">` + body + `</bpmn:process></bpmn:definitions>`
}

const goMessage = `<bpmn:message id="Msg_go" name="go"><bpmn:extensionElements>` +
	`<zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>`

// catchProcess: start → message catch "go" keyed by variable key → end.
var catchProcess = defs(goMessage, `<bpmn:startEvent id="s"/>`+
	`<bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateCatchEvent>`+
	`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="wait"/>`+
	`<bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="e"/>`)

// gatewayProcess: an event-based gateway with a message arm, a timer arm
// (PT1H) and a signal arm.
var gatewayProcess = defs(goMessage+`<bpmn:signal id="Sig_stop" name="stop"/>`, `<bpmn:startEvent id="s"/>`+
	`<bpmn:eventBasedGateway id="gate"/>`+
	`<bpmn:intermediateCatchEvent id="onMsg"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateCatchEvent>`+
	`<bpmn:intermediateCatchEvent id="onTimer"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>`+
	`<bpmn:intermediateCatchEvent id="onSignal"><bpmn:signalEventDefinition signalRef="Sig_stop"/></bpmn:intermediateCatchEvent>`+
	`<bpmn:endEvent id="endMsg"/><bpmn:endEvent id="endTimer"/><bpmn:endEvent id="endSignal"/>`+
	`<bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="gate"/>`+
	`<bpmn:sequenceFlow id="a1" sourceRef="gate" targetRef="onMsg"/><bpmn:sequenceFlow id="a2" sourceRef="gate" targetRef="onTimer"/>`+
	`<bpmn:sequenceFlow id="a3" sourceRef="gate" targetRef="onSignal"/>`+
	`<bpmn:sequenceFlow id="b1" sourceRef="onMsg" targetRef="endMsg"/><bpmn:sequenceFlow id="b2" sourceRef="onTimer" targetRef="endTimer"/>`+
	`<bpmn:sequenceFlow id="b3" sourceRef="onSignal" targetRef="endSignal"/>`)

// gatewayThenJobProcess is gatewayProcess with each arm's end a job task
// of type "after": the token waits there after its arm won, so what the
// losing arms left open can be seen before the token ends.
var gatewayThenJobProcess = func() string {
	s := gatewayProcess
	for _, id := range []string{"endMsg", "endTimer", "endSignal"} {
		s = strings.Replace(s, `<bpmn:endEvent id="`+id+`"/>`, `<bpmn:serviceTask id="`+id+`"><bpmn:extensionElements>`+
			`<zeebe:taskDefinition type="after"/></bpmn:extensionElements></bpmn:serviceTask>`, 1)
	}
	return s
}()

// completeAfter completes the one open "after" job.
func completeAfter(t *testing.T, e *engine.Engine) {
	t.Helper()
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "after").Key, nil))
}

func deploy(t *testing.T, e *engine.Engine, xml string) {
	t.Helper()
	_, err := e.Deploy("test.bpmn", []byte(xml))
	require.NoError(t, err)
}

func start(t *testing.T, e *engine.Engine, vars map[string]any) *engine.Instance {
	t.Helper()
	inst, err := e.Start(ctxT(t), "p", vars)
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	return inst
}

func tokens(t *testing.T, inst *engine.Instance) []engine.Token {
	toks, err := inst.Tokens(ctxT(t))
	require.NoError(t, err)
	return toks
}

// TestInboundDelivery_T1_ParkedTrackUsesNoCPU: a waiting token uses no
// CPU, and completes on the fired event. With goroutine tracks it blocks on
// its channel (no spinning); resumed directly, neither the token nor its
// instance has a goroutine at all: a parked token is data. Only this test's
// tracks are counted: those started by the loops this goroutine started, so
// instances other tests left parked do not count.
func TestInboundDelivery_T1_ParkedTrackUsesNoCPU(t *testing.T) {
	for _, mode := range []engine.Resumption{engine.ResumeGoroutines, engine.ResumeDirect} {
		t.Run(map[engine.Resumption]string{engine.ResumeGoroutines: "goroutines", engine.ResumeDirect: "direct"}[mode], func(t *testing.T) {
			parkedTrackUsesNoCPU(t, mode)
		})
	}
}

func parkedTrackUsesNoCPU(t *testing.T, mode engine.Resumption) {
	// Another engine's instance, started elsewhere, stays parked throughout.
	other := newEngine(t, engine.WithResumption(mode))
	deploy(t, other, catchProcess)
	started := make(chan error)
	go func() {
		_, err := other.Start(ctxT(t), "p", map[string]any{"key": "elsewhere"})
		started <- err
	}()
	require.NoError(t, <-started)
	require.NoError(t, other.Settle(ctxT(t)))

	e := newEngine(t, engine.WithResumption(mode))
	deploy(t, e, catchProcess)
	inst := start(t, e, map[string]any{"key": "k1"})
	assert.Equal(t, []engine.Token{{ID: 1, ElementID: "wait", Waiting: engine.WaitReason("message")}}, tokens(t, inst))
	loops, tracks := tracksStartedBy(goroutineID())
	if mode == engine.ResumeDirect {
		assert.Empty(t, loops, "an instance driven directly has no goroutine")
		assert.Empty(t, tracks, "a token resumed directly has no goroutine")
	} else {
		require.Len(t, loops, 1, "one loop of this test's instance")
		require.Len(t, tracks, 1, "one track of this test's instance")
		assert.Contains(t, tracks[0], "[chan receive", "a parked track blocks on its channel")
	}
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k1", Variables: map[string]any{"ok": true}}))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
	assert.Equal(t, true, inst.Variables()["ok"], "message variables merge into the instance")
}

// goroutineID returns the id of the calling goroutine, from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return strings.Fields(string(buf))[1]
}

// tracksStartedBy returns the stacks of the instance loops goroutine g
// started and of the track goroutines they started.
func tracksStartedBy(g string) (loops, tracks []string) {
	buf := make([]byte, 1<<22)
	stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")
	createdBy := func(stack, fn string) (string, bool) {
		_, rest, ok := strings.Cut(stack, "created by "+fn+" in goroutine ")
		if !ok {
			return "", false
		}
		return strings.Fields(rest)[0], true
	}
	loopIDs := map[string]bool{}
	for _, s := range stacks {
		if parent, ok := createdBy(s, "github.com/flowtrack/flowtrack/engine/internal/runtime.(*Engine).launch"); ok && parent == g {
			loopIDs[strings.Fields(s)[1]] = true
			loops = append(loops, s)
		}
	}
	for _, s := range stacks {
		// A track is started by its instance's loop, when it gets its
		// first turn (give) or at once at a wait state (spawn).
		for _, fn := range []string{"give", "spawn"} {
			if parent, ok := createdBy(s, "github.com/flowtrack/flowtrack/engine/internal/runtime.(*Instance)."+fn); ok && loopIDs[parent] {
				tracks = append(tracks, s)
			}
		}
	}
	return loops, tracks
}

// TestMessage_BufferedUntilCatchOpens: a message published before its catch
// opens is correlated when it opens (TTL > 0) and dropped otherwise. That
// the token is parked before the subscription opens (SRD-027 T-3, FR-5) is
// TestInboundDelivery_T3_ParkBeforeRegister in the runtime package.
func TestMessage_BufferedUntilCatchOpens(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, catchProcess)
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "early", TTL: time.Minute}))
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "lost"}))
	early := start(t, e, map[string]any{"key": "early"})
	st, _ := early.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st, "a buffered message correlates when the catch opens")
	lost := start(t, e, map[string]any{"key": "lost"})
	assert.Equal(t, engine.Active, lost.State(), "a message with TTL 0 is not buffered")

	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "late", TTL: time.Minute}))
	require.NoError(t, e.Advance(ctxT(t), 2*time.Minute))
	late := start(t, e, map[string]any{"key": "late"})
	assert.Equal(t, engine.Active, late.State(), "an expired message is dropped")
}

func TestMessage_BufferedCorrelatesOncePerDefinitionAndDedups(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, catchProcess)
	m := engine.Message{Name: "go", CorrelationKey: "k", TTL: time.Hour, MessageID: "m-1"}
	require.NoError(t, e.PublishMessage(ctxT(t), m))
	require.ErrorIs(t, e.PublishMessage(ctxT(t), m), engine.ErrDuplicateMessage)
	first := start(t, e, map[string]any{"key": "k"})
	second := start(t, e, map[string]any{"key": "k"})
	assert.Equal(t, engine.Completed, first.State())
	assert.Equal(t, engine.Active, second.State(), "a message correlates at most once per process definition")
}

// TestInboundDelivery_T4_SignalFanOut: a broadcast reaches every catcher across
// instances through the name index; a broadcast nobody catches is a no-op.
func TestInboundDelivery_T4_SignalFanOut(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(`<bpmn:signal id="Sig" name="alarm"/>`, `<bpmn:startEvent id="s"/>`+
		`<bpmn:intermediateCatchEvent id="wait"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="wait"/><bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="e"/>`))
	var insts []*engine.Instance
	for range 5 {
		insts = append(insts, start(t, e, nil))
	}
	require.NoError(t, e.BroadcastSignal(ctxT(t), "nobody-listens", nil))
	require.NoError(t, e.Settle(ctxT(t)))
	for _, inst := range insts {
		assert.Equal(t, engine.Active, inst.State())
	}
	require.NoError(t, e.BroadcastSignal(ctxT(t), "alarm", map[string]any{"level": 3}))
	require.NoError(t, e.Settle(ctxT(t)))
	for _, inst := range insts {
		assert.Equal(t, engine.Completed, inst.State())
		assert.Equal(t, 3.0, inst.Variables()["level"])
	}
}

// TestInboundDelivery_T5_CancelWakesParkedTracks: cancelling an instance with
// parked tokens ends promptly and leaves no subscription behind.
func TestInboundDelivery_T5_CancelWakesParkedTracks(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, gatewayProcess)
	inst := start(t, e, map[string]any{"key": "k"})
	_, pending := e.NextDeadline()
	require.True(t, pending)
	require.NoError(t, inst.Cancel(ctxT(t)))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Terminated, st)
	_, pending = e.NextDeadline()
	assert.False(t, pending, "the timer arm's subscription was removed")
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
}

// TestInboundDelivery_T6_CorrelationKeyMismatchKeepsWaiting: a wrong key never
// advances a receiver; the right one does.
func TestInboundDelivery_T6_CorrelationKeyMismatchKeepsWaiting(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, catchProcess)
	inst := start(t, e, map[string]any{"key": "order-7"})
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "order-8"}))
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "other", CorrelationKey: "order-7"}))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, engine.Active, inst.State())
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "order-7"}))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
}

// openSubs counts the engine's open subscriptions by kind.
type openSubs struct{ messages, signals, timers int }

func openSubsOf(e *engine.Engine) openSubs {
	st := e.Stats()
	return openSubs{st.MessageSubscriptions, st.SignalSubscriptions, st.Timers}
}

func leftSet(inst *engine.Instance) map[string]bool {
	out := map[string]bool{}
	for _, id := range completed(inst) {
		out[id] = true
	}
	return out
}

// TestEventGateway_1_MessageWins / 2_TimerWins / signal arm: the first event
// routes the token onto its arm; the other arms' subscriptions are dropped.
func TestEventGateway_ArmsWin(t *testing.T) {
	for _, tc := range []struct {
		name string
		fire func(t *testing.T, e *engine.Engine)
		want string
	}{
		{"1_MessageWins", func(t *testing.T, e *engine.Engine) {
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
		}, "endMsg"},
		{"2_TimerWins", func(t *testing.T, e *engine.Engine) { require.NoError(t, e.Advance(ctxT(t), time.Hour)) }, "endTimer"},
		{"3_SignalWins", func(t *testing.T, e *engine.Engine) { require.NoError(t, e.BroadcastSignal(ctxT(t), "stop", nil)) }, "endSignal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, gatewayThenJobProcess)
			inst := start(t, e, map[string]any{"key": "k"})
			assert.Equal(t, []engine.Token{{ID: 1, ElementID: "gate", Waiting: "event"}}, tokens(t, inst))
			assert.Equal(t, openSubs{messages: 1, signals: 1, timers: 1}, openSubsOf(e), "the gate's token holds every arm's subscription")
			tc.fire(t, e)
			require.NoError(t, e.Settle(ctxT(t)))
			assert.Equal(t, []engine.Token{{ID: 1, ElementID: tc.want, Waiting: "job", JobKey: jobOf(t, e, "after").Key}}, tokens(t, inst))
			assert.Equal(t, openSubs{}, openSubsOf(e), "the losing arms' subscriptions are gone while the winner goes on")
			completeAfter(t, e)
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			left := leftSet(inst)
			assert.True(t, left[tc.want])
			ends := 0
			for _, end := range []string{"endMsg", "endTimer", "endSignal"} {
				if left[end] {
					ends++
				}
			}
			assert.Equal(t, 1, ends, "exactly one arm runs")
			_, pending := e.NextDeadline()
			assert.False(t, pending, "losing timer arm unsubscribed")
			// The losing message arm is gone too: a new waiter gets the
			// next message, not the finished instance.
			next := start(t, e, map[string]any{"key": "k"})
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
			require.NoError(t, e.Settle(ctxT(t)))
			completeAfter(t, e)
			require.NoError(t, e.Settle(ctxT(t)))
			assert.True(t, leftSet(next)["endMsg"])
		})
	}
}

// TestEventGateway_3_ReceiveTaskArm: a receive-task arm beside a signal arm.
func TestEventGateway_3_ReceiveTaskArm(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage+`<bpmn:signal id="Sig" name="stop"/>`, `<bpmn:startEvent id="s"/><bpmn:eventBasedGateway id="gate"/>`+
		`<bpmn:receiveTask id="recv" messageRef="Msg_go"/>`+
		`<bpmn:intermediateCatchEvent id="onSignal"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:serviceTask id="e1"><bpmn:extensionElements><zeebe:taskDefinition type="after"/></bpmn:extensionElements></bpmn:serviceTask><bpmn:endEvent id="e2"/>`+
		`<bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="gate"/><bpmn:sequenceFlow id="a1" sourceRef="gate" targetRef="recv"/>`+
		`<bpmn:sequenceFlow id="a2" sourceRef="gate" targetRef="onSignal"/><bpmn:sequenceFlow id="b1" sourceRef="recv" targetRef="e1"/>`+
		`<bpmn:sequenceFlow id="b2" sourceRef="onSignal" targetRef="e2"/>`))
	inst := start(t, e, map[string]any{"key": "r"})
	assert.Equal(t, openSubs{messages: 1, signals: 1}, openSubsOf(e))
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "r"}))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, openSubs{}, openSubsOf(e), "the losing signal arm's subscription is gone while the winner goes on")
	completeAfter(t, e)
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
	assert.True(t, leftSet(inst)["recv"])
	assert.False(t, leftSet(inst)["e2"])
}

// TestEventGateway_4_Race: two arms fire at the same time, again and again;
// exactly one wins every time (SRD-024 test 4, SRD-027 T-2/T-8: a message arm
// registered by the instance and a timer arm registered by the token meet at
// the same loop). Run under -race.
func TestEventGateway_4_Race(t *testing.T) {
	const rounds = 500
	e := newEngine(t)
	deploy(t, e, gatewayThenJobProcess)
	wins := map[string]int{}
	for i := range rounds {
		key := fmt.Sprint("k", i)
		inst := start(t, e, map[string]any{"key": key})
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			assert.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: key}))
		}()
		go func() { defer wg.Done(); assert.NoError(t, e.Advance(ctxT(t), time.Hour)) }()
		go func() { defer wg.Done(); assert.NoError(t, e.BroadcastSignal(ctxT(t), "stop", nil)) }()
		wg.Wait()
		require.NoError(t, e.Settle(ctxT(t)))
		require.Equal(t, openSubs{}, openSubsOf(e), "round %d: the losing arms' subscriptions are gone", i)
		completeAfter(t, e)
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		won := 0
		for _, end := range []string{"endMsg", "endTimer", "endSignal"} {
			if leftSet(inst)[end] {
				won++
				wins[end]++
			}
		}
		require.Equal(t, 1, won, "round %d: exactly one arm wins", i)
	}
	t.Logf("wins over %d rounds: %v", rounds, wins)
}

func TestEventGateway_5_Validate(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("bad.bpmn", []byte(defs(goMessage, `<bpmn:startEvent id="s"/><bpmn:eventBasedGateway id="gate"/>`+
		`<bpmn:intermediateCatchEvent id="onMsg"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="gate"/><bpmn:sequenceFlow id="a1" sourceRef="gate" targetRef="onMsg"/>`)))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "gate", de.ElementID)
}

func TestTimer_IntermediateOnVirtualClock(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/>`+
		`<bpmn:intermediateCatchEvent id="wait"><bpmn:timerEventDefinition><bpmn:timeDuration>= "PT" + string(minutes) + "M"</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="wait"/><bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="e"/>`))
	inst := start(t, e, map[string]any{"minutes": 10})
	due, ok := e.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, clock.Epoch.Add(10*time.Minute), due)
	require.NoError(t, e.Advance(ctxT(t), 9*time.Minute))
	assert.Equal(t, engine.Active, inst.State())
	require.NoError(t, e.Advance(ctxT(t), time.Minute))
	assert.Equal(t, engine.Completed, inst.State())
	var fired *engine.Event
	for _, ev := range history(inst) {
		if ev.Type == engine.TimerFired {
			fired = &ev
		}
	}
	require.NotNil(t, fired)
	assert.Equal(t, clock.Epoch.Add(10*time.Minute), fired.Time)
}

func TestTimer_StartEventCycleIsBounded(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"><bpmn:timerEventDefinition><bpmn:timeCycle>R3/PT10M</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:startEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="e"/>`))
	var started atomic.Int64
	unsubscribe := e.Subscribe(func(ev engine.Event) {
		if ev.Type == engine.InstanceStarted {
			started.Add(1)
		}
	})
	defer unsubscribe()
	require.NoError(t, e.Advance(ctxT(t), 24*time.Hour))
	assert.Equal(t, int64(3), started.Load(), "R3 starts exactly three instances")
	_, pending := e.NextDeadline()
	assert.False(t, pending)

	deploy(t, e, defs(``, `<bpmn:startEvent id="s"><bpmn:timerEventDefinition><bpmn:timeCycle>R/PT1M</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:startEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="e"/>`))
	started.Store(0)
	require.NoError(t, e.Advance(ctxT(t), 365*24*time.Hour), "an unbounded cycle never makes Advance loop forever")
	assert.Equal(t, int64(1000), started.Load(), "an unbounded cycle stops after MaxCycleFirings")
}

func TestMessage_StartEventOncePerKey(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(`<bpmn:message id="Msg_order" name="order"/>`, `<bpmn:startEvent id="s"><bpmn:messageEventDefinition messageRef="Msg_order"/></bpmn:startEvent>`+
		`<bpmn:userTask id="handle"/><bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="handle"/><bpmn:sequenceFlow id="f2" sourceRef="handle" targetRef="e"/>`))
	for range 3 {
		require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "order", CorrelationKey: "o-1", Variables: map[string]any{"n": 1}}))
	}
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "order", CorrelationKey: "o-2"}))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Len(t, e.Instances(), 2, "one instance per active correlation key")
	for _, j := range e.Jobs(engine.JobFilter{}) {
		require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
	}
	require.NoError(t, e.Settle(ctxT(t)))
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "order", CorrelationKey: "o-1"}))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Len(t, e.Instances(), 1, "once the first has ended the key may start another")
}

func TestMessage_ThrowCorrelatesAcrossInstances(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage+`<bpmn:signal id="Sig" name="done"/>`, `<bpmn:startEvent id="s"/><bpmn:exclusiveGateway id="g" default="toCatch"/>`+
		`<bpmn:intermediateThrowEvent id="send"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e1"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:endEvent><bpmn:endEvent id="e2"/>`+
		`<bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="g"/>`+
		`<bpmn:sequenceFlow id="toSend" sourceRef="g" targetRef="send"><bpmn:conditionExpression>= sender</bpmn:conditionExpression></bpmn:sequenceFlow>`+
		`<bpmn:sequenceFlow id="toCatch" sourceRef="g" targetRef="wait"/>`+
		`<bpmn:sequenceFlow id="f3" sourceRef="send" targetRef="e1"/><bpmn:sequenceFlow id="f4" sourceRef="wait" targetRef="e2"/>`))
	receiver := start(t, e, map[string]any{"sender": false, "key": "x"})
	sender := start(t, e, map[string]any{"sender": true, "key": "x"})
	for _, inst := range []*engine.Instance{receiver, sender} {
		st, _ := inst.Wait(ctxT(t))
		assert.Equal(t, engine.Completed, st)
	}
}

// TestEvents_StressRepeated publishes to many waiting instances from several
// goroutines at once.
func TestEvents_ConcurrentCorrelation(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, catchProcess)
	const n = 200
	insts := make([]*engine.Instance, n)
	for i := range n {
		inst, err := e.Start(ctxT(t), "p", map[string]any{"key": fmt.Sprint(i)})
		require.NoError(t, err)
		insts[i] = inst
	}
	require.NoError(t, e.Settle(ctxT(t)))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				assert.NoError(t, e.PublishMessage(context.Background(), engine.Message{Name: "go", CorrelationKey: fmt.Sprint(i)}))
			}
		}()
	}
	wg.Wait()
	for _, inst := range insts {
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
	}
}

// TestMessage_ThrowWithJobTypeIsAJob: a message throw or end event with a
// zeebe:taskDefinition is a job for a worker, as in Zeebe; without one the
// engine publishes the message itself.
func TestMessage_ThrowWithJobTypeIsAJob(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage, `<bpmn:startEvent id="s"/>`+
		`<bpmn:intermediateThrowEvent id="notify"><bpmn:extensionElements><zeebe:taskDefinition type="send-mail"/></bpmn:extensionElements>`+
		`<bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:endEvent id="e"><bpmn:extensionElements><zeebe:taskDefinition type="send-sms"/></bpmn:extensionElements>`+
		`<bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:endEvent>`+
		`<bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="notify"/><bpmn:sequenceFlow id="f2" sourceRef="notify" targetRef="e"/>`))
	inst := start(t, e, map[string]any{"key": "k"})
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "send-mail").Key, nil))
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "send-sms").Key, nil))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
	assert.Equal(t, 0, count(inst, engine.MessagePublished, "notify"), "a worker sends it, not the engine")
}

// TestObserver_ReactsToRecordsAtOnce: an observer completing a job the
// moment it sees jobCreated, or publishing (without TTL) the moment it sees
// messageSubscribed, must find the job and the subscription already there.
func TestObserver_ReactsToRecordsAtOnce(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(goMessage, `<bpmn:startEvent id="s"/>`+task("work", "work")+
		`<bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "work", "work", "wait", "wait", "e")))
	var failures atomic.Int64
	unsubscribe := e.Subscribe(func(ev engine.Event) {
		var err error
		switch ev.Type {
		case engine.JobCreated:
			err = e.CompleteJob(context.Background(), ev.JobKey, nil)
		case engine.MessageSubscribed:
			err = e.PublishMessage(context.Background(), engine.Message{Name: ev.Name, CorrelationKey: ev.CorrelationKey})
		}
		if err != nil {
			failures.Add(1)
		}
	})
	defer unsubscribe()
	var insts []*engine.Instance
	for i := range 200 {
		inst, err := e.Start(ctxT(t), "p", map[string]any{"key": fmt.Sprint(i)})
		require.NoError(t, err)
		insts = append(insts, inst)
	}
	for _, inst := range insts {
		st, err := inst.Wait(ctxT(t))
		require.NoError(t, err)
		require.Equal(t, engine.Completed, st)
	}
	assert.Zero(t, failures.Load())
}

// TestMessage_BPMNCorrelationProperty: BPMN's own correlation form (a
// correlation property whose retrieval expression names the message) gives
// the subscription's key, as zeebe:subscription does.
func TestMessage_BPMNCorrelationProperty(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">`+
		`<bpmn:message id="Msg_paid" name="paid"/>`+
		`<bpmn:correlationProperty id="orderIdProperty" name="order id">`+
		`<bpmn:correlationPropertyRetrievalExpression messageRef="Msg_paid"><bpmn:messagePath>order.id</bpmn:messagePath>`+
		`</bpmn:correlationPropertyRetrievalExpression></bpmn:correlationProperty>`+
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/>`+
		`<bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="Msg_paid"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "wait", "wait", "e")+`</bpmn:process></bpmn:definitions>`)
	inst := start(t, e, map[string]any{"order": map[string]any{"id": "o-42"}})
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "paid", CorrelationKey: "order.id"}))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, engine.Active, inst.State(), "the path is evaluated, not taken literally")
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "paid", CorrelationKey: "o-42"}))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
}
