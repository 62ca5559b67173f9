package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderPeers checks the peer table: a row per shared workload a peer
// ran, flowtrack's hosts in the same mode beside it with their ratio to
// the peer, and "ahead of peer" marked for each host that was measured.
func TestRenderPeers(t *testing.T) {
	tp := func(host, w, mode string, ips float64) map[string]any {
		return map[string]any{"kind": "throughput", "host": host, "workload": w, "mode": mode, "ok": true,
			"ips_median": ips, "ips_min": ips, "ips_max": ips, "p50_us": 8000.0, "p99_us": 20000.0}
	}
	peer := func(w string, ips float64) map[string]any {
		r := tp("peer-bpmn-engine", w, "seq", ips)
		r["peer_version"] = "25.0.1"
		return r
	}
	adapted := peer("exclusive", 200)
	adapted["adapted"] = "condition as a JavaScript script"
	failed := peer("timer", 0)
	failed["ok"], failed["error"] = false, "instance 3 did not end"
	recs := []map[string]any{
		{"kind": "env", "commit": "c", "started": "s", "cpus": 2.0},
		tp("native", "straight", "seq", 100_000),
		tp("wazero", "straight", "seq", 50),
		tp("node", "straight", "seq", 8_000),
		tp("native", "straight", "conc", 150_000),
		tp("native", "message", "seq", 40_000),
		tp("native", "inclusive", "seq", 30_000),
		peer("straight", 100),
		adapted,
		peer("message", 200),
		peer("inclusive", 10), // not a shared workload: no row
		failed,
	}
	got := render(recs, nil)
	for _, want := range []string{
		"| straight | seq | bpmn-engine 25.0.1 | 100 (100–100) | 100,000 (100,000–100,000) | 50 (50–50) | 8,000 (8,000–8,000) | 1000.0x | 0.5x | 80.0x | 8000/20000 | native ahead of peer ✓; wazero ahead of peer ✗; node ahead of peer ✓ |",
		"| message | seq | bpmn-engine 25.0.1 | 200 (200–200) | 40,000 (40,000–40,000) | – | – | 200.0x | – | – | 8000/20000 | native ahead of peer ✓ |",
		"| exclusive | seq | bpmn-engine 25.0.1 (condition as a JavaScript script) | 200 (200–200) | – | – | – | – | – | – | 8000/20000 |  |",
		"| timer | seq | bpmn-engine 25.0.1 | FAILED |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"| inclusive | seq | bpmn-engine", "| straight | 100 in flight | bpmn-engine"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("report has %q:\n%s", unwanted, got)
		}
	}
	// Skipped: one line that says why, and no table.
	skipped := []map[string]any{recs[0], recs[1], {"kind": "skipped", "part": "peer", "reason": "bpmn-engine not installed; run npm ci in bench/peer"}}
	got = render(skipped, nil)
	if !strings.Contains(got, "\nPeers: skipped (peer: bpmn-engine not installed; run npm ci in bench/peer)\n") || strings.Contains(got, "native/peer") {
		t.Errorf("skipped peer part:\n%s", got)
	}
	// Neither measured nor skipped: nothing.
	if got = render(recs[:2], nil); strings.Contains(got, "Peers") {
		t.Errorf("peer section without a peer run:\n%s", got)
	}
}

// TestPeerMissing checks the peer part's check: missing until bpmn-engine
// is installed under bench/peer/node_modules.
func TestPeerMissing(t *testing.T) {
	root := t.TempDir()
	if got := peerMissing(root); got != "bpmn-engine not installed; run npm ci in bench/peer" {
		t.Errorf("empty root: %q", got)
	}
	dir := filepath.Join(root, "bench", "peer", "node_modules", "bpmn-engine")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"version":"25.0.1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := peerMissing(root); got != "" {
		t.Errorf("installed: %q", got)
	}
}
