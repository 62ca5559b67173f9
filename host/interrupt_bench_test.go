package host

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// BenchmarkHost_CloseOnContextDone measures what honouring a call's
// context costs (RATIONALE.md): the straight-10 workload on two runtimes,
// one compiled with wazero's WithCloseOnContextDone checks and one
// without, alternating instance by instance so that a shared machine's
// noise falls on every variant alike.
func BenchmarkHost_CloseOnContextDone(b *testing.B) {
	xml, err := os.ReadFile("../../shared/workloads/straight.bpmn")
	if err != nil {
		b.Skipf("workload: %v", err)
	}
	ctx := context.Background()
	var engines [2]*Engine
	for i, closeOnDone := range []bool{false, true} {
		c, err := compile(ctx, Module(), wazero.NewCompilationCache(), closeOnDone)
		if err != nil {
			b.Fatal(err)
		}
		e := &Engine{lock: make(chan struct{}, 1), own: c.rt, stderr: &tailBuffer{max: 4096}, fns: make(map[string]api.Function)}
		if e.mod, err = c.rt.InstantiateModule(ctx, c.mod, wazero.NewModuleConfig().WithName("").WithStartFunctions().WithSysWalltime().WithSysNanotime()); err != nil {
			b.Fatal(err)
		}
		if err := e.bind(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = e.Close(ctx) })
		if err := e.setEvents(ctx, false); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Deploy(ctx, "straight.bpmn", xml); err != nil {
			b.Fatal(err)
		}
		engines[i] = e
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Per instance: plain runtime with a context that cannot be cancelled
	// (no goroutine), plain runtime with one that can (the call runs on a
	// goroutine of its own), checks compiled in with one that can.
	runs := []struct {
		e   *Engine
		ctx context.Context
	}{{engines[0], ctx}, {engines[0], cctx}, {engines[1], cctx}}
	var took [3]time.Duration
	n := 0
	for b.Loop() {
		for i, r := range runs {
			t0 := time.Now()
			if _, err := r.e.Start(r.ctx, "straight", map[string]any{"k": fmt.Sprint(n)}); err != nil {
				b.Fatal(err)
			}
			took[i] += time.Since(t0)
		}
		n++
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
	b.ReportMetric(per(took[0]), "plain-ns/inst")
	b.ReportMetric(per(took[1]), "goroutine-ns/inst")
	b.ReportMetric(per(took[2]), "closeOnDone-ns/inst")
	b.ReportMetric(float64(took[1])/float64(took[0]), "goroutine/plain")
	b.ReportMetric(float64(took[2])/float64(took[0]), "closeOnDone/plain")
}
