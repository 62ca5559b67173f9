package host_test

import (
	"os"
	"testing"
)

// BenchmarkEvaluateDecision measures evaluations per second through the
// module in wazero, on the models of engine/internal/decision's
// BenchmarkEvaluate: a 100-rule, 5-input table (FIRST and COLLECT SUM)
// and a small DRD. Each evaluation is one evaluate_decision call.
func BenchmarkEvaluateDecision(b *testing.B) {
	e := newHost(b)
	for _, f := range []string{"../engine/testdata/table100.dmn", "../engine/testdata/discount.dmn"} {
		if _, err := e.Deploy(ctxT(b), f, mustRead(b, f)); err != nil {
			b.Fatal(err)
		}
	}
	in := map[string]any{"x1": 66, "x2": 79, "x3": 2, "x4": 25, "x5": 1}
	for _, c := range []struct {
		name, ref string
		in        map[string]any
	}{
		{"table100-first", "first", in},
		{"table100-collect-sum", "sum", in},
		{"drd", "price", map[string]any{"customer": "gold", "order amount": 2000}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := ctxT(b)
			b.ReportAllocs()
			for range b.N {
				if _, err := e.EvaluateDecision(ctx, c.ref, 0, c.in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
		})
	}
}

func mustRead(b *testing.B, path string) []byte {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
