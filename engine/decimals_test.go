package engine_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// decimalsProcess computes decimals in a start event's output mappings,
// hands one to a job as an input, waits for a message keyed by one and
// ends.
var decimalsProcess = defs(`<bpmn:message id="Msg_paid" name="paid"><bpmn:extensionElements>`+
	`<zeebe:subscription correlationKey="= next"/></bpmn:extensionElements></bpmn:message>`,
	`<bpmn:startEvent id="s"><bpmn:extensionElements><zeebe:ioMapping>`+
		`<zeebe:output source="= 0.1 + 0.2" target="sum"/><zeebe:output source="= 1.005 * 1000" target="scaled"/>`+
		`<zeebe:output source="= 1 / 3" target="third"/><zeebe:output source="= big + 1" target="next"/>`+
		`<zeebe:output source="= [big, 2.5]" target="list"/>`+
		`</zeebe:ioMapping></bpmn:extensionElements></bpmn:startEvent>`+
		`<bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="work"/><zeebe:ioMapping>`+
		`<zeebe:input source="= big" target="bigIn"/><zeebe:input source="= third * 3" target="one"/>`+
		`</zeebe:ioMapping></bpmn:extensionElements></bpmn:serviceTask>`+
		`<bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="Msg_paid"/></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="work"/>`+
		`<bpmn:sequenceFlow id="f2" sourceRef="work" targetRef="wait"/><bpmn:sequenceFlow id="f3" sourceRef="wait" targetRef="e"/>`)

// Numbers keep their exact decimal value through mappings, job variables,
// job results, messages and a checkpoint: a float64 where one holds the
// value exactly (0.1 + 0.2 is the float64 0.3), a json.Number with every
// digit otherwise (RATIONALE.md, "How do decimals cross the runtime and
// the ABI?").
func TestDecimals_ExactThroughTheEngine(t *testing.T) {
	for _, mode := range []engine.Resumption{engine.ResumeGoroutines, engine.ResumeDirect} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			e := newEngine(t, engine.WithResumption(mode))
			deploy(t, e, decimalsProcess)
			inst := start(t, e, map[string]any{"big": json.Number("12345678901234567890")})

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
			}))
			require.NoError(t, e.Settle(ctxT(t)))
			vars = inst.Variables()
			assert.Equal(t, json.Number("98765432109876543210.5"), vars["paid"])
			assert.Equal(t, json.Number("1152921504606846977"), vars["count"], "an int64 above 2^53 is not rounded to a float64")
			assert.Equal(t, 1.5, vars["small"], "a number a float64 holds is a float64, whatever its text")
			assert.Equal(t, 42.0, vars["whole"])

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
	deploy(t, e, decimalsProcess)
	for _, bad := range []json.Number{"abc", "1e7000", "NaN", ""} {
		_, err := e.Start(ctxT(t), "p", map[string]any{"big": map[string]any{"x": bad}})
		require.ErrorIs(t, err, engine.ErrBadVariables, "%q", bad)
		assert.Contains(t, err.Error(), `"big"`, "%q", bad)
	}
}
