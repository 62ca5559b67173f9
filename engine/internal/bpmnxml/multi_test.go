package bpmnxml

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// TestImport_MultiInstance reads the three ways models write
// multi-instance characteristics into one model.MultiInstance, on tasks and
// sub-processes alike.
func TestImport_MultiInstance(t *testing.T) {
	const camunda = `xmlns:camunda="http://camunda.org/schema/1.0/bpmn" `
	for _, tc := range []struct {
		name, activity string
		want           model.MultiInstance
	}{
		{"zeebe", `<bpmn:serviceTask id="t"><bpmn:multiInstanceLoopCharacteristics isSequential="true"><bpmn:extensionElements>` +
			`<zeebe:loopCharacteristics inputCollection="= items" inputElement="item" outputCollection="out" outputElement="= r"/></bpmn:extensionElements>` +
			`<bpmn:completionCondition>= done</bpmn:completionCondition></bpmn:multiInstanceLoopCharacteristics></bpmn:serviceTask>`,
			model.MultiInstance{Sequential: true, Collection: model.Expression{Text: "= items"}, Element: "item",
				OutputCollection: "out", OutputElement: model.Expression{Text: "= r"}, CompletionCondition: model.Expression{Text: "= done"}}},
		{"camunda 7", `<bpmn:userTask id="t"><bpmn:multiInstanceLoopCharacteristics ` + camunda + `camunda:collection="${items}" camunda:elementVariable="item"/></bpmn:userTask>`,
			model.MultiInstance{Collection: model.Expression{Text: "${items}"}, Element: "item"}},
		{"cardinality on a sub-process", `<bpmn:subProcess id="t"><bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>3</bpmn:loopCardinality>` +
			`</bpmn:multiInstanceLoopCharacteristics><bpmn:startEvent id="ss"/></bpmn:subProcess>`,
			model.MultiInstance{Cardinality: model.Expression{Text: "3"}}},
		{"plain BPMN data items", `<bpmn:property id="items" name="items"/><bpmn:property id="p_out" name="out"/>` +
			`<bpmn:task id="t"><bpmn:multiInstanceLoopCharacteristics><bpmn:loopDataInputRef>items</bpmn:loopDataInputRef>` +
			`<bpmn:loopDataOutputRef>p_out</bpmn:loopDataOutputRef><bpmn:inputDataItem id="i1" name="item"/><bpmn:outputDataItem id="r"/>` +
			`</bpmn:multiInstanceLoopCharacteristics></bpmn:task>`,
			model.MultiInstance{Collection: model.Expression{Text: "items"}, Element: "item", OutputCollection: "out", OutputElement: model.Expression{Text: "r"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Import("t.bpmn", []byte(doc(`<bpmn:process id="p">`+tc.activity+`</bpmn:process>`)))
			require.NoError(t, err)
			n := d.Processes[0].Node("t")
			require.NotNil(t, n.Multi)
			assert.Equal(t, tc.want, *n.Multi)
		})
	}
}

// TestImport_MultiInstanceBehavior reads the events a multi-instance
// activity throws as its instances complete.
func TestImport_MultiInstanceBehavior(t *testing.T) {
	d, err := Import("t.bpmn", []byte(doc(`<bpmn:signal id="S" name="done"/><bpmn:signalEventDefinition id="sd" signalRef="S"/>`+
		`<bpmn:escalation id="E" escalationCode="UP"/>`+
		`<bpmn:process id="p"><bpmn:task id="one"><bpmn:multiInstanceLoopCharacteristics behavior="One" oneBehaviorEventRef="sd">`+
		`<bpmn:loopCardinality>2</bpmn:loopCardinality></bpmn:multiInstanceLoopCharacteristics></bpmn:task>`+
		`<bpmn:task id="complex"><bpmn:multiInstanceLoopCharacteristics behavior="Complex"><bpmn:loopCardinality>2</bpmn:loopCardinality>`+
		`<bpmn:complexBehaviorDefinition id="c1"><bpmn:condition>= true</bpmn:condition><bpmn:event id="ev"><bpmn:escalationEventDefinition escalationRef="E"/></bpmn:event></bpmn:complexBehaviorDefinition>`+
		`</bpmn:multiInstanceLoopCharacteristics></bpmn:task></bpmn:process>`)))
	require.NoError(t, err)
	p := d.Process("p")
	one := p.Node("one").Multi
	assert.Equal(t, "One", one.Behavior)
	require.NotNil(t, one.OneEvent)
	assert.Equal(t, "done", one.OneEvent.Signal.Name)
	assert.Nil(t, one.NoneEvent)
	cx := p.Node("complex").Multi
	require.Len(t, cx.ComplexBehaviors, 1)
	assert.Equal(t, "= true", cx.ComplexBehaviors[0].Condition.Text)
	assert.Equal(t, "UP", cx.ComplexBehaviors[0].Event.Escalation.Code)

	_, err = Import("t.bpmn", []byte(doc(`<bpmn:process id="p"><bpmn:task id="t"><bpmn:multiInstanceLoopCharacteristics behavior="None" noneBehaviorEventRef="nowhere">`+
		`<bpmn:loopCardinality>2</bpmn:loopCardinality></bpmn:multiInstanceLoopCharacteristics></bpmn:task></bpmn:process>`)))
	var pr *model.Problem
	require.ErrorAs(t, err, &pr)
	assert.Equal(t, "t", pr.ElementID)
}
