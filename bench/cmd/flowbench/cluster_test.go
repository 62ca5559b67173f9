package main

import (
	"strings"
	"testing"
)

// TestRenderCluster checks the scaling table: a row per workload and mode
// measured, each size in its column, a failed row marked, none without a
// cluster run.
func TestRenderCluster(t *testing.T) {
	row := func(host, w, mode string, ips, p50, p99 float64, ok bool) map[string]any {
		return map[string]any{"kind": "cluster", "host": host, "workload": w, "mode": mode, "ok": ok,
			"ips_median": ips, "ips_min": ips - 10, "ips_max": ips + 10, "p50_us": p50, "p99_us": p99}
	}
	env := map[string]any{"kind": "env", "commit": "c", "started": "s", "cpus": 2.0}
	recs := []map[string]any{env,
		row("bbolt", "straight", "conc", 6000, 12000, 50000, true),
		row("cluster-1", "straight", "conc", 1000, 96000, 227000, true),
		row("cluster-3", "straight", "conc", 0, 0, 0, false),
	}
	got := render(recs, nil)
	for _, want := range []string{
		"| straight | 100 in flight | 6,000 (5,990–6,010) | 1,000 (990–1,010) | – | FAILED | 12.0 / 50.0 · 96.0 / 227.0 · – · – |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| message |") || strings.Contains(got, "| straight | seq |") {
		t.Errorf("rows that were not measured:\n%s", got)
	}
	if got := render(recs[:1], nil); strings.Contains(got, "The cluster") {
		t.Errorf("cluster table without a cluster run:\n%s", got)
	}
}
