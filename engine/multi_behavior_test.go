package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// behaviorDefs: process "p" runs a parallel multi-instance job task
// "work" (type "w", three instances) with the multi-instance attributes
// attrs, and a non-interrupting signal boundary event "b" for signal
// "done" leading to end event "seen".
func behaviorDefs(decls, attrs string) string {
	return defs(`<bpmn:signal id="S" name="done"/><bpmn:signalEventDefinition id="sd" signalRef="S"/>`+decls,
		`<bpmn:startEvent id="s"/><bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="w"/></bpmn:extensionElements>`+
			`<bpmn:multiInstanceLoopCharacteristics `+attrs+`><bpmn:loopCardinality>3</bpmn:loopCardinality></bpmn:multiInstanceLoopCharacteristics></bpmn:serviceTask>`+
			`<bpmn:boundaryEvent id="b" attachedToRef="work" cancelActivity="false"><bpmn:signalEventDefinition signalRef="S"/></bpmn:boundaryEvent>`+
			`<bpmn:endEvent id="e"/><bpmn:endEvent id="seen"/>`+flows("s", "work", "work", "e", "b", "seen"))
}

func TestMultiInstanceBehavior_OneThrowsOnceAcrossCheckpoint(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, behaviorDefs(``, `behavior="One" oneBehaviorEventRef="sd"`))
	inst := start(t, e, nil)
	jobs := e.Jobs(engine.JobFilter{Type: "w"})
	require.Len(t, jobs, 3)
	require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, nil))
	require.NoError(t, e.Settle(ctxT(t)))
	assert.Equal(t, 1, count(inst, engine.SignalBroadcast, "work"), "the first completion throws")

	// Whether it has thrown is state: a restored engine does not throw again.
	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(ctxT(t)) })
	for _, j := range r.Jobs(engine.JobFilter{Type: "w"}) {
		require.NoError(t, r.CompleteJob(ctxT(t), j.Key, nil))
	}
	restored, ok := r.Instance(inst.Key())
	require.True(t, ok)
	st, _ := restored.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, 1, count(restored, engine.SignalBroadcast, "work"))
	assert.Equal(t, 1, count(restored, engine.ElementLeft, "seen"))
}

func TestMultiInstanceBehavior_AllAndDefaultThrowNothing(t *testing.T) {
	for _, attrs := range []string{``, `behavior="All"`, `behavior="None"`} {
		t.Run(attrs, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, behaviorDefs(``, attrs))
			inst := start(t, e, nil)
			for _, j := range e.Jobs(engine.JobFilter{Type: "w"}) {
				require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
			}
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Zero(t, count(inst, engine.SignalBroadcast, "work"), "without an event reference nothing is thrown")
		})
	}
}

func TestMultiInstanceBehavior_DeployErrors(t *testing.T) {
	for _, tc := range []struct{ name, decls, attrs, rule string }{
		{"message event", `<bpmn:message id="M" name="m"/><bpmn:messageEventDefinition id="md" messageRef="M"/>`,
			`behavior="None" noneBehaviorEventRef="md"`, "a multi-instance activity's behavior throws signals and escalations"},
		{"unnamed signal", `<bpmn:signalEventDefinition id="anon"/>`, `behavior="One" oneBehaviorEventRef="anon"`, "needs a name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			_, err := e.Deploy("b.bpmn", []byte(behaviorDefs(tc.decls, tc.attrs)))
			var de *engine.DeployError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, "work", de.ElementID)
			assert.Contains(t, de.Rule, tc.rule)
		})
	}
}
