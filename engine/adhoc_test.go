package engine_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// sequentialAdHocXML is an ad-hoc sub-process that runs x, y and z one
// after another, then a job "after" that follows it.
const sequentialAdHocXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:adHocSubProcess id="adhoc" ordering="Sequential">
      <bpmn:extensionElements><zeebe:adHoc activeElementsCollection="= order"/></bpmn:extensionElements>
      <bpmn:serviceTask id="x"><bpmn:extensionElements><zeebe:taskDefinition type="x"/></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:serviceTask id="y"><bpmn:extensionElements><zeebe:taskDefinition type="y"/></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:serviceTask id="z"><bpmn:extensionElements><zeebe:taskDefinition type="z"/></bpmn:extensionElements></bpmn:serviceTask>
    </bpmn:adHocSubProcess>
    <bpmn:serviceTask id="after"><bpmn:extensionElements><zeebe:taskDefinition type="after"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="adhoc"/>
    <bpmn:sequenceFlow id="f2" sourceRef="adhoc" targetRef="after"/>
  </bpmn:process>
</bpmn:definitions>`

// adHocScope returns the ad-hoc state of the one instance's scope of
// element adhoc in a state document.
func adHocScope(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	for _, s := range m["instances"].([]any)[0].(map[string]any)["scopes"].([]any) {
		if sc := s.(map[string]any); sc["element"] == "adhoc" {
			ah, ok := sc["adHoc"].(map[string]any)
			require.True(t, ok, "the ad-hoc scope has no adHoc state: %v", sc)
			return ah
		}
	}
	t.Fatal("no scope of element adhoc")
	return nil
}

// A sequential ad-hoc sub-process keeps the elements it has still to
// activate in the state document, so a restored engine activates them in
// the same order and none twice.
func TestAdHoc_SequentialPendingSurvivesRestore(t *testing.T) {
	for name, mode := range map[string]engine.Resumption{"goroutines": engine.ResumeGoroutines, "direct": engine.ResumeDirect} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, engine.WithResumption(mode))
			deploy(t, e, sequentialAdHocXML)
			inst := start(t, e, map[string]any{"order": []any{"z", "x", "y"}})
			require.NoError(t, e.CompleteJob(ctxT(t), oneJob(t, e, "z").Key, nil))
			require.NoError(t, e.Settle(ctxT(t)))

			r, doc := restored(t, e, engine.WithResumption(mode))
			assert.Equal(t, map[string]any{"pending": []any{"y"}}, adHocScope(t, doc))
			assert.Empty(t, r.Jobs(engine.JobFilter{Type: "z"}), "z completed before the checkpoint")
			require.NoError(t, r.CompleteJob(ctxT(t), oneJob(t, r, "x").Key, nil))
			require.NoError(t, r.Settle(ctxT(t)))
			require.NoError(t, r.CompleteJob(ctxT(t), oneJob(t, r, "y").Key, nil))
			require.NoError(t, r.Settle(ctxT(t)))
			require.NoError(t, r.CompleteJob(ctxT(t), oneJob(t, r, "after").Key, nil))
			ri, ok := r.Instance(inst.Key())
			require.True(t, ok)
			state, err := ri.Wait(ctxT(t))
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, state)
		})
	}
}

// A document whose ad-hoc state names an element outside the ad-hoc
// sub-process, or sits on a scope that is none, is refused.
func TestAdHoc_RestoreRefusesBadState(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, sequentialAdHocXML)
	start(t, e, map[string]any{"order": []any{"x", "y"}})
	doc, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	edit := func(f func(scopes []any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(doc, &m))
		f(m["instances"].([]any)[0].(map[string]any)["scopes"].([]any))
		out, err := json.Marshal(m)
		require.NoError(t, err)
		return out
	}
	for _, tc := range []struct {
		name, want string
		doc        []byte
	}{
		{"pending outside", `pending element "after" is not inside ad-hoc sub-process "adhoc"`, edit(func(scopes []any) {
			for _, s := range scopes {
				if sc := s.(map[string]any); sc["element"] == "adhoc" {
					sc["adHoc"] = map[string]any{"pending": []any{"after"}}
				}
			}
		})},
		{"on the process scope", `scope 0: element "" is no ad-hoc sub-process`, edit(func(scopes []any) {
			scopes[0].(map[string]any)["adHoc"] = map[string]any{"met": true}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := engine.Restore(tc.doc)
			require.Error(t, err)
			assert.Nil(t, r)
			assert.True(t, errors.Is(err, engine.ErrBadState), "%v does not wrap ErrBadState", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// multiAdHocXML runs the ad-hoc sub-process once per item; each
// activation starts with nothing active.
const multiAdHocXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:adHocSubProcess id="adhoc">
      <bpmn:extensionElements><zeebe:adHoc activeElementsCollection="= []"/></bpmn:extensionElements>
      <bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>= n</bpmn:loopCardinality></bpmn:multiInstanceLoopCharacteristics>
      <bpmn:serviceTask id="x"><bpmn:extensionElements><zeebe:taskDefinition type="x"/></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:serviceTask id="y"><bpmn:extensionElements><zeebe:taskDefinition type="y"/></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:sequenceFlow id="fxy" sourceRef="x" targetRef="y"/>
    </bpmn:adHocSubProcess>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="adhoc"/>
    <bpmn:sequenceFlow id="f2" sourceRef="adhoc" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>`

// ActivateAdHoc refuses, as an invalid argument naming what is wrong,
// what it cannot activate, and an ended instance with ErrInstanceEnded.
func TestEngine_ActivateAdHoc_Errors(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, multiAdHocXML)
	one := start(t, e, map[string]any{"n": 1})
	two := start(t, e, map[string]any{"n": 2})
	for _, tc := range []struct {
		name     string
		inst     *engine.Instance
		adHoc    string
		elements []string
		want     string
	}{
		{"not an ad-hoc sub-process", one, "start", []string{"x"}, `has no active ad-hoc sub-process "start"`},
		{"no element", one, "adhoc", nil, "name at least one element"},
		{"element with incoming flow", one, "adhoc", []string{"y"}, `ad-hoc sub-process "adhoc" cannot activate "y": it activates its inner elements without incoming flows (x)`},
		{"unknown element", one, "adhoc", []string{"nope"}, `cannot activate "nope"`},
		{"multi-instance", two, "adhoc", []string{"x"}, `runs ad-hoc sub-process "adhoc" 2 times`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.ActivateAdHoc(ctxT(t), tc.inst.Key(), tc.adHoc, tc.elements)
			require.Error(t, err)
			assert.True(t, errors.Is(err, engine.ErrInvalidArgument), "%v does not match ErrInvalidArgument", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	err := e.ActivateAdHoc(ctxT(t), 999, "adhoc", []string{"x"})
	assert.True(t, errors.Is(err, engine.ErrUnknownInstance), "%v does not match ErrUnknownInstance", err)
	require.NoError(t, e.ActivateAdHoc(ctxT(t), one.Key(), "adhoc", []string{"x"}))
	require.NoError(t, e.Settle(ctxT(t)))
	require.NoError(t, e.CompleteJob(ctxT(t), oneJob(t, e, "x").Key, nil))
	require.NoError(t, e.Settle(ctxT(t)))
	require.NoError(t, e.CompleteJob(ctxT(t), oneJob(t, e, "y").Key, nil))
	state, err := one.Wait(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state)
	err = e.ActivateAdHoc(ctxT(t), one.Key(), "adhoc", []string{"x"})
	assert.True(t, errors.Is(err, engine.ErrInstanceEnded), "%v does not match ErrInstanceEnded", err)
}

// cutAdHocXML is an ad-hoc sub-process whose element a leads to a script
// task s (run by the engine, no wait) and a job b, beside job c; it
// completes once done holds.
const cutAdHocXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="d" targetNamespace="t">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:adHocSubProcess id="adhoc">
      <bpmn:extensionElements><zeebe:adHoc activeElementsCollection="= [&quot;a&quot;, &quot;c&quot;]"/></bpmn:extensionElements>
      <bpmn:serviceTask id="a"><bpmn:extensionElements><zeebe:taskDefinition type="a"/></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:scriptTask id="s"><bpmn:extensionElements><zeebe:script expression="= 1" resultVariable="scripted"/></bpmn:extensionElements></bpmn:scriptTask>
      <bpmn:serviceTask id="b"><bpmn:extensionElements><zeebe:taskDefinition type="b"/></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:serviceTask id="c"><bpmn:extensionElements><zeebe:taskDefinition type="c"/></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:sequenceFlow id="f_a_s" sourceRef="a" targetRef="s"/>
      <bpmn:sequenceFlow id="f_a_b" sourceRef="a" targetRef="b"/>
      <bpmn:completionCondition xsi:type="bpmn:tFormalExpression">= done</bpmn:completionCondition>
    </bpmn:adHocSubProcess>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="adhoc"/>
    <bpmn:sequenceFlow id="f2" sourceRef="adhoc" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>`

// When the completion condition holds as an element with outgoing flows
// completes (cancelRemainingInstances, the default), the flows are not
// taken: what they lead to is never entered, whether it waits (a job) or
// runs at once (a script, whose result is never written),
// and the other active elements are terminated.
func TestAdHoc_CompletionCutsTheCompletedElementsPath(t *testing.T) {
	for name, mode := range map[string]engine.Resumption{"goroutines": engine.ResumeGoroutines, "direct": engine.ResumeDirect} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, engine.WithResumption(mode))
			deploy(t, e, cutAdHocXML)
			inst := start(t, e, map[string]any{"done": false})
			require.NoError(t, e.CompleteJob(ctxT(t), oneJob(t, e, "a").Key, map[string]any{"done": true}))
			state, err := inst.Wait(ctxT(t))
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, state)
			for _, el := range []string{"s", "b"} {
				assert.Zero(t, count(inst, engine.ElementEntered, el), "%s entered", el)
				assert.Zero(t, count(inst, engine.ElementTerminated, el), "%s terminated", el)
			}
			assert.Equal(t, 1, count(inst, engine.ElementTerminated, "c"))
			assert.Equal(t, 1, count(inst, engine.ElementLeft, "a"))
			assert.NotContains(t, inst.Variables(), "scripted")
			assert.Empty(t, e.Jobs(engine.JobFilter{}))
		})
	}
}
