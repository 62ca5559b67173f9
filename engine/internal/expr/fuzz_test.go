package expr

import (
	"encoding/json"
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
		`= @"2026-01-01T10:00:00@Europe/Paris" - @"P1Y2M"`, `= time("10:00:00+02:00").time offset`,
		`= [1, null] instance of list<number>`, `= x instance of context<a: list<string>>`,
		`= substring(string: "abc", start position: 2)`, `= replace("abc", "(a)(b)", "$2$1", "i")`,
		`= matches(name, "^\p{Lu}[a-z]+\s", "x")`, `= round half up(2.675, 2) + decimal(1/3, 2)`,
		`= {a: 1, b: a + 1, c: {d: b}}.c.d`, `= context put({}, ["a", "b"], sum([]))`,
		`= years and months duration(date("2020-01-31"), date("-2020-02-29"))`, `= "\uD83D\uDCA9\U01F40E"`,
		`= {f: function(n) if n < 2 then 1 else n * f(n - 1), r: f(5)}.r`, `= (function(a, b) a)(b: 1, a: 2)`,
		`= sort([3, 1], function(x, y) x < y)`, `= for i in 1..3 return partial`, `= 0.1 + 0.2 = 0.3`,
		`= 9007199254740993 ** 3 / 7`, `= before([1..5), (< 10))`, `= overlaps after(range2: [1..2], range1: (1..3])`,
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

// FuzzEval evaluates expressions over variables decoded from random bytes
// (numbers, text, lists and contexts nested up to 20 levels), with small
// budgets. Nothing may panic, no failure may be an internal one, and every
// evaluation ends within its budgets: loops over the fuzzed lists and
// repeated concatenations of the fuzzed text stop with a *BudgetError.
func FuzzEval(f *testing.F) {
	seeds := []string{
		`= for x in a, y in b return x + y`, `= every x in a satisfies some y in b satisfies x = y`,
		`= a[item > 1]`, `= for x in a return b[item != x]`, `= a.b.c`, `= a + a + a + a`,
		`= count(for x in a return for y in a return for z in a return x)`, `= string(a) + string(b)`,
		`= a = b`, `= a in b`, `= sum(a)`, `= a[1][2]`, `= {x: a, y: [b, b]}`, `= is defined(a.b)`,
		`${a.b[0] == b}`, `${a}${b}${a}`, `${empty a ? b : a}`, `= $env`, `= substring(a, 2)`,
		`= distinct values(flatten([a, b]))`, `= union(a, b)`, `= mode(a)`, `= context merge(a, b)`,
		`= context put(a, b, c)`, `= get value(a, b)`, `= sublist(a, b, c)`, `= replace(a, b, c)`,
		`= matches(a, b, c)`, `= round half up(a, b)`, `= date(a, b, c)`, `= time(a, b, c)`,
		`= a instance of list<context<x: number>>`, `= index of(a, b)`, `= string join(a, b)`,
		`= sort(a, function(x, y) x < y)`, `= (function(x) x + b)(a)`, `= includes(a, b)`, `= a * 1.1 + b / 3`,
		`= modulo(a, b)`, `= decimal(a / b, c)`, `= for x in a return partial`,
	}
	for i, s := range seeds {
		f.Add(s, []byte{byte(i), 3, 'x', 'y', 'z', 4, 1, 2})
	}
	vc := clock.NewVirtual(clock.Epoch)
	opts := Options{Clock: vc, MaxSteps: 100_000, MaxBytes: 1 << 20}
	f.Fuzz(func(t *testing.T, text string, data []byte) {
		p, err := Compile(model.Expression{Text: text}, Value, opts)
		if err != nil {
			return
		}
		d := valueDecoder{data: data}
		vars := map[string]any{"a": d.value(0), "b": d.value(0), "c": d.value(0)}
		for _, eval := range []func() error{
			func() error { _, err := p.Eval(vars); return err },
			func() error { _, err := p.EvalBool(vars); return err },
			func() error { _, err := p.EvalString(vars); return err },
		} {
			err := eval()
			if errors.Is(err, errInternal) {
				t.Fatalf("evaluate %q over %v: %v", text, vars, err)
			}
			var ee *EvalError
			if err != nil && !errors.As(err, &ee) {
				t.Fatalf("evaluate %q: not an *EvalError: %v", text, err)
			}
		}
	})
}

// valueDecoder makes variable values from fuzz bytes.
type valueDecoder struct {
	data []byte
	i    int
}

func (d *valueDecoder) byte() byte {
	if d.i >= len(d.data) {
		return 0
	}
	b := d.data[d.i]
	d.i++
	return b
}

func (d *valueDecoder) value(depth int) any {
	b := d.byte()
	switch k := b % 8; {
	case k == 0:
		return nil
	case k == 1:
		return b&8 != 0
	case k == 2:
		return float64(int8(d.byte()))
	case k == 3:
		n := int(d.byte() % 16)
		s := make([]byte, 0, n)
		for range n {
			s = append(s, d.byte())
		}
		return strings.Repeat(string(s), 1+int(b>>4)*64) // up to ~1 KiB
	case k == 4 && depth < 20, k == 5 && depth < 20:
		n := int(d.byte() % 8)
		if k == 4 {
			l := make([]any, 0, n)
			for range n {
				l = append(l, d.value(depth+1))
			}
			return l
		}
		m := map[string]any{}
		for i := range n {
			m[string(rune('a'+i))] = d.value(depth + 1)
		}
		return m
	case k == 6:
		// A long list, for loops to iterate.
		l := make([]any, 100+int(d.byte())*4)
		for i := range l {
			l[i] = float64(i)
		}
		return l
	case k == 7 && b&8 != 0:
		// A decimal variable as the engine holds one: a json.Number with
		// more digits than a float64 keeps (Number).
		digits := make([]byte, 16+int(d.byte()%24))
		for i := range digits {
			digits[i] = '1' + d.byte()%9
		}
		if p := int(b >> 4); p > 0 && p < len(digits) {
			digits = append(digits[:p], append([]byte{'.'}, digits[p:]...)...)
		}
		n, _ := Number(json.Number(digits))
		return n
	}
	return "item"
}
