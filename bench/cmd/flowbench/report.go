package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/flowtrack/flowtrack/bench/workload"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func numCPU() int { return runtime.NumCPU() }

// render builds the one markdown table: a row per workload and mode with
// each host's throughput and its ratio to native, then rows for the scale
// run, cold starts and module size, each with its goal.
func render(recs []map[string]any, failures []string) string {
	var b strings.Builder
	env := recs[0]
	fmt.Fprintf(&b, "flowtrack bench %v, %v, %v CPUs, load avg before %v / after %v, %.0f s\n\n",
		env["commit"], env["started"], env["cpus"], env["load_before"], env["load_after"], num(env["seconds"]))
	b.WriteString("| workload | mode | native inst/s (min–max) | wazero inst/s | node inst/s | wazero/native | node/native | p50 / p99 µs native · wazero · node | allocs · bytes /inst native · wazero | peak RSS MB native · wazero · node | goal |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	find := func(kind, host string, match func(map[string]any) bool) map[string]any {
		for _, r := range recs {
			if r["kind"] == kind && r["host"] == host && (match == nil || match(r)) {
				return r
			}
		}
		return nil
	}
	fl := find("throughput", "floor", nil)
	for _, w := range workload.All() {
		for _, mode := range []string{"seq", "conc"} {
			get := func(host string) map[string]any {
				return find("throughput", host, func(r map[string]any) bool { return r["workload"] == w.Name && r["mode"] == mode })
			}
			nat, wz, nd := get("native"), get("wazero"), get("node")
			if nat == nil && wz == nil && nd == nil {
				continue
			}
			modeName := mode
			if mode == "conc" {
				modeName = fmt.Sprintf("%d in flight", workload.InFlight)
			}
			natIPS := ips(nat)
			wzRatio, ndRatio := ratio(natIPS, ips(wz)), ratio(natIPS, ips(nd))
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s · %s · %s | %s · %s | %s · %s · %s | %s |\n",
				w.Name, modeName, rate(nat, true), rate(wz, false), rate(nd, false), fmtRatio(wzRatio), fmtRatio(ndRatio),
				lat(nat), lat(wz), lat(nd), allocs(nat), allocs(wz), mb(nat, "peak_rss_mb"), mb(wz, "peak_rss_mb"), mb(nd, "peak_rss_mb"),
				goal(w.Name, mode, natIPS, ips(fl), wzRatio, ndRatio))
		}
	}
	if fl != nil {
		fmt.Fprintf(&b, "| goroutine floor: %d channel round trips per instance | seq | %s | | | | | %s | %s | %s | the floor of native straight and exclusive, one at a time |\n",
			workload.FloorSteps, rate(fl, true), lat(fl), allocs(fl), mb(fl, "peak_rss_mb"))
	}
	if s := find("scale", "native", nil); s != nil {
		perKB := num(s["bytes_per_parked"]) / 1024
		parked := num(s["rss_parked_mb"])
		fmt.Fprintf(&b, "| scale: %.0f parked on a message catch | memory | %.1f KB/instance heap+stacks (heap %.1f, stacks %.1f), %.1f KB RSS; RSS %.0f MB parked, peak %.0f MB through the drain; parked in %.1f s | | | | | | | | ≤ 16 KB/instance %s, ≤ 1.6 GB RSS parked %s |\n",
			num(s["parked"]), perKB, num(s["heap_bytes_per_parked"])/1024, num(s["stack_bytes_per_parked"])/1024, num(s["rss_bytes_per_parked"])/1024,
			parked, num(s["peak_rss_mb"]), num(s["park_seconds"]), mark(perKB > 0 && perKB <= 16), mark(parked > 0 && parked <= 1600))
		c1, c100 := num(s["corr_1k_p50_us"]), num(s["corr_100k_p50_us"])
		p1, p100 := num(s["corr_1k_p99_us"]), num(s["corr_100k_p99_us"])
		fmt.Fprintf(&b, "| scale: correlation publish→completed | 1k vs 100k waiting | p50 %.1f µs vs %.1f µs (%.2fx); p99 %.1f vs %.1f µs (%.2fx) | | | | | | | | p99 ≤ 1.5x %s |\n",
			c1, c100, c100/c1, p1, p100, p100/p1, mark(p1 > 0 && p100/p1 <= 1.5))
		fmt.Fprintf(&b, "| scale: correlate all | drain | %.0f completed, %.0f/s, %.0f goroutines leaked | | | | | | | | all completed, none leaked %s |\n",
			num(s["completed"]), num(s["drain_per_s"]), num(s["goroutines_leaked"]), mark(s["ok"] == true))
	} else if !hasFailure(failures, "scale") {
		b.WriteString("| scale | | skipped | | | | | | | | |\n")
	}
	for _, mode := range []string{"goroutines", "direct"} {
		d := find("dry", "native", func(r map[string]any) bool { return r["resumption"] == mode })
		if d == nil {
			if !hasFailure(failures, "dry") {
				fmt.Fprintf(&b, "| dehydrated (%s) | | skipped | | | | | | | | |\n", mode)
			}
			continue
		}
		perKB := num(d["bytes_per_parked"]) / 1024
		fmt.Fprintf(&b, "| dehydrated: %.0f parked on a message catch (%s) | memory | %.2f KB/instance heap+stacks (heap %.2f, stacks %.2f); RSS +%.0f MB; parked and dehydrated in %.1f s | | | | | | | | ≤ 1.5 KB/instance %s |\n",
			num(d["parked"]), mode, perKB, num(d["heap_bytes_per_parked"])/1024, num(d["stack_bytes_per_parked"])/1024, num(d["rss_parked_mb"]), num(d["park_seconds"]),
			mark(perKB > 0 && perKB <= 1.5))
		live, dried := num(d["live_p99_us"]), num(d["dry_p99_us"])
		fmt.Fprintf(&b, "| dehydrated: correlation publish→completed (%s) | live vs dehydrated | p50 %.1f vs %.1f µs; p99 %.1f vs %.1f µs (%.2fx) | | | | | | | | p99 ≤ 5x live %s |\n",
			mode, num(d["live_p50_us"]), num(d["dry_p50_us"]), live, dried, dried/live, mark(live > 0 && dried/live <= 5))
		fmt.Fprintf(&b, "| dehydrated: correlate all (%s) | drain | %.0f completed, %.0f/s, %.0f goroutines leaked | | | | | | | | all completed, none leaked %s |\n",
			mode, num(d["completed"]), num(d["drain_per_s"]), num(d["goroutines_leaked"]), mark(d["ok"] == true))
	}
	coldMs := func(host, variant string) string {
		r := find("cold", host, func(r map[string]any) bool { return r["variant"] == variant })
		if r == nil {
			return "–"
		}
		if e, _ := r["error"].(string); e != "" {
			return "error"
		}
		return fmt.Sprintf("%.1f ms", num(r["ms"]))
	}
	// within is the mark for a cold-start figure against its goal in ms.
	within := func(host, variant string, goalMs float64) string {
		r := find("cold", host, func(r map[string]any) bool { return r["variant"] == variant })
		return mark(r != nil && num(r["ms"]) > 0 && num(r["ms"]) <= goalMs)
	}
	fmt.Fprintf(&b, "| cold start | compile+init | %s (engine.New+deploy) | %s no cache · %s disk cache · %s fresh process, disk cache · %s compiled | %s first create · %s compile only · %s create from compiled | | | | | | wazero disk cache ≤ 100 ms %s (fresh process %s); Node first create ≤ 60 ms %s, from compiled ≤ 15 ms %s |\n",
		coldMs("native", "engine.New+deploy straight"),
		coldMs("wazero", "compile+init, no cache"), coldMs("wazero", "compile+init, disk cache"), coldMs("wazero", "fresh process, disk cache"), coldMs("wazero", "instantiate+init (compiled)"),
		coldMs("node", "first Engine.create (read+compile+init)"), coldMs("node", "WebAssembly.compile"), coldMs("node", "Engine.create from compiled module"),
		within("wazero", "compile+init, disk cache", 100), within("wazero", "fresh process, disk cache", 100),
		within("node", "first Engine.create (read+compile+init)", 60),
		within("node", "Engine.create from compiled module", 15))
	if find("cold", "chromium", nil) != nil {
		fmt.Fprintf(&b, "| cold start, browser | Chromium page, Engine.create | | | %s first load · %s later load · %s later load, create from compiled | | | | | | later page load ≤ 20 ms %s |\n",
			coldMs("chromium", "first page load Engine.create"), coldMs("chromium", "later page load Engine.create"),
			coldMs("chromium", "later page load Engine.create from compiled module"),
			within("chromium", "later page load Engine.create", 20))
	}
	raw := find("size", "wasm", func(r map[string]any) bool { return r["variant"] == "raw" })
	gz := find("size", "wasm", func(r map[string]any) bool { return r["variant"] == "gzip -9" })
	br := find("size", "wasm", func(r map[string]any) bool { return r["variant"] == "brotli 11" })
	if raw != nil && gz != nil {
		g, brotli := num(gz["bytes"])/1e6, "–"
		if br != nil {
			brotli = fmt.Sprintf("%.2f MB", num(br["bytes"])/1e6)
		}
		fmt.Fprintf(&b, "| module size | raw · gzip -9 · brotli 11 | | %.2f MB · %.2f MB · %s | | | | | | | ≤ 1.2 MB gzip %s |\n", num(raw["bytes"])/1e6, g, brotli, mark(g <= 1.2))
	}
	renderPeers(&b, recs, find)
	renderStore(&b, find)
	renderCluster(&b, find)
	renderREST(&b, find)
	if len(failures) > 0 {
		b.WriteString("\nCORRECTNESS FAILURES:\n")
		for _, f := range failures {
			b.WriteString("- " + f + "\n")
		}
	}
	return b.String()
}

// renderStore adds a table of the native engine with the embedded store
// (engine/boltstore), synced and not, beside the native engine in memory,
// when the run measured it.
func renderStore(b *strings.Builder, find func(kind, host string, match func(map[string]any) bool) map[string]any) {
	var rows []string
	for _, w := range workload.All() {
		for _, mode := range []string{"seq", "conc"} {
			get := func(host string) map[string]any {
				return find("throughput", host, func(r map[string]any) bool { return r["workload"] == w.Name && r["mode"] == mode })
			}
			nat, st, ns := get("native"), get("store"), get("store-nosync")
			if st == nil && ns == nil {
				continue
			}
			modeName := mode
			if mode == "conc" {
				modeName = fmt.Sprintf("%d in flight", workload.InFlight)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s · %s · %s |\n",
				w.Name, modeName, rate(nat, false), rate(st, false), rate(ns, false), lat(nat), lat(st), lat(ns)))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nThe embedded store: every command durable when it returns (one bbolt file; commands in flight share commits)\n\n")
	b.WriteString("| workload | mode | in memory inst/s | store, sync inst/s | store, no sync inst/s | p50 / p99 µs memory · sync · no sync |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r)
	}
}

// renderCluster adds issue #19's scaling table, when the run measured a
// cluster (flowbench cluster): straight and message through package
// client on 1, 2 and 3 nodes, beside the embedded engine on the bbolt
// store driven by the same loop.
func renderCluster(b *strings.Builder, find func(kind, host string, match func(map[string]any) bool) map[string]any) {
	hosts := []string{"bbolt", "cluster-1", "cluster-2", "cluster-3"}
	var rows []string
	for _, w := range clusterWorkloads {
		for _, mode := range []string{"seq", "conc"} {
			var cells, lats []string
			measured := false
			for _, h := range hosts {
				r := find("cluster", h, func(r map[string]any) bool { return r["workload"] == w && r["mode"] == mode })
				measured = measured || r != nil
				cells = append(cells, rate(r, false))
				lats = append(lats, latMs(r))
			}
			if !measured {
				continue
			}
			modeName := mode
			if mode == "conc" {
				modeName = fmt.Sprintf("%d in flight", workload.InFlight)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |\n", w, modeName, strings.Join(cells, " | "), strings.Join(lats, " · ")))
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\nThe cluster (flowbench cluster): through package client, %d partitions, replicas min(3, nodes), every commit synced; beside the embedded engine on bbolt, synced, driven the same way\n\n", clusterPartitions)
	b.WriteString("| workload | mode | embedded bbolt inst/s | 1 node inst/s | 2 nodes inst/s | 3 nodes inst/s | p50 / p99 ms bbolt · 1 · 2 · 3 |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r)
	}
}

// latMs is a row's p50 / p99 latency in milliseconds.
func latMs(r map[string]any) string {
	if r == nil || r["ok"] != true {
		return "–"
	}
	return fmt.Sprintf("%.1f / %.1f", num(r["p50_us"])/1000, num(r["p99_us"])/1000)
}

func hasFailure(failures []string, part string) bool {
	for _, f := range failures {
		if strings.HasPrefix(f, part) {
			return true
		}
	}
	return false
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func ips(r map[string]any) float64 {
	if r == nil || r["ok"] != true {
		return 0
	}
	return num(r["ips_median"])
}

func rate(r map[string]any, withRange bool) string {
	switch {
	case r == nil:
		return "–"
	case r["ok"] != true:
		return "FAILED"
	case withRange:
		return fmt.Sprintf("%s (%s–%s)", thousands(num(r["ips_median"])), thousands(num(r["ips_min"])), thousands(num(r["ips_max"])))
	}
	return fmt.Sprintf("%s (%s–%s)", thousands(num(r["ips_median"])), thousands(num(r["ips_min"])), thousands(num(r["ips_max"])))
}

func thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func ratio(native, other float64) float64 {
	if native == 0 || other == 0 {
		return 0
	}
	return native / other
}

func fmtRatio(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1fx", x)
}

func lat(r map[string]any) string {
	if r == nil || r["ok"] != true {
		return "–"
	}
	return fmt.Sprintf("%s/%s", short(num(r["p50_us"])), short(num(r["p99_us"])))
}

func short(us float64) string {
	if us >= 100 {
		return fmt.Sprintf("%.0f", us)
	}
	return fmt.Sprintf("%.1f", us)
}

func allocs(r map[string]any) string {
	if r == nil || r["ok"] != true || num(r["allocs_per_instance"]) < 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f/%s", num(r["allocs_per_instance"]), bytesStr(num(r["bytes_per_instance"])))
}

func bytesStr(b float64) string {
	if b >= 1024 {
		return fmt.Sprintf("%.1fK", b/1024)
	}
	return fmt.Sprintf("%.0f", b)
}

func mb(r map[string]any, field string) string {
	if r == nil || num(r[field]) <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", num(r[field]))
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// goal states the issues' goals for a row and whether they are met:
// wazero within 8x and Node within 4x of native on the workloads of issue
// #21 (one at a time and in flight alike), native straight-10 at 100k/s,
// native message at 200k/s, native straight and exclusive one at a time at
// or above the goroutine floor (floor: its rate in the same run, 0 when
// not measured).
func goal(name, mode string, native, floor, wz, nd float64) string {
	switch name {
	case "straight", "exclusive", "message", "jobs":
	default:
		return ""
	}
	var parts []string
	switch name {
	case "straight":
		parts = append(parts, fmt.Sprintf("native ≥ 100,000/s %s", mark(native >= 100_000)))
	case "message":
		parts = append(parts, fmt.Sprintf("native ≥ 200,000/s %s", mark(native >= 200_000)))
	}
	if (name == "straight" || name == "exclusive") && mode == "seq" && floor > 0 {
		parts = append(parts, fmt.Sprintf("native ≥ goroutine floor (%.0f%%) %s", 100*native/floor, mark(native >= floor)))
	}
	if wz > 0 {
		parts = append(parts, fmt.Sprintf("wazero ≤ 8x %s", mark(wz <= 8)))
	}
	if nd > 0 {
		parts = append(parts, fmt.Sprintf("node ≤ 4x %s", mark(nd <= 4)))
	}
	return strings.Join(parts, "; ")
}
