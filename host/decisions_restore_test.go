package host_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// TestRestore_DeploymentBinding: a state document written by the native
// engine, where a process was deployed together with discount v1 and
// discount v2 deployed after it alone, restores in the module; the
// instance waiting before its business rule task (bindingType
// "deployment") then decides with v1, the version deployed with its
// process, and so does a document of version 2, which recorded no
// deployments.
func TestRestore_DeploymentBinding(t *testing.T) {
	state := nativeDeploymentBindingState(t)
	for name, doc := range map[string][]byte{"now": state, "version 2": withoutDeployments(t, state)} {
		t.Run(name, func(t *testing.T) {
			e := newHost(t)
			require.NoError(t, e.Restore(ctxT(t), doc))
			jobs, err := e.Jobs(ctxT(t), engine.JobFilter{Type: "wait"})
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, nil))
			info, err := e.Instance(ctxT(t), jobs[0].InstanceKey)
			require.NoError(t, err)
			require.Equal(t, engine.Completed, info.State, "%+v", info.Incidents)
			assert.EqualValues(t, 0.1, info.Variables["d"])
		})
	}
}

// nativeDeploymentBindingState is engine's deploymentBindingState: the
// native engine's document with an instance waiting at its job.
func nativeDeploymentBindingState(t *testing.T) []byte {
	t.Helper()
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(ctxT(t)) })
	v1, err := os.ReadFile("../engine/testdata/discount.dmn")
	require.NoError(t, err)
	v2 := []byte(strings.NewReplacer(`value="v1"`, `value="v2"`, `<text>0.1</text>`, `<text>0.2</text>`).Replace(string(v1)))
	proc, err := os.ReadFile("../engine/testdata/wait_then_decide.bpmn")
	require.NoError(t, err)
	_, err = e.DeployResources(engine.Resource{Name: "wait_then_decide.bpmn", Data: proc}, engine.Resource{Name: "discount.dmn", Data: v1})
	require.NoError(t, err)
	_, err = e.Deploy("discount.dmn", v2)
	require.NoError(t, err)
	_, err = e.Start(ctxT(t), "wait_then_decide", map[string]any{"customer": "gold", "order amount": 10})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctxT(t)))
	state, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	return state
}

// withoutDeployments rewrites a state document as a version 2 engine
// wrote it: no deployment on its deployments.
func withoutDeployments(t *testing.T, state []byte) []byte {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(state, &doc))
	doc["version"] = 2
	for _, d := range doc["deployments"].([]any) {
		delete(d.(map[string]any), "deployment")
	}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}
