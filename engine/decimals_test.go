package engine_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// Numbers keep their exact decimal value (testdata/decimals.bpmn) through mappings, job variables,
// job results, messages and a checkpoint: a float64 where one holds the
// value exactly (0.1 + 0.2 is the float64 0.3), a json.Number with every
// digit otherwise (RATIONALE.md, "How do decimals cross the runtime and
// the ABI?").
func TestDecimals_ExactThroughTheEngine(t *testing.T) {
	for _, mode := range []engine.Resumption{engine.ResumeGoroutines, engine.ResumeDirect} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			e := newEngine(t, engine.WithResumption(mode))
			deployFile(t, e, "decimals.bpmn")
			inst, err := e.Start(ctxT(t), "decimals", map[string]any{"big": json.Number("12345678901234567890")})
			require.NoError(t, err)
			require.NoError(t, e.Settle(ctxT(t)))

			vars := inst.Variables()
			assert.Equal(t, 0.3, vars["sum"], "0.1 + 0.2 is exactly 0.3, a float64")
			assert.Equal(t, 1005.0, vars["scaled"], "1.005 * 1000 is exactly 1005")
			assert.Equal(t, json.Number("0.3333333333333333333333333333333333"), vars["third"], "1/3 at decimal128's 34 digits")
			assert.Equal(t, json.Number("12345678901234567890"), vars["big"], "an integer above 2^53 keeps its digits")
			assert.Equal(t, json.Number("12345678901234567891"), vars["next"])
			assert.Equal(t, []any{json.Number("12345678901234567890"), 2.5}, vars["list"])

			job := oneJob(t, e, "work")
			assert.Equal(t, json.Number("12345678901234567890"), job.Variables["bigIn"], "a job's input keeps every digit")
			assert.Equal(t, json.Number("0.9999999999999999999999999999999999"), job.Variables["one"])
			require.NoError(t, e.CompleteJob(ctxT(t), job.Key, map[string]any{
				"paid":  json.Number("98765432109876543210.5"),
				"count": int64(1<<60 + 1),
				"small": json.Number("1.50"),
				"whole": uint64(42),
				"huge":  new(big.Int).Lsh(big.NewInt(1), 70),
			}))
			require.NoError(t, e.Settle(ctxT(t)))
			vars = inst.Variables()
			assert.Equal(t, json.Number("98765432109876543210.5"), vars["paid"])
			assert.Equal(t, json.Number("1152921504606846977"), vars["count"], "an int64 above 2^53 is not rounded to a float64")
			assert.Equal(t, 1.5, vars["small"], "a number a float64 holds is a float64, whatever its text")
			assert.Equal(t, 42.0, vars["whole"])
			assert.Equal(t, json.Number("1180591620717411303424"), vars["huge"], "a *big.Int, read through its JSON form, keeps its digits")

			r, doc := restored(t, e)
			assert.Contains(t, string(doc), `"third":0.3333333333333333333333333333333333`, "the document holds the digits as a JSON number")
			assert.Contains(t, string(doc), `"count":1152921504606846977`)
			rinst, ok := r.Instance(inst.Key())
			require.True(t, ok)
			assert.Equal(t, vars, rinst.Variables(), "a restored instance sees the same values, floats as floats")
			again, err := r.Checkpoint(ctxT(t))
			require.NoError(t, err)
			assert.JSONEq(t, string(doc), string(again))

			// The correlation key is next's full text, not a rounded float.
			require.NoError(t, r.PublishMessage(ctxT(t), engine.Message{Name: "paid", CorrelationKey: "12345678901234567891",
				Variables: map[string]any{"fee": json.Number("0.10000000000000000001")}}))
			require.NoError(t, r.Settle(ctxT(t)))
			st, _ := rinst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Equal(t, json.Number("0.10000000000000000001"), rinst.Variables()["fee"], "a message's variables keep every digit")
		})
	}
}

// A json.Number that is no JSON number, or lies beyond decimal128's range,
// is refused with the variable's name, never stored or rounded.
func TestDecimals_BadNumbers(t *testing.T) {
	e := newEngine(t)
	deployFile(t, e, "decimals.bpmn")
	for _, bad := range []json.Number{"abc", "1e7000", "NaN", ""} {
		_, err := e.Start(ctxT(t), "decimals", map[string]any{"big": map[string]any{"x": bad}})
		require.ErrorIs(t, err, engine.ErrBadVariables, "%q", bad)
		assert.Contains(t, err.Error(), `"big"`, "%q", bad)
	}
}

// JUEL (Camunda 7) reads a decimal variable as EL's BigDecimal or
// BigInteger: exactly, in arithmetic, comparisons and templates.
func TestDecimals_JUEL(t *testing.T) {
	e := newEngine(t)
	deploy(t, e, `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" `+
		`xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="t"><bpmn:process id="p" isExecutable="true">`+
		`<bpmn:startEvent id="s"/><bpmn:serviceTask id="t" camunda:type="external" camunda:topic="t"><bpmn:extensionElements>`+
		`<camunda:inputOutput><camunda:inputParameter name="next">${big + 1}</camunda:inputParameter>`+
		`<camunda:inputParameter name="label">id-${big}</camunda:inputParameter>`+
		`<camunda:inputParameter name="more">${big &gt; 12345678901234567889}</camunda:inputParameter>`+
		`<camunda:inputParameter name="half">${0.5 * 3}</camunda:inputParameter>`+
		`</camunda:inputOutput></bpmn:extensionElements></bpmn:serviceTask><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t"/>`+
		`</bpmn:process></bpmn:definitions>`)
	start(t, e, map[string]any{"big": json.Number("12345678901234567890")})
	job := oneJob(t, e, "t")
	assert.Equal(t, json.Number("12345678901234567891"), job.Variables["next"])
	assert.Equal(t, "id-12345678901234567890", job.Variables["label"])
	assert.Equal(t, true, job.Variables["more"])
	assert.Equal(t, 1.5, job.Variables["half"])
}
