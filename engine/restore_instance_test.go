package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

const stopSignal = `<bpmn:signal id="Sig_stop" name="stop"/>`

// callXML: process "parent" calls "child", which waits on a job "work".
var callXML = `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
	`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">` +
	`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/>` +
	`<bpmn:callActivity id="call"><bpmn:extensionElements><zeebe:calledElement processId="child"/></bpmn:extensionElements></bpmn:callActivity>` +
	task("after", "after") + `<bpmn:endEvent id="e"/>` + flows("s", "call", "call", "after", "after", "e") + `</bpmn:process>` +
	`<bpmn:process id="child" isExecutable="true"><bpmn:startEvent id="cs"/>` + task("cw", "work") + `<bpmn:endEvent id="ce"/>` +
	flows("cs", "cw", "cw", "ce") + `</bpmn:process></bpmn:definitions>`

// restoreCase is one wait kind: a model, what happens on the source
// engine before the checkpoint, and the input that finishes the instance
// after it, given the same on the source and on the engine it moved to.
type restoreCase struct {
	name   string
	xml    string
	vars   map[string]any
	before func(t *testing.T, e *engine.Engine, inst *engine.Instance)
	drive  func(t *testing.T, e *engine.Engine, inst *engine.Instance)
}

// completeJobOf completes the open job of type typ of the instance key.
func completeJobOf(t *testing.T, e *engine.Engine, key int64, typ string, vars map[string]any) {
	t.Helper()
	require.NoError(t, e.Settle(ctxT(t)))
	jobs := e.Jobs(engine.JobFilter{Type: typ, InstanceKey: key})
	require.Len(t, jobs, 1, "job %s of instance %d", typ, key)
	require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, vars))
}

// childOf returns the key of the instance the call activity of inst runs:
// the called instance with the lowest key above inst's, since instances
// started before inst called theirs before it.
func childOf(t *testing.T, e *engine.Engine, inst *engine.Instance) int64 {
	t.Helper()
	require.NoError(t, e.Settle(ctxT(t)))
	child := int64(0)
	for _, j := range e.Jobs(engine.JobFilter{Type: "work"}) {
		if j.ProcessID == "child" && j.InstanceKey > inst.Key() && (child == 0 || j.InstanceKey < child) {
			child = j.InstanceKey
		}
	}
	require.NotZero(t, child, "instance %d calls no child", inst.Key())
	return child
}

var restoreCases = []restoreCase{
	{name: "job", xml: defs("", `<bpmn:startEvent id="s"/>`+task("a", "work")+`<bpmn:endEvent id="e"/>`+flows("s", "a", "a", "e")),
		drive: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			completeJobOf(t, e, inst.Key(), "work", map[string]any{"done": true})
		}},
	{name: "message", xml: catchProcess, vars: map[string]any{"key": "k1"},
		drive: func(t *testing.T, e *engine.Engine, _ *engine.Instance) {
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k1", Variables: map[string]any{"m": 1.0}}))
		}},
	{name: "signal", xml: defs(stopSignal, `<bpmn:startEvent id="s"/><bpmn:intermediateCatchEvent id="w"><bpmn:signalEventDefinition signalRef="Sig_stop"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "w", "w", "e")),
		drive: func(t *testing.T, e *engine.Engine, _ *engine.Instance) {
			require.NoError(t, e.BroadcastSignal(ctxT(t), "stop", nil))
		}},
	{name: "timer", xml: defs("", `<bpmn:startEvent id="s"/><bpmn:intermediateCatchEvent id="w"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "w", "w", "e")),
		drive: func(t *testing.T, e *engine.Engine, _ *engine.Instance) {
			require.NoError(t, e.Advance(ctxT(t), time.Hour))
		}},
	{name: "conditional", xml: strings.Replace(defs("", `<bpmn:startEvent id="s"/><bpmn:intermediateCatchEvent id="w"><bpmn:conditionalEventDefinition>`+
		`<bpmn:condition xsi:type="bpmn:tFormalExpression">= x &gt; 5</bpmn:condition></bpmn:conditionalEventDefinition></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "w", "w", "e")), `<bpmn:definitions `, `<bpmn:definitions xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" `, 1),
		vars: map[string]any{"x": 1.0},
		drive: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			require.NoError(t, e.SetVariables(ctxT(t), inst.Key(), map[string]any{"x": 9.0}, engine.Scope{}))
		}},
	{name: "event gateway", xml: gatewayThenJobProcess, vars: map[string]any{"key": "k1"},
		drive: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			require.NoError(t, e.BroadcastSignal(ctxT(t), "stop", nil))
			completeJobOf(t, e, inst.Key(), "after", nil)
		}},
	{name: "parallel join", xml: defs("", `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>`+task("a", "a")+task("b", "b")+
		`<bpmn:parallelGateway id="join"/><bpmn:endEvent id="e"/>`+flows("s", "fork", "fork", "a", "fork", "b", "a", "join", "b", "join", "join", "e")),
		before: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			completeJobOf(t, e, inst.Key(), "a", map[string]any{"a": 1.0}) // one token waits at the join
		},
		drive: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			completeJobOf(t, e, inst.Key(), "b", map[string]any{"b": 2.0})
		}},
	{name: "inclusive join", xml: strings.Replace(defs("", `<bpmn:startEvent id="s"/><bpmn:inclusiveGateway id="fork"/>`+task("a", "a")+task("b", "b")+task("c", "c")+
		`<bpmn:inclusiveGateway id="join"/><bpmn:endEvent id="e"/>`+flows("s", "fork", "a", "join", "b", "join", "c", "join", "join", "e")+
		`<bpmn:sequenceFlow id="toA" sourceRef="fork" targetRef="a"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">= true</bpmn:conditionExpression></bpmn:sequenceFlow>`+
		`<bpmn:sequenceFlow id="toB" sourceRef="fork" targetRef="b"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">= true</bpmn:conditionExpression></bpmn:sequenceFlow>`+
		`<bpmn:sequenceFlow id="toC" sourceRef="fork" targetRef="c"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">= false</bpmn:conditionExpression></bpmn:sequenceFlow>`),
		`<bpmn:definitions `, `<bpmn:definitions xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" `, 1),
		before: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			completeJobOf(t, e, inst.Key(), "a", nil) // waits at the OR-join for b, not for c
		},
		drive: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			completeJobOf(t, e, inst.Key(), "b", nil)
		}},
	{name: "sub-process with a boundary timer", xml: defs("", `<bpmn:startEvent id="s"/><bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/>`+task("in", "work")+
		`<bpmn:endEvent id="se"/>`+flows("ss", "in", "in", "se")+`</bpmn:subProcess>`+
		`<bpmn:boundaryEvent id="late" attachedToRef="sub"><bpmn:timerEventDefinition><bpmn:timeDuration>PT2H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:endEvent id="eLate"/>`+flows("s", "sub", "sub", "e", "late", "eLate")),
		drive: func(t *testing.T, e *engine.Engine, _ *engine.Instance) {
			require.NoError(t, e.Advance(ctxT(t), 2*time.Hour))
		}},
	{name: "event sub-process", xml: defs(goMessage, `<bpmn:startEvent id="s"/>`+task("main", "work")+`<bpmn:endEvent id="e"/>`+flows("s", "main", "main", "e")+
		`<bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="es" isInterrupting="false"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:startEvent>`+
		task("side", "side")+`<bpmn:endEvent id="ee"/>`+flows("es", "side", "side", "ee")+`</bpmn:subProcess>`),
		vars: map[string]any{"key": "k1"},
		drive: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "go", CorrelationKey: "k1"}))
			completeJobOf(t, e, inst.Key(), "side", nil)
			completeJobOf(t, e, inst.Key(), "work", nil)
		}},
	{name: "incident", xml: defs("", `<bpmn:startEvent id="s"/>`+task("a", "work")+`<bpmn:endEvent id="e"/>`+flows("s", "a", "a", "e")),
		before: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			jobs := e.Jobs(engine.JobFilter{Type: "work", InstanceKey: inst.Key()})
			require.Len(t, jobs, 1)
			require.NoError(t, e.FailJob(ctxT(t), jobs[0].Key, 0, "no stock"))
		},
		drive: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			all, err := e.Incidents(ctxT(t))
			require.NoError(t, err)
			var mine []engine.Incident
			for _, in := range all {
				if in.InstanceKey == inst.Key() {
					mine = append(mine, in)
				}
			}
			require.Len(t, mine, 1)
			require.NoError(t, e.ResolveIncident(ctxT(t), mine[0].Key))
			jobs := e.Jobs(engine.JobFilter{Type: "work", InstanceKey: inst.Key()})
			require.Len(t, jobs, 1)
			require.Equal(t, mine[0].JobKey, jobs[0].Key, "the incident names the job by its key in this engine")
			require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, nil))
		}},
	{name: "call activity", xml: callXML,
		drive: func(t *testing.T, e *engine.Engine, inst *engine.Instance) {
			completeJobOf(t, e, childOf(t, e, inst), "work", map[string]any{"fromChild": true})
			completeJobOf(t, e, inst.Key(), "after", nil)
		}},
}

// TestEngine_RestoreInstance: an instance moved into an engine in use
// (which already holds instances of its own, waiting on the same kinds of
// event) goes on there for every wait kind exactly as it goes on where it
// was: the same records in the same order, the same end and variables.
func TestEngine_RestoreInstance(t *testing.T) {
	for _, m := range modes {
		for _, c := range restoreCases {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				ctx := ctxT(t)
				src := newEngine(t, engine.WithResumption(m.r))
				deploy(t, src, c.xml)
				var other *engine.Instance
				for range 6 { // the source's keys run ahead of the target's
					other = start(t, src, map[string]any{"key": "other", "x": 1.0})
				}
				inst := start(t, src, c.vars)
				if c.before != nil {
					c.before(t, src, inst)
					require.NoError(t, src.Settle(ctx))
				}
				doc, err := src.CheckpointInstance(ctx, inst.Key())
				require.NoError(t, err)

				dst := newEngine(t, engine.WithResumption(m.r))
				deploy(t, dst, c.xml)
				mine := start(t, dst, map[string]any{"key": "mine", "x": 1.0})
				moved, err := dst.RestoreInstance(ctx, doc)
				require.NoError(t, err)
				require.Equal(t, inst.Key(), moved.Key(), "an instance keeps its key")
				_, err = dst.RestoreInstance(ctx, doc)
				require.ErrorIs(t, err, engine.ErrKeyInUse, "restored twice")
				assert.Len(t, dst.Definitions(), strings.Count(c.xml, `isExecutable="true"`), "the same source is not deployed again")

				c.drive(t, src, inst)
				c.drive(t, dst, moved)
				require.NoError(t, src.Settle(ctx))
				require.NoError(t, dst.Settle(ctx))
				want, err := inst.Wait(ctx)
				require.NoError(t, err)
				got, err := moved.Wait(ctx)
				require.NoError(t, err)
				assert.Equal(t, engine.Completed, want)
				assert.Equal(t, want, got)
				assert.Equal(t, inst.Variables(), moved.Variables())
				assert.Equal(t, steps(history(inst)), steps(history(moved)), "the same records in the same order")
				assert.Equal(t, steps(history(other)), steps(history(mine)), "the engine's own instance saw the same input as one beside the original")
			})
		}
	}
}

// steps is a history without keys and times: record types and elements.
func steps(h []engine.Event) []string {
	out := make([]string, len(h))
	for i, ev := range h {
		out[i] = string(ev.Type) + " " + ev.ElementID
	}
	return out
}

// TestEngine_RestoreInstance_Refused: documents RestoreInstance must not
// take leave the engine as it was.
func TestEngine_RestoreInstance_Refused(t *testing.T) {
	ctx := ctxT(t)
	src := newEngine(t)
	deploy(t, src, callXML)
	parent := start(t, src, nil)
	doc, err := src.CheckpointInstance(ctx, childOf(t, src, parent))
	require.NoError(t, err)

	var d map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc, &d))
	var insts []map[string]any
	require.NoError(t, json.Unmarshal(d["instances"], &insts))
	require.Len(t, insts, 2, "the document holds the whole call tree")
	var orphan []map[string]any
	for _, i := range insts {
		if _, called := i["parent"]; called {
			orphan = append(orphan, i)
		}
	}
	d["instances"], err = json.Marshal(orphan)
	require.NoError(t, err)
	orphanDoc, err := json.Marshal(d)
	require.NoError(t, err)

	dst := newEngine(t)
	_, err = dst.RestoreInstance(ctx, orphanDoc)
	require.ErrorIs(t, err, engine.ErrBadState, "a called instance without its caller")
	assert.Contains(t, err.Error(), "caller")
	_, err = dst.RestoreInstance(ctx, []byte(`{"format":"flowtrack-state","version":2,"clock":{"now":"2026-01-01T00:00:00Z"},"lastKey":0,"deployments":[],"hub":{"lastSubscription":0},"instances":[]}`))
	require.ErrorIs(t, err, engine.ErrBadState, "no instance")
	_, err = dst.RestoreInstance(ctx, []byte(`{"format":"flowtrack-state","version":99}`))
	require.ErrorIs(t, err, engine.ErrBadState)
	assert.Empty(t, dst.Jobs(engine.JobFilter{}), "nothing added")

	// The one left works: restored, it goes on.
	moved, err := dst.RestoreInstance(ctx, doc)
	require.NoError(t, err)
	require.Equal(t, parent.Key(), moved.Key(), "the handle of the tree's top instance")
	completeJobOf(t, dst, childOf(t, dst, moved), "work", nil)
	completeJobOf(t, dst, moved.Key(), "after", nil)
	st, err := moved.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st)
}

// FuzzRestoreInstance feeds RestoreInstance one-instance documents mutated
// from a real one, into an engine in use: it must refuse what it cannot
// take with ErrBadState, ErrKeyInUse or a *DeployError, never panic, and
// leave the engine as it was when it refuses.
func FuzzRestoreInstance(f *testing.F) {
	ctx := context.Background()
	src, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		f.Fatal(err)
	}
	defer src.Close(ctx)
	if _, err := src.Deploy("p.bpmn", []byte(twoStepsXML)); err != nil {
		f.Fatal(err)
	}
	for range 3 {
		if _, err := src.Start(ctx, "p", map[string]any{"key": "k1"}); err != nil {
			f.Fatal(err)
		}
	}
	inst, err := src.Start(ctx, "p", map[string]any{"key": "k2"})
	if err != nil {
		f.Fatal(err)
	}
	doc, err := src.CheckpointInstance(ctx, inst.Key())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	f.Add([]byte(strings.Replace(string(doc), `"at":"waitState"`, `"at":"join"`, 1)))
	f.Add([]byte(strings.Replace(string(doc), `"parent":-1`, `"parent":3`, 1)))
	f.Fuzz(func(t *testing.T, doc []byte) {
		e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(engine.ResumeDirect))
		require.NoError(t, err)
		defer e.Close(ctx)
		_, err = e.Deploy("p.bpmn", []byte(twoStepsXML))
		require.NoError(t, err)
		mine, err := e.Start(ctx, "p", map[string]any{"key": "k1"})
		require.NoError(t, err)
		before := e.Stats()
		_, err = e.RestoreInstance(ctx, doc)
		if err == nil {
			return
		}
		var de *engine.DeployError
		if !errors.Is(err, engine.ErrBadState) && !errors.Is(err, engine.ErrKeyInUse) && !errors.As(err, &de) {
			t.Fatalf("unexpected error: %v", err)
		}
		if de == nil {
			require.Equal(t, before, e.Stats(), "refused: nothing added")
		}
		require.Equal(t, engine.Active, mine.State())
	})
}
