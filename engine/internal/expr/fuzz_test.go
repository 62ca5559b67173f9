package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// FuzzCompileEval compiles arbitrary text in every mode and evaluates what
// compiles. Nothing may panic, and no failure may be an internal one: a
// syntax error must point into the text, and an evaluation error must come
// from the expression, not from this package or expr-lang's VM.
func FuzzCompileEval(f *testing.F) {
	seeds := []string{
		`= amount > 100 and status = "ok"`, `= list[item > 1]`, `= order.items[qty > 3].sku`,
		`= if a then b else c`, `= x in [1..5[`, `= x between 1 and 2`, `= {a: 1, "b c": [1, {d: 2}]}`,
		`= string length(name) + count(list)`, `= substring("abc", -1)`, `= is defined(a.b.c)`,
		`= date and time("2026-01-01T00:00:00Z") + duration("P1D")`, `= now() > today()`,
		`= not(a) or b`, `= list[-1] ** 2`, `= "a" + string(1.5)`, `= 2 in (1, 2)`, `= x in > 5`,
		`${a.b[0] == 'x' && !empty c ? d : e.size()}`, `order-${id}-${x}`, `test.contains("a")`,
		`!test.contains("a")`, `integerVariable<3`, `activationCount >= 1`, `true`, `${1 div 0}`,
		`${'}'}`, `#{x mod 2 eq 0}`, "= `a b` + 1", `= list[count]`, `${list.get(0).substring(1,2)}`,
	}
	for _, s := range seeds {
		f.Add(s, uint8(0))
	}
	vc := clock.NewVirtual(clock.Epoch)
	f.Fuzz(func(t *testing.T, text string, m uint8) {
		mode := Mode(m % 3)
		for _, lang := range []string{"", "feel"} {
			p, err := Compile(model.Expression{Text: text, Language: lang}, mode, Options{Clock: vc})
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("compile %q: not a *SyntaxError: %v", text, err)
				}
				if strings.Contains(se.Msg, errInternal.Error()) {
					t.Fatalf("compile %q: %v", text, err)
				}
				if se.Pos < -1 || se.Pos > len(text) {
					t.Fatalf("compile %q: position %d out of range", text, se.Pos)
				}
				continue
			}
			vars := testVars()
			for _, eval := range []func() error{
				func() error { _, err := p.Eval(vars); return err },
				func() error { _, err := p.EvalBool(vars); return err },
				func() error { _, err := p.EvalString(vars); return err },
				func() error { _, err := p.EvalDuration(nil); return err },
			} {
				if err := eval(); errors.Is(err, errInternal) {
					t.Fatalf("evaluate %q: %v", text, err)
				}
			}
		}
	})
}
