package decision

import (
	"os"
	"testing"

	"github.com/flowtrack/flowtrack/engine/internal/dmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

func benchSet(b *testing.B, file string) *Set {
	b.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	d, err := dmnxml.Import(file, data)
	if err != nil {
		b.Fatal(err)
	}
	s, err := Compile([]*model.DMNDefinitions{d}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkEvaluate measures evaluations per second natively: a decision
// table of 100 rules over 5 inputs with hit policy FIRST (matching rule
// 60 of 100) and COLLECT SUM (every rule tested), and a small DRD (a
// decision requiring a FIRST table of 3 rules).
func BenchmarkEvaluate(b *testing.B) {
	table := benchSet(b, "../../testdata/table100.dmn")
	drd := benchSet(b, "../../testdata/discount.dmn")
	in := map[string]any{"x1": 66.0, "x2": 79.0, "x3": 2.0, "x4": 25.0, "x5": 1.0}
	for _, c := range []struct {
		name string
		set  *Set
		ref  string
		in   map[string]any
	}{
		{"table100-first", table, "first", in},
		{"table100-collect-sum", table, "sum", in},
		{"drd", drd, "price", map[string]any{"customer": "gold", "order amount": 2000.0}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := c.set.Evaluate(c.ref, c.in); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.set.Evaluate(c.ref, c.in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
		})
	}
}
