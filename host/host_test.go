package host_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newHost(t testing.TB, opts ...host.Option) *host.Engine {
	t.Helper()
	e, err := host.New(ctxT(t), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return data
}

func TestEngine_OrderProcess(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	var seen []engine.Event
	e.Subscribe(func(ev engine.Event) { seen = append(seen, ev) })
	d, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
	require.Len(t, d.Processes, 1)
	assert.Equal(t, "order", d.Processes[0].ID)

	key, err := e.Start(ctx, "order", map[string]any{"amount": 40})
	require.NoError(t, err)
	jobs, err := e.Jobs(ctx, engine.JobFilter{Type: "check-order"})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, map[string]string{"team": "orders"}, jobs[0].Headers)
	toks, err := e.Tokens(ctx, key)
	require.NoError(t, err)
	require.Len(t, toks, 1)
	assert.Equal(t, engine.Token{ID: toks[0].ID, ElementID: "Task_check", Waiting: engine.WaitReason("job"), JobKey: jobs[0].Key}, toks[0])

	for {
		jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: key})
		require.NoError(t, err)
		if len(jobs) == 0 {
			break
		}
		for _, j := range jobs {
			require.NoError(t, e.CompleteJob(ctx, j.Key, map[string]any{j.Type: true}))
		}
	}
	info, err := e.Instance(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, info.State)
	assert.Equal(t, map[string]any{"amount": 40.0, "check-order": true, "charge-payment": true, "reserve-stock": true}, info.Variables)
	hist, err := e.History(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, hist, seen, "the events of the calls are the instance's history")
	assert.Equal(t, engine.InstanceCompleted, hist[len(hist)-1].Type)
}

func TestEngine_BadInputLeavesEngineUsable(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
	big := `{"processId":"order","variables":{"x":"` + strings.Repeat("a", host.MaxRequest) + `"}}`
	for _, tc := range []struct {
		name, op, req, code, msg string
		is                       error
	}{
		{"malformed JSON", "start", `{"processId":`, "BAD_REQUEST", "malformed JSON", host.ErrBadRequest},
		{"not an object", "start", `[1,2]`, "BAD_REQUEST", "JSON object", host.ErrBadRequest},
		{"trailing data", "start", `{"processId":"order"} {}`, "BAD_REQUEST", "after the request", host.ErrBadRequest},
		{"unknown field", "start", `{"processId":"order","varz":{}}`, "BAD_REQUEST", `"varz"`, host.ErrBadRequest},
		{"wrong type", "complete_job", `{"jobKey":"7"}`, "BAD_REQUEST", `"jobKey"`, host.ErrBadRequest},
		{"missing field", "complete_job", `{}`, "BAD_REQUEST", `"jobKey" is required`, host.ErrBadRequest},
		{"unknown operation", "call", `{"op":"launch"}`, "UNKNOWN_OPERATION", `"launch"`, host.ErrBadRequest},
		{"unknown export", "launch", `{}`, "UNKNOWN_OPERATION", `"launch"`, host.ErrBadRequest},
		{"unknown instance", "tokens", `{"instanceKey":999}`, "UNKNOWN_INSTANCE", "999", host.ErrUnknownInstance},
		{"unknown job", "complete_job", `{"jobKey":999}`, "UNKNOWN_JOB", "unknown job", engine.ErrUnknownJob},
		{"unknown incident", "resolve_incident", `{"incidentKey":999}`, "UNKNOWN_INCIDENT", "unknown incident", engine.ErrUnknownIncident},
		{"unknown process", "start", `{"processId":"nope"}`, "UNKNOWN_PROCESS", "unknown process", engine.ErrUnknownProcess},
		{"ad-hoc without instance", "activate_ad_hoc", `{"elementId":"a","elements":["x"]}`, "BAD_REQUEST", `"instanceKey" is required`, host.ErrBadRequest},
		{"ad-hoc without element", "activate_ad_hoc", `{"instanceKey":1,"elements":["x"]}`, "BAD_REQUEST", `"elementId" is required`, host.ErrBadRequest},
		{"ad-hoc of unknown instance", "activate_ad_hoc", `{"instanceKey":999,"elementId":"a","elements":["x"]}`, "UNKNOWN_INSTANCE", "999", host.ErrUnknownInstance},
		{"advance both", "advance", `{"byMs":1,"to":"2030-01-01T00:00:00Z"}`, "BAD_REQUEST", "exactly one", host.ErrBadRequest},
		{"advance backwards", "advance", `{"byMs":-1}`, "BAD_REQUEST", `"byMs"`, host.ErrBadRequest},
		{"oversized", "start", big, "BAD_REQUEST", "exceeds the limit", host.ErrBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Call(ctx, tc.op, []byte(tc.req))
			var he *host.Error
			require.ErrorAs(t, err, &he)
			assert.Equal(t, tc.code, he.Code)
			assert.Contains(t, he.Message, tc.msg)
			assert.ErrorIs(t, err, tc.is)
			// The next call works.
			key, err := e.Start(ctx, "order", map[string]any{"amount": 1})
			require.NoError(t, err)
			require.NoError(t, e.Cancel(ctx, key))
		})
	}
}

func TestEngine_DeployErrors(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "bad.bpmn", []byte(`<bpmn:definitions`))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "bad.bpmn", de.File)
	assert.Contains(t, de.Rule, "malformed XML")

	_, err = e.Deploy(ctx, "dangling.bpmn", []byte(process(`<bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="nowhere"/>`)))
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "f", de.ElementID)
	assert.Equal(t, "p", de.ProcessID)
	assert.NotEmpty(t, de.Problems)
	// The module reports the same problems, rule and position included,
	// as the native engine.
	native, err := engine.New()
	require.NoError(t, err)
	defer native.Close(ctx)
	_, nerr := native.Deploy("dangling.bpmn", []byte(process(`<bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="nowhere"/>`)))
	var nde *engine.DeployError
	require.ErrorAs(t, nerr, &nde)
	assert.Equal(t, nde.Problems, de.Problems)
	assert.Equal(t, "REF.19", de.Problems[0].RuleID)
	assert.Positive(t, de.Problems[0].Line)
	assert.ErrorIs(t, de, &engine.Problem{RuleID: "REF.19"}, "a DeployError unwraps to its problems")

	_, err = e.Start(ctx, "p", nil)
	assert.ErrorIs(t, err, engine.ErrUnknownProcess, "a rejected document registers nothing")
	_, err = e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err, "the engine stays usable")
}

func TestEngine_TrapDiscardsModule(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
	_, err = e.Call(ctx, "debug_trap", nil)
	require.ErrorIs(t, err, host.ErrBadRequest, "debug_trap is not an operation")

	require.ErrorIs(t, e.DebugTrap(ctx), host.ErrTrapped)
	assert.Contains(t, e.Trapped().Error(), "debug_trap called")
	_, err = e.Start(ctx, "order", nil)
	require.ErrorIs(t, err, host.ErrTrapped, "a trapped module is never reused")

	// A new Engine works.
	e2 := newHost(t)
	_, err = e2.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
}

func TestEngine_Close(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	require.NoError(t, e.Close(ctx))
	_, err := e.Start(ctx, "order", nil)
	require.ErrorIs(t, err, engine.ErrClosed)
	require.NoError(t, e.Close(ctx))
}

func TestEngine_ConcurrentCalls(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			key, err := e.Start(ctx, "order", map[string]any{"amount": 10})
			if err == nil {
				_, err = e.Tokens(ctx, key)
			}
			errs <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
	jobs, err := e.Jobs(ctx, engine.JobFilter{Type: "check-order"})
	require.NoError(t, err)
	assert.Len(t, jobs, 8)
}

func TestEngine_MessagesAndTimers(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	for _, f := range []string{"timer.bpmn", "message.bpmn"} {
		_, err := e.Deploy(ctx, f, readFile(t, f))
		require.NoError(t, err)
	}
	timed, err := e.Start(ctx, "timer", nil)
	require.NoError(t, err)
	due, ok := e.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, time.Second, due.Sub(e.Now()))
	require.NoError(t, e.AdvanceTo(ctx, due))
	_, ok = e.NextDeadline()
	assert.False(t, ok)
	st, err := e.State(ctx, timed)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st)

	waiting, err := e.Start(ctx, "message", map[string]any{"key": "k1"})
	require.NoError(t, err)
	require.NoError(t, e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: "k1", Variables: map[string]any{"x": 1}}))
	info, err := e.Instance(ctx, waiting)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, info.State)
	assert.Equal(t, 1.0, info.Variables["x"])

	require.NoError(t, e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: "k2", TTL: time.Minute, MessageID: "m1"}))
	err = e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: "k2", TTL: time.Minute, MessageID: "m1"})
	require.ErrorIs(t, err, engine.ErrDuplicateMessage)
	require.NoError(t, e.BroadcastSignal(ctx, "nobody-listens", nil))
}

// process wraps flow elements in a minimal executable process "p".
func process(body string) string {
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`id="d" targetNamespace="t"><bpmn:process id="p" isExecutable="true">` + body + `</bpmn:process></bpmn:definitions>`
}

// StartInstance reports the state the instance settled in, from the start
// call alone: waiting at its first job, or completed when nothing waits.
func TestStartInstance_ReportsTheSettledState(t *testing.T) {
	ctx := context.Background()
	e := newHost(t)
	_, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
	waiting, err := e.StartInstance(ctx, "order", map[string]any{"amount": 40})
	require.NoError(t, err)
	assert.Equal(t, engine.Active, waiting.State)
	st, err := e.State(ctx, waiting.Key)
	require.NoError(t, err)
	assert.Equal(t, st, waiting.State, "the same state a second call reads")

	straight := `<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="straight" isExecutable="true">
    <startEvent id="s"/><sequenceFlow id="f1" sourceRef="s" targetRef="a"/>
    <task id="a"/><sequenceFlow id="f2" sourceRef="a" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>`
	_, err = e.Deploy(ctx, "straight.bpmn", []byte(straight))
	require.NoError(t, err)
	done, err := e.StartInstance(ctx, "straight", nil)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, done.State)
}

// TestCompleteJobInstance_ReportsTheInstance: start and complete_job
// report the instance's activatable jobs and state, the same a Jobs and a
// State call read, down to the last job's completion.
func TestCompleteJobInstance_ReportsTheInstance(t *testing.T) {
	ctx := context.Background()
	e := newHost(t)
	_, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
	s, err := e.StartInstance(ctx, "order", map[string]any{"amount": 50})
	require.NoError(t, err)
	jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: s.Key})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, jobs, s.Jobs, "start reports what a jobs call reads")
	assert.Equal(t, map[string]any{"amount": 50.0}, s.Jobs[0].Variables)

	vars := map[string]any{"valid": true}
	for len(s.Jobs) > 0 {
		key := s.Jobs[0].Key
		if s, err = e.CompleteJobInstance(ctx, key, vars); err != nil {
			t.Fatal(err)
		}
		vars = nil
		jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: s.Key})
		require.NoError(t, err)
		if len(jobs) == 0 {
			jobs = nil
		}
		assert.Equal(t, jobs, s.Jobs, "after job %d", key)
		st, err := e.State(ctx, s.Key)
		require.NoError(t, err)
		assert.Equal(t, st, s.State, "after job %d", key)
	}
	assert.Equal(t, engine.Completed, s.State)

	_, err = e.CompleteJobInstance(ctx, 99999, nil)
	assert.ErrorIs(t, err, engine.ErrUnknownJob)
}

// TestPublishMessageReached_ReportsTheInstances: publish_message reports
// the instance it reached as a State call reads it, and nothing for a
// message that reached nobody.
func TestPublishMessageReached_ReportsTheInstances(t *testing.T) {
	ctx := context.Background()
	e := newHost(t)
	_, err := e.Deploy(ctx, "message.bpmn", readFile(t, "message.bpmn"))
	require.NoError(t, err)
	var keys []int64
	for _, k := range []string{"k1", "k2"} {
		s, err := e.StartInstance(ctx, "message", map[string]any{"key": k})
		require.NoError(t, err)
		require.Equal(t, engine.Active, s.State)
		keys = append(keys, s.Key)
	}
	got, err := e.PublishMessageReached(ctx, engine.Message{Name: "go", CorrelationKey: "k2"})
	require.NoError(t, err)
	require.Equal(t, []host.Started{{Key: keys[1], State: engine.Completed}}, got, "only the instance waiting for k2")
	st, err := e.State(ctx, keys[0])
	require.NoError(t, err)
	assert.Equal(t, engine.Active, st, "the other still waits")

	got, err = e.PublishMessageReached(ctx, engine.Message{Name: "go", CorrelationKey: "k3", TTL: time.Minute})
	require.NoError(t, err)
	assert.Empty(t, got, "buffered, it reached nobody yet")
	_, err = e.PublishMessageReached(ctx, engine.Message{Name: ""})
	assert.ErrorIs(t, err, engine.ErrInvalidArgument)
}
