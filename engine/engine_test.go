package engine_test

import (
	"context"
	"errors"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/internal/testtime"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newEngine(t *testing.T, opts ...engine.Option) *engine.Engine {
	t.Helper()
	e, err := engine.New(append([]engine.Option{engine.WithClock(clock.NewVirtual(clock.Epoch))}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Close(context.Background())) })
	return e
}

// ctxT is a test's context: a safety net against a hang, not a time
// limit, so it is generous (a hostile-restore test takes ~10 s under
// -race alone, far more on a loaded machine).
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(2*time.Minute))
	t.Cleanup(cancel)
	return ctx
}

func deployFile(t *testing.T, e *engine.Engine, name string) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	_, err = e.Deploy(name, data)
	require.NoError(t, err)
}

// completed returns the sorted multiset of elements the instance left.
func completed(inst *engine.Instance) []string {
	var out []string
	for _, ev := range history(inst) {
		if ev.Type == engine.ElementLeft {
			out = append(out, ev.ElementID)
		}
	}
	sort.Strings(out)
	return out
}

// work completes every open job until none is left, answering each job
// type with the variables in results.
func work(t *testing.T, e *engine.Engine, results map[string]map[string]any) []string {
	t.Helper()
	var done []string
	for {
		require.NoError(t, e.Settle(ctxT(t)))
		jobs := e.Jobs(engine.JobFilter{})
		if len(jobs) == 0 {
			return done
		}
		for _, j := range jobs {
			require.NoError(t, e.CompleteJob(ctxT(t), j.Key, results[j.Type]))
			done = append(done, j.Type)
		}
	}
}

func TestEngine_OrderProcess(t *testing.T) {
	for _, tc := range []struct {
		name   string
		amount float64
		jobs   []string
	}{
		{"small order skips approval", 40, []string{"charge-payment", "check-order", "reserve-stock"}},
		{"large order is approved", 400, []string{"charge-payment", "check-order", "reserve-stock", "userTask"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deployFile(t, e, "order.bpmn")
			inst, err := e.Start(ctxT(t), "order", map[string]any{"amount": tc.amount})
			require.NoError(t, err)
			require.NoError(t, e.Settle(ctxT(t)))

			jobs := e.Jobs(engine.JobFilter{Type: "check-order"})
			require.Len(t, jobs, 1)
			assert.Equal(t, map[string]string{"team": "orders"}, jobs[0].Headers)
			assert.Equal(t, 2, jobs[0].Retries)

			done := work(t, e, map[string]map[string]any{"check-order": {"valid": true}, "charge-payment": {"paid": true}})
			sort.Strings(done)
			assert.Equal(t, tc.jobs, done)

			st, err := inst.Wait(ctxT(t))
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, st)
			assert.Equal(t, map[string]any{"amount": tc.amount, "valid": true, "paid": true}, inst.Variables())
			want := []string{"EndEvent_1", "Gateway_amount", "Gateway_fork", "Gateway_join", "Gateway_merge",
				"StartEvent_1", "Task_charge", "Task_check", "Task_reserve"}
			if tc.amount > 100 {
				want = append(want, "Task_approve")
				sort.Strings(want)
			}
			assert.Equal(t, want, completed(inst))
		})
	}
}

func TestEngine_DeployErrors(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		name, xml, element, rule string
	}{
		{"malformed", `<bpmn:definitions`, "", "malformed XML"},
		{"unsupported", process(`<bpmn:startEvent id="s"/><bpmn:choreographyTask id="Ch_1"/>` +
			`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="Ch_1"/>`), "Ch_1", "unsupported element bpmn:choreographyTask"},
		{"dangling flow", process(`<bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="nowhere"/>`), "f", "nowhere"},
		{"bad condition", process(`<bpmn:startEvent id="s"/><bpmn:exclusiveGateway id="g" default="f2"/><bpmn:endEvent id="e"/>` +
			`<bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="g"/>` +
			`<bpmn:sequenceFlow id="f1" sourceRef="g" targetRef="e"><bpmn:conditionExpression>= amount &gt;</bpmn:conditionExpression></bpmn:sequenceFlow>` +
			`<bpmn:sequenceFlow id="f2" sourceRef="g" targetRef="e"/>`), "f1", "condition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Deploy(tc.name+".bpmn", []byte(tc.xml))
			var de *engine.DeployError
			require.True(t, errors.As(err, &de), "got %v", err)
			assert.Equal(t, tc.name+".bpmn", de.File)
			assert.Equal(t, tc.element, de.ElementID)
			assert.Contains(t, de.Rule, tc.rule)
			assert.Contains(t, err.Error(), tc.name+".bpmn")
		})
	}
	_, err := e.Start(ctxT(t), "p", nil)
	require.ErrorIs(t, err, engine.ErrUnknownProcess, "a rejected document registers nothing")
}

func TestEngine_StrictRejectsUntypedJobs(t *testing.T) {
	xml := process(`<bpmn:startEvent id="s"/><bpmn:serviceTask id="work"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="work"/>`)
	_, err := newEngine(t).Deploy("lax.bpmn", []byte(xml))
	require.NoError(t, err)
	_, err = newEngine(t, engine.WithStrict()).Deploy("strict.bpmn", []byte(xml))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "work", de.ElementID)
	assert.Contains(t, de.Rule, "no job type")
}

func TestEngine_ScriptTaskBecomesScriptJob(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("script.bpmn", []byte(process(`<bpmn:startEvent id="s"/>`+
		`<bpmn:scriptTask id="calc" scriptFormat="javascript"><bpmn:script>x = 1 + 1</bpmn:script></bpmn:scriptTask>`+
		`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="calc"/>`)))
	require.NoError(t, err)
	_, err = e.Start(ctxT(t), "p", nil)
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	jobs := e.Jobs(engine.JobFilter{Type: "script"})
	require.Len(t, jobs, 1)
	assert.Equal(t, map[string]string{"scriptFormat": "javascript", "script": "x = 1 + 1"}, jobs[0].Headers)
}

func TestEngine_BadVariablesAreRejected(t *testing.T) {
	e := newEngine(t)
	deployFile(t, e, "order.bpmn")
	_, err := e.Start(ctxT(t), "order", map[string]any{"ch": make(chan int)})
	require.ErrorIs(t, err, engine.ErrBadVariables)
	assert.Contains(t, err.Error(), `"ch"`)
}

func TestEngine_CloseEndsEverything(t *testing.T) {
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	deployFile(t, e, "order.bpmn")
	var insts []*engine.Instance
	for range 10 {
		inst, err := e.Start(ctxT(t), "order", map[string]any{"amount": 1})
		require.NoError(t, err)
		insts = append(insts, inst)
	}
	require.NoError(t, e.Close(ctxT(t)))
	for _, inst := range insts {
		assert.Equal(t, engine.Terminated, inst.State())
	}
	_, err = e.Start(ctxT(t), "order", nil)
	require.ErrorIs(t, err, engine.ErrClosed)
	_, err = e.Deploy("order.bpmn", []byte(process(`<bpmn:startEvent id="s"/>`)))
	require.ErrorIs(t, err, engine.ErrClosed)
}

// process wraps flow elements in a minimal executable process "p".
func process(body string) string {
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`id="d" targetNamespace="t"><bpmn:process id="p" isExecutable="true">` +
		strings.ReplaceAll(body, "\n", "") + `</bpmn:process></bpmn:definitions>`
}

func TestEngine_EventLog(t *testing.T) {
	e := newEngine(t)
	deployFile(t, e, "order.bpmn")
	assert.Nil(t, e.DrainEvents(), "off by default")
	e.SetEventLog(true)
	inst, err := e.Start(ctxT(t), "order", map[string]any{"amount": 1})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	logged := e.DrainEvents()
	require.Equal(t, history(inst), logged, "the log holds the instance's stream, in order")
	assert.Empty(t, e.DrainEvents(), "drained")
	e.SetEventLog(false)
	require.NoError(t, e.CompleteJob(ctxT(t), e.Jobs(engine.JobFilter{})[0].Key, nil))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Nil(t, e.DrainEvents())
}

// history returns inst's event stream. With a context that never ends,
// History cannot fail.
func history(inst *engine.Instance) []engine.Event {
	h, _ := inst.History(context.Background())
	return h
}

// incidents returns inst's open incidents (see history).
func incidents(inst *engine.Instance) []engine.Incident {
	incs, _ := inst.Incidents(context.Background())
	return incs
}

// openIncidents returns the engine's open incidents (see history).
func openIncidents(e *engine.Engine) []engine.Incident {
	incs, _ := e.Incidents(context.Background())
	return incs
}

// TestEngine_Incidents checks that the engine's incident list (read from
// its index) is the union of the instances' own lists, in key order, that
// resolving an incident or ending its instance takes it off, and that a
// restored engine lists the incidents its document holds.
func TestEngine_Incidents(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t)
	deploy(t, e, process(`<bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="work"/>
		<bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" type="w"/></bpmn:extensionElements></bpmn:serviceTask>
		<bpmn:sequenceFlow id="f2" sourceRef="work" targetRef="end"/><bpmn:endEvent id="end"/>`))
	var insts []*engine.Instance
	for range 3 {
		insts = append(insts, start(t, e, nil))
	}
	require.NoError(t, e.Settle(ctx))
	for _, j := range e.Jobs(engine.JobFilter{Type: "w"}) {
		require.NoError(t, e.FailJob(ctx, j.Key, 0, "no retries left"))
	}
	require.NoError(t, e.Settle(ctx))

	var want []engine.Incident
	for _, inst := range insts {
		incs, err := inst.Incidents(ctx)
		require.NoError(t, err)
		require.Len(t, incs, 1)
		want = append(want, incs...)
	}
	sort.Slice(want, func(i, j int) bool { return want[i].Key < want[j].Key })
	got, err := e.Incidents(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	state, err := e.Checkpoint(ctx)
	require.NoError(t, err)
	r, err := engine.Restore(state)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(context.Background())) }()
	restored, err := r.Incidents(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, restored, "a restored engine indexes the incidents of its document")

	require.NoError(t, e.ResolveIncident(ctx, want[0].Key))
	require.NoError(t, insts[1].Cancel(ctx))
	require.NoError(t, e.Settle(ctx))
	got, err = e.Incidents(ctx)
	require.NoError(t, err)
	assert.Equal(t, want[2:], got, "a resolved incident and one of a cancelled instance are gone")
}
