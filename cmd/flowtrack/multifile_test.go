package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// A call activity calls a process another file defines: run takes the
// other file positionally or with --with, and answers the called
// instance's jobs too; without it the call is an incident.
func TestRun_SeveralFiles(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "testdata/caller.bpmn", "--with", "testdata/called.bpmn"},
		{"run", "testdata/caller.bpmn", "testdata/called.bpmn"},
	} {
		var out bytes.Buffer
		code := run(args, &out, &out)
		assert.Equal(t, exitOK, code, out.String())
		assert.Contains(t, out.String(), "deployed testdata/called.bpmn: process billing")
		assert.Contains(t, out.String(), "job       5 invoice created at invoice")
		assert.Contains(t, out.String(), "final state: completed")
	}
	var out bytes.Buffer
	code := run([]string{"run", "testdata/caller.bpmn"}, &out, &out)
	assert.Equal(t, exitProcess, code, out.String())
	assert.Contains(t, out.String(), `unknown process "billing"`)

	out.Reset()
	code = run([]string{"run", "testdata/caller.bpmn", "--with", "testdata/none.bpmn"}, &out, &out)
	assert.Equal(t, exitUsage, code, out.String())
	assert.Contains(t, out.String(), "testdata/none.bpmn")
}

// deploy takes several files into one state file, so an instance started
// afterwards calls across them.
func TestStateFile_DeploySeveral(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	deps := result[[]engine.Deployment](t, ft(t, exitOK, state, "deploy", "testdata/caller.bpmn", "testdata/called.bpmn"))
	require.Len(t, deps, 2)
	assert.Equal(t, "caller", deps[0].Processes[0].ID)
	assert.Equal(t, "billing", deps[1].Processes[0].ID)

	st := result[started](t, ft(t, exitOK, state, "start", "caller"))
	jobs := result[[]engine.Job](t, ft(t, exitOK, state, "jobs", "--type", "invoice"))
	require.Len(t, jobs, 1)
	ft(t, exitOK, state, "complete", itoa(jobs[0].Key))
	view := result[instanceView](t, ft(t, exitOK, state, "instance", itoa(st.InstanceKey)))
	assert.Equal(t, engine.Completed, view.State)

	ft(t, exitUsage, state, "deploy")
}
