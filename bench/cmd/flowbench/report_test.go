package main

import (
	"strings"
	"testing"
)

// TestRenderStartupGoals checks the start-up and size rows against issue
// #21's goals: each figure with its own mark.
func TestRenderStartupGoals(t *testing.T) {
	cold := func(host, variant string, ms float64) map[string]any {
		return map[string]any{"kind": "cold", "host": host, "variant": variant, "ms": ms}
	}
	recs := []map[string]any{
		{"kind": "env", "commit": "c", "started": "s", "cpus": 2.0},
		cold("wazero", "compile+init, disk cache", 80),
		cold("wazero", "fresh process, disk cache", 140),
		cold("node", "first Engine.create (read+compile+init)", 61),
		cold("node", "Engine.create from compiled module", 15),
		cold("chromium", "first page load Engine.create", 300),
		cold("chromium", "later page load Engine.create", 25),
		cold("chromium", "later page load Engine.create from compiled module", 4),
		{"kind": "size", "host": "wasm", "variant": "raw", "bytes": 12e6},
		{"kind": "size", "host": "wasm", "variant": "gzip -9", "bytes": 1.2e6},
		{"kind": "size", "host": "wasm", "variant": "brotli 11", "bytes": 0.9e6},
	}
	got := render(recs, nil)
	for _, want := range []string{
		"80.0 ms disk cache · 140.0 ms fresh process, disk cache",
		"wazero disk cache ≤ 100 ms ✓ (fresh process ✗); Node first create ≤ 60 ms ✗, from compiled ≤ 15 ms ✓",
		"300.0 ms first load · 25.0 ms later load · 4.0 ms later load, create from compiled",
		"later page load ≤ 20 ms ✗",
		"12.00 MB · 1.20 MB · 0.90 MB",
		"≤ 1.2 MB gzip ✓",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	// Without a Chromium run there is no browser row, and no brotli figure.
	got = render(recs[:5], nil)
	if strings.Contains(got, "Chromium") {
		t.Errorf("browser row without a browser run:\n%s", got)
	}
}

// TestRenderFloor checks the goroutine floor's row and its goal on native
// straight and exclusive one at a time, and on no other row.
func TestRenderFloor(t *testing.T) {
	tp := func(host, w, mode string, ips float64) map[string]any {
		return map[string]any{"kind": "throughput", "host": host, "workload": w, "mode": mode, "ok": true,
			"ips_median": ips, "ips_min": ips, "ips_max": ips}
	}
	recs := []map[string]any{
		{"kind": "env", "commit": "c", "started": "s", "cpus": 2.0},
		tp("native", "straight", "seq", 180_000),
		tp("native", "exclusive", "seq", 120_000),
		tp("native", "straight", "conc", 90_000),
		tp("floor", "floor", "seq", 150_000),
	}
	got := render(recs, nil)
	for _, want := range []string{
		"| straight | seq | 180,000 (180,000–180,000) |",
		"native ≥ goroutine floor (120%) ✓",
		"native ≥ goroutine floor (80%) ✗",
		"| goroutine floor: 10 channel round trips per instance | seq | 150,000 (150,000–150,000) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "goroutine floor ("); n != 2 {
		t.Errorf("floor goal on %d rows, want 2 (straight and exclusive one at a time):\n%s", n, got)
	}
	// Without a floor record, no floor goal and no floor row.
	got = render(recs[:4], nil)
	if strings.Contains(got, "floor") {
		t.Errorf("floor without a floor run:\n%s", got)
	}
}

// TestRenderScaleGoal checks the correlation row against issue #21's goal:
// p99 with 100k waiting at most 1.5x the p99 with 1k.
func TestRenderScaleGoal(t *testing.T) {
	for _, tc := range []struct {
		p99k, want string
		p99        float64
	}{{"40.0", "(1.50x) | | | | | | | | p99 ≤ 1.5x ✓", 60}, {"40.0", "(1.52x) | | | | | | | | p99 ≤ 1.5x ✗", 61}} {
		recs := []map[string]any{
			{"kind": "env", "commit": "c", "started": "s", "cpus": 2.0},
			{"kind": "scale", "host": "native", "corr_1k_p50_us": 5.0, "corr_100k_p50_us": 9.0, "corr_1k_p99_us": 40.0, "corr_100k_p99_us": tc.p99},
		}
		got := render(recs, nil)
		if !strings.Contains(got, "p99 "+tc.p99k+" vs ") || !strings.Contains(got, tc.want) {
			t.Errorf("p99 %v: report lacks %q:\n%s", tc.p99, tc.want, got)
		}
	}
}
