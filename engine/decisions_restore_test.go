package engine_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// deploymentBindingState is the state document of an engine where
// wait_then_decide was deployed together with discount v1 (discount 0.1
// for gold), discount v2 (0.2) deployed after it alone, and an instance
// of wait_then_decide waits at its job, before its business rule task
// (bindingType="deployment") decides.
func deploymentBindingState(t *testing.T) []byte {
	t.Helper()
	e := newEngine(t)
	v1 := discountDMN(t)
	v2 := []byte(strings.NewReplacer(`value="v1"`, `value="v2"`, `<text>0.1</text>`, `<text>0.2</text>`).Replace(string(v1)))
	proc, err := os.ReadFile("testdata/wait_then_decide.bpmn")
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

// decideAfterRestore restores state, completes the waiting job and
// returns what the business rule task decided.
func decideAfterRestore(t *testing.T, state []byte) any {
	t.Helper()
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(ctxT(t)) })
	jobs := r.Jobs(engine.JobFilter{Type: "wait"})
	require.Len(t, jobs, 1)
	require.NoError(t, r.CompleteJob(ctxT(t), jobs[0].Key, nil))
	require.NoError(t, r.Settle(ctxT(t)))
	inst, ok := r.Instance(jobs[0].InstanceKey)
	require.True(t, ok)
	require.Equal(t, engine.Completed, inst.State(), incidents(inst))
	return inst.Variables()["d"]
}

// TestBusinessRuleTask_DeploymentBindingAfterRestore: an instance restored
// from a checkpoint still calls the decision deployed with its process
// (binding "deployment"), not the newest; so does one restored from a
// document of version 2, which recorded no deployments (the decision
// deployed with or before the process is taken).
func TestBusinessRuleTask_DeploymentBindingAfterRestore(t *testing.T) {
	state := deploymentBindingState(t)
	var doc struct {
		Version     int `json:"version"`
		Deployments []struct {
			Name       string `json:"name"`
			Deployment int64  `json:"deployment"`
		} `json:"deployments"`
	}
	require.NoError(t, json.Unmarshal(state, &doc))
	assert.Equal(t, engine.StateVersion, doc.Version)
	require.Len(t, doc.Deployments, 3)
	assert.Equal(t, doc.Deployments[0].Deployment, doc.Deployments[1].Deployment, "deployed together: %+v", doc.Deployments)
	assert.NotEqual(t, doc.Deployments[1].Deployment, doc.Deployments[2].Deployment, "deployed apart: %+v", doc.Deployments)

	assert.EqualValues(t, 0.1, decideAfterRestore(t, state), "the version deployed with the process")
	assert.EqualValues(t, 0.1, decideAfterRestore(t, withoutDeployments(t, state)), "a version 2 document")

	// A restored engine writes the deployments again, and gives later
	// deployments new ones.
	r, err := engine.Restore(state)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(ctxT(t)) })
	_, err = r.Deploy("discount.dmn", []byte(strings.ReplaceAll(string(discountDMN(t)), `<text>0.1</text>`, `<text>0.3</text>`)))
	require.NoError(t, err)
	again, err := r.Checkpoint(ctxT(t))
	require.NoError(t, err)
	var doc2 struct {
		Deployments []struct {
			Deployment int64 `json:"deployment"`
		} `json:"deployments"`
	}
	require.NoError(t, json.Unmarshal(again, &doc2))
	require.Len(t, doc2.Deployments, 4)
	assert.Greater(t, doc2.Deployments[3].Deployment, doc2.Deployments[2].Deployment)
	assert.EqualValues(t, 0.1, decideAfterRestore(t, again), "restored twice, a newer version deployed between")
}

// TestRestoreInstance_DeploymentBinding: an instance imported into
// another engine (RestoreInstance) deploys its process and the decision
// deployed with it together, so binding "deployment" still finds it.
func TestRestoreInstance_DeploymentBinding(t *testing.T) {
	src, err := engine.Restore(deploymentBindingState(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = src.Close(ctxT(t)) })
	jobs := src.Jobs(engine.JobFilter{Type: "wait"})
	require.Len(t, jobs, 1)
	one, err := src.CheckpointInstance(ctxT(t), jobs[0].InstanceKey)
	require.NoError(t, err)

	dst := newEngine(t)
	// A newer discount is deployed here first: the import must not take it.
	_, err = dst.Deploy("other.dmn", []byte(strings.ReplaceAll(string(discountDMN(t)), `<text>0.1</text>`, `<text>0.4</text>`)))
	require.NoError(t, err)
	inst, err := dst.RestoreInstance(ctxT(t), one)
	require.NoError(t, err)
	jobs = dst.Jobs(engine.JobFilter{Type: "wait"})
	require.Len(t, jobs, 1)
	require.NoError(t, dst.CompleteJob(ctxT(t), jobs[0].Key, nil))
	require.NoError(t, dst.Settle(ctxT(t)))
	require.Equal(t, engine.Completed, inst.State(), incidents(inst))
	assert.EqualValues(t, 0.1, inst.Variables()["d"])
}
