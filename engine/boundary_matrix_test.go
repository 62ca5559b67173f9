package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestBoundary_Matrix covers every boundary kind, interrupting and not, on
// a job task and on a sub-process holding a job, each also as a parallel
// multi-instance activity of two instances (the boundary events are the
// body's). After the instance ends, nothing may be left open: no job,
// subscription, timer or incident.
func TestBoundary_Matrix(t *testing.T) {
	decls := goMessage + `<bpmn:signal id="Sig" name="stop"/><bpmn:error id="Err" errorCode="E1"/><bpmn:escalation id="Esc" escalationCode="UP"/>`
	definitions := map[string]string{
		"timer":      `<bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>`,
		"message":    `<bpmn:messageEventDefinition messageRef="Msg_go"/>`,
		"signal":     `<bpmn:signalEventDefinition signalRef="Sig"/>`,
		"error":      `<bpmn:errorEventDefinition errorRef="Err"/>`,
		"escalation": `<bpmn:escalationEventDefinition escalationRef="Esc"/>`,
	}
	trigger := map[string]func(t *testing.T, e *engine.Engine){
		"timer": func(t *testing.T, e *engine.Engine) { require.NoError(t, e.Advance(ctxT(t), time.Hour)) },
		"message": func(t *testing.T, e *engine.Engine) {
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k"}))
		},
		"signal": func(t *testing.T, e *engine.Engine) { require.NoError(t, e.BroadcastSignal(ctxT(t), "stop", nil)) },
		"error": func(t *testing.T, e *engine.Engine) {
			require.NoError(t, e.ThrowError(ctxT(t), firstJob(t, e, "act").Key, "E1", "", nil))
		},
		// The sub-process throws the escalation once its first job is done.
		"escalation": func(t *testing.T, e *engine.Engine) {
			require.NoError(t, e.CompleteJob(ctxT(t), firstJob(t, e, "act").Key, nil))
		},
	}
	for _, kind := range []string{"timer", "message", "signal", "error", "escalation"} {
		for _, interrupting := range []bool{true, false} {
			for _, on := range []string{"task", "subProcess", "multiTask", "multiSubProcess"} {
				multi := strings.HasPrefix(on, "multi")
				if kind == "error" && !interrupting || kind == "escalation" && (on == "task" || on == "multiTask") {
					continue // an error always interrupts; only a sub-process can raise an escalation here
				}
				name := kind + "/" + map[bool]string{true: "interrupting", false: "non-interrupting"}[interrupting] + "/" + on
				t.Run(name, func(t *testing.T) {
					var activity, characteristics string
					if multi {
						characteristics = `<bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>2</bpmn:loopCardinality></bpmn:multiInstanceLoopCharacteristics>`
					}
					if on == "subProcess" || on == "multiSubProcess" {
						inner := task("act", "act") + `<bpmn:endEvent id="se"/>` + flows("ss", "act")
						if kind == "escalation" {
							inner += `<bpmn:intermediateThrowEvent id="up"><bpmn:escalationEventDefinition escalationRef="Esc"/></bpmn:intermediateThrowEvent>` +
								task("more", "more") + flows("act", "up", "up", "more", "more", "se")
						} else {
							inner += flows("act", "se")
						}
						activity = `<bpmn:subProcess id="activity">` + characteristics + `<bpmn:startEvent id="ss"/>` + inner + `</bpmn:subProcess>`
					} else {
						activity = `<bpmn:serviceTask id="activity"><bpmn:extensionElements><zeebe:taskDefinition type="act"/></bpmn:extensionElements>` +
							characteristics + `</bpmn:serviceTask>`
					}
					cancel := map[bool]string{true: "true", false: "false"}[interrupting]
					e := newEngine(t)
					deploy(t, e, defs(decls, `<bpmn:startEvent id="s"/>`+activity+
						`<bpmn:boundaryEvent id="b" attachedToRef="activity" cancelActivity="`+cancel+`">`+definitions[kind]+`</bpmn:boundaryEvent>`+
						`<bpmn:endEvent id="normal"/><bpmn:endEvent id="handled"/>`+flows("s", "activity", "activity", "normal", "b", "handled")))
					inst := start(t, e, map[string]any{"key": "k"})
					trigger[kind](t, e)
					require.NoError(t, e.Settle(ctxT(t)))
					assert.Equal(t, 1, count(inst, engine.ElementLeft, "handled"), "the boundary path ran")
					if interrupting {
						terminated := 1
						if multi {
							terminated = 3 // both inner instances, then the body
						}
						assert.Equal(t, terminated, count(inst, engine.ElementTerminated, "activity"))
					} else {
						// The activity goes on: finish its remaining work.
						for _, typ := range []string{"act", "more", "act", "more"} {
							for _, j := range e.Jobs(engine.JobFilter{Type: typ}) {
								require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
								require.NoError(t, e.Settle(ctxT(t)))
							}
						}
						assert.Equal(t, 1, count(inst, engine.ElementLeft, "normal"), "the activity completed normally too")
					}
					st, _ := inst.Wait(ctxT(t))
					require.Equal(t, engine.Completed, st)
					assert.Equal(t, engine.Stats{}, e.Stats(), "nothing is left open")
				})
			}
		}
	}
}

// firstJob returns the oldest open job of type typ, once the engine has
// settled.
func firstJob(t *testing.T, e *engine.Engine, typ string) engine.Job {
	t.Helper()
	require.NoError(t, e.Settle(ctxT(t)))
	jobs := e.Jobs(engine.JobFilter{Type: typ})
	require.NotEmpty(t, jobs, "jobs of type %s", typ)
	return jobs[0]
}
