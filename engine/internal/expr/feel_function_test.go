package expr

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

func TestFEEL_FunctionDefinitions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{`= (function(a, b) a + b)(1, 2)`, 3.0, ""},
		{`= (function() "foo")()`, "foo", ""},
		{`= {f: function(x) x * 2, r: f(21)}.r`, 42.0, ""},
		{`= {add one: function(x) x + 1, r: add one(1)}.r`, 2.0, ""},
		// Named arguments bind by parameter name; one left out is null.
		{`= {f: function(a, b) a - b, r: f(b: 1, a: 10)}.r`, 9.0, ""},
		{`= {f: function(a, b) b = null, r: f(a: 1)}.r`, true, ""},
		// A context entry's function calls itself.
		{`= {fact: function(n) if n < 2 then 1 else n * fact(n - 1), r: fact(5)}.r`, 120.0, ""},
		// The body reads the variables, iteration variables and earlier
		// entries around it (closures capture them when defined).
		{`= (function(x) x + amount)(1)`, 151.0, ""},
		{`= for k in [1, 2] return (function(x) x * k)(10)`, []any{10.0, 20.0}, ""},
		{`= {base: 5, f: function(x) x + base, r: f(1)}.r`, 6.0, ""},
		{`= {mk: function(n) function(x) x + n, add2: mk(2), r: add2(3)}.r`, 5.0, ""},
		// A bound name wins over the built-in of that name.
		{`= {abs: function(x) 42, r: abs(-1)}.r`, 42.0, ""},
		// Calling no function, or with the wrong arity, is null.
		{`= null()`, nil, ""},
		{`= "abs"(-1)`, nil, ""},
		{`= (function(a) a)(1, 2)`, nil, ""},
		{`= {f: function(a) a, r: f(b: 1)}.r`, nil, ""},
		// Functions are values of type function; they leave Eval as null.
		{`= (function() "foo") instance of function<> -> Any`, true, ""},
		{`= (function(a) a) instance of function<Any, Any> -> Any`, false, ""},
		{`= (function() "foo") instance of string`, false, ""},
		{`= function(a) a`, nil, ""},
		{`= sort([3, 1, 2], function(x, y) x < y)`, []any{1.0, 2.0, 3.0}, ""},
		{`= sort(list: ["b", "a"], precedes: function(x, y) x < y)`, []any{"a", "b"}, ""},
		{`= sort(order.items, function(x, y) x.qty > y.qty)[1].sku`, "y", ""},
		{`= sort([3, 1], function(x, y) null)`, nil, ""},
		{`= sort([3, 1], 5)`, nil, ""},
		{`= for i in 0..4 return if i = 0 then 1 else i * partial[-1]`, []any{1.0, 1.0, 2.0, 6.0, 24.0}, ""},
		{`= for i in [] return partial`, []any{}, ""},
	}, Options{})
}

func TestFEEL_FunctionBudgets(t *testing.T) {
	for _, tc := range []struct {
		text, err string
	}{
		{`= {f: function(n) f(n + 1), r: f(1)}.r`, "nested more than 64 deep"},
		{`= {f: function(n) if n = 0 then 0 else f(n - 1) + f(n - 1), r: f(40)}.r`, "step budget"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, Value, Options{MaxSteps: 100_000})
			require.NoError(t, err)
			_, err = p.Eval(nil)
			require.Error(t, err)
			var ee *EvalError
			require.True(t, errors.As(err, &ee))
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestFEEL_FunctionSyntaxErrors(t *testing.T) {
	for _, tc := range []struct{ text, msg string }{
		{`= function(a, a) a`, `parameter "a" given twice`},
		{`= function(a) external {java: {}}`, "external functions"},
		{`= for i in [1], j in [2] return partial`, `"partial" in a for over several`},
		{`= foo(1)`, `unknown function "foo"`},
	} {
		t.Run(tc.text, func(t *testing.T) {
			_, err := Compile(model.Expression{Text: tc.text}, Value, Options{})
			var se *SyntaxError
			require.True(t, errors.As(err, &se), "got %v", err)
			assert.Contains(t, se.Msg, tc.msg)
		})
	}
}
