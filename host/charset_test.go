package host_test

import (
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestEngine_DeploysLatin1 runs the engine test's ISO-8859-1 model through
// the module and expects what the native engine gives
// (engine/charset_test.go): the document's bytes reach the module
// unchanged.
func TestEngine_DeploysLatin1(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	xml, err := os.ReadFile("../engine/testdata/latin1.bpmn")
	require.NoError(t, err)
	d, err := e.Deploy(ctx, "latin1.bpmn", xml)
	require.NoError(t, err)
	require.Len(t, d.Processes, 1)
	assert.Equal(t, "prüfung", d.Processes[0].ID)
	assert.Equal(t, "Größenprüfung für Bücher", d.Processes[0].Name)
	key, err := e.Start(ctx, "prüfung", map[string]any{"länge": 12})
	require.NoError(t, err)
	jobs, err := e.Jobs(ctx, engine.JobFilter{})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, "maße-prüfen", jobs[0].Type)
	require.NoError(t, e.CompleteJob(ctx, jobs[0].Key, nil))
	info, err := e.Instance(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, info.State)
	assert.Equal(t, map[string]any{"länge": 12.0, "ergebnis": "Größe: 12"}, info.Variables)
	hist, err := e.History(ctx, key)
	require.NoError(t, err)
	var left []string
	for _, ev := range hist {
		if ev.Type == engine.ElementLeft {
			left = append(left, ev.ElementID)
		}
	}
	sort.Strings(left)
	assert.Equal(t, []string{"ende", "prüfen", "start"}, left)
}

// TestEngine_RejectsInvalidUTF8 checks that the module rejects a document
// with invalid UTF-8 as the native engine does, instead of deploying a
// copy with the bytes replaced.
func TestEngine_RejectsInvalidUTF8(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "bad.bpmn", []byte(`<?xml version="1.0" encoding="UTF-8"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">`+
		`<bpmn:process id="p" name="bad `+"\xff"+` name" isExecutable="true"><bpmn:startEvent id="s"/></bpmn:process></bpmn:definitions>`))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Rule, "UTF-8")
	_, err = e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err, "the engine is still usable")
}
