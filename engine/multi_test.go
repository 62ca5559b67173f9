package engine_test

import (
	"testing"

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
