package host_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// subScopeXML runs a job inside a sub-process with a local variable
// "inner", then decides on "amount" at an exclusive gateway.
const subScopeXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:subProcess id="sub">
      <bpmn:extensionElements><zeebe:ioMapping><zeebe:input source="= 1" target="inner"/></zeebe:ioMapping></bpmn:extensionElements>
      <bpmn:startEvent id="subStart"/>
      <bpmn:serviceTask id="task"><bpmn:extensionElements><zeebe:taskDefinition type="work"/></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:endEvent id="subEnd"/>
      <bpmn:sequenceFlow id="s1" sourceRef="subStart" targetRef="task"/>
      <bpmn:sequenceFlow id="s2" sourceRef="task" targetRef="subEnd"/>
    </bpmn:subProcess>
    <bpmn:exclusiveGateway id="gw"/>
    <bpmn:endEvent id="big"/>
    <bpmn:endEvent id="small"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="sub"/>
    <bpmn:sequenceFlow id="f2" sourceRef="sub" targetRef="gw"/>
    <bpmn:sequenceFlow id="f3" sourceRef="gw" targetRef="big"><bpmn:conditionExpression>= amount &gt; 100</bpmn:conditionExpression></bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="f4" sourceRef="gw" targetRef="small"><bpmn:conditionExpression>= amount &lt;= 100</bpmn:conditionExpression></bpmn:sequenceFlow>
  </bpmn:process>
</bpmn:definitions>`

// TestEngine_SetVariables sets variables locally and propagating on a
// sub-process scope through the module, and fixes a gateway incident.
func TestEngine_SetVariables(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "sub.bpmn", []byte(subScopeXML))
	require.NoError(t, err)
	key, err := e.Start(ctx, "p", map[string]any{"customer": "ana"})
	require.NoError(t, err)
	toks, err := e.Tokens(ctx, key)
	require.NoError(t, err)
	sub := 0
	for _, tk := range toks {
		if tk.ElementID == "sub" {
			sub = tk.ID
		}
	}
	require.NotZero(t, sub)
	require.NoError(t, e.SetVariables(ctx, key, map[string]any{"note": "x"}, engine.Scope{Token: sub, Local: true}))
	require.NoError(t, e.SetVariables(ctx, key, map[string]any{"inner": 2, "flag": true}, engine.Scope{Token: sub}))
	own, err := e.ScopeVariables(ctx, key, engine.Scope{Token: sub, Local: true})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"inner": 2.0, "note": "x"}, own)
	vars, err := e.Variables(ctx, key)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"customer": "ana", "flag": true}, vars)
	require.ErrorIs(t, e.SetVariables(ctx, key, map[string]any{"a": 1}, engine.Scope{Token: 999}), engine.ErrUnknownScope)

	jobs, err := e.Jobs(ctx, engine.JobFilter{})
	require.NoError(t, err)
	require.NoError(t, e.CompleteJob(ctx, jobs[0].Key, nil))
	incs, err := e.FindIncidents(ctx, engine.IncidentFilter{InstanceKey: key, ElementID: "gw", Type: engine.IncidentElement})
	require.NoError(t, err)
	require.Len(t, incs, 1, "no amount: the gateway cannot decide")
	none, err := e.FindIncidents(ctx, engine.IncidentFilter{Type: engine.IncidentJob})
	require.NoError(t, err)
	require.Empty(t, none)
	_, err = e.FindIncidents(ctx, engine.IncidentFilter{Type: "bogus"})
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
	require.NoError(t, e.SetVariables(ctx, key, map[string]any{"amount": 1000}, engine.Scope{}))
	require.NoError(t, e.ResolveIncident(ctx, incs[0].Key))
	state, err := e.State(ctx, key)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state)
}

// parallelXML forks to jobs "a" and "b" and joins them.
const parallelXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="par" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:parallelGateway id="fork"/>
    <bpmn:serviceTask id="a"><bpmn:extensionElements><zeebe:taskDefinition type="a"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:serviceTask id="b"><bpmn:extensionElements><zeebe:taskDefinition type="b"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:parallelGateway id="join"/>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="fork"/>
    <bpmn:sequenceFlow id="f2" sourceRef="fork" targetRef="a"/>
    <bpmn:sequenceFlow id="f3" sourceRef="fork" targetRef="b"/>
    <bpmn:sequenceFlow id="f4" sourceRef="a" targetRef="join"/>
    <bpmn:sequenceFlow id="f5" sourceRef="b" targetRef="join"/>
    <bpmn:sequenceFlow id="f6" sourceRef="join" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>`

// TestEngine_ModifyInstance restarts one branch before a parallel join
// through the module (direct resumption), and refuses a bad change whole.
func TestEngine_ModifyInstance(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "par.bpmn", []byte(parallelXML))
	require.NoError(t, err)
	key, err := e.Start(ctx, "par", nil)
	require.NoError(t, err)
	toks, err := e.Tokens(ctx, key)
	require.NoError(t, err)
	atB := 0
	for _, tk := range toks {
		if tk.ElementID == "b" {
			atB = tk.ID
		}
	}
	err = e.ModifyInstance(ctx, key, engine.Modification{Activate: []engine.Activation{{ElementID: "start"}}, Terminate: []int{atB}})
	require.ErrorIs(t, err, engine.ErrBadModification)
	require.ErrorContains(t, err, "start")
	require.NoError(t, e.ModifyInstance(ctx, key, engine.Modification{
		Activate: []engine.Activation{{ElementID: "b", Variables: map[string]any{"again": true}}}, Terminate: []int{atB}}))
	jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: key})
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	for _, j := range jobs {
		require.NoError(t, e.CompleteJob(ctx, j.Key, nil))
	}
	state, err := e.State(ctx, key)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state)
	vars, err := e.Variables(ctx, key)
	require.NoError(t, err)
	require.Equal(t, true, vars["again"])
}
