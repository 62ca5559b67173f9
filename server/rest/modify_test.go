package rest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/server/rest"
)

// search polls a search until pred holds (the projection trails the
// engine by a moment).
func search(t *testing.T, url string, q any, pred func([]map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var res struct {
			Items []map[string]any `json:"items"`
		}
		if status, body := do(t, "POST", url, q, &res); status != http.StatusOK {
			t.Fatalf("search %s: %d %s", url, status, body)
		}
		if pred(res.Items) {
			return res.Items
		}
		if time.Now().After(deadline) {
			t.Fatalf("search %s never matched: %v", url, res.Items)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func activateOne(t *testing.T, base, jobType string) rest.ActivatedJobResult {
	t.Helper()
	var act rest.JobActivationResult
	status, body := do(t, "POST", base+"/v2/jobs/activation", map[string]any{"type": jobType, "timeout": 30_000, "maxJobsToActivate": 1, "requestTimeout": 5_000}, &act)
	if status != http.StatusOK || len(act.Jobs) != 1 {
		t.Fatalf("activate %s: %d %s", jobType, status, body)
	}
	return act.Jobs[0]
}

func TestAPI_ModifyAndAdHoc(t *testing.T) {
	base, _ := served(t, nil)
	if status, body := deploy(t, base, map[string][]byte{"modify.bpmn": testdata(t, "modify.bpmn")}); status != http.StatusOK {
		t.Fatalf("deploy: %d %s", status, body)
	}
	var inst rest.CreateProcessInstanceResult
	do(t, "POST", base+"/v2/process-instances", map[string]any{"processDefinitionId": "rt-modify"}, &inst)
	els := search(t, base+"/v2/element-instances/search", map[string]any{"filter": map[string]any{"processInstanceKey": inst.ProcessInstanceKey, "elementId": "a", "state": "ACTIVE"}},
		func(items []map[string]any) bool { return len(items) == 1 })
	// Skip the user task: terminate it by its element instance key and
	// start a token before b, with a variable.
	status, body := do(t, "POST", base+"/v2/process-instances/"+inst.ProcessInstanceKey+"/modification", map[string]any{
		"activateInstructions":  []any{map[string]any{"elementId": "b", "variableInstructions": []any{map[string]any{"variables": map[string]any{"skipped": true}}}}},
		"terminateInstructions": []any{map[string]any{"elementInstanceKey": els[0]["elementInstanceKey"]}},
	}, nil)
	if status != http.StatusNoContent {
		t.Fatalf("modify: %d %s", status, body)
	}
	job := activateOne(t, base, "rt.b")
	if job.ProcessInstanceKey != inst.ProcessInstanceKey || job.Variables["skipped"] != true {
		t.Fatalf("the activated b: %+v", job)
	}
	search(t, base+"/v2/element-instances/search", map[string]any{"filter": map[string]any{"elementInstanceKey": els[0]["elementInstanceKey"]}},
		func(items []map[string]any) bool { return len(items) == 1 && items[0]["state"] == "TERMINATED" })
	if status, body := do(t, "POST", base+"/v2/process-instances/"+inst.ProcessInstanceKey+"/modification",
		map[string]any{"moveInstructions": []any{map[string]any{}}}, nil); status != http.StatusNotImplemented {
		t.Fatalf("a move instruction: %d %s", status, body)
	}

	// An ad-hoc sub-process that activates nothing by itself.
	var adhoc rest.CreateProcessInstanceResult
	do(t, "POST", base+"/v2/process-instances", map[string]any{"processDefinitionId": "rt-adhoc"}, &adhoc)
	sub := search(t, base+"/v2/element-instances/search", map[string]any{"filter": map[string]any{"processInstanceKey": adhoc.ProcessInstanceKey, "elementId": "adhoc"}},
		func(items []map[string]any) bool { return len(items) == 1 })
	if status, body := do(t, "POST", base+"/v2/element-instances/ad-hoc-activities/"+sub[0]["elementInstanceKey"].(string)+"/activation",
		map[string]any{"elements": []any{map[string]any{"elementId": "x"}}}, nil); status != http.StatusNoContent {
		t.Fatalf("activate ad-hoc: %d %s", status, body)
	}
	if x := activateOne(t, base, "rt.x"); x.ProcessInstanceKey != adhoc.ProcessInstanceKey || x.ElementID != "x" {
		t.Fatalf("the activated x: %+v", x)
	}
}

func TestAPI_InstanceIncidentsAndVariables(t *testing.T) {
	base, _ := served(t, nil)
	if status, body := deploy(t, base, map[string][]byte{"straight.bpmn": testdata(t, "straight.bpmn")}); status != http.StatusOK {
		t.Fatalf("deploy: %d %s", status, body)
	}
	var inst rest.CreateProcessInstanceResult
	do(t, "POST", base+"/v2/process-instances", map[string]any{"processDefinitionId": "ct-straight", "variables": map[string]any{"b": 2, "a": "x"}}, &inst)
	job := activateOne(t, base, "ct.double")
	if status, body := do(t, "POST", base+"/v2/jobs/"+job.JobKey+"/failure", map[string]any{"retries": 0, "errorMessage": "down"}, nil); status != http.StatusNoContent {
		t.Fatalf("fail: %d %s", status, body)
	}
	incs := search(t, base+"/v2/element-instances/"+job.ElementInstanceKey+"/incidents/search", map[string]any{},
		func(items []map[string]any) bool { return len(items) == 1 })
	if incs[0]["jobKey"] != job.JobKey || incs[0]["state"] != "ACTIVE" {
		t.Fatalf("the element's incident: %v", incs[0])
	}
	do(t, "PATCH", base+"/v2/jobs/"+job.JobKey, map[string]any{"changeset": map[string]any{"retries": 2}}, nil)
	if status, body := do(t, "POST", base+"/v2/process-instances/"+inst.ProcessInstanceKey+"/incident-resolution", nil, nil); status != http.StatusOK {
		t.Fatalf("resolve the instance's incidents: %d %s", status, body)
	}
	search(t, base+"/v2/incidents/search", map[string]any{"filter": map[string]any{"processInstanceKey": inst.ProcessInstanceKey, "state": "ACTIVE"}},
		func(items []map[string]any) bool { return len(items) == 0 })
	if again := activateOne(t, base, "ct.double"); again.JobKey != job.JobKey || again.Retries != 2 {
		t.Fatalf("the job after resolution: %+v", again)
	}

	jobs := search(t, base+"/v2/jobs/search", map[string]any{"filter": map[string]any{"type": "ct.double", "processInstanceKey": inst.ProcessInstanceKey}},
		func(items []map[string]any) bool { return len(items) == 1 })
	if jobs[0]["state"] != "FAILED" || jobs[0]["hasFailedWithRetriesLeft"] != true || jobs[0]["errorMessage"] != "down" || jobs[0]["deadline"] == nil {
		t.Fatalf("the failed, retried and activated job: %v", jobs[0])
	}
	var other rest.CreateProcessInstanceResult
	do(t, "POST", base+"/v2/process-instances", map[string]any{"processDefinitionId": "ct-straight"}, &other)
	jobs = search(t, base+"/v2/jobs/search", map[string]any{"filter": map[string]any{"type": "ct.double", "processInstanceKey": other.ProcessInstanceKey}},
		func(items []map[string]any) bool { return len(items) == 1 })
	if jobs[0]["state"] != "CREATED" || jobs[0]["elementId"] != "double" || jobs[0]["retries"] != 3.0 {
		t.Fatalf("the open job: %v", jobs[0])
	}

	vars := search(t, base+"/v2/variables/search", map[string]any{"filter": map[string]any{"processInstanceKey": inst.ProcessInstanceKey}},
		func(items []map[string]any) bool { return len(items) == 2 })
	var v rest.VariableResult
	if status, body := do(t, "GET", base+"/v2/variables/"+vars[1]["variableKey"].(string), nil, &v); status != http.StatusOK || v.Name != "b" || v.Value != "2" {
		t.Fatalf("get variable: %d %s", status, body)
	}
	if status, _ := do(t, "GET", base+"/v2/variables/123", nil, nil); status != http.StatusNotFound {
		t.Fatalf("an unknown variable key: %d", status)
	}
}
