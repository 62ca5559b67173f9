// Command flowbench measures flowtrack on every host: the native engine,
// the wasm module in wazero, and the JS SDK in Node, on the reference and
// project workloads; parks 100,000 instances natively, and 1,000,000
// dehydrated in each resumption mode; and times cold
// starts. `make bench` runs `flowbench all`.
//
//	flowbench all     [-out bench/results]  everything, one table, exit 1 on a correctness failure
//	flowbench native  [-workloads a,b] [-modes seq,conc]   JSON lines
//	flowbench wazero  [-workloads a,b] [-modes seq,conc]   JSON lines
//	flowbench store   [-workloads a,b] [-modes seq,conc]   JSON lines: native on the embedded store, synced
//	flowbench store-nosync [...]                           the same without sync
//	flowbench scale   [-n 100000]                          JSON line
//	flowbench dry     [-n 1000000] [-resumption goroutines|direct]  JSON line
//	flowbench cold                                         JSON lines
//	flowbench cluster [-sizes 1,2,3] [-modes seq,conc]     JSON lines: straight and message
//	                  through package client on 1-3 in-process cluster nodes, beside the bbolt store
//	flowbench rest                                         JSON lines: Camunda's REST API on one node beside NATS
//
// all also runs the Node drivers: bench/node/bench.mjs (the SDK),
// bench/peer/bench.mjs (the peer engine bpmn-engine on the shared
// workloads; skipped until npm ci in bench/peer) and
// bench/browser/startup.mjs.
//
// Each host runs in a process of its own (all starts one per host) so that
// peak memory is per host. Times never fail a run; an instance that does
// not complete, a leaked goroutine or a failed call does.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/flowtrack/flowtrack/bench/workload"
	"github.com/flowtrack/flowtrack/engine"
)

func main() {
	exit := 0
	defer func() { os.Exit(exit) }()
	if len(os.Args) < 2 {
		usage()
	}
	cmd, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	root := fs.String("root", ".", "repository root")
	names := fs.String("workloads", "", "comma-separated workloads (default: all)")
	modes := fs.String("modes", "seq,conc", "comma-separated modes")
	n := fs.Int("n", 100_000, "scale, dry: instances to park")
	dryN := fs.Int("dry-n", 1_000_000, "all: instances the dry runs park and dehydrate")
	resumption := fs.String("resumption", "goroutines", "native, scale, dry: goroutines or direct")
	fixedN := fs.Int("fixed-n", 0, "instances per run instead of calibrating")
	out := fs.String("out", "bench/results", "all: results directory")
	node := fs.String("node", "node", "all: the node binary")
	sizes := fs.String("sizes", "1,2,3", "cluster: comma-separated node counts")
	skip := fs.String("skip", "", "all: comma-separated parts to skip (native,wazero,store,store-nosync,node,peer,browser,scale,dry,cold,cluster,rest)")
	cpuProfile := fs.String("cpuprofile", "", "native, wazero, store, scale: write a CPU profile of the run to this file")
	memProfile := fs.String("memprofile", "", "native, wazero, store, scale: write an allocation profile of the run to this file")
	_ = fs.Parse(args)
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "flowbench:", err)
			os.Exit(2)
		}
		defer stop()
	}
	if *memProfile != "" {
		runtime.MemProfileRate = 4096
		defer writeMemProfile(*memProfile)
	}
	dirs := workload.DefaultDirs(*root)
	enc := json.NewEncoder(os.Stdout)
	ok := true
	switch cmd {
	case "native", "wazero", "store", "store-nosync":
		r, err := resumptionOf(*resumption)
		if err != nil {
			fmt.Fprintln(os.Stderr, "flowbench:", err)
			os.Exit(2)
		}
		results := throughput(cmd, dirs, pick(*names), split(*modes), *fixedN, r)
		if cmd == "native" && contains(split(*modes), string(workload.Seq)) {
			results = append(results, floor(*fixedN))
		}
		for _, r := range results {
			ok = ok && r.OK
			_ = enc.Encode(r)
		}
	case "scale":
		rs, err := resumptionOf(*resumption)
		if err != nil {
			fmt.Fprintln(os.Stderr, "flowbench:", err)
			os.Exit(2)
		}
		r := scale(dirs, *n, rs)
		ok = r.OK
		_ = enc.Encode(r)
	case "dry":
		r := dry(dirs, *n, *resumption)
		ok = r.OK
		_ = enc.Encode(r)
	case "cold":
		for _, r := range cold(dirs) {
			ok = ok && r.Error == ""
			_ = enc.Encode(r)
		}
	case "cluster":
		var ns []int
		for _, s := range split(*sizes) {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "flowbench cluster: -sizes: %q is not a node count\n", s)
				os.Exit(2)
			}
			ns = append(ns, n)
		}
		for _, r := range clusterBench(dirs, ns, split(*modes), *fixedN) {
			ok = ok && r.OK
			_ = enc.Encode(r)
		}
	case "rest":
		for _, r := range restBench(dirs, *fixedN) {
			ok = ok && r.OK
			_ = enc.Encode(r)
		}
	case "cold-process": // the child of cold's fresh-process measurement
		if err := coldProcess(); err != nil {
			fmt.Fprintln(os.Stderr, "flowbench cold-process:", err)
			ok = false
		}
	case "all":
		ok = all(*root, dirs, *out, *node, split(*skip), *n, *dryN, *fixedN)
	default:
		usage()
	}
	if !ok {
		exit = 1
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: flowbench all|native|wazero|store|store-nosync|scale|dry|cold|cluster [flags]")
	os.Exit(2)
}

func split(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func pick(names string) []workload.Workload {
	if names == "" {
		return workload.All()
	}
	var out []workload.Workload
	for _, name := range split(names) {
		w, ok := workload.Find(name)
		if !ok {
			fmt.Fprintf(os.Stderr, "flowbench: unknown workload %q\n", name)
			os.Exit(2)
		}
		out = append(out, w)
	}
	return out
}

// throughput measures each workload in each mode on a fresh target.
// Native engines resume tokens as r says.
func throughput(hostName string, dirs workload.Dirs, ws []workload.Workload, modes []string, fixedN int, r engine.Resumption) []workload.Result {
	var out []workload.Result
	for _, w := range ws {
		xml, err := dirs.XML(w)
		for _, m := range modes {
			res := workload.Result{Kind: "throughput", Host: hostName, Workload: w.Name, Mode: workload.Mode(m)}
			if err == nil {
				res = measureOne(hostName, w, workload.Mode(m), xml, fixedN, r)
			} else {
				res.Error = err.Error()
			}
			fmt.Fprintf(os.Stderr, "%-7s %-10s %-4s %10.0f inst/s  p50 %8.1fµs  p99 %8.1fµs  cpu %7.1fµs/inst  %s\n",
				hostName, w.Name, m, res.Median, res.P50us, res.P99us, res.CPUus, res.Error)
			out = append(out, res)
		}
	}
	return out
}

// floor measures the goroutine floor one instance at a time, in the same
// process and run as the native workloads it is the floor of.
func floor(fixedN int) workload.Result {
	r := workload.Measure("floor", workload.Floor{}, workload.FloorWorkload, workload.Seq, workload.Options{FixedN: fixedN})
	fmt.Fprintf(os.Stderr, "%-7s %-10s %-4s %10.0f inst/s  p50 %8.1fµs  p99 %8.1fµs  cpu %7.1fµs/inst  %s\n",
		"floor", "goroutine", workload.Seq, r.Median, r.P50us, r.P99us, r.CPUus, r.Error)
	return r
}

func measureOne(hostName string, w workload.Workload, mode workload.Mode, xml []byte, fixedN int, r engine.Resumption) workload.Result {
	fail := func(err error) workload.Result {
		return workload.Result{Kind: "throughput", Host: hostName, Workload: w.Name, Mode: mode, Error: err.Error()}
	}
	var t workload.Target
	var err error
	switch hostName {
	case "native":
		t, err = workload.NewNative(engine.WithResumption(r))
	case "store", "store-nosync":
		t, err = workload.NewNativeStore(hostName == "store-nosync")
	default:
		size := 1
		if mode == workload.Conc {
			size = runtime.GOMAXPROCS(0)
		}
		t, err = workload.NewWazero(size)
	}
	if err != nil {
		return fail(err)
	}
	if err := t.Deploy(w.File, xml); err != nil {
		_ = t.Close()
		return fail(err)
	}
	res := workload.Measure(hostName, t, w, mode, workload.Options{FixedN: fixedN})
	if err := t.Close(); err != nil && res.OK {
		res.OK, res.Error = false, "close: "+err.Error()
	}
	return res
}

// readLines decodes JSON lines into generic records.
func readLines(data []byte) []map[string]any {
	var out []map[string]any
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func abs(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}
