package engine_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// modifyModel wraps a process body with the BPMN and Zeebe namespaces.
func modifyModel(body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
<bpmn:message id="Msg" name="go"><bpmn:extensionElements><zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>
<bpmn:process id="p" isExecutable="true">` + body + `</bpmn:process></bpmn:definitions>`
}

func seqFlow(id, from, to string) string {
	return `<bpmn:sequenceFlow id="` + id + `" sourceRef="` + from + `" targetRef="` + to + `"/>`
}

// joinModel forks to tasks a and b and joins them with a gateway of kind.
func joinModel(kind string) string {
	return modifyModel(`<bpmn:startEvent id="start"/><bpmn:` + kind + ` id="fork"/>` + task("a", "a") + task("b", "b") +
		`<bpmn:` + kind + ` id="join"/><bpmn:endEvent id="end"/>` +
		seqFlow("f1", "start", "fork") + seqFlow("f2", "fork", "a") + seqFlow("f3", "fork", "b") +
		seqFlow("f4", "a", "join") + seqFlow("f5", "b", "join") + seqFlow("f6", "join", "end"))
}

func startModify(t *testing.T, xml string, vars map[string]any) (*engine.Engine, *engine.Instance) {
	t.Helper()
	e := newEngine(t)
	_, err := e.Deploy("m.bpmn", []byte(xml))
	require.NoError(t, err)
	inst, err := e.Start(ctxT(t), "p", vars)
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	return e, inst
}

// tokenAt returns the id of the token at element id.
func tokenAt(t *testing.T, inst *engine.Instance, id string) int {
	t.Helper()
	toks, err := inst.Tokens(ctxT(t))
	require.NoError(t, err)
	for _, tk := range toks {
		if tk.ElementID == id {
			return tk.ID
		}
	}
	t.Fatalf("no token at %s in %v", id, toks)
	return 0
}

func completeType(t *testing.T, e *engine.Engine, typ string) {
	t.Helper()
	jobs := e.Jobs(engine.JobFilter{Type: typ})
	require.NotEmpty(t, jobs, "jobs of type %s", typ)
	for _, j := range jobs {
		require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
	}
	require.NoError(t, e.Settle(ctxT(t)))
}

func terminated(inst *engine.Instance) []string {
	var out []string
	for _, ev := range history(inst) {
		if ev.Type == engine.ElementTerminated {
			out = append(out, ev.ElementID)
		}
	}
	return out
}

func TestEngine_ModifyInstance_ParallelJoin(t *testing.T) {
	e, inst := startModify(t, joinModel("parallelGateway"), nil)
	ctx := ctxT(t)
	// Restart b: a new token before b, the old one terminated.
	require.NoError(t, e.ModifyInstance(ctx, inst.Key(), engine.Modification{
		Activate:  []engine.Activation{{ElementID: "b", Variables: map[string]any{"again": true}}},
		Terminate: []int{tokenAt(t, inst, "b")},
	}))
	require.NoError(t, e.Settle(ctx))
	require.Equal(t, []string{"b"}, terminated(inst))
	require.Len(t, e.Jobs(engine.JobFilter{Type: "b"}), 1, "the old job was cancelled, a new one created")
	require.Equal(t, true, inst.Variables()["again"])
	completeType(t, e, "a")
	completeType(t, e, "b")
	state, err := inst.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state, "the join counted the new b")
}

func TestEngine_ModifyInstance_InclusiveJoin(t *testing.T) {
	xml := strings.ReplaceAll(joinModel("inclusiveGateway"), seqFlow("f2", "fork", "a"),
		`<bpmn:sequenceFlow id="f2" sourceRef="fork" targetRef="a"><bpmn:conditionExpression>= true</bpmn:conditionExpression></bpmn:sequenceFlow>`)
	xml = strings.ReplaceAll(xml, seqFlow("f3", "fork", "b"),
		`<bpmn:sequenceFlow id="f3" sourceRef="fork" targetRef="b"><bpmn:conditionExpression>= true</bpmn:conditionExpression></bpmn:sequenceFlow>`)
	e, inst := startModify(t, xml, nil)
	ctx := ctxT(t)
	require.NoError(t, e.ModifyInstance(ctx, inst.Key(), engine.Modification{Terminate: []int{tokenAt(t, inst, "b")}}))
	require.NoError(t, e.Settle(ctx))
	require.Empty(t, e.Jobs(engine.JobFilter{Type: "b"}))
	completeType(t, e, "a")
	state, err := inst.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state, "no token can reach b's flow any more: the join fires with a alone")
}

func TestEngine_ModifyInstance_EventGateway(t *testing.T) {
	xml := modifyModel(`<bpmn:startEvent id="start"/><bpmn:eventBasedGateway id="gate"/>
<bpmn:intermediateCatchEvent id="msg"><bpmn:messageEventDefinition messageRef="Msg"/></bpmn:intermediateCatchEvent>
<bpmn:intermediateCatchEvent id="timer"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>` +
		task("after", "after") + `<bpmn:endEvent id="end"/><bpmn:endEvent id="late"/>` +
		seqFlow("f1", "start", "gate") + seqFlow("f2", "gate", "msg") + seqFlow("f3", "gate", "timer") +
		seqFlow("f4", "msg", "after") + seqFlow("f5", "after", "end") + seqFlow("f6", "timer", "late"))
	e, inst := startModify(t, xml, map[string]any{"key": "k"})
	ctx := ctxT(t)
	require.Equal(t, 1, e.Stats().MessageSubscriptions)
	require.Equal(t, 1, e.Stats().Timers)
	// Skip the wait: the token moves past the gateway to "after".
	require.NoError(t, e.ModifyInstance(ctx, inst.Key(), engine.Modification{
		Activate:  []engine.Activation{{ElementID: "after"}},
		Terminate: []int{tokenAt(t, inst, "gate")},
	}))
	require.NoError(t, e.Settle(ctx))
	require.Equal(t, 0, e.Stats().MessageSubscriptions, "the gateway's arms were unsubscribed")
	require.Equal(t, 0, e.Stats().Timers)
	completeType(t, e, "after")
	state, err := inst.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state)
	require.Equal(t, []string{"gate"}, terminated(inst))
}

func TestEngine_ModifyInstance_SubProcess(t *testing.T) {
	e, inst := startModify(t, subJobXML, map[string]any{"amount": 1})
	ctx := ctxT(t)
	first := tokenAt(t, inst, "task")
	// A second token inside the open sub-process, then the first goes.
	require.NoError(t, e.ModifyInstance(ctx, inst.Key(), engine.Modification{
		Activate: []engine.Activation{{ElementID: "task", Variables: map[string]any{"retry": 1}}},
	}))
	require.NoError(t, e.Settle(ctx))
	require.Len(t, e.Jobs(engine.JobFilter{Type: "work"}), 2)
	require.NotContains(t, inst.Variables(), "retry", "activation variables are local to the sub-process scope")
	require.NoError(t, e.ModifyInstance(ctx, inst.Key(), engine.Modification{Terminate: []int{first}}))
	require.NoError(t, e.Settle(ctx))
	completeType(t, e, "work")
	state, err := inst.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state)
	require.Contains(t, completed(inst), "sub")

	// Terminating the last token inside a sub-process terminates the
	// sub-process, and with it the instance.
	_, other := startModifyOn(t, e, map[string]any{"amount": 1})
	require.NoError(t, e.ModifyInstance(ctx, other.Key(), engine.Modification{Terminate: []int{tokenAt(t, other, "task")}}))
	state, err = other.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Terminated, state)
	require.Equal(t, []string{"task", "sub"}, terminated(other))
}

func startModifyOn(t *testing.T, e *engine.Engine, vars map[string]any) (*engine.Engine, *engine.Instance) {
	t.Helper()
	inst, err := e.Start(ctxT(t), "p", vars)
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	return e, inst
}

func TestEngine_ModifyInstance_Refused(t *testing.T) {
	e, inst := startModify(t, joinModel("parallelGateway"), nil)
	ctx := ctxT(t)
	before, err := inst.Tokens(ctx)
	require.NoError(t, err)
	for name, m := range map[string]engine.Modification{
		"unknown element": {Activate: []engine.Activation{{ElementID: "nope"}}},
		"start event":     {Activate: []engine.Activation{{ElementID: "start"}}},
		"unknown token":   {Activate: []engine.Activation{{ElementID: "a"}}, Terminate: []int{99}},
		"token twice":     {Terminate: []int{before[0].ID, before[0].ID}},
		"scope at top":    {Activate: []engine.Activation{{ElementID: "a", Scope: 1}}},
	} {
		err := e.ModifyInstance(ctx, inst.Key(), m)
		require.ErrorIs(t, err, engine.ErrBadModification, name)
	}
	require.NoError(t, e.Settle(ctx))
	after, err := inst.Tokens(ctx)
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing of a refused modification is applied")
	require.ErrorIs(t, e.ModifyInstance(ctx, 424242, engine.Modification{}), engine.ErrUnknownInstance)
}

// entered lists the elements the instance's history shows entered.
func entered(inst *engine.Instance) []string {
	var out []string
	for _, ev := range history(inst) {
		if ev.Type == engine.ElementEntered {
			out = append(out, ev.ElementID)
		}
	}
	return out
}

// TestEngine_ModifyInstance_JoiningGateway: an activated joining gateway
// receives the token as on the incoming flow that has none waiting, so
// moving b's token onto the join completes it.
func TestEngine_ModifyInstance_JoiningGateway(t *testing.T) {
	for _, kind := range []string{"parallelGateway", "inclusiveGateway"} {
		t.Run(kind, func(t *testing.T) {
			e, inst := startModify(t, joinModel(kind), nil)
			ctx := ctxT(t)
			completeType(t, e, "a") // a's token waits at the join
			require.NoError(t, e.ModifyInstance(ctx, inst.Key(), engine.Modification{
				Activate:  []engine.Activation{{ElementID: "join"}},
				Terminate: []int{tokenAt(t, inst, "b")},
			}))
			state, err := inst.Wait(ctx)
			require.NoError(t, err)
			require.Equal(t, engine.Completed, state, "the activated token filled b's flow")
			require.Equal(t, []string{"b"}, terminated(inst))
			require.Equal(t, 1, strings.Count(strings.Join(entered(inst), ","), "join"), "the join fired once")
		})
	}

	// Alone, the activated token waits at the parallel join for the other
	// flow, as a token that came on one flow does.
	e, inst := startModify(t, joinModel("parallelGateway"), nil)
	ctx := ctxT(t)
	require.NoError(t, e.ModifyInstance(ctx, inst.Key(), engine.Modification{
		Activate:  []engine.Activation{{ElementID: "join"}},
		Terminate: []int{tokenAt(t, inst, "a")},
	}))
	require.NoError(t, e.Settle(ctx))
	require.Equal(t, engine.Active, inst.State())
	completeType(t, e, "b")
	state, err := inst.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state, "b's token joined the activated one")
}

// nestedSubXML runs "before", then sub-process outer holding sub-process
// inner holding task "deep", with an input mapping on outer.
var nestedSubXML = modifyModel(`<bpmn:startEvent id="start"/>` + task("before", "before") +
	`<bpmn:subProcess id="outer"><bpmn:extensionElements><zeebe:ioMapping><zeebe:input source="= 7" target="fromOuter"/></zeebe:ioMapping></bpmn:extensionElements>
<bpmn:startEvent id="outerStart"/>` + task("first", "first") + `<bpmn:subProcess id="inner"><bpmn:startEvent id="innerStart"/>` + task("deep", "deep") +
	`<bpmn:endEvent id="innerEnd"/>` + seqFlow("i1", "innerStart", "deep") + seqFlow("i2", "deep", "innerEnd") + `</bpmn:subProcess>
<bpmn:endEvent id="outerEnd"/>` + seqFlow("o1", "outerStart", "first") + seqFlow("o2", "first", "inner") + seqFlow("o3", "inner", "outerEnd") + `</bpmn:subProcess>
<bpmn:endEvent id="end"/>` + seqFlow("f1", "start", "before") + seqFlow("f2", "before", "outer") + seqFlow("f3", "outer", "end"))

// TestEngine_ModifyInstance_CreatesScopes: activating an element whose
// sub-processes are not open enters them first, as Zeebe creates missing
// flow scopes: their inputs apply, their start events do not run, and
// two activations share the scope they create.
func TestEngine_ModifyInstance_CreatesScopes(t *testing.T) {
	e, inst := startModify(t, nestedSubXML, nil)
	ctx := ctxT(t)
	require.NoError(t, e.ModifyInstance(ctx, inst.Key(), engine.Modification{
		Activate: []engine.Activation{
			{ElementID: "deep", Variables: map[string]any{"note": "moved"}},
			{ElementID: "deep"},
		},
		Terminate: []int{tokenAt(t, inst, "before")},
	}))
	require.NoError(t, e.Settle(ctx))
	require.Equal(t, []string{"start", "before", "outer", "inner", "deep", "deep"}, entered(inst),
		"outer and inner entered once each, without their start events or first")
	jobs := e.Jobs(engine.JobFilter{Type: "deep"})
	require.Len(t, jobs, 2)
	for _, j := range jobs {
		require.EqualValues(t, 7, j.Variables["fromOuter"], "outer's input mapping applied")
		require.Equal(t, "moved", j.Variables["note"])
	}
	require.NotContains(t, inst.Variables(), "note", "activation variables are local to the created scope")
	completeType(t, e, "deep")
	state, err := inst.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Completed, state)
	require.Subset(t, completed(inst), []string{"inner", "outer"})

	// With a scope named, nothing is created.
	_, other := startModifyOn(t, e, nil)
	err = e.ModifyInstance(ctx, other.Key(), engine.Modification{Activate: []engine.Activation{{ElementID: "deep", Scope: 99}}})
	require.ErrorIs(t, err, engine.ErrBadModification)
	require.ErrorContains(t, err, "inner")
}

// TestEngine_ModifyInstance_CreatedScopeIncident: a sub-process entered
// for an activation whose boundary timer cannot be set holds an incident,
// as when a token enters it, and nothing starts inside it.
func TestEngine_ModifyInstance_CreatedScopeIncident(t *testing.T) {
	xml := strings.Replace(nestedSubXML, `<bpmn:endEvent id="end"/>`, `<bpmn:endEvent id="end"/>`+timerBoundary("late", "outer", "true", "<bpmn:timeDuration>= when</bpmn:timeDuration>")+`<bpmn:endEvent id="lateEnd"/>`+seqFlow("fl", "late", "lateEnd"), 1)
	e, inst := startModify(t, xml, map[string]any{"when": "not a duration"})
	ctx := ctxT(t)
	require.NoError(t, e.ModifyInstance(ctx, inst.Key(), engine.Modification{
		Activate:  []engine.Activation{{ElementID: "deep"}},
		Terminate: []int{tokenAt(t, inst, "before")},
	}))
	require.NoError(t, e.Settle(ctx))
	incs, err := e.Incidents(ctx)
	require.NoError(t, err)
	require.Len(t, incs, 1)
	require.Equal(t, "outer", incs[0].ElementID)
	require.Empty(t, e.Jobs(engine.JobFilter{Type: "deep"}))
	require.Equal(t, engine.Active, inst.State())
}
