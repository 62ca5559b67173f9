package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowtrack/flowtrack/bench/workload"
)

// peerPrefix starts the host name of every peer engine's records
// ("peer-bpmn-engine"), so that the report finds peers it does not know.
const peerPrefix = "peer-"

// peerMissing says why the peer part cannot run, or "" when it can: the
// peer driver (bench/peer/bench.mjs) needs bpmn-engine installed from
// bench/peer's lock file (make bench does it).
func peerMissing(root string) string {
	if _, err := os.Stat(filepath.Join(root, "bench", "peer", "node_modules", "bpmn-engine", "package.json")); err != nil {
		return "bpmn-engine not installed; run npm ci in bench/peer"
	}
	return ""
}

// renderPeers adds issue #21's peer table: each shared workload a peer
// engine ran (one at a time) beside flowtrack's native, wazero and Node
// rows in the same mode, each host's ratio to the peer, and the goal
// "ahead of every peer on every shared workload" marked per host. Without
// peer records it says why (a part skipped) or nothing.
func renderPeers(b *strings.Builder, recs []map[string]any, find func(kind, host string, match func(map[string]any) bool) map[string]any) {
	var hosts []string
	for _, r := range recs {
		h, _ := r["host"].(string)
		if r["kind"] == "throughput" && strings.HasPrefix(h, peerPrefix) && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	if len(hosts) == 0 {
		for _, r := range recs {
			if r["kind"] == "skipped" && r["part"] == "peer" {
				fmt.Fprintf(b, "\nPeers: skipped (peer: %v)\n", r["reason"])
			}
		}
		return
	}
	b.WriteString("\nPeers: the shared workloads on other engines, one at a time, beside flowtrack's rows in the same mode (issue #21: ahead of every peer on every shared workload)\n\n")
	b.WriteString("| workload | mode | peer | peer inst/s (min–max) | native inst/s | wazero inst/s | node inst/s | native/peer | wazero/peer | node/peer | p50 / p99 µs peer | goal |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range workload.All() {
		if !w.Shared {
			continue
		}
		for _, mode := range []string{"seq", "conc"} {
			get := func(host string) map[string]any {
				return find("throughput", host, func(r map[string]any) bool { return r["workload"] == w.Name && r["mode"] == mode })
			}
			nat, wz, nd := get("native"), get("wazero"), get("node")
			for _, h := range hosts {
				p := get(h)
				if p == nil {
					continue
				}
				modeName := mode
				if mode == "conc" {
					modeName = fmt.Sprintf("%d in flight", workload.InFlight)
				}
				peerIPS := ips(p)
				var goals []string
				for _, o := range []struct {
					name string
					r    map[string]any
				}{{"native", nat}, {"wazero", wz}, {"node", nd}} {
					if peerIPS > 0 && ips(o.r) > 0 {
						goals = append(goals, fmt.Sprintf("%s ahead of peer %s", o.name, mark(ips(o.r) > peerIPS)))
					}
				}
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
					w.Name, modeName, peerName(h, p), rate(p, true), rate(nat, false), rate(wz, false), rate(nd, false),
					fmtRatio(ratio(ips(nat), peerIPS)), fmtRatio(ratio(ips(wz), peerIPS)), fmtRatio(ratio(ips(nd), peerIPS)),
					lat(p), strings.Join(goals, "; "))
			}
		}
	}
}

// peerName is a peer row's engine: its name, version and how the driver
// adapted the workload for it, if it did.
func peerName(host string, r map[string]any) string {
	s := strings.TrimPrefix(host, peerPrefix)
	if v, _ := r["peer_version"].(string); v != "" {
		s += " " + v
	}
	if a, _ := r["adapted"].(string); a != "" {
		s += " (" + a + ")"
	}
	return s
}
