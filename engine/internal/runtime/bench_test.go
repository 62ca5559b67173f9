package runtime

import (
	"context"
	"fmt"
	"runtime/metrics"
	"testing"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// straightPlan is the straight-10 reference workload: start, ten
// pass-through tasks, end.
func straightPlan(b *testing.B) *Plan {
	g := newGraph(&testing.T{}, "straight").node("start:startEvent", "end:endEvent")
	prev := "start"
	for i := 1; i <= 10; i++ {
		id := fmt.Sprintf("t%d", i)
		g.node(id + ":task").flow(prev + ">" + id)
		prev = id
	}
	g.flow(prev + ">end")
	return g.plan(CompileOptions{})
}

// BenchmarkStraight10 runs the straight-10 workload in each resumption
// mode: natively and, under `make bench-wasm`, inside the module, where
// the two differ most.
func BenchmarkStraight10(b *testing.B) {
	for _, mode := range []struct {
		name string
		r    Resumption
	}{{"goroutines", ResumeGoroutines}, {"direct", ResumeDirect}} {
		b.Run(mode.name, func(b *testing.B) {
			e := NewEngine(Options{Clock: clock.Real{}, Resumption: mode.r})
			defer e.Close(context.Background())
			plan := straightPlan(b)
			ctx := context.Background()
			b.ReportAllocs()
			created := goroutinesCreated()
			for b.Loop() {
				inst, err := e.Start(plan, nil)
				if err != nil {
					b.Fatal(err)
				}
				if st, _ := inst.Wait(ctx); st != Completed {
					b.Fatal(st)
				}
			}
			b.ReportMetric(float64(goroutinesCreated()-created)/float64(b.N), "goroutines/op")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "instances/s")
		})
	}
}

// goroutinesCreated counts the goroutines the program has created.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func BenchmarkStraight10_Parallel(b *testing.B) {
	e := NewEngine(Options{Clock: clock.Real{}})
	defer e.Close(context.Background())
	plan := straightPlan(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			inst, err := e.Start(plan, nil)
			if err != nil {
				b.Fatal(err)
			}
			if st, _ := inst.Wait(ctx); st != Completed {
				b.Fatal(st)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "instances/s")
}
