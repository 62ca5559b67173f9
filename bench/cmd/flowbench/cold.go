package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/flowtrack/flowtrack/bench/workload"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// freshProcessMs runs `flowbench cold-process` and returns what it
// measured; the caller times the whole child too, process start included.
func freshProcessMs(self string) (float64, error) {
	out, err := exec.Command(self, "cold-process").Output()
	if err != nil {
		return 0, fmt.Errorf("flowbench cold-process: %w", err)
	}
	return strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
}

// coldProcess is the child of freshProcessMs: one host.New on the default
// runtime, closed, and the milliseconds that took (Module() included),
// printed on stdout.
func coldProcess() error {
	ctx := context.Background()
	t0 := time.Now()
	e, err := host.New(ctx)
	if err != nil {
		return err
	}
	ms := float64(time.Since(t0)) / 1e6
	if err := e.Close(ctx); err != nil {
		return err
	}
	_, err = fmt.Println(ms)
	return err
}

// ColdResult is a JSON line of the cold-start measurements.
type ColdResult struct {
	Kind    string  `json:"kind"` // "cold" or "size"
	Host    string  `json:"host"`
	Variant string  `json:"variant"`
	Ms      float64 `json:"ms,omitempty"`
	Bytes   int     `json:"bytes,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// cold measures engine creation on the Go hosts: the wasm module compiled
// by wazero with no cache, with a warm on-disk cache, instantiation of an
// already compiled module, and the native engine; then the module's size.
func cold(dirs workload.Dirs) []ColdResult {
	ctx := context.Background()
	var out []ColdResult
	timeIt := func(hostName, variant string, reps int, f func() error) {
		var ds []float64
		for range reps {
			t0 := time.Now()
			if err := f(); err != nil {
				out = append(out, ColdResult{Kind: "cold", Host: hostName, Variant: variant, Error: err.Error()})
				return
			}
			ds = append(ds, float64(time.Since(t0))/1e6)
		}
		slices.Sort(ds)
		out = append(out, ColdResult{Kind: "cold", Host: hostName, Variant: variant, Ms: ds[len(ds)/2]})
	}
	// The module's init is part of every start: New calls _initialize.
	newWith := func(opts ...host.Option) error {
		e, err := host.New(ctx, opts...)
		if err != nil {
			return err
		}
		return e.Close(ctx)
	}
	timeIt("wazero", "compile+init, no cache", 1, func() error {
		return newWith(host.WithCompilationCache(nil))
	})
	dir, err := os.MkdirTemp("", "flowbench-cache-")
	if err == nil {
		defer os.RemoveAll(dir)
		warm, _ := wazero.NewCompilationCacheWithDir(dir)
		_ = newWith(host.WithCompilationCache(warm)) // fills the cache
		timeIt("wazero", "compile+init, disk cache", 5, func() error {
			c, err := wazero.NewCompilationCacheWithDir(dir) // a fresh process would open it like this
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			return newWith(host.WithCompilationCache(c))
		})
	}
	// A fresh process's first New on the default runtime (the embedded
	// module, the disk cache under the user cache directory): what a CLI
	// run or a service start pays. The first child fills the caches.
	if self, err := os.Executable(); err == nil {
		_, _ = freshProcessMs(self)
		timeIt("wazero", "fresh process, disk cache", 5, func() error {
			_, err := freshProcessMs(self)
			return err
		})
	}
	_ = newWith() // compile the shared module once
	timeIt("wazero", "instantiate+init (compiled)", 5, func() error { return newWith() })

	xml, _ := dirs.XML(workload.All()[0])
	timeIt("native", "engine.New+deploy straight", 5, func() error {
		e, err := engine.New()
		if err != nil {
			return err
		}
		if _, err := e.Deploy("straight.bpmn", xml); err != nil {
			return err
		}
		return e.Close(ctx)
	})

	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(host.Module())
	_ = zw.Close()
	out = append(out,
		ColdResult{Kind: "size", Host: "wasm", Variant: "raw", Bytes: len(host.Module())},
		ColdResult{Kind: "size", Host: "wasm", Variant: "gzip -9", Bytes: buf.Len()})
	return out
}
