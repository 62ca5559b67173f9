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
