package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/bench/workload"
)

// all runs every part in a process of its own, writes the JSON lines and
// the markdown table to out, and prints the table.
func all(root string, dirs workload.Dirs, out, node string, skip []string, n, dryN, fixedN int) bool {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "flowbench:", err)
		return false
	}
	out = abs(root, out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "flowbench:", err)
		return false
	}
	loadBefore := loadavg()
	begin := time.Now()
	common := []string{"-root", root}
	if fixedN > 0 {
		common = append(common, "-fixed-n", strconv.Itoa(fixedN))
	}
	type part struct {
		name string
		cmd  []string
	}
	// A part missing something it needs is skipped with the reason, on
	// stderr and as a "skipped" record that the report shows.
	missing := map[string]string{"peer": peerMissing(root)}
	parts := []part{
		{"native", append([]string{self, "native"}, common...)},
		{"wazero", append([]string{self, "wazero"}, common...)},
		{"store", append([]string{self, "store"}, common...)},
		{"store-nosync", append([]string{self, "store-nosync"}, common...)},
		{"node", []string{node, filepath.Join(root, "bench", "node", "bench.mjs"),
			"--shared", dirs.Shared, "--own", dirs.Own, "--fixed-n", strconv.Itoa(fixedN)}},
		{"peer", []string{node, filepath.Join(root, "bench", "peer", "bench.mjs"),
			"--shared", dirs.Shared, "--fixed-n", strconv.Itoa(fixedN)}},
		{"browser", []string{node, filepath.Join(root, "bench", "browser", "startup.mjs")}},
		{"scale", append([]string{self, "scale", "-n", strconv.Itoa(n)}, common...)},
		{"dry", append([]string{self, "dry", "-n", strconv.Itoa(dryN), "-resumption", "goroutines"}, common...)},
		{"dry", append([]string{self, "dry", "-n", strconv.Itoa(dryN), "-resumption", "direct"}, common...)},
		{"cold", append([]string{self, "cold"}, common...)},
		{"cluster", append([]string{self, "cluster"}, common...)},
		{"rest", append([]string{self, "rest"}, common...)},
	}
	var recs []map[string]any
	var failures []string
	for _, p := range parts {
		if contains(skip, p.name) {
			continue
		}
		if why := missing[p.name]; why != "" {
			fmt.Fprintf(os.Stderr, "%s: %s\n", p.name, why)
			recs = append(recs, map[string]any{"kind": "skipped", "part": p.name, "reason": why})
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", p.name)
		var stdout bytes.Buffer
		c := exec.Command(p.cmd[0], p.cmd[1:]...)
		c.Stdout, c.Stderr = io.MultiWriter(&stdout), os.Stderr
		t0 := time.Now()
		err := c.Run()
		got := readLines(stdout.Bytes())
		for _, r := range got {
			r["part_seconds"] = time.Since(t0).Seconds()
			if e, _ := r["error"].(string); e != "" {
				failures = append(failures, fmt.Sprintf("%s %v %v: %s", p.name, r["workload"], r["mode"], e))
			}
		}
		recs = append(recs, got...)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", p.name, err))
		}
	}
	env := map[string]any{
		"kind": "env", "started": begin.UTC().Format(time.RFC3339), "seconds": time.Since(begin).Seconds(),
		"load_before": loadBefore, "load_after": loadavg(), "cpus": numCPU(), "commit": gitCommit(root),
	}
	recs = append([]map[string]any{env}, recs...)
	var jl bytes.Buffer
	for _, r := range recs {
		b, _ := jsonMarshal(r)
		jl.Write(b)
		jl.WriteByte('\n')
	}
	table := render(recs, failures)
	stamp := begin.UTC().Format("20060102T150405Z")
	for name, data := range map[string][]byte{
		"results.jsonl": jl.Bytes(), "results-" + stamp + ".jsonl": jl.Bytes(),
		"results.md": []byte(table), "results-" + stamp + ".md": []byte(table),
	} {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "flowbench:", err)
		}
	}
	fmt.Print(table)
	fmt.Fprintf(os.Stderr, "results: %s/results.{jsonl,md} (%.0fs)\n", out, time.Since(begin).Seconds())
	return len(failures) == 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
