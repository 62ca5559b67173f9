package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// pokeMessage is the message "poke" keyed by variable key.
const pokeMessage = `<bpmn:message id="Msg_poke" name="poke"><bpmn:extensionElements>` +
	`<zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>`

// pokeBoundary is a message boundary event "poke" on activity on.
func pokeBoundary(id, on string, interrupting bool) string {
	cancel := "false"
	if interrupting {
		cancel = "true"
	}
	return `<bpmn:boundaryEvent id="` + id + `" attachedToRef="` + on + `" cancelActivity="` + cancel + `">` +
		`<bpmn:messageEventDefinition messageRef="Msg_poke"/></bpmn:boundaryEvent>`
}

// besideJoin is start → a → join (inclusive) → after (job) → end, where
// activity a (given as XML, with its boundary events) is also linked to
// the join by boundary event b: the token of a boundary event appears
// beside the activity's, not on a sequence-flow path from it.
func besideJoin(activity string) string {
	return defs(pokeMessage, `<bpmn:startEvent id="s"/>`+activity+
		`<bpmn:inclusiveGateway id="join"/>`+task("after", "after")+`<bpmn:endEvent id="end"/>`+
		flows("s", "a", "a", "join", "b", "join", "join", "after", "after", "end"))
}

// TestInclusiveJoin_BesideAnActivity: BPMN 2.0 §13.4.3 as corrected by
// BPMN2-289. A non-interrupting boundary event's token arrives at the
// inclusive join while the activity's own token can still reach the
// join's other, empty, incoming flow, and no sequence-flow path leads
// that token to the filled one: the join waits, then fires once for both.
// The same holds whatever kind of activity the boundary event is on.
func TestInclusiveJoin_BesideAnActivity(t *testing.T) {
	for _, tc := range []struct {
		name     string
		activity string
		// poke fires the boundary event; finish completes a (its jobs).
		poke   bool
		finish []string
	}{
		{"task", task("a", "a") + pokeBoundary("b", "a", false), true, []string{"a"}},
		{"sub-process", `<bpmn:subProcess id="a"><bpmn:startEvent id="as"/>` + task("inner", "a") + `<bpmn:endEvent id="ae"/>` +
			flows("as", "inner", "inner", "ae") + `</bpmn:subProcess>` + pokeBoundary("b", "a", false), true, []string{"a"}},
		{"multi-instance body", `<bpmn:serviceTask id="a"><bpmn:extensionElements><zeebe:taskDefinition type="a"/></bpmn:extensionElements>` +
			`<bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>2</bpmn:loopCardinality></bpmn:multiInstanceLoopCharacteristics></bpmn:serviceTask>` +
			pokeBoundary("b", "a", false), true, []string{"a", "a"}},
		{"escalation from inside a sub-process", `<bpmn:subProcess id="a"><bpmn:startEvent id="as"/>` +
			`<bpmn:intermediateThrowEvent id="up"><bpmn:escalationEventDefinition escalationRef="Esc_up"/></bpmn:intermediateThrowEvent>` +
			task("inner", "a") + `<bpmn:endEvent id="ae"/>` + flows("as", "up", "up", "inner", "inner", "ae") + `</bpmn:subProcess>` +
			`<bpmn:boundaryEvent id="b" attachedToRef="a" cancelActivity="false"><bpmn:escalationEventDefinition escalationRef="Esc_up"/></bpmn:boundaryEvent>`,
			false, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			doc := besideJoin(tc.activity)
			doc = doc[:len(doc)-len(`</bpmn:definitions>`)] + `<bpmn:escalation id="Esc_up" escalationCode="up"/></bpmn:definitions>`
			deploy(t, e, doc)
			inst := start(t, e, map[string]any{"key": "k"})
			if tc.poke {
				require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "poke", CorrelationKey: "k"}))
				require.NoError(t, e.Settle(ctxT(t)))
			}
			require.Equal(t, 1, count(inst, engine.ElementLeft, "b"), "the boundary event fired")
			assert.Empty(t, e.Jobs(engine.JobFilter{Type: "after"}), "the join fired while a's own token could still reach it")
			for _, typ := range tc.finish {
				require.NoError(t, e.CompleteJob(ctxT(t), e.Jobs(engine.JobFilter{Type: typ})[0].Key, nil))
				require.NoError(t, e.Settle(ctxT(t)))
			}
			require.Len(t, e.Jobs(engine.JobFilter{Type: "after"}), 1, "one merged activation")
			complete(t, e, "after")
			state, err := inst.Wait(ctxT(t))
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, state)
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "join"))
			assert.Equal(t, 1, count(inst, engine.TokenMerged, "join"))
		})
	}
}

// TestInclusiveJoin_InterruptingBoundaryMovesTheToken: an interrupting
// boundary event takes the activity's token onto its own flow, so the
// join, waiting for that token, fires once when it arrives there.
func TestInclusiveJoin_InterruptingBoundaryMovesTheToken(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, besideJoin(task("a", "a")+pokeBoundary("b", "a", true)))
	inst := start(t, e, map[string]any{"key": "k"})
	assert.Empty(t, e.Jobs(engine.JobFilter{Type: "after"}))
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "poke", CorrelationKey: "k"}))
	complete(t, e, "after")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "join"))
	assert.Zero(t, count(inst, engine.TokenMerged, "join"))
	assert.Zero(t, count(inst, engine.ElementLeft, "a"), "a was interrupted")
}

// TestInclusiveJoin_BoundaryOnlyPathStillWaits: an activity whose only
// way to an empty incoming flow of the join is a non-interrupting
// boundary event still holds the join while it runs (the boundary event
// may fire); once it completes without firing, the join fires.
func TestInclusiveJoin_BoundaryOnlyPathStillWaits(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(pokeMessage, `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+task("a", "a")+pokeBoundary("b", "a", false)+
		`<bpmn:endEvent id="done"/><bpmn:inclusiveGateway id="join"/>`+task("after", "after")+`<bpmn:endEvent id="end"/>`+
		flows("s", "fork", "fork", "join", "fork", "a", "a", "done", "b", "join", "join", "after", "after", "end")))
	inst := start(t, e, map[string]any{"key": "k"})
	assert.Empty(t, e.Jobs(engine.JobFilter{Type: "after"}), "a's boundary event may still put a token on b_join")
	complete(t, e, "a")
	require.Len(t, e.Jobs(engine.JobFilter{Type: "after"}), 1)
	complete(t, e, "after")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
}

// TestInclusiveJoin_EventSubProcessAndCompensationDoNotHoldIt: tokens of
// an event sub-process and of a compensation handler run beside the
// join's scope but feed none of its flows: the join neither waits for
// them nor fires early because of them. Here the join waits for the
// compensation throw (which waits for its handler), not for the handler
// itself, and never for the event sub-process.
func TestInclusiveJoin_EventSubProcessAndCompensationDoNotHoldIt(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, defs(pokeMessage, `<bpmn:startEvent id="s"/>`+compensated("work")+
		`<bpmn:inclusiveGateway id="split"/><bpmn:intermediateThrowEvent id="undo">`+compensateThrow+`</bpmn:intermediateThrowEvent>`+
		`<bpmn:inclusiveGateway id="join"/>`+task("after", "after")+`<bpmn:endEvent id="end"/>`+
		`<bpmn:subProcess id="side" triggeredByEvent="true"><bpmn:startEvent id="side_s" isInterrupting="false">`+
		`<bpmn:messageEventDefinition messageRef="Msg_poke"/></bpmn:startEvent>`+task("note", "note")+`<bpmn:endEvent id="side_e"/>`+
		flows("side_s", "note", "note", "side_e")+`</bpmn:subProcess>`+
		flows("s", "work", "work", "split", "split", "undo", "split", "join", "undo", "join", "join", "after", "after", "end")))
	inst := start(t, e, map[string]any{"key": "k"})
	require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "poke", CorrelationKey: "k"}))
	complete(t, e, "work")
	assert.ElementsMatch(t, []string{"note", "undo-work"}, jobTypes(e), "the join waits for the compensation throw")
	complete(t, e, "undo-work")
	assert.ElementsMatch(t, []string{"note", "after"}, jobTypes(e), "the event sub-process's token does not hold the join")
	complete(t, e, "after")
	complete(t, e, "note")
	state, err := inst.Wait(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, state)
	assert.Equal(t, 1, count(inst, engine.ElementLeft, "join"))
}
