package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The run trace names the flows taken and the token that moved, prints the
// scenario's steps (a message and a signal nobody received, time
// advanced), and marks the jobs run completed by itself.
func TestRun_Trace(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code := run([]string{"run", "testdata/message.bpmn", "--scenario", "testdata/unheard.json"}, &out, &out)
	assert.Equal(t, exitOK, code, out.String())
	for _, line := range []string{
		"   +PT0S  i2 t1     flow      f1 taken\n",
		"   +PT0S            publish message \"nobody\" key \"x\"\n",
		"   +PT0S            nobody received the message: it is kept for PT1M\n",
		"   +PT0S            broadcast signal \"nosig\"\n",
		"   +PT0S            nobody received the signal: it is dropped\n",
		"   +PT0S            advance time by PT5S to 2026-01-01T00:00:05Z\n",
		"   +PT5S  i2 t1     message   \"go\" key \"order-1\" correlated at wait_go\n",
	} {
		assert.Contains(t, out.String(), line)
	}

	out.Reset()
	code = run([]string{"run", "testdata/caller.bpmn", "testdata/called.bpmn"}, &out, &out)
	assert.Equal(t, exitOK, code, out.String())
	assert.Contains(t, out.String(), "   +PT0S  i4 t1     job       5 invoice completed automatically\n")

	out.Reset()
	code = run([]string{"run", "testdata/caller.bpmn", "testdata/called.bpmn", "--scenario", "testdata/invoice.json"}, &out, &out)
	assert.Equal(t, exitOK, code, out.String())
	assert.Contains(t, out.String(), "   +PT0S  i4 t1     job       5 invoice completed {\"billed\":true}\n")
}

// A run prints a progress line on stderr every progressEvery rounds, and
// none with --json. (Not parallel: it sets progressEvery.)
func TestRun_Progress(t *testing.T) {
	defer func(n int) { progressEvery = n }(progressEvery)
	progressEvery = 1
	var out, errs bytes.Buffer
	code := run([]string{"run", "../../examples/native/order.bpmn", "--vars", `{"amount":250}`}, &out, &errs)
	assert.Equal(t, exitOK, code, out.String())
	assert.Contains(t, errs.String(), "flowtrack: 1 step, ")
	assert.NotContains(t, out.String(), "flowtrack: 1 step")

	errs.Reset()
	code = run([]string{"run", "--json", "../../examples/native/order.bpmn", "--vars", `{"amount":250}`}, &out, &errs)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, errs.String())
}
