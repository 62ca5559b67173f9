package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/server"
	"github.com/flowtrack/flowtrack/server/monitor"
)

// TestCluster_Readiness: a node that serves no partition is not ready
// (/readyz 503) and reports every partition unowned by it; once it takes
// the partition over from a node that left, it is ready and reports the
// partition owned, its lease renewals and the work it served.
func TestCluster_Readiness(t *testing.T) {
	ctx := context.Background()
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	connect := func() *nats.Conn {
		nc, err := nats.Connect(ns.ClientURL(), nats.ReconnectBufSize(-1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	cfg := cluster.Config{Cluster: "ready", Partitions: 1, LeaseTTL: testtime.Scale(2 * time.Second)}
	logs := map[string]*lockedBuffer{}
	start := func(name string) (*cluster.Node, *monitor.Monitor, string) {
		nc := connect()
		mon := monitor.New()
		mon.SetNATS(nc, nil)
		c := cfg
		logs[name] = &lockedBuffer{}
		c.Node, c.Monitor, c.Logger = name, mon, slog.New(slog.NewJSONHandler(logs[name], nil))
		n, err := cluster.Start(ctx, nc, c)
		if err != nil {
			t.Fatal(err)
		}
		web := httptest.NewServer(mon.Handler())
		t.Cleanup(web.Close)
		return n, mon, web.URL
	}
	waitReady := func(url string, want int) {
		t.Helper()
		deadline := time.Now().Add(testtime.Scale(30 * time.Second))
		for {
			resp, err := http.Get(url + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz stays %d, want %d", resp.StatusCode, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	a, _, urlA := start("a")
	waitReady(urlA, http.StatusOK)
	b, _, urlB := start("b")
	t.Cleanup(func() { _ = b.Close(ctx) })
	// b joined a cluster whose one partition a holds: b routes, serves
	// nothing, and is not ready.
	waitReady(urlB, http.StatusServiceUnavailable)
	if v := gauge(t, urlB, "flowtrack_partition_owned", "1"); v != 0 {
		t.Fatalf("b reports partition 1 owned (%v) before it takes it", v)
	}
	if v := gauge(t, urlA, "flowtrack_partition_owned", "1"); v != 1 {
		t.Fatalf("a reports partition 1 owned %v, want 1", v)
	}
	xml, err := os.ReadFile("../engine/tally/testdata/shop.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	cb := client.New(connect(), "ready")
	if _, err := cb.Deploy(ctx, "shop.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitReady(urlB, http.StatusOK)
	if v := gauge(t, urlB, "flowtrack_partition_owned", "1"); v != 1 {
		t.Fatalf("b reports partition 1 owned %v after taking it, want 1", v)
	}
	if _, err := cb.Start(ctx, "shop", map[string]any{"orderId": "x"}); err != nil {
		t.Fatal(err)
	}
	fams := scrapeURL(t, urlB)
	if v := counterOf(fams, "flowtrack_instances_started_total", map[string]string{"partition": "1", "process": "shop"}); v != 1 {
		t.Errorf("b's instances started on partition 1: %v, want 1", v)
	}
	// b's log is JSON lines, the lease it took among them, with the
	// cluster, the node and the partition as attributes.
	var taken map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs["b"].String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("b's log line %q is not JSON: %v", line, err)
		}
		if rec["msg"] == "lease taken" {
			taken = rec
		}
	}
	if taken == nil || taken["cluster"] != "ready" || taken["node"] != "b" || taken["partition"] != float64(1) || taken["level"] != "INFO" {
		t.Errorf("b's lease taken line: %v\nlog:\n%s", taken, logs["b"].String())
	}
	// b renews its lease every TTL/4 from when it took the partition.
	deadline := time.Now().Add(testtime.Scale(30 * time.Second))
	for counterOf(scrapeURL(t, urlB), "flowtrack_lease_renewals_total", map[string]string{"result": "ok"}) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("b renewed no lease")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lockedBuffer is a bytes.Buffer a logger writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// counterOf is the value of the series of name with labels want (-1:
// none).
func counterOf(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
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
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.Gauge.GetValue()
	}
	return -1
}

func gauge(t *testing.T, url, name, partition string) float64 {
	t.Helper()
	return counterOf(scrapeURL(t, url), name, map[string]string{"partition": partition})
}
