package monitor_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/server"
	"github.com/flowtrack/flowtrack/server/monitor"
)

// scrape fetches /metrics from h and parses it with Prometheus' text
// parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value returns the value of the series of family name whose labels
// include want, and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitState waits until instance key is in state want.
func waitState(t *testing.T, c *client.Client, key int64, want engine.State) {
	t.Helper()
	deadline := time.Now().Add(testtime.Scale(20 * time.Second))
	for {
		inst, err := c.Instance(context.Background(), key)
		if err == nil && inst.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %d did not become %s (last: %+v, %v)", key, want, inst, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMonitor_SingleServer runs a known workload through a server's NATS
// operations (as the REST API and every client do), then scrapes
// /metrics, parses it with Prometheus' text parser and checks each
// counter against what the workload did; /readyz is 503 until the
// server's engine is open and 200 after.
func TestMonitor_SingleServer(t *testing.T) {
	ctx := context.Background()
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
	mon := monitor.New()
	mon.SetNATS(nc, ns)
	web := httptest.NewServer(mon.Handler())
	t.Cleanup(web.Close)

	if code, body := get(t, web.URL+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	if code, body := get(t, web.URL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no engine") {
		t.Fatalf("/readyz before the server: %d %q, want 503 naming the engine", code, body)
	}
	srv, err := server.New(ctx, nc, server.Config{Cluster: "mon", Monitor: mon})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = srv.Close(ctx)
		}
	})
	if code, body := get(t, web.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with the server: %d %q", code, body)
	}

	c := client.New(nc, "mon")
	xml, err := os.ReadFile("../../engine/tally/testdata/shop.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, "shop.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for _, id := range []string{"o1", "o2", "o3"} {
		k, err := c.Start(ctx, "shop", map[string]any{"orderId": id})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	var jobs []engine.Job
	for deadline := time.Now().Add(testtime.Scale(20 * time.Second)); len(jobs) < 3; {
		got, err := c.ActivateJobs(ctx, "charge", "w", time.Minute, 3-len(jobs))
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, got...)
		if time.Now().After(deadline) {
			t.Fatalf("activated %d jobs of 3", len(jobs))
		}
	}
	for _, j := range jobs {
		if j.InstanceKey == keys[2] {
			err = c.FailJob(ctx, j.Key, 0, "card declined")
		} else {
			err = c.CompleteJob(ctx, j.Key, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The messages wait for the subscriptions the completions open:
	// a message published first would be buffered, then correlated too,
	// so either order gives two correlations; publish after to keep the
	// count of buffered ones out of it.
	for _, k := range keys[:2] {
		for deadline := time.Now().Add(testtime.Scale(20 * time.Second)); ; {
			inst, err := c.Instance(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if len(inst.Incidents) == 0 && inst.State == engine.Active {
				toks, err := c.Tokens(ctx, k)
				if err == nil && len(toks) == 1 && toks[0].ElementID == "paid" {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("instance %d did not reach the message catch", k)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, key := range []string{"o1", "o2", "nobody"} {
		if err := c.PublishMessage(ctx, engine.Message{Name: "paid", CorrelationKey: key}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.BroadcastSignal(ctx, "ping", nil); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, keys[0], engine.Completed)
	waitState(t, c, keys[1], engine.Completed)
	if err := c.Cancel(ctx, keys[2]); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, keys[2], engine.Terminated)
	// A request for an operation nobody knows is answered with an error
	// and counted as "other".
	if _, err := nc.Request("flowtrack.mon.op.no_such_op", []byte(`{}`), testtime.Scale(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	// The observer feeding the tally runs behind the engine: the
	// engine settles (every observer has returned) before we read.
	if err := srv.Engine().Settle(ctx); err != nil {
		t.Fatal(err)
	}

	fams := scrape(t, web.URL)
	p1 := map[string]string{"partition": "1"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"partition": "1"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"flowtrack_instances_started_total", with("process", "shop"), 3},
		{"flowtrack_instances_ended_total", with("process", "shop", "state", "completed"), 2},
		{"flowtrack_instances_ended_total", with("process", "shop", "state", "terminated"), 1},
		{"flowtrack_instances_ended_total", with("process", "shop", "state", "failed"), 0},
		{"flowtrack_instances_active", with("process", "shop"), 0},
		{"flowtrack_element_activations_total", with("element_type", "serviceTask"), 3},
		{"flowtrack_element_activations_total", with("element_type", "intermediateCatchEvent"), 4},
		{"flowtrack_element_activations_total", with("element_type", "endEvent"), 2},
		{"flowtrack_jobs_created_total", with("job_type", "charge"), 3},
		{"flowtrack_jobs_activated_total", with("job_type", "charge"), 3},
		{"flowtrack_jobs_completed_total", with("job_type", "charge"), 2},
		{"flowtrack_jobs_failed_total", with("job_type", "charge"), 1},
		{"flowtrack_jobs_canceled_total", with("job_type", "charge"), 1},
		{"flowtrack_jobs_activatable", with("job_type", "charge"), 0},
		{"flowtrack_incidents_created_total", p1, 1},
		{"flowtrack_incidents_open", p1, 0},
		{"flowtrack_messages_published_total", p1, 3},
		{"flowtrack_messages_correlated_total", p1, 2},
		{"flowtrack_signals_broadcast_total", p1, 1},
		{"flowtrack_timers_scheduled_total", p1, 2},
		{"flowtrack_timers_fired_total", p1, 2},
		{"flowtrack_timers_pending", p1, 0},
		{"flowtrack_events_total", with("type", "jobCreated"), 3},
		{"flowtrack_command_duration_seconds", map[string]string{"operation": "start"}, 3},
		{"flowtrack_command_duration_seconds", map[string]string{"operation": "publish_message"}, 3},
		{"flowtrack_command_errors_total", map[string]string{"operation": "other"}, 1},
		{"flowtrack_partitions", nil, 1},
		{"flowtrack_nats_connected", nil, 1},
	}
	for _, ck := range checks {
		got, ok := value(fams, ck.name, ck.labels)
		if !ok {
			t.Errorf("%s%v: no such series", ck.name, ck.labels)
		} else if got != ck.want {
			t.Errorf("%s%v = %v, want %v", ck.name, ck.labels, got, ck.want)
		}
	}
	// Every command commits at least once; a commit writes bytes.
	if n, _ := value(fams, "flowtrack_store_commit_duration_seconds", nil); n < 1 {
		t.Errorf("store commits observed: %v", n)
	}
	if b, _ := value(fams, "flowtrack_store_commit_bytes_total", nil); b <= 0 {
		t.Errorf("store commit bytes: %v", b)
	}
	if n, _ := value(fams, "flowtrack_nats_server_in_messages_total", nil); n <= 0 {
		t.Errorf("NATS server messages in: %v", n)
	}
	// No label holds an instance or job key.
	for name, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				for _, k := range keys {
					if l.GetValue() == fmt.Sprint(k) {
						t.Errorf("%s has instance key %d in label %s", name, k, l.GetName())
					}
				}
			}
		}
	}

	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	closed = true
	if code, _ := get(t, web.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz after Close: %d, want 503", code)
	}
	if _, ok := value(scrape(t, web.URL), "flowtrack_instances_started_total", with("process", "shop")); ok {
		t.Error("a closed server's engine is still reported")
	}
}
