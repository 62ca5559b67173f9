package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

func TestCompile_FEELNestedIteration(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: `= for x in [1, 2] return for y in [10, 20] return x + y`, want: []any{[]any{11.0, 21.0}, []any{12.0, 22.0}}},
		{text: `= every x in [1, 2] satisfies (every y in [10, 20] satisfies x < y)`, want: true},
		{text: `= every x in [1, 2] satisfies every y in [10, 20] satisfies x > y`, want: false},
		{text: `= some x in [1, 2] satisfies some y in [2, 3] satisfies x = y`, want: true},
		{text: `= some x in [1, 2] satisfies some y in [3, 4] satisfies x = y`, want: false},
		{text: `= for x in [1, 2], y in [3, 4] return x * y`, want: []any{3.0, 4.0, 6.0, 8.0}},
		{text: `= for x in [1, 2], y in [x, 10] return x + y`, want: []any{2.0, 11.0, 4.0, 12.0}},
		{text: `= some x in [1, 2], y in [2, 3] satisfies x = y`, want: true},
		{text: `= every x in [1, 2], y in [2, 3] satisfies x < y`, want: false},
		{text: `= every x in [1, 2], y in [3, 4] satisfies x < y`, want: true},
		// Filters inside iterations see the iteration variable.
		{text: `= for x in [1, 2] return [1, 2, 3][item > x]`, want: []any{[]any{2.0, 3.0}, []any{3.0}}},
		{text: `= for x in [1, 2] return count([1, 2, 3][item > x])`, want: []any{2.0, 1.0}},
		{text: `= some x in [1, 2] satisfies count(list[item > x]) = 2`, want: true},
		{text: `= for x in [1, 2] return list[x]`, want: []any{1.0, 2.0}},
		{text: `= for x in [2] return order.items[qty > x].sku`, want: []any{[]any{"y"}}},
		// An item entry named like the iteration variable wins inside a filter.
		{text: `= for qty in [1] return order.items[qty > 3].sku`, want: []any{[]any{"y"}}},
		// Iterations inside filters, and the variable shadowing a variable.
		{text: `= list[some y in [2, 3] satisfies item = y]`, want: []any{2.0, 3.0}},
		{text: `= for amount in [1] return amount`, want: []any{1.0}},
		{text: `= (for amount in [1] return amount)[1] + amount`, want: 151.0},
		{text: `= for x in [1] return for x in [5] return x`, want: []any{[]any{5.0}}},
	}, Options{})
}

// A name in an expression is always a variable: "$env" must not reach
// the evaluator's environment, which would let a mapping store the
// variables inside themselves.
func TestEval_EnvIsAVariable(t *testing.T) {
	vars := testVars()
	for _, text := range []string{`= $env`, `= {a: $env}`, `= [$env]`, `= $env.amount`, `${$env}`} {
		p, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err, text)
		got, err := p.Eval(vars)
		if strings.HasPrefix(text, "${") {
			require.Error(t, err, text) // JUEL: a variable that is not set
			assert.Contains(t, err.Error(), `"$env"`)
			continue
		}
		require.NoError(t, err, text)
		assert.NotContains(t, strings.ToLower(fmtValue(got)), "amount", text)
	}
	p, err := Compile(model.Expression{Text: `= $env`}, Value, Options{})
	require.NoError(t, err)
	got, err := p.Eval(map[string]any{"$env": "mine"})
	require.NoError(t, err)
	assert.Equal(t, "mine", got)
	for text, want := range map[string]bool{
		`= is defined($env)`:   true,
		`= is defined($env.a)`: true,
		`= is defined($env.b)`: false,
		`= is defined(amount)`: false,
	} {
		p, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err)
		got, err := p.Eval(map[string]any{"$env": map[string]any{"a": nil}})
		require.NoError(t, err)
		assert.Equal(t, want, got, text)
	}
	p, err = Compile(model.Expression{Text: `= is defined($env)`}, Value, Options{})
	require.NoError(t, err)
	got, err = p.Eval(map[string]any{"x": 1})
	require.NoError(t, err)
	assert.Equal(t, false, got)
}

func fmtValue(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				b.WriteString(k + ":")
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

// Every construct that nests the syntax tree is bounded, so that neither
// the parsers nor expr-lang's checker and compiler recurse deeper than a
// host's stack allows (Node's is the smallest).
func TestCompile_DepthBounds(t *testing.T) {
	const n = 5000
	for _, text := range []string{
		"= a" + strings.Repeat(".b", n),
		"= a" + strings.Repeat("[1]", n),
		"= " + strings.Repeat("-", n) + "1",
		"= " + strings.Repeat("- ", n) + "1",
		"= a" + strings.Repeat(" + 1", n),
		"= a" + strings.Repeat(" and a", n),
		"= x" + strings.Repeat(" ** 2", n),
		"${a" + strings.Repeat(".b", n) + "}",
		"${a" + strings.Repeat("[0]", n) + "}",
		"${" + strings.Repeat("!", n) + "a}",
		"${" + strings.Repeat("not ", n) + "a}",
		"${" + strings.Repeat("empty ", n) + "a}",
		"${" + strings.Repeat("-", n) + "1}",
		"${a" + strings.Repeat(" + 1", n) + "}",
		"${a" + strings.Repeat(" || a", n) + "}",
		"${a" + strings.Repeat(".trim()", n) + "}",
	} {
		_, err := Compile(model.Expression{Text: text}, Value, Options{})
		var se *SyntaxError
		require.ErrorAs(t, err, &se, text[:20])
		assert.Contains(t, se.Msg, "nested more than", text[:20])
		assert.GreaterOrEqual(t, se.Pos, 0, text[:20])
	}
	// Ordinary long expressions stay well within the bound.
	for _, text := range []string{
		"= a" + strings.Repeat(".b", 20),
		"= 1" + strings.Repeat(" + 1", 60),
		"${'a'" + strings.Repeat(" + x", 60) + "}",
	} {
		_, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err, text[:20])
	}
}

func TestEval_Budgets(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	vars := map[string]any{"s": long, "l": seq(1000), "m": seq(300)}
	cases := []struct {
		text   string
		opts   Options
		budget string
	}{
		{`= every x in l satisfies every y in l satisfies every z in l satisfies x + y + z > 0`, Options{}, "step"},
		{`= count(for x in l return for y in l return for z in l return x)`, Options{}, "step"},
		{`= count(l[every y in l satisfies every z in l satisfies item < 1000000])`, Options{}, "step"},
		{`= string length(s` + strings.Repeat(" + s", 100) + `)`, Options{}, "byte"},
		{strings.Repeat("${s}", 100), Options{}, ""}, // reading 100 MiB of text is over the step budget too
		{strings.Repeat("${s}", 100), Options{MaxSteps: 1 << 40}, "byte"},
		{`= count(for x in l return s + s)`, Options{}, "byte"},
		{`= sum(for x in l return x)`, Options{MaxSteps: 100}, "step"},
		{`= string length(s + "a")`, Options{MaxBytes: 1 << 20}, "byte"},
	}
	for _, tc := range cases {
		t.Run(tc.text[:min(40, len(tc.text))], func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, Value, tc.opts)
			require.NoError(t, err)
			_, err = p.Eval(vars)
			var be *BudgetError
			require.ErrorAs(t, err, &be)
			if tc.budget != "" {
				assert.Equal(t, tc.budget, be.Budget)
			}
			assert.Contains(t, err.Error(), "budget")
			var ee *EvalError
			require.ErrorAs(t, err, &ee)
			assert.False(t, errors.Is(err, errInternal), "%v", err)
		})
	}
	// Within the budgets the same kinds of work succeed.
	for text, want := range map[string]any{
		`= every x in m satisfies every y in m satisfies x + y > 0`: true,
		`= string length(s + s)`:                                    float64(2 << 20),
		`= count(for x in m return for y in m return x)`:            300.0,
	} {
		p, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err)
		got, err := p.Eval(vars)
		require.NoError(t, err, text)
		assert.Equal(t, want, got, text)
	}
}

func seq(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}
