package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// subJobXML runs a job inside a sub-process whose input mapping gives it a
// local variable "inner", then decides on "amount" at an exclusive gateway.
const subJobXML = `<?xml version="1.0" encoding="UTF-8"?>
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

func TestEngine_SetVariables(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	_, err := e.Deploy("sub.bpmn", []byte(subJobXML))
	require.NoError(t, err)
	inst, err := e.Start(ctx, "p", map[string]any{"customer": "ana"})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctx))
	toks, err := inst.Tokens(ctx)
	require.NoError(t, err)
	var subToken int
	for _, tk := range toks {
		if tk.ElementID == "sub" {
			require.Equal(t, engine.WaitScope, tk.Waiting)
			subToken = tk.ID
		}
	}
	require.NotZero(t, subToken)
	sub := engine.Scope{Token: subToken}

	// Local: into the sub-process's own variables, invisible outside.
	require.NoError(t, e.SetVariables(ctx, inst.Key(), map[string]any{"note": "checked"}, engine.Scope{Token: subToken, Local: true}))
	own, err := e.ScopeVariables(ctx, inst.Key(), engine.Scope{Token: subToken, Local: true})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"inner": 1.0, "note": "checked"}, own)
	require.NotContains(t, inst.Variables(), "note")
	var updated []engine.Event
	for _, ev := range history(inst) {
		if ev.Type == engine.VariablesUpdated {
			updated = append(updated, ev)
		}
	}
	require.Len(t, updated, 1, "the history records what was set, and where")
	require.Equal(t, subToken, updated[0].TokenID)
	require.Equal(t, map[string]any{"note": "checked"}, updated[0].Variables)

	// Propagating: a variable the sub-process holds stays there; a new one
	// goes to the process scope.
	require.NoError(t, e.SetVariables(ctx, inst.Key(), map[string]any{"inner": 2, "amount": 50}, sub))
	own, err = e.ScopeVariables(ctx, inst.Key(), engine.Scope{Token: subToken, Local: true})
	require.NoError(t, err)
	require.Equal(t, 2.0, own["inner"])
	require.NotContains(t, own, "amount")
	seen, err := e.ScopeVariables(ctx, inst.Key(), sub)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"customer": "ana", "inner": 2.0, "note": "checked", "amount": 50.0}, seen)
	require.Equal(t, map[string]any{"customer": "ana", "amount": 50.0}, inst.Variables())

	// On the process scope, and the gateway decides on what was set.
	require.NoError(t, e.SetVariables(ctx, inst.Key(), map[string]any{"amount": 500}, engine.Scope{}))
	require.NoError(t, e.CompleteJob(ctx, e.Jobs(engine.JobFilter{})[0].Key, nil))
	state, err := inst.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state)
	require.Contains(t, completed(inst), "big")

	require.ErrorIs(t, e.SetVariables(ctx, inst.Key(), map[string]any{"x": 1}, engine.Scope{}), engine.ErrInstanceEnded)
	require.ErrorIs(t, e.SetVariables(ctx, 999_999, map[string]any{"x": 1}, engine.Scope{}), engine.ErrUnknownInstance)
}

func TestEngine_SetVariables_FixesAnIncident(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	_, err := e.Deploy("sub.bpmn", []byte(subJobXML))
	require.NoError(t, err)
	inst, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctx))
	toks, err := inst.Tokens(ctx)
	require.NoError(t, err)
	for _, tk := range toks {
		if tk.ElementID == "task" {
			err := e.SetVariables(ctx, inst.Key(), map[string]any{"x": 1}, engine.Scope{Token: tk.ID})
			require.ErrorIs(t, err, engine.ErrUnknownScope, "a task's token holds no scope")
			require.ErrorContains(t, err, "task")
		}
	}
	require.ErrorIs(t, e.SetVariables(ctx, inst.Key(), map[string]any{"x": 1}, engine.Scope{Token: 4242}), engine.ErrUnknownScope)
	require.ErrorIs(t, e.SetVariables(ctx, inst.Key(), map[string]any{"x": make(chan int)}, engine.Scope{}), engine.ErrBadVariables)

	// No amount: the gateway cannot decide, an incident holds the token.
	require.NoError(t, e.CompleteJob(ctx, e.Jobs(engine.JobFilter{})[0].Key, nil))
	require.NoError(t, e.Settle(ctx))
	incs, err := inst.Incidents(ctx)
	require.NoError(t, err)
	require.Len(t, incs, 1)
	require.Equal(t, "gw", incs[0].ElementID)
	require.NoError(t, e.SetVariables(ctx, inst.Key(), map[string]any{"amount": 7}, engine.Scope{}))
	require.NoError(t, e.ResolveIncident(ctx, incs[0].Key))
	state, err := inst.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state)
	require.Contains(t, completed(inst), "small")
}

func TestEngine_FindIncidents(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	_, err := e.Deploy("sub.bpmn", []byte(subJobXML))
	require.NoError(t, err)
	atGateway, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	atJob, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctx))
	for _, j := range e.Jobs(engine.JobFilter{}) {
		if j.InstanceKey == atGateway.Key() {
			require.NoError(t, e.CompleteJob(ctx, j.Key, nil)) // no amount: the gateway cannot decide
		} else {
			require.NoError(t, e.FailJob(ctx, j.Key, 0, "down"))
		}
	}
	require.NoError(t, e.Settle(ctx))

	find := func(f engine.IncidentFilter) []int64 {
		incs, err := e.FindIncidents(f)
		require.NoError(t, err)
		var keys []int64
		for _, inc := range incs {
			keys = append(keys, inc.InstanceKey)
		}
		return keys
	}
	require.ElementsMatch(t, []int64{atGateway.Key(), atJob.Key()}, find(engine.IncidentFilter{}))
	require.Equal(t, []int64{atJob.Key()}, find(engine.IncidentFilter{Type: engine.IncidentJob}))
	require.Equal(t, []int64{atGateway.Key()}, find(engine.IncidentFilter{Type: engine.IncidentElement}))
	require.Equal(t, []int64{atGateway.Key()}, find(engine.IncidentFilter{ElementID: "gw"}))
	require.Equal(t, []int64{atJob.Key()}, find(engine.IncidentFilter{InstanceKey: atJob.Key(), ElementID: "task"}))
	require.Empty(t, find(engine.IncidentFilter{InstanceKey: atJob.Key(), Type: engine.IncidentElement}))
	_, err = e.FindIncidents(engine.IncidentFilter{Type: "bogus"})
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
}
