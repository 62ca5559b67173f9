package engine_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// normalStillCompletes deploys and runs a plain process on e: a budget hit
// by another instance must leave the engine usable.
func normalStillCompletes(t *testing.T, e *engine.Engine) {
	t.Helper()
	_, err := e.Deploy("normal.bpmn", []byte(strings.Replace(defs(``, `<bpmn:startEvent id="s"/>`+task("work", "normal")+
		`<bpmn:endEvent id="e"/>`+flows("s", "work", "work", "e")), `id="p"`, `id="normal"`, 1)))
	require.NoError(t, err)
	inst, err := e.Start(ctxT(t), "normal", nil)
	require.NoError(t, err)
	require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "normal").Key, nil))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st, "a normal instance completes on the same engine")
}

// budgetIncident returns the one open incident of the engine, which must
// name the budget.
func budgetIncident(t *testing.T, e *engine.Engine, budget string) engine.Incident {
	t.Helper()
	incs := openIncidents(e)
	require.Len(t, incs, 1, "one incident: %v", incs)
	assert.Contains(t, incs[0].Message, fmt.Sprintf("budget %q exceeded", budget))
	assert.NotContains(t, incs[0].Message, "cycle", "the engine cannot know the work was a cycle")
	return incs[0]
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestBudget_ForkCycle: a cycle through a parallel fork doubles its tokens
// each lap; the tokens-per-input budget holds the instance with an
// incident, and memory stays bounded.
func TestBudget_ForkCycle(t *testing.T) {
	e := newEngine(t, engine.WithLimits(engine.Limits{MaxTokensPerInput: 2000}))
	before := heapInUse()
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:exclusiveGateway id="x"/><bpmn:parallelGateway id="fork"/>`+
		`<bpmn:intermediateThrowEvent id="a"/><bpmn:intermediateThrowEvent id="b"/>`+
		flows("s", "x", "x", "fork", "fork", "a", "fork", "b", "a", "x", "b", "x")))
	inst, err := e.Start(ctxT(t), "p", nil)
	require.NoError(t, err)
	settleWithin(t, e, 10*time.Second)
	inc := budgetIncident(t, e, "tokens per input")
	assert.Contains(t, inc.Message, "limit 2000 (limits.maxTokensPerInput)")
	toks := tokens(t, inst)
	// Tracks run ahead of the loop by at most the intake's depth, so few
	// tokens appear after the budget is hit.
	assert.LessOrEqual(t, len(toks), 4000, "the tokens stop where they are")
	for _, tok := range toks {
		require.Equal(t, engine.WaitReason("incident"), tok.Waiting, "every token is held: %+v", tok)
		require.Equal(t, inc.Key, tok.IncidentKey)
	}
	assert.Less(t, heapInUse()-min(before, heapInUse()), uint64(64<<20), "bounded memory")
	require.NoError(t, inst.Cancel(ctxT(t)))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Terminated, st)
	assert.Empty(t, openIncidents(e), "the budget incident goes with the instance")
	normalStillCompletes(t, e)
}

// TestBudget_LiveTokens: tokens parked at a wait state count against the
// live-token budget even when each input creates few.
func TestBudget_LiveTokens(t *testing.T) {
	e := newEngine(t, engine.WithLimits(engine.Limits{MaxTokens: 50}))
	deploy(t, e, defs(`<bpmn:signal id="Sig" name="more"/>`, `<bpmn:startEvent id="s"/><bpmn:exclusiveGateway id="x"/><bpmn:parallelGateway id="fork"/>`+
		`<bpmn:intermediateCatchEvent id="wait"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:intermediateThrowEvent id="again"/><bpmn:endEvent id="done"/>`+
		flows("s", "x", "x", "fork", "fork", "wait", "fork", "again", "again", "x", "wait", "done")))
	inst, err := e.Start(ctxT(t), "p", nil)
	require.NoError(t, err)
	settleWithin(t, e, 10*time.Second)
	inc := budgetIncident(t, e, "live tokens")
	assert.Contains(t, inc.Message, "51 tokens alive in the instance, limit 50 (limits.maxTokens)")
	require.NoError(t, inst.Cancel(ctxT(t)))
	normalStillCompletes(t, e)
}

// TestBudget_EscalationRethrowLoop: a non-interrupting escalation event
// sub-process that rethrows its own code is caught by itself again (as in
// Zeebe), without end; each round is a new token, which no per-token guard
// sees. The tokens-per-input budget holds it.
func TestBudget_EscalationRethrowLoop(t *testing.T) {
	e := newEngine(t, engine.WithLimits(engine.Limits{MaxTokensPerInput: 500}))
	esc := `<bpmn:escalationEventDefinition escalationRef="Esc"/>`
	deploy(t, e, defs(`<bpmn:escalation id="Esc" escalationCode="UP"/>`, `<bpmn:startEvent id="s"/>`+
		`<bpmn:intermediateThrowEvent id="up">`+esc+`</bpmn:intermediateThrowEvent>`+task("work", "work")+`<bpmn:endEvent id="e"/>`+
		flows("s", "up", "up", "work", "work", "e")+
		`<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es" isInterrupting="false">`+esc+`</bpmn:startEvent>`+
		`<bpmn:endEvent id="again">`+esc+`</bpmn:endEvent>`+flows("es", "again")+`</bpmn:subProcess>`))
	inst, err := e.Start(ctxT(t), "p", nil)
	require.NoError(t, err)
	settleWithin(t, e, 10*time.Second)
	inc := budgetIncident(t, e, "tokens per input")
	assert.Equal(t, "es", inc.ElementID)
	assert.Contains(t, inc.Message, "at element es: 501 tokens created since the instance was last idle, limit 500")
	assert.Less(t, count(inst, engine.ElementEntered, "esp"), 510)
	require.NoError(t, inst.Cancel(ctxT(t)))
	assert.Empty(t, e.Jobs(engine.JobFilter{Type: "work"}))
	normalStillCompletes(t, e)
}

// longPath is a process of n pass-through elements in a row.
func longPath(n int) string {
	body, prev := `<bpmn:startEvent id="s"/>`, "s"
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		body += `<bpmn:intermediateThrowEvent id="` + id + `"/>` + flows(prev, id)
		prev = id
	}
	return defs(``, body+`<bpmn:endEvent id="e"/>`+flows(prev, "e"))
}

// TestBudget_StepsPerTokenOnAcyclicPath: the per-token guard names its
// budget and the element, and does not call a long path a cycle.
func TestBudget_StepsPerTokenOnAcyclicPath(t *testing.T) {
	e := newEngine(t, engine.WithLimits(engine.Limits{MaxSteps: 10}))
	deploy(t, e, longPath(50))
	_, err := e.Start(ctxT(t), "p", nil)
	require.NoError(t, err)
	settleWithin(t, e, 10*time.Second)
	inc := budgetIncident(t, e, "steps per token")
	assert.Equal(t, "at element "+inc.ElementID+": the token passed 11 elements without waiting, limit 10 (limits.maxSteps)",
		strings.SplitN(inc.Message, " exceeded ", 2)[1])
}

// TestBudget_StepsOnAcyclicPath: a long path without a wait state runs into
// the steps-per-input budget; the incident does not call it a cycle, and
// resolving it grants a fresh budget, so the instance completes.
func TestBudget_StepsOnAcyclicPath(t *testing.T) {
	e := newEngine(t, engine.WithLimits(engine.Limits{MaxStepsPerInput: 20}))
	deploy(t, e, longPath(50))
	inst, err := e.Start(ctxT(t), "p", nil)
	require.NoError(t, err)
	resolves := 0
	for ; resolves < 10; resolves++ {
		settleWithin(t, e, 10*time.Second)
		if inst.State() != engine.Active {
			break
		}
		inc := budgetIncident(t, e, "steps per input")
		assert.Contains(t, inc.Message, "21 steps since the instance was last idle, limit 20 (limits.maxStepsPerInput)")
		require.NoError(t, e.ResolveIncident(ctxT(t), inc.Key))
	}
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
	// 52 steps: one or two fresh budgets after the first, as the token may
	// run ahead of the loop by the intake's depth before it stops.
	assert.Contains(t, []int{1, 2}, resolves)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "t49"))
	balanced(t, inst)
}

// TestBudget_SignalStartsItself: a process started by signal S that throws
// S would start instances without end; one outside broadcast starts at
// most MaxStartsPerInput of them, and the throw that would exceed it holds
// its token with an incident.
func TestBudget_SignalStartsItself(t *testing.T) {
	e := newEngine(t, engine.WithLimits(engine.Limits{MaxStartsPerInput: 50}))
	deploy(t, e, defs(`<bpmn:signal id="Sig" name="S"/>`, `<bpmn:startEvent id="s"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:startEvent>`+
		`<bpmn:intermediateThrowEvent id="again"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "again", "again", "e")))
	require.NoError(t, e.BroadcastSignal(ctxT(t), "S", nil))
	settleWithin(t, e, 10*time.Second)
	inc := budgetIncident(t, e, "starts per input")
	assert.Equal(t, "again", inc.ElementID)
	assert.Contains(t, inc.Message, `signal thrown at element again: budget "starts per input" exceeded: signal "S" would start instance 51 of one outside input, limit 50`)
	assert.Len(t, e.Instances(), 1, "49 instances completed; the 50th holds the incident")
	inst, ok := e.Instance(inc.InstanceKey)
	require.True(t, ok)
	require.NoError(t, inst.Cancel(ctxT(t)))
	normalStillCompletes(t, e)
}

// TestBudget_RecursiveCallFanOut: a process that calls itself twice grows
// exponentially under the nesting bound; the call activities of one input
// start at most MaxStartsPerInput instances.
func TestBudget_RecursiveCallFanOut(t *testing.T) {
	e := newEngine(t, engine.WithLimits(engine.Limits{MaxStartsPerInput: 40})) // below the nesting bound, so that the budget, not the depth, stops it
	deploy(t, e, defs(``, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+
		`<bpmn:callActivity id="c1"><bpmn:extensionElements><zeebe:calledElement processId="p"/></bpmn:extensionElements></bpmn:callActivity>`+
		`<bpmn:callActivity id="c2"><bpmn:extensionElements><zeebe:calledElement processId="p"/></bpmn:extensionElements></bpmn:callActivity>`+
		`<bpmn:parallelGateway id="join"/><bpmn:endEvent id="e"/>`+
		flows("s", "fork", "fork", "c1", "fork", "c2", "c1", "join", "c2", "join", "join", "e")))
	root, err := e.Start(ctxT(t), "p", nil)
	require.NoError(t, err)
	settleWithin(t, e, 10*time.Second)
	assert.Len(t, e.Instances(), 41, "the root and the 40 instances its start could start")
	incs := openIncidents(e)
	require.NotEmpty(t, incs)
	for _, inc := range incs {
		assert.Contains(t, inc.Message, `budget "starts per input" exceeded: call activity `+inc.ElementID+` would start instance`)
		assert.Contains(t, inc.Message, "limit 40 (limits.maxStartsPerInput)")
	}
	require.NoError(t, root.Cancel(ctxT(t)))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Empty(t, e.Instances(), "cancelling the root cancels what it called")
	normalStillCompletes(t, e)
}

func TestNew_RejectsNegativeLimits(t *testing.T) {
	for want, l := range map[string]engine.Limits{
		"limits.maxSteps (-1)":           {MaxSteps: -1},
		"limits.maxStepsPerInput (-2)":   {MaxStepsPerInput: -2},
		"limits.maxTokensPerInput (-1)":  {MaxTokensPerInput: -1},
		"limits.maxRecordsPerInput (-1)": {MaxRecordsPerInput: -1},
		"limits.maxTokens (-1)":          {MaxTokens: -1},
		"limits.maxStartsPerInput (-1)":  {MaxStartsPerInput: -1},
		"limits.maxEvalSteps (-3)":       {MaxEvalSteps: -3},
		"limits.maxEvalBytes (-1)":       {MaxEvalBytes: -1},
	} {
		_, err := engine.New(engine.WithLimits(l))
		require.ErrorIs(t, err, engine.ErrInvalidArgument, want)
		require.EqualError(t, err, want+": must not be negative")
	}
}

// Several WithLimits compose: each sets its non-zero fields and keeps the
// others, so a later one with only MaxSteps keeps an earlier MaxTokens.
func TestWithLimits_Composes(t *testing.T) {
	e := newEngine(t, engine.WithLimits(engine.Limits{MaxTokens: 50}), engine.WithLimits(engine.Limits{MaxSteps: 100_000}))
	deploy(t, e, defs(`<bpmn:signal id="Sig" name="more"/>`, `<bpmn:startEvent id="s"/><bpmn:exclusiveGateway id="x"/><bpmn:parallelGateway id="fork"/>`+
		`<bpmn:intermediateCatchEvent id="wait"><bpmn:signalEventDefinition signalRef="Sig"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:intermediateThrowEvent id="again"/><bpmn:endEvent id="done"/>`+
		flows("s", "x", "x", "fork", "fork", "wait", "fork", "again", "again", "x", "wait", "done")))
	inst, err := e.Start(ctxT(t), "p", nil)
	require.NoError(t, err)
	settleWithin(t, e, 10*time.Second)
	inc := budgetIncident(t, e, "live tokens")
	assert.Contains(t, inc.Message, "limit 50 (limits.maxTokens)", "the first WithLimits' MaxTokens still holds")
	require.NoError(t, inst.Cancel(ctxT(t)))
}
