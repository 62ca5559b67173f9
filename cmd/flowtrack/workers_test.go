package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// TestStateFile_JobWorker drives a job as a script-run worker would across
// invocations: activate with a timeout, fail with a back-off, time out,
// a stale completion refused, retries set under an incident.
func TestStateFile_JobWorker(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	ft(t, exitOK, state, "start", "shipment", "--vars", `{"orderId":"o-1"}`)

	jobs := result[[]engine.Job](t, ft(t, exitOK, state, "activate", "pack", "--worker", "w1", "--timeout", "1m", "--max", "5"))
	require.Len(t, jobs, 1)
	job := jobs[0]
	assert.Equal(t, "w1", job.Worker)
	assert.Equal(t, clock.Epoch.Add(time.Minute), *job.Deadline)
	assert.Empty(t, result[[]engine.Job](t, ft(t, exitOK, state, "activate", "pack")), "held until its deadline")

	act := itoa(job.Activation)
	ft(t, exitOK, state, "fail", itoa(job.Key), "--retries", "2", "--backoff", "30s", "--activation", act)
	assert.Empty(t, result[[]engine.Job](t, ft(t, exitOK, state, "activate", "pack")), "in back-off")
	ft(t, exitOK, state, "advance", "30s")
	again := result[[]engine.Job](t, ft(t, exitOK, state, "activate", "pack", "--timeout", "1m"))
	require.Len(t, again, 1)
	p := ft(t, exitProcess, state, "complete", itoa(job.Key), "--activation", act)
	assert.Equal(t, "STALE_ACTIVATION", string(p.Error.Code))

	ft(t, exitOK, state, "fail", itoa(job.Key), "--retries", "0", "--message", "printer jam")
	ft(t, exitOK, state, "retries", itoa(job.Key), "4")
	incs := result[[]engine.Incident](t, ft(t, exitOK, state, "incidents", "--type", "job", "--element", "pack"))
	require.Len(t, incs, 1)
	assert.Empty(t, result[[]engine.Incident](t, ft(t, exitOK, state, "incidents", "--type", "element")))
	ft(t, exitUsage, state, "incidents", "--type", "bogus")
	ft(t, exitOK, state, "resolve", itoa(incs[0].Key))
	open := result[[]engine.Job](t, ft(t, exitOK, state, "jobs", "--type", "pack"))
	require.Len(t, open, 1)
	assert.Equal(t, 4, open[0].Retries)

	assert.Equal(t, "BAD_REQUEST", string(ft(t, exitProcess, state, "retries", itoa(job.Key), "0").Error.Code))
	assert.Equal(t, "BAD_REQUEST", string(ft(t, exitProcess, state, "activate", "pack", "--max", "0").Error.Code))
}

// TestStateFile_SetVariables sets variables across invocations and reads
// them back, refusing an unknown scope.
func TestStateFile_SetVariables(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	key := result[started](t, ft(t, exitOK, state, "start", "shipment", "--vars", `{"orderId":"o-1"}`)).InstanceKey
	p := ft(t, exitOK, state, "set-variables", itoa(key), "--vars", `{"priority":"high"}`)
	assert.Equal(t, []engine.EventType{engine.VariablesUpdated}, types(p))
	vars := result[map[string]any](t, ft(t, exitOK, state, "variables", itoa(key)))
	assert.Equal(t, map[string]any{"orderId": "o-1", "priority": "high"}, vars)
	own := result[map[string]any](t, ft(t, exitOK, state, "variables", itoa(key), "--local"))
	assert.Equal(t, vars, own, "the process scope holds them itself")
	p = ft(t, exitProcess, state, "set-variables", itoa(key), "--vars", `{"a":1}`, "--scope", "99")
	assert.Equal(t, "UNKNOWN_SCOPE", string(p.Error.Code))
	ft(t, exitUsage, state, "set-variables", itoa(key))
}

// TestStateFile_Metrics prints the metrics for a person and for a script.
func TestStateFile_Metrics(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	ft(t, exitOK, state, "start", "shipment", "--vars", `{"orderId":"o-1"}`)
	ft(t, exitOK, state, "advance", "90s")
	m := result[engine.Metrics](t, ft(t, exitOK, state, "metrics"))
	assert.Equal(t, map[string]int{"pack": 1}, m.JobsByType)
	require.NotNil(t, m.OldestJob)
	assert.Equal(t, 90_000.0, m.OldestJob.WaitingMs)
	assert.Equal(t, []engine.ProcessMetrics{{ProcessID: "shipment", Active: 1}}, m.Processes)

	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"metrics", "--state", state}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "jobs pack: 1\n")
	assert.Contains(t, stdout.String(), "waiting PT1M30S\n")
	assert.Contains(t, stdout.String(), "process shipment: 1 active, 0 completed, 0 terminated, 0 failed\n")
}

// TestStateFile_Definitions lists versions, prints a version's document
// and starts an older version.
func TestStateFile_Definitions(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	defs := result[[]engine.Definition](t, ft(t, exitOK, state, "definitions"))
	require.Len(t, defs, 2)
	assert.Equal(t, []int{1, 2}, []int{defs[0].Version, defs[1].Version})
	assert.True(t, defs[1].Latest)
	doc := result[definitionXML](t, ft(t, exitOK, state, "definition", "shipment", "--version", "1"))
	want, err := os.ReadFile("testdata/shipment.bpmn")
	require.NoError(t, err)
	assert.Equal(t, string(want), doc.XML)
	ft(t, exitOK, state, "start", "shipment", "--version", "1")
	p := ft(t, exitProcess, state, "start", "shipment", "--version", "3")
	assert.Equal(t, "UNKNOWN_PROCESS", string(p.Error.Code))
}

// TestStateFile_Modify moves the token of a waiting instance past its job.
func TestStateFile_Modify(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	key := result[started](t, ft(t, exitOK, state, "start", "shipment", "--vars", `{"orderId":"o-1"}`)).InstanceKey
	var pack int
	for _, tk := range result[[]engine.Token](t, ft(t, exitOK, state, "tokens", itoa(key))) {
		if tk.ElementID == "pack" {
			pack = tk.ID
		}
	}
	require.NotZero(t, pack)
	p := ft(t, exitOK, state, "modify", itoa(key), "--terminate", strconv.Itoa(pack), "--activate", "pack", "--vars", `{"again":true}`)
	assert.Contains(t, types(p), engine.ElementTerminated)
	jobs := result[[]engine.Job](t, ft(t, exitOK, state, "jobs", "--type", "pack"))
	require.Len(t, jobs, 1)
	assert.Equal(t, true, jobs[0].Variables["again"])
	p = ft(t, exitProcess, state, "modify", itoa(key), "--activate", "nowhere")
	assert.Equal(t, "BAD_MODIFICATION", string(p.Error.Code))
	ft(t, exitUsage, state, "modify", itoa(key))
}

// TestStateFile_JobsText shows a job's hold as of the engine clock: a
// back-off or activation is "until" while pending and no longer once the
// clock passed it.
func TestStateFile_JobsText(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	ft(t, exitOK, state, "start", "shipment", "--vars", `{"orderId":"o-1"}`)
	jobs := result[[]engine.Job](t, ft(t, exitOK, state, "activate", "pack", "--worker", "w1", "--timeout", "1m"))
	require.Len(t, jobs, 1)
	text := func() string {
		var stdout, stderr bytes.Buffer
		require.Equal(t, exitOK, run([]string{"jobs", "--state", state}, &stdout, &stderr), stderr.String())
		return stdout.String()
	}
	held := ", activation " + itoa(jobs[0].Activation) + " by w1 "
	assert.Contains(t, text(), held+"until 2026-01-01T00:01:00Z)")
	ft(t, exitOK, state, "advance", "1m")
	assert.Contains(t, text(), held+"timed out at 2026-01-01T00:01:00Z)")

	again := result[[]engine.Job](t, ft(t, exitOK, state, "activate", "pack", "--timeout", "1m"))
	require.Len(t, again, 1)
	ft(t, exitOK, state, "fail", itoa(again[0].Key), "--retries", "2", "--backoff", "30s")
	assert.Contains(t, text(), "(instance "+itoa(again[0].InstanceKey)+", retries 2, back-off until 2026-01-01T00:01:30Z)")
	ft(t, exitOK, state, "advance", "30s")
	out := text()
	assert.NotContains(t, out, "back-off")
	assert.Contains(t, out, "(instance "+itoa(again[0].InstanceKey)+", retries 2)")
}
