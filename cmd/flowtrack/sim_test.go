package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// sim reads choices from its input: bad ones are an error and the prompt
// again, a chosen action's trace follows, and the instance completes.
func TestSim_Choices(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script, want string
	}{
		{"message", "zz\n0\n1 [1]\nv\n1 {\"paid\":true}\n", "entered   endMsg (endEvent)"},
		{"signal", "2\n", "entered   endSignal (endEvent)"},
		{"timer", "3\n", "entered   endTimer (endEvent)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			code := runIO([]string{"sim", "testdata/gateway.bpmn", "--vars", `{"key":"x"}`}, strings.NewReader(tc.script), &out, &out)
			assert.Equal(t, exitOK, code, out.String())
			assert.Contains(t, out.String(), "waiting: i2 t1 at gate for event\n")
			assert.Contains(t, out.String(), "  1) publish message \"go\" key \"x\" (awaited at onMsg)\n")
			assert.Contains(t, out.String(), "  2) broadcast signal \"stop\" (awaited at onSignal)\n")
			assert.Contains(t, out.String(), "  3) fire the next timer: advance time to 2026-01-01T01:00:00Z (+PT1H)\n")
			assert.Contains(t, out.String(), tc.want)
			assert.Contains(t, out.String(), "final state: completed\n")
		})
	}
	var out bytes.Buffer
	runIO([]string{"sim", "testdata/gateway.bpmn", "--vars", `{"key":"x"}`}, strings.NewReader("zz\n0\n1 [1]\nv\n1 {\"paid\":true}\n"), &out, &out)
	assert.Contains(t, out.String(), `error: "zz" is no choice: give a number from 1 to 3`)
	assert.Contains(t, out.String(), `error: "0" is no choice`)
	assert.Contains(t, out.String(), "error: variables: not a JSON object")
	assert.Contains(t, out.String(), `variables: {"key":"x"}`)
	assert.Contains(t, out.String(), `correlated at onMsg {"paid":true}`)
}

// sim answers the jobs of called instances in another file, with the
// variables given, and ends cleanly at the end of its input.
func TestSim_CallAndEOF(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code := runIO([]string{"sim", "testdata/caller.bpmn", "--with", "testdata/called.bpmn"}, strings.NewReader("1 {\"billed\":true}\n"), &out, &out)
	assert.Equal(t, exitOK, code, out.String())
	assert.Contains(t, out.String(), "  1) complete job 5 invoice at invoice\n")
	assert.Contains(t, out.String(), `variables: {"billed":true}`)

	out.Reset()
	code = runIO([]string{"sim", "testdata/caller.bpmn", "--with", "testdata/called.bpmn"}, strings.NewReader("h\n"), &out, &out)
	assert.Equal(t, exitProcess, code, out.String())
	assert.Contains(t, out.String(), "i3 t1     entered   callBilling (callActivity)\n") // h printed the history too
	assert.Contains(t, out.String(), "end of input\n")
	assert.Contains(t, out.String(), "final state: active\n")

	out.Reset()
	code = runIO([]string{"sim", "testdata/caller.bpmn", "--with", "testdata/called.bpmn"}, strings.NewReader("q\n"), &out, &out)
	assert.Equal(t, exitProcess, code, out.String())
	assert.NotContains(t, out.String(), "end of input")

	out.Reset()
	code = runIO([]string{"sim"}, strings.NewReader(""), &out, &out)
	assert.Equal(t, exitUsage, code, out.String())
	assert.Contains(t, out.String(), "sim needs a model file")
}
