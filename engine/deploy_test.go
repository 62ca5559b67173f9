package engine_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestEngine_DeployMissingReference checks that an event definition whose
// optional reference is absent is rejected by Deploy with a DeployError
// naming the element, never a panic (issue 22 item 9: a top-level signal
// start event without signalRef crashed while registering start events).
func TestEngine_DeployMissingReference(t *testing.T) {
	for _, tc := range []struct {
		name, body, element string
	}{
		{"signal start", `<bpmn:startEvent id="s"><bpmn:signalEventDefinition/></bpmn:startEvent><bpmn:endEvent id="e"/>` +
			`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/>`, "s"},
		{"message start", `<bpmn:startEvent id="s"><bpmn:messageEventDefinition/></bpmn:startEvent><bpmn:endEvent id="e"/>` +
			`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/>`, "s"},
		{"signal throw", `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition/></bpmn:intermediateThrowEvent>` +
			`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="t"/>`, "t"},
		{"signal end", `<bpmn:startEvent id="s"/><bpmn:endEvent id="t"><bpmn:signalEventDefinition/></bpmn:endEvent>` +
			`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="t"/>`, "t"},
		{"signal boundary", `<bpmn:startEvent id="s"/><bpmn:userTask id="u"/><bpmn:boundaryEvent id="b" attachedToRef="u"><bpmn:signalEventDefinition/></bpmn:boundaryEvent>` +
			`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="u"/><bpmn:sequenceFlow id="f2" sourceRef="b" targetRef="e"/>`, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newEngine(t).Deploy("missing.bpmn", []byte(process(tc.body)))
			var de *engine.DeployError
			require.True(t, errors.As(err, &de), "got %v", err)
			assert.Equal(t, tc.element, de.ElementID)
		})
	}
}
