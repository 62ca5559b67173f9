package engine_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// Latin1Outcome is what running testdata/latin1.bpmn (an ISO-8859-1
// document with non-ASCII ids, names, job type and variables) must give on
// every host: the host, CLI and SDK tests compare against the same values.
var latin1Outcome = struct {
	processID, processName, jobType string
	elements                        []string
	vars                            map[string]any
}{
	processID: "prüfung", processName: "Größenprüfung für Bücher", jobType: "maße-prüfen",
	elements: []string{"ende", "prüfen", "start"},
	vars:     map[string]any{"länge": 12.0, "ergebnis": "Größe: 12"},
}

// TestEngine_DeploysLatin1 checks that a document in ISO-8859-1 deploys
// and runs with its non-ASCII names intact.
func TestEngine_DeploysLatin1(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t)
	xml := readTestdata(t, "latin1.bpmn")
	require.False(t, bytes.Contains(xml, []byte("ü")), "the fixture is not UTF-8")
	d, err := e.Deploy("latin1.bpmn", xml)
	require.NoError(t, err)
	require.Len(t, d.Processes, 1)
	assert.Equal(t, latin1Outcome.processID, d.Processes[0].ID)
	assert.Equal(t, latin1Outcome.processName, d.Processes[0].Name)
	inst, err := e.Start(ctx, latin1Outcome.processID, map[string]any{"länge": 12})
	require.NoError(t, err)
	types := work(t, e, nil)
	assert.Equal(t, []string{latin1Outcome.jobType}, types)
	assert.Equal(t, engine.Completed, inst.State())
	assert.Equal(t, latin1Outcome.elements, completed(inst))
	assert.Equal(t, latin1Outcome.vars, inst.Variables())
}

// TestEngine_RejectsInvalidUTF8 checks that a document declared UTF-8 that
// holds a byte sequence UTF-8 forbids is rejected, not silently altered.
func TestEngine_RejectsInvalidUTF8(t *testing.T) {
	e := newEngine(t)
	_, err := e.Deploy("bad.bpmn", invalidUTF8Model)
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Rule, "UTF-8")
	deployFile(t, e, "order.bpmn")
	_, err = e.Start(context.Background(), "order", nil)
	require.NoError(t, err, "the engine is still usable")
}

// invalidUTF8Model is a UTF-8 document whose process name holds 0xFF.
var invalidUTF8Model = []byte(
	`<?xml version="1.0" encoding="UTF-8"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">` +
		`<bpmn:process id="p" name="bad ` + "\xff" + ` name" isExecutable="true"><bpmn:startEvent id="s"/></bpmn:process></bpmn:definitions>`)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return data
}
