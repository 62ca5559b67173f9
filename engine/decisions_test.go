package engine_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

func discountDMN(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/discount.dmn")
	require.NoError(t, err)
	return data
}

// ruleTask is a process "p" whose business rule task "decide" has the
// given extension elements and attributes.
func ruleTask(attrs, ext string) string {
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="t">` +
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/>` +
		`<bpmn:businessRuleTask id="decide" ` + attrs + `><bpmn:extensionElements>` + ext + `</bpmn:extensionElements></bpmn:businessRuleTask>` +
		`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="decide"/>` +
		`<bpmn:sequenceFlow id="f2" sourceRef="decide" targetRef="e"/></bpmn:process></bpmn:definitions>`
}

func TestEngine_EvaluateDecision(t *testing.T) {
	e := newEngine(t)
	d, err := e.Deploy("discount.dmn", discountDMN(t))
	require.NoError(t, err)
	require.Len(t, d.Decisions, 4)
	assert.Equal(t, engine.Decision{ID: "discount", Name: "Discount", Version: 1, VersionTag: "v1", Resource: "discount.dmn"}, d.Decisions[0])

	res, err := e.EvaluateDecision(ctxT(t), "price", map[string]any{"customer": "gold", "order amount": 2000})
	require.NoError(t, err)
	assert.EqualValues(t, 1700, res.Output, "2000 less the first matching rule's 15%")
	assert.Equal(t, []engine.MatchedRule{{DecisionID: "discount", RuleID: "gold_big", RuleIndex: 1}}, res.MatchedRules,
		"FIRST stops at the first rule; the required decision's rules are listed")
	require.Len(t, res.Evaluated, 2)
	assert.Equal(t, "discount", res.Evaluated[0].DecisionID, "required decisions first")

	res, err = e.EvaluateDecision(ctxT(t), "fees", map[string]any{"order amount": 600})
	require.NoError(t, err)
	assert.Equal(t, []any{map[string]any{"name": "base", "fee": 2.0}, map[string]any{"name": "insurance", "fee": 5.0}}, res.Output)
	assert.Len(t, res.MatchedRules, 2)

	res, err = e.EvaluateDecision(ctxT(t), "strict", map[string]any{"order amount": 50})
	var de *engine.DecisionError
	require.ErrorAs(t, err, &de, "UNIQUE with two rules matching fails")
	assert.Contains(t, err.Error(), "UNIQUE")
	require.NotNil(t, res)
	assert.Nil(t, res.Output)

	_, err = e.EvaluateDecision(ctxT(t), "nope", nil)
	assert.ErrorIs(t, err, engine.ErrUnknownDecision)
}

func TestEngine_DeployDMNErrorsSayWhere(t *testing.T) {
	e := newEngine(t)
	bad := strings.Replace(string(discountDMN(t)), `&gt;= 1000`, `&gt;= `, 1)
	_, err := e.Deploy("bad.dmn", []byte(bad))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	require.Len(t, de.Problems, 1)
	assert.Equal(t, "bad.dmn", de.File)
	assert.Positive(t, de.Problems[0].Line)
	assert.Contains(t, de.Error(), "rule 1 input entry 2")

	bad = strings.Replace(string(discountDMN(t)), `hitPolicy="FIRST"`, `hitPolicy="SOMETIMES"`, 1)
	_, err = e.Deploy("bad.dmn", []byte(bad))
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Error(), `unknown hit policy "SOMETIMES"`)
	assert.Equal(t, 11, de.Problems[0].Line, "the decision table's line")

	bad = strings.Replace(string(discountDMN(t)), `#discount"`, `#nothing"`, 1)
	_, err = e.Deploy("bad.dmn", []byte(bad))
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Error(), "#nothing")
	assert.Empty(t, e.Decisions(), "nothing of a refused model is registered")
}

func TestBusinessRuleTask_Zeebe(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("discount.dmn", discountDMN(t))
	require.NoError(t, err)
	deploy(t, e, ruleTask("", `<zeebe:calledDecision decisionId="discount" resultVariable="d"/>`))
	inst := start(t, e, map[string]any{"customer": "gold", "order amount": 10})
	assert.Equal(t, engine.Completed, inst.State())
	vars := inst.Variables()
	assert.EqualValues(t, 0.1, vars["d"])
	var ev *engine.Event
	for _, x := range history(inst) {
		if x.Type == engine.DecisionEvaluated {
			ev = &x
		}
	}
	require.NotNil(t, ev, "history records the evaluation")
	assert.Equal(t, "decide", ev.ElementID)
	assert.Equal(t, "discount", ev.Name)
	assert.Equal(t, []any{map[string]any{"decisionId": "discount", "ruleId": "gold", "ruleIndex": 2}}, ev.Variables["matchedRules"])
	assert.EqualValues(t, 0.1, ev.Variables["result"])
	assert.Empty(t, e.Jobs(engine.JobFilter{}), "no job: the engine decided")
}

func TestBusinessRuleTask_FailureIsAnIncident(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, ruleTask("", `<zeebe:calledDecision decisionId="strict" resultVariable="size"/>`))
	inst := start(t, e, map[string]any{"order amount": 50})
	incs := incidents(inst)
	require.Len(t, incs, 1, "no decision deployed yet")
	assert.Contains(t, incs[0].Message, "strict")

	_, err := e.Deploy("discount.dmn", discountDMN(t))
	require.NoError(t, err)
	require.NoError(t, e.ResolveIncident(ctxT(t), incs[0].Key))
	require.NoError(t, e.Settle(ctxT(t)))
	incs = incidents(inst)
	require.Len(t, incs, 1, "UNIQUE matched two rules: a new incident")
	assert.Contains(t, incs[0].Message, "UNIQUE")

	inst = start(t, e, map[string]any{"order amount": 500})
	assert.Equal(t, engine.Completed, inst.State(), "one rule matches")
}

func TestBusinessRuleTask_Bindings(t *testing.T) {
	e := newEngine(t)
	v1 := discountDMN(t)
	v2 := []byte(strings.NewReplacer(`value="v1"`, `value="v2"`, `<text>0.1</text>`, `<text>0.2</text>`).Replace(string(v1)))
	proc := func(bind string) []byte {
		return []byte(ruleTask("", `<zeebe:calledDecision decisionId="discount" resultVariable="d" `+bind+`/>`))
	}
	_, err := e.DeployResources(engine.Resource{Name: "p.bpmn", Data: proc(`bindingType="deployment"`)}, engine.Resource{Name: "discount.dmn", Data: v1})
	require.NoError(t, err)
	_, err = e.Deploy("discount.dmn", v2)
	require.NoError(t, err)
	decs := e.Decisions()
	require.Len(t, decs, 8)
	assert.Equal(t, 2, decs[1].Version)

	run := func() any {
		inst := start(t, e, map[string]any{"customer": "gold", "order amount": 10})
		require.Equal(t, engine.Completed, inst.State(), incidents(inst))
		return inst.Variables()["d"]
	}
	assert.EqualValues(t, 0.1, run(), "deployment: the version deployed with the process")
	deploy(t, e, string(proc(`bindingType="latest"`)))
	assert.EqualValues(t, 0.2, run(), "latest")
	deploy(t, e, string(proc(`bindingType="versionTag" versionTag="v1"`)))
	assert.EqualValues(t, 0.1, run(), "versionTag")
	deploy(t, e, string(proc("")))
	assert.EqualValues(t, 0.2, run(), "latest by default")
}

func TestBusinessRuleTask_Camunda7MapDecisionResult(t *testing.T) {
	for _, tc := range []struct {
		decision, mapping string
		want              any
		fails             string
	}{
		{"discount", "singleEntry", 0.15, ""},
		{"discount", "singleResult", map[string]any{"discount": 0.15}, ""},
		{"discount", "collectEntries", []any{0.15}, ""},
		{"discount", "resultList", []any{map[string]any{"discount": 0.15}}, ""},
		{"fees", "resultList", []any{map[string]any{"name": "base", "fee": 2.0}, map[string]any{"name": "insurance", "fee": 5.0}}, ""},
		{"fees", "singleResult", nil, "not one"},
		{"fees", "collectEntries", nil, "not one"},
		{"price", "singleEntry", 1700.0, ""},
	} {
		t.Run(tc.decision+" "+tc.mapping, func(t *testing.T) {
			e := newEngine(t)
			_, err := e.Deploy("discount.dmn", discountDMN(t))
			require.NoError(t, err)
			deploy(t, e, ruleTask(`camunda:decisionRef="`+tc.decision+`" camunda:resultVariable="r" camunda:mapDecisionResult="`+tc.mapping+`"`, ""))
			inst := start(t, e, map[string]any{"customer": "gold", "order amount": 2000})
			if tc.fails != "" {
				incs := incidents(inst)
				require.Len(t, incs, 1)
				assert.Contains(t, incs[0].Message, tc.fails)
				return
			}
			require.Equal(t, engine.Completed, inst.State(), incidents(inst))
			assert.Equal(t, tc.want, inst.Variables()["r"])
		})
	}
}

func TestBusinessRuleTask_WithJobTypeStaysAJob(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, ruleTask("", `<zeebe:calledDecision decisionId="discount" resultVariable="d"/><zeebe:taskDefinition type="rules"/>`))
	inst := start(t, e, nil)
	assert.Len(t, e.Jobs(engine.JobFilter{Type: "rules"}), 1)
	assert.Equal(t, engine.Active, inst.State())
}

func TestBusinessRuleTask_DeployChecksTheCall(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("p.bpmn", []byte(ruleTask("", `<zeebe:calledDecision decisionId="discount"/>`)))
	var de *engine.DeployError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Contains(t, de.Error(), "resultVariable")
	_, err = e.Deploy("p.bpmn", []byte(ruleTask(`camunda:decisionRef="x" camunda:resultVariable="r" camunda:mapDecisionResult="everything"`, "")))
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Error(), "mapDecisionResult")
}

func TestDecisions_SurviveACheckpoint(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("discount.dmn", discountDMN(t))
	require.NoError(t, err)
	deploy(t, e, ruleTask("", `<zeebe:calledDecision decisionId="discount" resultVariable="d"/>`))
	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(ctxT(t)) })
	assert.Len(t, r.Decisions(), 4)
	inst, err := r.Start(ctxT(t), "p", map[string]any{"customer": "gold", "order amount": 10})
	require.NoError(t, err)
	require.NoError(t, r.Settle(ctxT(t)))
	assert.Equal(t, engine.Completed, inst.State(), incidents(inst))
}
