package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// miTask is a service task of job type w with the given multi-instance
// characteristics.
func miTask(id, characteristics string) string {
	return `<bpmn:serviceTask id="` + id + `"><bpmn:extensionElements><zeebe:taskDefinition type="w"/></bpmn:extensionElements>` +
		characteristics + `</bpmn:serviceTask>`
}

// zeebeMI is Zeebe's multi-instance characteristics.
func zeebeMI(sequential bool, attrs, inner string) string {
	seq := ""
	if sequential {
		seq = ` isSequential="true"`
	}
	return `<bpmn:multiInstanceLoopCharacteristics` + seq + `><bpmn:extensionElements><zeebe:loopCharacteristics ` + attrs +
		`/></bpmn:extensionElements>` + inner + `</bpmn:multiInstanceLoopCharacteristics>`
}

func miProcess(activity string) string {
	return defs(``, `<bpmn:startEvent id="s"/>`+activity+`<bpmn:endEvent id="e"/>`+flows("s", "act", "act", "e"))
}

// completeAll completes the open jobs of type w one by one, oldest first,
// each with the variables vars returns for it, and returns how many it
// completed.
func completeAll(t *testing.T, e *engine.Engine, vars func(engine.Job) map[string]any) int {
	t.Helper()
	n := 0
	for {
		require.NoError(t, e.Settle(ctxT(t)))
		jobs := e.Jobs(engine.JobFilter{Type: "w"})
		if len(jobs) == 0 {
			return n
		}
		require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, vars(jobs[0])))
		n++
	}
}

// TestMultiInstance_CollectsInOrder: each inner instance gets its element
// and loopCounter as locals and its job sees them; the output collection
// holds each instance's output element in collection order, whatever
// order the instances complete in, and nothing of the inner instances
// leaks into the process scope.
func TestMultiInstance_CollectsInOrder(t *testing.T) {
	for _, sequential := range []bool{false, true} {
		name := map[bool]string{false: "parallel", true: "sequential"}[sequential]
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, miProcess(miTask("act", zeebeMI(sequential,
				`inputCollection="= items" inputElement="item" outputCollection="results" outputElement="= result"`, ``))))
			inst := start(t, e, map[string]any{"items": []any{"a", "b", "c"}})
			jobs := e.Jobs(engine.JobFilter{Type: "w"})
			if sequential {
				require.Len(t, jobs, 1, "one instance at a time")
			} else {
				require.Len(t, jobs, 3, "all instances at once")
				// Complete them in reverse: the collection keeps instance order.
				for i := len(jobs) - 1; i >= 0; i-- {
					j := jobs[i]
					require.NoError(t, e.CompleteJob(ctxT(t), j.Key, map[string]any{"result": j.Variables["item"].(string) + "!"}))
				}
			}
			completeAll(t, e, func(j engine.Job) map[string]any {
				return map[string]any{"result": j.Variables["item"].(string) + "!"}
			})
			st, err := inst.Wait(ctxT(t))
			require.NoError(t, err)
			require.Equal(t, engine.Completed, st)
			vars := inst.Variables()
			assert.Equal(t, []any{"a!", "b!", "c!"}, vars["results"])
			for _, local := range []string{"item", "loopCounter", "result"} {
				assert.NotContains(t, vars, local, "inner instance locals stay local")
			}
			// The body is entered and left once, each inner instance once.
			assert.Equal(t, 4, count(inst, engine.ElementEntered, "act"))
			assert.Equal(t, 4, count(inst, engine.ElementLeft, "act"))
		})
	}
}

// TestMultiInstance_JobSeesLoopCounter: a job of an inner instance carries
// the instance's loopCounter (from 1) and element.
func TestMultiInstance_JobSeesLoopCounter(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, miProcess(miTask("act", zeebeMI(false, `inputCollection="= items" inputElement="item"`, ``))))
	start(t, e, map[string]any{"items": []any{10.0, 20.0}})
	jobs := e.Jobs(engine.JobFilter{Type: "w"})
	require.Len(t, jobs, 2)
	got := map[float64]float64{}
	for _, j := range jobs {
		got[j.Variables["loopCounter"].(float64)] = j.Variables["item"].(float64)
	}
	assert.Equal(t, map[float64]float64{1: 10, 2: 20}, got)
}

// TestMultiInstance_CompletionCondition: once the condition holds, the
// remaining inner instances are terminated (parallel) or never started
// (sequential), and the activity completes with what was collected.
func TestMultiInstance_CompletionCondition(t *testing.T) {
	for _, sequential := range []bool{false, true} {
		name := map[bool]string{false: "parallel", true: "sequential"}[sequential]
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, miProcess(miTask("act", zeebeMI(sequential,
				`inputCollection="= items" inputElement="item" outputCollection="results" outputElement="= item"`,
				`<bpmn:completionCondition>= numberOfCompletedInstances &gt;= 2</bpmn:completionCondition>`))))
			inst := start(t, e, map[string]any{"items": []any{1.0, 2.0, 3.0, 4.0}})
			require.Equal(t, 2, completeAll(t, e, func(engine.Job) map[string]any { return nil }))
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			results := inst.Variables()["results"].([]any)
			require.Len(t, results, 4)
			assert.Equal(t, []any{1.0, 2.0}, results[:2])
			assert.Equal(t, []any{nil, nil}, results[2:], "instances that never completed collect null")
			terminated := 0
			if !sequential {
				terminated = 2
			}
			assert.Equal(t, terminated, count(inst, engine.ElementTerminated, "act"))
			assert.Equal(t, 2+1, count(inst, engine.ElementLeft, "act"), "two inner instances and the body")
			assert.Empty(t, e.Jobs(engine.JobFilter{}), "the terminated instances' jobs are cancelled")
		})
	}
}

// TestMultiInstance_Cardinality runs an activity a number of times, with
// nrOfInstances and the other BPMN counters in the completion condition.
func TestMultiInstance_Cardinality(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, miProcess(miTask("act", `<bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>= n</bpmn:loopCardinality>`+
		`<bpmn:completionCondition>= nrOfCompletedInstances = nrOfInstances - 1 and nrOfActiveInstances = 1</bpmn:completionCondition>`+
		`</bpmn:multiInstanceLoopCharacteristics>`)))
	inst := start(t, e, map[string]any{"n": 3.0})
	require.Len(t, e.Jobs(engine.JobFilter{Type: "w"}), 3)
	require.Equal(t, 2, completeAll(t, e, func(engine.Job) map[string]any { return nil }))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
}

// TestMultiInstance_EmptyCollection completes the activity at once with an
// empty output collection, as Zeebe does.
func TestMultiInstance_EmptyCollection(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, miProcess(miTask("act", zeebeMI(false, `inputCollection="= items" outputCollection="out" outputElement="= x"`, ``))))
	inst := start(t, e, map[string]any{"items": []any{}})
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, []any{}, inst.Variables()["out"])
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "act"))
}

// TestMultiInstance_BadCollectionIsAnIncident: an input collection that is
// no list holds the token with an incident at the activity; once the
// variable is fixed, resolving it starts the body.
func TestMultiInstance_BadCollectionIsAnIncident(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, miProcess(miTask("act", zeebeMI(false, `inputCollection="= items"`, ``))))
	inst := start(t, e, map[string]any{"items": "abc"})
	incs := incidents(inst)
	require.Len(t, incs, 1)
	assert.Equal(t, "act", incs[0].ElementID)
	assert.Contains(t, incs[0].Message, "not a list")
	assert.Empty(t, e.Jobs(engine.JobFilter{}))
}

// TestMultiInstance_BoundaryOnBody: an interrupting timer on the activity
// terminates every inner instance, then the body; a non-interrupting one
// leaves them running. An error thrown by an inner instance's job is
// caught by the body's error boundary event.
func TestMultiInstance_BoundaryOnBody(t *testing.T) {
	body := func(boundary string) string {
		return defs(`<bpmn:error id="Err" errorCode="E1"/>`, `<bpmn:startEvent id="s"/>`+
			miTask("act", zeebeMI(false, `inputCollection="= items" inputElement="item"`, ``))+boundary+
			`<bpmn:endEvent id="e"/><bpmn:endEvent id="handled"/>`+flows("s", "act", "act", "e", "b", "handled"))
	}
	items := map[string]any{"items": []any{"a", "b", "c"}}
	t.Run("interrupting timer", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, body(timerBoundary("b", "act", "true", `<bpmn:timeDuration>PT1H</bpmn:timeDuration>`)))
		inst := start(t, e, items)
		require.NoError(t, e.Advance(ctxT(t), time.Hour))
		require.NoError(t, e.Settle(ctxT(t)))
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		assert.Equal(t, 4, count(inst, engine.ElementTerminated, "act"), "three inner instances and the body")
		assert.Equal(t, 1, count(inst, engine.ElementLeft, "handled"))
		assert.Empty(t, e.Jobs(engine.JobFilter{}))
		// Inner instances first, the body last.
		var order []int
		for _, ev := range history(inst) {
			if ev.Type == engine.ElementTerminated {
				order = append(order, ev.TokenID)
			}
		}
		require.Len(t, order, 4)
		assert.Equal(t, order[3], order[0]-1, "the body's token, which reached the activity first, is terminated last")
	})
	t.Run("non-interrupting timer", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, body(timerBoundary("b", "act", "false", `<bpmn:timeDuration>PT1H</bpmn:timeDuration>`)))
		inst := start(t, e, items)
		require.NoError(t, e.Advance(ctxT(t), time.Hour))
		require.NoError(t, e.Settle(ctxT(t)))
		assert.Equal(t, 1, count(inst, engine.ElementLeft, "handled"))
		require.Equal(t, 3, completeAll(t, e, func(engine.Job) map[string]any { return nil }))
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		assert.Equal(t, 1, count(inst, engine.ElementLeft, "e"))
	})
	t.Run("error from an inner job", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, body(`<bpmn:boundaryEvent id="b" attachedToRef="act"><bpmn:errorEventDefinition errorRef="Err"/></bpmn:boundaryEvent>`))
		inst := start(t, e, items)
		jobs := e.Jobs(engine.JobFilter{Type: "w"})
		require.Len(t, jobs, 3)
		require.NoError(t, e.ThrowError(ctxT(t), jobs[1].Key, "E1", "boom", nil))
		require.NoError(t, e.Settle(ctxT(t)))
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		assert.Equal(t, 1, count(inst, engine.ElementLeft, "handled"))
		assert.Equal(t, 0, count(inst, engine.ElementLeft, "e"))
		assert.Empty(t, e.Jobs(engine.JobFilter{}))
	})
}

// TestMultiInstance_SubProcess runs a sub-process per element: each
// instance's content sees its own element, its output mapping writes the
// output element, and a terminate end event inside ends only its
// instance.
func TestMultiInstance_SubProcess(t *testing.T) {
	for _, sequential := range []bool{false, true} {
		name := map[bool]string{false: "parallel", true: "sequential"}[sequential]
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, miProcess(`<bpmn:subProcess id="act">`+zeebeMI(sequential,
				`inputCollection="= items" inputElement="item" outputCollection="results" outputElement="= doubled"`, ``)+
				`<bpmn:extensionElements><zeebe:ioMapping><zeebe:output source="= got * 2" target="doubled"/></zeebe:ioMapping></bpmn:extensionElements>`+
				`<bpmn:startEvent id="ss"/>`+task("work", "w")+`<bpmn:endEvent id="se"><bpmn:terminateEventDefinition/></bpmn:endEvent>`+
				flows("ss", "work", "work", "se")+`</bpmn:subProcess>`))
			inst := start(t, e, map[string]any{"items": []any{1.0, 2.0, 3.0}})
			completeAll(t, e, func(j engine.Job) map[string]any { return map[string]any{"got": j.Variables["item"]} })
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, []any{2.0, 4.0, 6.0}, inst.Variables()["results"])
			assert.Equal(t, 4, count(inst, engine.ElementLeft, "act"))
			assert.Equal(t, 3, count(inst, engine.ElementLeft, "work"))
		})
	}
}

// callMI: process "p" calls "child" (one job of type c) from call activity
// "act" with the given loop characteristics, and a timer boundary event
// "b" (PT1H, interrupting) on it.
func callMI(characteristics string) string {
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">` +
		`<bpmn:process id="child" isExecutable="true"><bpmn:startEvent id="cs"/>` + task("cwork", "c") + `<bpmn:endEvent id="ce"/>` +
		flows("cs", "cwork", "cwork", "ce") + `</bpmn:process>` +
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/>` +
		`<bpmn:callActivity id="act"><bpmn:extensionElements><zeebe:calledElement processId="child"/></bpmn:extensionElements>` +
		characteristics + `</bpmn:callActivity>` + timerBoundary("b", "act", "true", `<bpmn:timeDuration>PT1H</bpmn:timeDuration>`) +
		`<bpmn:endEvent id="e"/><bpmn:endEvent id="late"/>` + flows("s", "act", "act", "e", "b", "late") + `</bpmn:process></bpmn:definitions>`
}

// TestMultiInstance_CallActivity calls one instance per element, each
// seeing its element; their results come back in order; an interrupting
// boundary event cancels every called instance still running.
func TestMultiInstance_CallActivity(t *testing.T) {
	mi := zeebeMI(false, `inputCollection="= items" inputElement="item" outputCollection="results" outputElement="= result"`, ``)
	t.Run("completes", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, callMI(mi))
		inst := start(t, e, map[string]any{"items": []any{1.0, 2.0, 3.0}})
		jobs := e.Jobs(engine.JobFilter{Type: "c"})
		require.Len(t, jobs, 3)
		for i := len(jobs) - 1; i >= 0; i-- {
			require.NotEqual(t, inst.Key(), jobs[i].InstanceKey)
			require.NoError(t, e.CompleteJob(ctxT(t), jobs[i].Key, map[string]any{"result": jobs[i].Variables["item"].(float64) * 10}))
		}
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		assert.Equal(t, []any{10.0, 20.0, 30.0}, inst.Variables()["results"])
		assert.NotContains(t, inst.Variables(), "result")
		assert.Equal(t, 3, count(inst, engine.CallStarted, "act"))
	})
	t.Run("interrupted", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, callMI(mi))
		inst := start(t, e, map[string]any{"items": []any{1.0, 2.0}})
		require.Len(t, e.Jobs(engine.JobFilter{Type: "c"}), 2)
		require.NoError(t, e.Advance(ctxT(t), time.Hour))
		require.NoError(t, e.Settle(ctxT(t)))
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, engine.Completed, st)
		assert.Equal(t, 1, count(inst, engine.ElementLeft, "late"))
		assert.Empty(t, e.Jobs(engine.JobFilter{}), "the called instances were cancelled")
		assert.Equal(t, 3, count(inst, engine.ElementTerminated, "act"))
	})
}

// TestStandardLoop_SubProcessAndCallActivity: each iteration of a looping
// sub-process or call activity waits for its content or called instance,
// and the loop condition sees what the iteration wrote.
func TestStandardLoop_SubProcessAndCallActivity(t *testing.T) {
	loop := `<bpmn:standardLoopCharacteristics><bpmn:loopCondition>= n &lt; 3</bpmn:loopCondition></bpmn:standardLoopCharacteristics>`
	for name, model := range map[string]string{
		"sub-process": miProcess(`<bpmn:subProcess id="act">` + loop + `<bpmn:startEvent id="ss"/>` + task("work", "c") +
			`<bpmn:endEvent id="se"/>` + flows("ss", "work", "work", "se") + `</bpmn:subProcess>`),
		"call activity": callMI(loop),
	} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, model)
			inst := start(t, e, map[string]any{"n": 0.0})
			for i := 1; i <= 3; i++ {
				j := jobOf(t, e, "c")
				require.NoError(t, e.CompleteJob(ctxT(t), j.Key, map[string]any{"n": float64(i)}))
				require.NoError(t, e.Settle(ctxT(t)))
			}
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, 3, count(inst, engine.ElementLeft, "act"), "one elementLeft per iteration")
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "e"))
		})
	}
}

// TestMultiInstance_EngineEvaluatedInner: inner instances that do not wait
// (a script the engine evaluates, a plain task) run one after another in
// turns, and collect what they computed.
func TestMultiInstance_EngineEvaluatedInner(t *testing.T) {
	for name, activity := range map[string]string{
		"script task": `<bpmn:scriptTask id="act"><bpmn:extensionElements><zeebe:script expression="= item * item" resultVariable="sq"/></bpmn:extensionElements>` +
			zeebeMI(false, `inputCollection="= items" inputElement="item" outputCollection="results" outputElement="= sq"`, ``) + `</bpmn:scriptTask>`,
		"plain task": `<bpmn:task id="act">` +
			zeebeMI(true, `inputCollection="= items" inputElement="item" outputCollection="results" outputElement="= item * item"`, ``) + `</bpmn:task>`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, miProcess(activity))
			inst := start(t, e, map[string]any{"items": []any{1.0, 2.0, 3.0}})
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, []any{1.0, 4.0, 9.0}, inst.Variables()["results"])
			assert.NotContains(t, inst.Variables(), "sq")
		})
	}
}

// TestMultiInstance_ReceiveTaskCorrelatesPerElement: each inner instance of
// a receive task subscribes with a correlation key computed from its own
// element, so messages complete them in any order.
func TestMultiInstance_ReceiveTaskCorrelatesPerElement(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(`<bpmn:message id="M" name="go"><bpmn:extensionElements><zeebe:subscription correlationKey="= item"/></bpmn:extensionElements></bpmn:message>`,
		`<bpmn:startEvent id="s"/><bpmn:receiveTask id="act" messageRef="M">`+
			zeebeMI(false, `inputCollection="= items" inputElement="item" outputCollection="got" outputElement="= v"`, ``)+
			`</bpmn:receiveTask><bpmn:endEvent id="e"/>`+flows("s", "act", "act", "e")))
	inst := start(t, e, map[string]any{"items": []any{"a", "b"}})
	for _, key := range []string{"b", "a"} {
		require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: key, Variables: map[string]any{"v": key + "!"}}))
		require.NoError(t, e.Settle(ctxT(t)))
	}
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, []any{"a!", "b!"}, inst.Variables()["got"])
}

// TestMultiInstance_Cancel: cancelling the instance terminates every inner
// instance, the content of inner sub-processes, and the body, and leaves
// nothing open.
func TestMultiInstance_Cancel(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, miProcess(`<bpmn:subProcess id="act">`+zeebeMI(false, `inputCollection="= items"`, ``)+
		`<bpmn:startEvent id="ss"/>`+task("work", "w")+`<bpmn:endEvent id="se"/>`+flows("ss", "work", "work", "se")+`</bpmn:subProcess>`))
	inst := start(t, e, map[string]any{"items": []any{1.0, 2.0}})
	require.NoError(t, inst.Cancel(ctxT(t)))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Terminated, st)
	var terminated []string
	for _, ev := range history(inst) {
		if ev.Type == engine.ElementTerminated {
			terminated = append(terminated, ev.ElementID)
		}
	}
	assert.Equal(t, []string{"work", "act", "work", "act", "act"}, terminated, "each instance's content, then the instance; the body last")
	assert.Equal(t, engine.Stats{}, e.Stats())
}

// TestMultiInstance_NestedAndEventSubProcess: a multi-instance task inside
// a multi-instance sub-process runs per outer and inner element; an error
// thrown inside one instance of the sub-process is caught by the event
// sub-process of that instance, not by its siblings or the body.
func TestMultiInstance_NestedAndEventSubProcess(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, miProcess(`<bpmn:subProcess id="act">`+
		zeebeMI(false, `inputCollection="= rows" inputElement="row" outputCollection="sums" outputElement="= sum(done)"`, ``)+
		`<bpmn:startEvent id="ss"/>`+
		miTask("cell", zeebeMI(false, `inputCollection="= row" inputElement="x" outputCollection="done" outputElement="= x"`, ``))+
		`<bpmn:endEvent id="se"/>`+flows("ss", "cell", "cell", "se")+
		`<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es"><bpmn:errorEventDefinition/></bpmn:startEvent><bpmn:endEvent id="ee"/>`+
		flows("es", "ee")+`</bpmn:subProcess></bpmn:subProcess>`))
	inst := start(t, e, map[string]any{"rows": []any{[]any{1.0, 2.0}, []any{3.0}}})
	jobs := e.Jobs(engine.JobFilter{Type: "w"})
	require.Len(t, jobs, 3)
	var second int64
	for _, j := range jobs {
		if j.Variables["x"] == 3.0 {
			second = j.Key
		}
	}
	require.NoError(t, e.ThrowError(ctxT(t), second, "E", "", nil))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "esp"), "the failing instance's event sub-process handled it")
	require.Equal(t, 2, completeAll(t, e, func(engine.Job) map[string]any { return nil }))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	// The second instance completed first, through its event
	// sub-process, before any row had its cells collected.
	assert.Equal(t, []any{3.0, nil}, inst.Variables()["sums"])
}

// TestMultiInstance_CompletionConditionIncident: a completion condition
// that cannot be evaluated holds the completing instance with an incident;
// resolving it evaluates the condition again.
func TestMultiInstance_CompletionConditionIncident(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, miProcess(miTask("act", `<bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>1</bpmn:loopCardinality>`+
		`<bpmn:completionCondition>${missing}</bpmn:completionCondition></bpmn:multiInstanceLoopCharacteristics>`)))
	inst := start(t, e, nil)
	require.Equal(t, 1, completeAll(t, e, func(engine.Job) map[string]any { return nil }))
	incs := incidents(inst)
	require.Len(t, incs, 1)
	assert.Equal(t, "act", incs[0].ElementID)
	assert.Contains(t, incs[0].Message, "completion condition")
	require.NoError(t, e.ResolveIncident(ctxT(t), incs[0].Key))
	require.NoError(t, e.Settle(ctxT(t)))
	require.Len(t, incidents(inst), 1, "still failing: a new incident")
	require.NoError(t, inst.Cancel(ctxT(t)))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Terminated, st)
	assert.Equal(t, engine.Stats{}, e.Stats())
}
