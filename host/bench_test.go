package host_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/host"
)

// workload reads a reference workload from $FLOWTRACK_WORKLOADS or
// ../shared/workloads next to the repository, skipping when absent.
func workload(b *testing.B, name string) []byte {
	dir := os.Getenv("FLOWTRACK_WORKLOADS")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "workloads")
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		b.Skipf("workload %s: %v", name, err)
	}
	return data
}

// runner runs one instance of a workload to completion per call.
type runner func(b *testing.B, i int)

func nativeRunner(b *testing.B, file, process string, message bool) runner {
	ctx := context.Background()
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithRetainFinished(-1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close(ctx) })
	if _, err := e.Deploy(file, workload(b, file)); err != nil {
		b.Fatal(err)
	}
	return func(b *testing.B, i int) {
		key := fmt.Sprint("k", i)
		inst, err := e.Start(ctx, process, map[string]any{"key": key})
		if err != nil {
			b.Fatal(err)
		}
		if message {
			if err := e.Settle(ctx); err != nil {
				b.Fatal(err)
			}
			if err := e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: key}); err != nil {
				b.Fatal(err)
			}
		}
		if st, err := inst.Wait(ctx); err != nil || st != engine.Completed {
			b.Fatalf("instance ended %s, %v", st, err)
		}
	}
}

func hostRunner(b *testing.B, file, process string, message bool) runner {
	ctx := context.Background()
	e, err := host.New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close(ctx) })
	if _, err := e.Deploy(ctx, file, workload(b, file)); err != nil {
		b.Fatal(err)
	}
	return func(b *testing.B, i int) {
		key := fmt.Sprint("k", i)
		if _, err := e.Start(ctx, process, map[string]any{"key": key}); err != nil {
			b.Fatal(err)
		}
		if message {
			if err := e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: key}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

var workloads = []struct{ name, file, process string }{
	{"Straight10", "straight.bpmn", "straight"},
	{"Message", "message.bpmn", "message"},
	{"Parallel", "parallel.bpmn", "parallel"},
}

func benchRunner(b *testing.B, mk func(*testing.B, string, string, bool) runner, file, process string) {
	run := mk(b, file, process, process == "message")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		run(b, i)
	}
}

// BenchmarkHost_Workloads runs each reference workload natively and
// through the wasm module in wazero: one instance per op, to completion.
func BenchmarkHost_Workloads(b *testing.B) {
	for _, w := range workloads {
		b.Run(w.name+"/native", func(b *testing.B) { benchRunner(b, nativeRunner, w.file, w.process) })
		b.Run(w.name+"/wazero", func(b *testing.B) { benchRunner(b, hostRunner, w.file, w.process) })
	}
}

// BenchmarkHost_Ratio runs both hosts in one loop, an instance each per
// op, and reports wazero/native per workload (goal: <= 12x on straight-10
// and message).
func BenchmarkHost_Ratio(b *testing.B) {
	for _, w := range workloads[:2] {
		b.Run(w.name, func(b *testing.B) {
			msg := w.process == "message"
			nat, was := nativeRunner(b, w.file, w.process, msg), hostRunner(b, w.file, w.process, msg)
			var tNat, tWas time.Duration
			n := 0
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				nat(b, i)
				t1 := time.Now()
				was(b, i)
				tWas += time.Since(t1)
				tNat += t1.Sub(t0)
				n++
			}
			b.ReportMetric(float64(tNat.Nanoseconds())/float64(n), "native-ns/inst")
			b.ReportMetric(float64(tWas.Nanoseconds())/float64(n), "wazero-ns/inst")
			b.ReportMetric(float64(tWas)/float64(tNat), "wazero/native")
		})
	}
}

// BenchmarkHost_ColdStart measures host.New (compile + instantiate +
// _initialize) without a compilation cache and with a warm one, and
// reports the module's size.
func BenchmarkHost_ColdStart(b *testing.B) {
	ctx := context.Background()
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = zw.Write(host.Module())
	_ = zw.Close()
	for _, tc := range []struct {
		name  string
		cache func() wazero.CompilationCache
	}{
		{"nocache", func() wazero.CompilationCache { return nil }},
		{"cache", func() wazero.CompilationCache {
			c := wazero.NewCompilationCache()
			e, err := host.New(ctx, host.WithCompilationCache(c)) // warm it
			if err != nil {
				b.Fatal(err)
			}
			_ = e.Close(ctx)
			return c
		}},
		{"shared", nil}, // the default: one compiled module per process
	} {
		b.Run(tc.name, func(b *testing.B) {
			var opts []host.Option
			if tc.cache != nil {
				opts = append(opts, host.WithCompilationCache(tc.cache()))
			}
			for b.Loop() {
				e, err := host.New(ctx, opts...)
				if err != nil {
					b.Fatal(err)
				}
				_ = e.Close(ctx)
			}
			b.ReportMetric(float64(len(host.Module())), "wasm-bytes")
			b.ReportMetric(float64(gz.Len()), "wasm-gzip-bytes")
		})
	}
}
