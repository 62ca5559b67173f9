package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"order through the module", []string{"run", "../../examples/native/order.bpmn", "--vars", `{"amount":250}`}, 0, "final state: completed"},
		{"flags before the file", []string{"run", "--process", "timer", "testdata/timer.bpmn"}, 0, "advance time to 2026-01-01T00:00:01Z"},
		{"scenario", []string{"run", "testdata/message.bpmn", "--scenario", "testdata/message.json"}, 0, `"paid":true`},
		{"stuck waiting", []string{"run", "testdata/message.bpmn", "--vars", `{"key":"x"}`}, 1, "stuck: token 1 at wait_go waiting for message"},
		{"gateway timer arm", []string{"run", "testdata/gateway.bpmn", "--vars", `{"key":"x"}`}, 0, "left      endTimer"},
		{"validate ok", []string{"validate", "testdata/timer.bpmn"}, 0, "ok: process timer"},
		{"validate invalid", []string{"validate", "testdata/invalid.bpmn"}, 2,
			"testdata/invalid.bpmn:1:169: REF.19: f: bpmn:sequenceFlow targetRef nowhere points to no element"},
		{"validate warnings", []string{"validate", "testdata/warnings.bpmn"}, 0,
			"testdata/warnings.bpmn:3:3: FT.non-executable: notes: warning: process is not executable"},
		{"validate json", []string{"validate", "--json", "testdata/invalid.bpmn"}, 2, `"ruleId": "REF.19"`},
		{"validate descriptive", []string{"validate", "testdata/descriptive.bpmn"}, 0, "ok: no executable process"},
		{"validate descriptive process", []string{"validate", "testdata/descriptive-invalid.bpmn"}, 2, "testdata/descriptive-invalid.bpmn:6:5: EXT.037: t:"},
		{"validate import beside the file", []string{"validate", "testdata/descriptive-invalid.bpmn"}, 2, `EXT.001: bpmn:import location "missing.xsd" cannot be read`},
		{"run invalid", []string{"run", "testdata/invalid.bpmn"}, 2, "testdata/invalid.bpmn:1:169: REF.19: f:"},
		{"unknown process", []string{"run", "testdata/timer.bpmn", "--process", "nope"}, 2, "unknown process"},
		{"bad vars", []string{"run", "testdata/timer.bpmn", "--vars", `[1]`}, 2, "--vars"},
		{"missing file", []string{"run", "testdata/none.bpmn"}, 2, "no such file"},
		{"no command", nil, 2, "usage:"},
		{"unknown command", []string{"simulate"}, 2, `unknown command "simulate"`},
		{"two files", []string{"validate", "a.bpmn", "b.bpmn"}, 2, "exactly one model file"},
		{"ISO-8859-1 model", []string{"run", "../../engine/testdata/latin1.bpmn", "--vars", `{"länge":12}`}, 0,
			"maße-prüfen created at prüfen"},
		{"ISO-8859-1 model variables", []string{"run", "../../engine/testdata/latin1.bpmn", "--vars", `{"länge":12}`}, 0,
			`variables: {"ergebnis":"Größe: 12","länge":12}`},
		{"validate DMN", []string{"validate", "../../engine/testdata/discount.dmn"}, 0, "ok: decision price (version 1)"},
		{"decide", []string{"decide", "../../engine/testdata/discount.dmn", "--decision", "price", "--vars", `{"customer":"gold","order amount":2000}`}, 0,
			"matched: discount rule 1 gold_big\nprice (version 1): 1700"},
		{"decide json", []string{"decide", "../../engine/testdata/discount.dmn", "--json", "--vars", `{"customer":"x","order amount":1}`}, 0, `"ruleId": "other"`},
		{"decide failed", []string{"decide", "../../engine/testdata/discount.dmn", "--decision", "strict", "--vars", `{"order amount":1}`}, 1, "failed: strict: hit policy UNIQUE"},
		{"decide unknown", []string{"decide", "../../engine/testdata/discount.dmn", "--decision", "nope"}, 1, "unknown decision"},
		{"validate ISO-8859-1", []string{"validate", "../../engine/testdata/latin1.bpmn"}, 0, "ok: process prüfung"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each run instantiates the module, which is slow under -race
			var out bytes.Buffer
			code := run(tc.args, &out, &out)
			assert.Equal(t, tc.code, code, out.String())
			assert.Contains(t, out.String(), tc.out)
		})
	}
}
