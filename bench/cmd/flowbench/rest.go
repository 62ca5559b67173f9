package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/bench/workload"
	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/server"
	"github.com/flowtrack/flowtrack/server/rest"
)

// restRuns and restN size a REST row: three runs of restN instances
// after a warm-up run (calls over HTTP and NATS with synced commits run
// at hundreds to thousands a second).
const (
	restRuns     = 3
	restN        = 300
	restInFlight = 16
)

// restBench measures Camunda's REST API (server/rest) on one flowtrack
// serve beside the NATS path (package client) to the same server:
// create-and-await of straight-10 (awaitCompletion over HTTP; the start
// operation, whose answer is the settled state, over NATS), one at a time
// and restInFlight at once; and a job worker loop on jobs-10 (activate
// up to 32 jobs, complete each, until every instance ended). Rows have
// kind "rest" and host "rest" or "nats".
func restBench(dirs workload.Dirs, fixedN int) []workload.Result {
	n := restN
	if fixedN > 0 {
		n = fixedN
	}
	var out []workload.Result
	fail := func(err error) []workload.Result {
		for _, h := range []string{"rest", "nats"} {
			out = append(out, workload.Result{Kind: "rest", Host: h, Workload: "straight", Error: err.Error()})
		}
		return out
	}
	dir, err := os.MkdirTemp("", "flowbench-rest-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	ns, err := server.StartNATS(dir, 0)
	if err != nil {
		return fail(err)
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		return fail(err)
	}
	defer nc.Close()
	ctx := context.Background()
	srv, err := server.New(ctx, nc, server.Config{Cluster: "restbench", Engine: []engine.Option{engine.WithRetainFinished(100_000)}})
	if err != nil {
		return fail(err)
	}
	defer func() { _ = srv.Close(ctx) }()
	hs, err := rest.Listen(rest.ListenConfig{Addr: "127.0.0.1:0", API: rest.Config{Conn: nc, Cluster: "restbench"}})
	if err != nil {
		return fail(err)
	}
	defer func() { _ = hs.Close(ctx) }()
	base := hs.URL() + "/v2"
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: restInFlight * 2}}
	c := client.New(nc, "restbench")
	for _, name := range []string{"straight", "jobs"} {
		w, _ := workload.Find(name)
		xml, err := dirs.XML(w)
		if err != nil {
			return fail(err)
		}
		if err := restDeploy(httpc, base, w.File, xml); err != nil {
			return fail(err)
		}
	}
	straightREST := func() error {
		var res struct {
			ProcessInstanceKey string `json:"processInstanceKey"`
		}
		return restPost(httpc, base+"/process-instances", map[string]any{"processDefinitionId": "straight", "awaitCompletion": true}, &res)
	}
	straightNATS := func() error {
		var res struct {
			State engine.State `json:"state"`
		}
		raw, err := c.Call(ctx, "start", []byte(`{"processId":"straight"}`))
		if err == nil {
			err = json.Unmarshal(raw, &res)
		}
		if err == nil && res.State != engine.State("completed") {
			err = fmt.Errorf("straight ended %q", res.State)
		}
		return err
	}
	for _, m := range []workload.Mode{workload.Seq, workload.Conc} {
		out = append(out, restMeasure("rest", "straight", m, n, straightREST), restMeasure("nats", "straight", m, n, straightNATS))
	}
	// The job worker loop: n/10 instances of jobs-10 are n jobs.
	jobsREST := func(jobs int) error {
		for i := 0; i < jobs/10; i++ {
			if err := restPost(httpc, base+"/process-instances", map[string]any{"processDefinitionId": "jobs"}, nil); err != nil {
				return err
			}
		}
		for done := 0; done < jobs; {
			var act struct {
				Jobs []struct {
					JobKey string `json:"jobKey"`
				} `json:"jobs"`
			}
			if err := restPost(httpc, base+"/jobs/activation", map[string]any{"type": "work", "worker": "bench", "timeout": 30_000,
				"maxJobsToActivate": 32, "requestTimeout": 5_000}, &act); err != nil {
				return err
			}
			if len(act.Jobs) == 0 {
				return fmt.Errorf("no job to activate after %d of %d", done, jobs)
			}
			for _, j := range act.Jobs {
				if err := restPost(httpc, base+"/jobs/"+j.JobKey+"/completion", map[string]any{}, nil); err != nil {
					return err
				}
				done++
			}
		}
		return nil
	}
	jobsNATS := func(jobs int) error {
		for i := 0; i < jobs/10; i++ {
			if _, err := c.Start(ctx, "jobs", nil); err != nil {
				return err
			}
		}
		for done := 0; done < jobs; {
			act, err := c.ActivateJobs(ctx, "work", "bench", 30*time.Second, 32)
			if err != nil {
				return err
			}
			if len(act) == 0 {
				return fmt.Errorf("no job to activate after %d of %d", done, jobs)
			}
			for _, j := range act {
				if err := c.CompleteJob(ctx, j.Key, nil); err != nil {
					return err
				}
				done++
			}
		}
		return nil
	}
	out = append(out, restLoop("rest", n, jobsREST), restLoop("nats", n, jobsNATS))
	for _, r := range out {
		fmt.Fprintf(os.Stderr, "%-5s %-9s %-4s %8.0f /s  p50 %8.2fms  p99 %8.2fms  %s\n", r.Host, r.Workload, r.Mode, r.Median, r.P50us/1000, r.P99us/1000, r.Error)
	}
	return out
}

// restMeasure runs call n times per run (one at a time, or restInFlight
// at once), after a warm-up run, and reports the median rate and the
// call latencies.
func restMeasure(host, name string, mode workload.Mode, n int, call func() error) workload.Result {
	r := workload.Result{Kind: "rest", Host: host, Workload: name, Mode: mode, N: n, Runs: restRuns, Allocs: -1, Bytes: -1}
	var rates []float64
	var lats []time.Duration
	for run := 0; run <= restRuns; run++ {
		var mu sync.Mutex
		var first error
		work := make(chan struct{}, n)
		for range n {
			work <- struct{}{}
		}
		close(work)
		par := 1
		if mode == workload.Conc {
			par = restInFlight
		}
		t0 := time.Now()
		var wg sync.WaitGroup
		for range par {
			wg.Go(func() {
				for range work {
					s := time.Now()
					err := call()
					d := time.Since(s)
					mu.Lock()
					if err != nil && first == nil {
						first = err
					}
					if run > 0 {
						lats = append(lats, d)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if first != nil {
			r.Error = first.Error()
			return r
		}
		if run > 0 {
			rates = append(rates, float64(n)/time.Since(t0).Seconds())
		}
	}
	r.OK = true
	r.Median, r.Min, r.Max = stats(rates)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	r.P50us = float64(lats[len(lats)/2].Microseconds())
	r.P99us = float64(lats[len(lats)*99/100].Microseconds())
	return r
}

// restLoop times a job worker loop of n jobs per run.
func restLoop(host string, n int, loop func(jobs int) error) workload.Result {
	r := workload.Result{Kind: "rest", Host: host, Workload: "jobs", Mode: workload.Seq, N: n, Runs: restRuns, Allocs: -1, Bytes: -1}
	var rates []float64
	for run := 0; run <= restRuns; run++ {
		t0 := time.Now()
		if err := loop(n); err != nil {
			r.Error = err.Error()
			return r
		}
		if run > 0 {
			rates = append(rates, float64(n)/time.Since(t0).Seconds())
		}
	}
	r.OK = true
	r.Median, r.Min, r.Max = stats(rates)
	r.P50us, r.P99us = 1e6/r.Median, -1 // per job, not a latency distribution
	return r
}

func stats(rates []float64) (median, lo, hi float64) {
	sort.Float64s(rates)
	return rates[len(rates)/2], rates[0], rates[len(rates)-1]
}

func restDeploy(c *http.Client, base, name string, xml []byte) error {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("resources", name)
	if err != nil {
		return err
	}
	_, _ = fw.Write(xml)
	_ = mw.Close()
	resp, err := c.Post(base+"/deployments", mw.FormDataContentType(), &buf)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("deploy %s: %s %s", name, resp.Status, body)
	}
	return nil
}

func restPost(c *http.Client, url string, body, out any) error {
	data, _ := json.Marshal(body)
	resp, err := c.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("POST %s: %s %s", url, resp.Status, strings.TrimSpace(string(raw)))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// renderREST adds the REST API's table (flowbench rest), when the run
// measured it.
func renderREST(b *strings.Builder, find func(kind, host string, match func(map[string]any) bool) map[string]any) {
	type row struct{ name, workload, mode string }
	rows := []row{{"create-and-await straight-10, one at a time", "straight", "seq"},
		{fmt.Sprintf("create-and-await straight-10, %d in flight", restInFlight), "straight", "conc"},
		{"job worker loop on jobs-10 (activate 32, complete each): jobs/s", "jobs", "seq"}}
	var lines []string
	for _, rw := range rows {
		var cells []string
		measured := false
		for _, h := range []string{"rest", "nats"} {
			r := find("rest", h, func(r map[string]any) bool { return r["workload"] == rw.workload && r["mode"] == rw.mode })
			measured = measured || r != nil
			cells = append(cells, rate(r, false))
			if rw.workload == "jobs" {
				cells = append(cells, "")
			} else {
				cells = append(cells, latMs(r))
			}
		}
		if measured {
			lines = append(lines, fmt.Sprintf("| %s | %s |\n", rw.name, strings.Join(cells, " | ")))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nThe REST API (flowbench rest): Camunda's /v2 on one flowtrack serve beside the NATS path to the same server, every commit synced\n\n")
	b.WriteString("| measure | REST /s | REST p50 / p99 ms | NATS /s | NATS p50 / p99 ms |\n|---|---|---|---|---|\n")
	for _, l := range lines {
		b.WriteString(l)
	}
}
