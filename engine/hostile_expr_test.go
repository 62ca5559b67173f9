package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// mappingTask is a process whose task "t" maps inputs, each source to its
// target in turn, before it creates its job.
func mappingTask(inputs ...[2]string) string {
	var b strings.Builder
	for _, in := range inputs {
		b.WriteString(`<zeebe:input source="` + in[0] + `" target="` + in[1] + `"/>`)
	}
	return defs(``, `<bpmn:startEvent id="s"/><bpmn:serviceTask id="t"><bpmn:extensionElements>`+
		`<zeebe:taskDefinition type="work"/><zeebe:ioMapping>`+b.String()+`</zeebe:ioMapping></bpmn:extensionElements></bpmn:serviceTask>`+
		`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t"/><bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e"/>`)
}

func repeatInput(source, target string, n int) [][2]string {
	out := make([][2]string, n)
	for i := range out {
		out[i] = [2]string{source, target}
	}
	return out
}

// stillWorks runs a plain instance to completion on e, which a hostile
// one must not have harmed.
func stillWorks(t *testing.T, e *engine.Engine) {
	t.Helper()
	_, err := e.Deploy("plain.bpmn", []byte(strings.Replace(defs(``, `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"/>`+
		`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/>`), `id="p"`, `id="plain"`, 1)))
	require.NoError(t, err)
	inst, err := e.Start(ctxT(t), "plain", map[string]any{"x": 1})
	require.NoError(t, err)
	st, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st)
}

// Hostile expressions in mappings: each opens an incident naming what
// went wrong, within the engine's budgets, and the engine goes on.
func TestHostile_MappingIncidents(t *testing.T) {
	s := strings.Repeat("x", 1<<20)
	cases := []struct {
		name   string
		inputs [][2]string
		vars   map[string]any
		want   string
	}{
		{"nested quantifiers", [][2]string{{`= every x in l satisfies every y in l satisfies every z in l satisfies x + y + z > 0`, "ok"}},
			map[string]any{"l": seqList(1000)}, "step budget of 1000000"},
		{"string doubling", [][2]string{{`= s` + strings.Repeat(" + s", 100), "big"}},
			map[string]any{"s": s}, "byte budget of 16777216"},
		{"deep value, one level per mapping", repeatInput(`= [a]`, "a", engine.MaxVariableDepth+5), nil,
			fmt.Sprintf("deeper than %d levels", engine.MaxVariableDepth)},
		{"shared value doubling per mapping", append([][2]string{{`= &quot;` + strings.Repeat("y", 1000) + `&quot;`, "a"}}, repeatInput(`= [a, a]`, "a", 40)...), nil,
			"larger than the 16777216 bytes"},
		{"deep path target", [][2]string{{`= [[1]]`, strings.TrimPrefix(strings.Repeat(".a", engine.MaxVariableDepth), ".")}}, nil,
			fmt.Sprintf("deeper than %d levels", engine.MaxVariableDepth)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, mappingTask(tc.inputs...))
			inst := start(t, e, tc.vars)
			incs := incidents(inst)
			require.Len(t, incs, 1)
			assert.Equal(t, "t", incs[0].ElementID)
			assert.Contains(t, incs[0].Message, tc.want)
			assert.Empty(t, e.Jobs(engine.JobFilter{}), "the task did not start")
			stillWorks(t, e)
		})
	}
}

// A name is a variable, never the evaluator's environment: "= $env" used
// to store the variables inside themselves and overflow the stack.
func TestHostile_EnvIsAVariable(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, mappingTask([2]string{"= $env", "all"}, [2]string{"= {copy: $env}", "wrapped"}))
	inst := start(t, e, map[string]any{"a": 1})
	require.Empty(t, incidents(inst))
	jobs := e.Jobs(engine.JobFilter{})
	require.Len(t, jobs, 1)
	assert.Nil(t, jobs[0].Variables["all"])
	assert.Equal(t, map[string]any{"copy": nil}, jobs[0].Variables["wrapped"])

	inst2 := start(t, e, map[string]any{"$env": "mine"})
	jobs = e.Jobs(engine.JobFilter{})
	require.Len(t, jobs, 2)
	for _, j := range jobs {
		if j.InstanceKey == inst2.Key() {
			assert.Equal(t, "mine", j.Variables["all"])
		}
	}
	stillWorks(t, e)
}

func TestHostile_DeepExpressionsAtDeploy(t *testing.T) {
	e := newEngine(t)
	for _, source := range []string{
		"= a" + strings.Repeat(".b", 1000),
		"= a" + strings.Repeat("[1]", 1000),
		"= " + strings.Repeat("-", 1000) + "1",
		"${" + strings.Repeat("!", 1000) + "a}",
		"${" + strings.Repeat("not ", 1000) + "a}",
		"${" + strings.Repeat("empty ", 1000) + "a}",
	} {
		_, err := e.Deploy("deep.bpmn", []byte(mappingTask([2]string{source, "x"})))
		var de *engine.DeployError
		require.ErrorAs(t, err, &de, source[:10])
		assert.Contains(t, err.Error(), "nested more than", source[:10])
	}
	_, err := e.Deploy("deep.bpmn", []byte(mappingTask([2]string{"= 1", strings.TrimPrefix(strings.Repeat(".a", engine.MaxVariableDepth+1), ".")})))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, err.Error(), fmt.Sprintf("deeper than %d levels", engine.MaxVariableDepth))
	stillWorks(t, e)
}

func TestHostile_VariablesTooDeepOrCyclic(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, mappingTask())
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	list := []any{nil}
	list[0] = list
	deep := any(1.0)
	for range engine.MaxVariableDepth {
		deep = []any{deep}
	}
	ok := deep
	for name, v := range map[string]any{"cyclic map": cyclic, "cyclic list": list, "too deep": []any{deep}} {
		_, err := e.Start(ctxT(t), "p", map[string]any{"v": v})
		require.ErrorIs(t, err, engine.ErrBadVariables, name)
		assert.Contains(t, err.Error(), fmt.Sprintf("deeper than %d levels", engine.MaxVariableDepth), name)
	}
	inst := start(t, e, map[string]any{"v": ok})
	jobs := e.Jobs(engine.JobFilter{})
	require.Len(t, jobs, 1)
	err := e.CompleteJob(ctxT(t), jobs[0].Key, map[string]any{"r": cyclic})
	require.ErrorIs(t, err, engine.ErrBadVariables)
	require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, map[string]any{"r": ok}))
	st, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st)
	assert.Equal(t, ok, inst.Variables()["r"], "a value at the depth limit is accepted")
}

// The budgets are options: the same expression that hits the default
// runs with a larger one, and a smaller one stops cheaper work.
func TestHostile_EvalBudgetOptions(t *testing.T) {
	_, err := engine.New(engine.WithLimits(engine.Limits{MaxEvalSteps: -1}))
	require.Error(t, err)
	_, err = engine.New(engine.WithLimits(engine.Limits{MaxEvalBytes: -1}))
	require.Error(t, err)

	model := mappingTask([2]string{`= count(for x in l return for y in l return x)`, "n"})
	vars := map[string]any{"l": seqList(1000)}
	e := newEngine(t)
	deploy(t, e, model)
	inst := start(t, e, vars)
	require.Len(t, incidents(inst), 1)
	assert.Contains(t, incidents(inst)[0].Message, "step budget of 1000000")

	e = newEngine(t, engine.WithLimits(engine.Limits{MaxEvalSteps: 5_000_000}))
	deploy(t, e, model)
	start(t, e, vars)
	jobs := e.Jobs(engine.JobFilter{})
	require.Len(t, jobs, 1)
	assert.Equal(t, 1000.0, jobs[0].Variables["n"])

	e = newEngine(t, engine.WithLimits(engine.Limits{MaxEvalBytes: 1000}))
	deploy(t, e, mappingTask([2]string{`= for x in l return string(x)`, "s"}))
	inst = start(t, e, vars)
	require.Len(t, incidents(inst), 1)
	assert.Contains(t, incidents(inst)[0].Message, "byte budget of 1000")
	stillWorks(t, e)
}

func seqList(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}
