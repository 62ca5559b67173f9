package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/server"
	"github.com/flowtrack/flowtrack/server/rest"
)

// served starts an embedded NATS server, a flowtrack server on a rest
// Clock and the REST API over httptest, and returns the API's base URL
// and the clock.
func served(t *testing.T, auth *rest.Auth) (string, *rest.Clock) {
	t.Helper()
	return servedAccess(t, auth, nil)
}

// servedAccess is served with a server that checks every request by
// access (nil: none).
func servedAccess(t *testing.T, auth *rest.Auth, access *server.Access) (string, *rest.Clock) {
	t.Helper()
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	clk := rest.NewClock()
	srv, err := server.New(context.Background(), nc, server.Config{Cluster: "rest", Clock: clk, Access: access})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	api, err := rest.New(rest.Config{Conn: nc, Cluster: "rest", Clock: clk, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	hs := httptest.NewServer(api)
	t.Cleanup(hs.Close)
	return hs.URL, clk
}

// do sends a JSON request and decodes a JSON answer into out (when not
// nil); it returns the status and the raw body.
func do(t *testing.T, method, url string, body any, out any, header ...string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, data)
		}
	}
	return resp.StatusCode, data
}

// deployAs deploys the testdata file name with the request header
// (name, value pairs).
func deployAs(t *testing.T, base, name string, header ...string) (int, []byte) {
	t.Helper()
	return deployWith(t, base, map[string][]byte{name: testdata(t, name)}, header...)
}

// deploy posts files as a multipart deployment.
func deploy(t *testing.T, base string, files map[string][]byte) (int, []byte) {
	t.Helper()
	return deployWith(t, base, files)
}

func deployWith(t *testing.T, base string, files map[string][]byte, header ...string) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, data := range files {
		fw, err := mw.CreateFormFile("resources", name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(data)
	}
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, base+"/v2/deployments", &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestAPI_DeployCreateAwaitAndJobs(t *testing.T) {
	base, _ := served(t, nil)
	status, body := deploy(t, base, map[string][]byte{"straight.bpmn": testdata(t, "straight.bpmn"), "timer.bpmn": testdata(t, "timer.bpmn")})
	if status != http.StatusOK {
		t.Fatalf("deploy: %d %s", status, body)
	}
	var dep rest.DeploymentResult
	if err := json.Unmarshal(body, &dep); err != nil || len(dep.Deployments) != 2 {
		t.Fatalf("deploy answered %s (%v)", body, err)
	}

	// A worker loop in a goroutine: activation long-polls until the
	// awaited instance creates its job.
	done := make(chan error, 1)
	go func() {
		var act rest.JobActivationResult
		status, body := do(t, "POST", base+"/v2/jobs/activation", rest.JobActivationRequest{Type: "ct.double", Worker: "go",
			Timeout: 30_000, MaxJobsToActivate: 1, RequestTimeout: 20_000, FetchVariable: []string{"amount"}}, &act)
		if status != http.StatusOK || len(act.Jobs) != 1 {
			done <- &httpError{status, string(body)}
			return
		}
		j := act.Jobs[0]
		if len(j.Variables) != 1 || j.Variables["amount"] != 4.0 {
			done <- &httpError{0, "fetchVariable: got variables " + string(body)}
			return
		}
		status, body = do(t, "POST", base+"/v2/jobs/"+j.JobKey+"/completion", map[string]any{"variables": map[string]any{"doubled": 8}}, nil)
		if status != http.StatusNoContent {
			done <- &httpError{status, string(body)}
			return
		}
		done <- nil
	}()
	var created rest.CreateProcessInstanceResult
	status, body = do(t, "POST", base+"/v2/process-instances", map[string]any{"processDefinitionId": "ct-straight",
		"variables": map[string]any{"amount": 4, "other": true}, "awaitCompletion": true, "fetchVariables": []string{"doubled"}}, &created)
	if status != http.StatusOK {
		t.Fatalf("create: %d %s", status, body)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(created.Variables) != 1 || created.Variables["doubled"] != 8.0 {
		t.Fatalf("awaited variables = %v, want only doubled = 8", created.Variables)
	}
	var inst rest.ProcessInstanceResult
	if status, body := do(t, "GET", base+"/v2/process-instances/"+created.ProcessInstanceKey, nil, &inst); status != http.StatusOK || inst.State != "COMPLETED" {
		t.Fatalf("get: %d %s", status, body)
	}

	// By definition key: the timer process, which waits; then cancelled.
	var timerKey string
	for _, d := range dep.Deployments {
		if d.ProcessDefinition.ProcessDefinitionID == "ct-timer" {
			timerKey = d.ProcessDefinition.ProcessDefinitionKey
		}
	}
	var byKey rest.CreateProcessInstanceResult
	if status, body := do(t, "POST", base+"/v2/process-instances", map[string]any{"processDefinitionKey": timerKey}, &byKey); status != http.StatusOK || byKey.ProcessDefinitionID != "ct-timer" {
		t.Fatalf("create by key: %d %s", status, body)
	}
	if status, body := do(t, "POST", base+"/v2/process-instances/"+byKey.ProcessInstanceKey+"/cancellation", nil, nil); status != http.StatusNoContent {
		t.Fatalf("cancel: %d %s", status, body)
	}
	if status, _ := do(t, "GET", base+"/v2/process-instances/"+byKey.ProcessInstanceKey, nil, &inst); status != http.StatusOK || inst.State != "TERMINATED" {
		t.Fatalf("after cancel: %d %+v", status, inst)
	}
}

type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string { return http.StatusText(e.status) + ": " + e.body }

func TestAPI_ProblemDetails(t *testing.T) {
	base, _ := served(t, nil)
	cases := []struct {
		method, path string
		body         any
		status       int
		title        string
	}{
		{"GET", "/v2/process-instances/12345", nil, 404, "NOT_FOUND"},
		{"GET", "/v2/process-instances/abc", nil, 400, "INVALID_ARGUMENT"},
		{"POST", "/v2/process-instances", map[string]any{"processDefinitionId": "nope"}, 404, "NOT_FOUND"},
		{"POST", "/v2/process-instances", map[string]any{}, 400, "INVALID_ARGUMENT"},
		{"POST", "/v2/jobs/77/completion", map[string]any{}, 404, "NOT_FOUND"},
		{"POST", "/v2/jobs/activation", map[string]any{"type": "x", "timeout": 0, "maxJobsToActivate": 1}, 400, "INVALID_ARGUMENT"},
		{"POST", "/v2/process-instances/search", map[string]any{"filter": map[string]any{"nonsense": 1}}, 400, "INVALID_ARGUMENT"},
		{"PATCH", "/v2/jobs/77", map[string]any{"changeset": map[string]any{"timeout": 5}}, 501, "NOT_IMPLEMENTED"},
		{"POST", "/v2/messages/correlation", map[string]any{"name": "m", "correlationKey": "k"}, 404, "NOT_FOUND"},
		{"POST", "/v2/expression/evaluation", map[string]any{"expression": "= 1 +"}, 400, "INVALID_ARGUMENT"},
	}
	for _, c := range cases {
		status, body := do(t, c.method, base+c.path, c.body, nil)
		var p rest.Problem
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("%s %s: not a problem detail: %s", c.method, c.path, body)
			continue
		}
		if status != c.status || p.Status != c.status || p.Title != c.title || p.Detail == "" || p.Instance != c.path {
			t.Errorf("%s %s: %d %+v, want %d %s", c.method, c.path, status, p, c.status, c.title)
		}
	}
	status, body := deploy(t, base, map[string][]byte{"order.form": []byte(`{"components": []}`)})
	if status != http.StatusBadRequest || !strings.Contains(string(body), "not forms") {
		t.Errorf("a .form deployment: %d %s", status, body)
	}
}

// TestAPI_DeployDecisions: a .dmn resource deploys its decisions (listed
// as decision definitions, with the model's id as the requirements id),
// and a business rule task of a process deployed beside it evaluates one.
func TestAPI_DeployDecisions(t *testing.T) {
	base, _ := served(t, nil)
	status, body := deploy(t, base, map[string][]byte{"grade.dmn": testdata(t, "grade.dmn")})
	if status != http.StatusOK {
		t.Fatalf("deploy: %d %s", status, body)
	}
	var dep rest.DeploymentResult
	if err := json.Unmarshal(body, &dep); err != nil || len(dep.Deployments) != 1 || dep.Deployments[0].DecisionDefinition == nil {
		t.Fatalf("deploy answered %s (%v)", body, err)
	}
	d := dep.Deployments[0].DecisionDefinition
	if d.DecisionDefinitionID != "grade" || d.Version != 1 || d.Name != "Grade" || d.DecisionRequirementsID != "grading" || d.DecisionDefinitionKey == "" {
		t.Errorf("decision definition = %+v", d)
	}
	if status, body := deploy(t, base, map[string][]byte{"grade.bpmn": testdata(t, "grade.bpmn")}); status != http.StatusOK {
		t.Fatalf("deploy: %d %s", status, body)
	}
	var created rest.CreateProcessInstanceResult
	status, body = do(t, "POST", base+"/v2/process-instances", map[string]any{"processDefinitionId": "ct-grade",
		"variables": map[string]any{"score": 95}, "awaitCompletion": true}, &created)
	if status != http.StatusOK {
		t.Fatalf("create: %d %s", status, body)
	}
	if created.Variables["grade"] != "A" {
		t.Errorf("grade = %v, want A (variables %v)", created.Variables["grade"], created.Variables)
	}
}

func TestAPI_ClockPinFiresTimer(t *testing.T) {
	base, clk := served(t, nil)
	if status, body := deploy(t, base, map[string][]byte{"timer.bpmn": testdata(t, "timer.bpmn")}); status != http.StatusOK {
		t.Fatalf("deploy: %d %s", status, body)
	}
	start := time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)
	if status, body := do(t, "PUT", base+"/v2/clock", map[string]any{"timestamp": start.UnixMilli()}, nil); status != http.StatusNoContent {
		t.Fatalf("pin: %d %s", status, body)
	}
	var created rest.CreateProcessInstanceResult
	if status, body := do(t, "POST", base+"/v2/process-instances", map[string]any{"processDefinitionId": "ct-timer"}, &created); status != http.StatusOK {
		t.Fatalf("create: %d %s", status, body)
	}
	do(t, "PUT", base+"/v2/clock", map[string]any{"timestamp": start.Add(2 * time.Hour).UnixMilli()}, nil)
	var inst rest.ProcessInstanceResult
	deadline := time.Now().Add(10 * time.Second)
	for inst.State != "COMPLETED" && time.Now().Before(deadline) {
		do(t, "GET", base+"/v2/process-instances/"+created.ProcessInstanceKey, nil, &inst)
		time.Sleep(20 * time.Millisecond)
	}
	if inst.State != "COMPLETED" {
		t.Fatalf("the timer did not fire after the pin moved past it: %+v", inst)
	}
	if status, _ := do(t, "POST", base+"/v2/clock/reset", nil, nil); status != http.StatusNoContent {
		t.Fatalf("reset: %d", status)
	}
	if _, pinned := clk.Pinned(); pinned {
		t.Fatal("the clock is still pinned after reset")
	}
}
