package expr

import (
	"testing"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// BenchmarkEval_Condition measures a typical gateway condition.
func BenchmarkEval_Condition(b *testing.B) {
	cases := []struct{ name, text string }{
		{"FEEL", `= amount > 100 and status = "ok"`},
		{"JUEL", `${amount > 100 && status == "ok"}`},
	}
	vars := map[string]any{"amount": 150.0, "status": "ok"}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			p, err := Compile(model.Expression{Text: tc.text}, Condition, Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				ok, err := p.EvalBool(vars)
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// BenchmarkEval_Arithmetic measures a mapping that computes with
// fractions, which FEEL does in decimal (feel_number.go).
func BenchmarkEval_Arithmetic(b *testing.B) {
	p, err := Compile(model.Expression{Text: `= amount * 1.19 + 0.5`}, Value, Options{})
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]any{"amount": 150.25}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Eval(vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEval_Name measures a correlation key that reads one variable
// ("= key"), with the lone-name path and through the VM.
func BenchmarkEval_Name(b *testing.B) {
	p, err := Compile(model.Expression{Text: `= key`}, Static, Options{})
	if err != nil {
		b.Fatal(err)
	}
	vm := *p
	vm.name = ""
	vars := map[string]any{"key": "k-42", "amount": 150.0}
	for _, tc := range []struct {
		name string
		p    *Program
	}{{"LoneName", p}, {"VM", &vm}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if s, err := tc.p.EvalString(vars); err != nil || s != "k-42" {
					b.Fatal(s, err)
				}
			}
		})
	}
}
