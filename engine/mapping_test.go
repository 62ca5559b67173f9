package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// A Camunda 8 (Zeebe) task with input and output mappings: inputs become
// the job's local variables, outputs alone reach the process scope.
var zeebeMappings = defs(``, `<bpmn:startEvent id="s"><bpmn:extensionElements><zeebe:ioMapping>`+
	`<zeebe:output source="= order.total * 2" target="doubled"/></zeebe:ioMapping></bpmn:extensionElements></bpmn:startEvent>`+
	`<bpmn:serviceTask id="charge"><bpmn:extensionElements><zeebe:taskDefinition type="charge"/><zeebe:ioMapping>`+
	`<zeebe:input source="= order.total" target="amount"/><zeebe:input source="= amount + 1" target="plusOne"/>`+
	`<zeebe:output source="= receipt.id" target="receiptId"/><zeebe:output source="= amount" target="order.charged"/>`+
	`</zeebe:ioMapping></bpmn:extensionElements></bpmn:serviceTask>`+
	`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="charge"/><bpmn:sequenceFlow id="f2" sourceRef="charge" targetRef="e"/>`)

func TestMappings_ZeebeInputsAndOutputs(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, zeebeMappings)
	inst := start(t, e, map[string]any{"order": map[string]any{"total": 21}})
	jobs := e.Jobs(engine.JobFilter{Type: "charge"})
	require.Len(t, jobs, 1)
	assert.Equal(t, 21.0, jobs[0].Variables["amount"], "inputs are local variables of the job")
	assert.Equal(t, 22.0, jobs[0].Variables["plusOne"], "later inputs see earlier ones")
	assert.NotContains(t, inst.Variables(), "amount", "inputs stay local")
	assert.Equal(t, 42.0, inst.Variables()["doubled"], "a start event's outputs apply when it is left")

	require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, map[string]any{"receipt": map[string]any{"id": "R-9"}, "noise": 1}))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	vars := inst.Variables()
	assert.Equal(t, "R-9", vars["receiptId"])
	assert.Equal(t, map[string]any{"total": 21.0, "charged": 21.0}, vars["order"], "a path target updates a copy of the object")
	assert.NotContains(t, vars, "noise", "with output mappings only their targets reach the process")
	assert.NotContains(t, vars, "receipt")
}

func TestMappings_OutputErrorKeepsJobOpen(t *testing.T) {
	e := newEngine(t)
	// JUEL (unlike FEEL, where a mismatch is null) fails on a missing variable.
	deploy(t, e, `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" `+
		`xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="t"><bpmn:process id="p" isExecutable="true">`+
		`<bpmn:startEvent id="s"/><bpmn:serviceTask id="t" camunda:type="external" camunda:topic="t"><bpmn:extensionElements>`+
		`<camunda:inputOutput><camunda:outputParameter name="next">${result + 1}</camunda:outputParameter></camunda:inputOutput>`+
		`</bpmn:extensionElements></bpmn:serviceTask><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t"/></bpmn:process></bpmn:definitions>`)
	inst := start(t, e, nil)
	j := e.Jobs(engine.JobFilter{})[0]
	err := e.CompleteJob(ctxT(t), j.Key, map[string]any{"outcome": 1})
	require.Error(t, err, "a mapping that cannot be evaluated is reported, not ignored")
	assert.Contains(t, err.Error(), "next")
	require.NoError(t, e.CompleteJob(ctxT(t), j.Key, map[string]any{"result": 1}))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, engine.Completed, st)
	assert.Equal(t, 2.0, inst.Variables()["next"])
}

// Camunda 7: external task topic as the job type, camunda:inputOutput with
// JUEL and literal parameters, asyncBefore ignored.
func TestMappings_Camunda7(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d7" targetNamespace="http://bpmn.io/schema/bpmn" exporter="Camunda Modeler" exporterVersion="5.17.0">
  <bpmn:process id="p" isExecutable="true" camunda:historyTimeToLive="180">
    <bpmn:startEvent id="s"><bpmn:outgoing>f1</bpmn:outgoing></bpmn:startEvent>
    <bpmn:serviceTask id="bill" camunda:type="external" camunda:topic="billing" camunda:asyncBefore="true">
      <bpmn:extensionElements><camunda:inputOutput>
        <camunda:inputParameter name="currency">EUR</camunda:inputParameter>
        <camunda:inputParameter name="net">${gross / 2}</camunda:inputParameter>
        <camunda:outputParameter name="invoiceNo">${invoice}</camunda:outputParameter>
      </camunda:inputOutput></bpmn:extensionElements>
      <bpmn:incoming>f1</bpmn:incoming><bpmn:outgoing>f2</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:exclusiveGateway id="g" default="low"><bpmn:incoming>f2</bpmn:incoming><bpmn:outgoing>high</bpmn:outgoing><bpmn:outgoing>low</bpmn:outgoing></bpmn:exclusiveGateway>
    <bpmn:endEvent id="eHigh"><bpmn:incoming>high</bpmn:incoming></bpmn:endEvent>
    <bpmn:endEvent id="eLow"><bpmn:incoming>low</bpmn:incoming></bpmn:endEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="bill"/>
    <bpmn:sequenceFlow id="f2" sourceRef="bill" targetRef="g"/>
    <bpmn:sequenceFlow id="high" sourceRef="g" targetRef="eHigh"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">${gross &gt; 100 &amp;&amp; not empty invoiceNo}</bpmn:conditionExpression></bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="low" sourceRef="g" targetRef="eLow"/>
  </bpmn:process>
</bpmn:definitions>`)
	inst := start(t, e, map[string]any{"gross": 300})
	jobs := e.Jobs(engine.JobFilter{Type: "billing"})
	require.Len(t, jobs, 1)
	assert.Equal(t, "EUR", jobs[0].Variables["currency"])
	assert.Equal(t, 150.0, jobs[0].Variables["net"])
	require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, map[string]any{"invoice": "INV-1"}))
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, engine.Completed, st)
	assert.Equal(t, "INV-1", inst.Variables()["invoiceNo"])
	assert.Contains(t, completed(inst), "eHigh")
}
