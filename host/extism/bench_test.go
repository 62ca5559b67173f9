package extism_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// benchEngines are the two builds behind the same API: the module of
// ABI.md in wazero, and the Extism plug-in in the Extism Go SDK.
var benchEngines = []struct {
	name string
	new  func(testing.TB) *host.Engine
}{
	{"wazero", func(tb testing.TB) *host.Engine { return newHost(tb) }},
	{"extism", func(tb testing.TB) *host.Engine { return newExtism(tb) }},
}

// BenchmarkExtism_Call measures one call that does no engine work (now),
// so the difference between the two is what each way of calling the
// module costs: for Extism, copying the input into and the output out of
// its kernel's memory, on top of the same JSON work.
func BenchmarkExtism_Call(b *testing.B) {
	for _, be := range benchEngines {
		b.Run(be.name, func(b *testing.B) {
			e := be.new(b)
			ctx := context.Background()
			for b.Loop() {
				if _, err := e.Call(ctx, "now", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExtism_Workloads runs the reference workloads straight-10 and
// message (../../../shared/workloads, or $FLOWTRACK_WORKLOADS) through
// both builds: one instance to completion per op.
func BenchmarkExtism_Workloads(b *testing.B) {
	dir := os.Getenv("FLOWTRACK_WORKLOADS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "workloads")
	}
	for _, w := range []struct{ name, file, process string }{
		{"Straight10", "straight.bpmn", "straight"},
		{"Message", "message.bpmn", "message"},
	} {
		xml, err := os.ReadFile(filepath.Join(dir, w.file))
		if err != nil {
			b.Skipf("workload %s: %v", w.file, err)
		}
		for _, be := range benchEngines {
			b.Run(w.name+"/"+be.name, func(b *testing.B) {
				ctx := context.Background()
				e := be.new(b)
				if _, err := e.Deploy(ctx, w.file, xml); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					key := fmt.Sprint("k", i)
					if _, err := e.Start(ctx, w.process, map[string]any{"key": key}); err != nil {
						b.Fatal(err)
					}
					if w.process == "message" {
						if err := e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: key}); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
