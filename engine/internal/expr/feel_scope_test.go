package expr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// feelCase is one FEEL text, its variables and the value it must yield
// (nil: null, or a compile or evaluation error when fails is set).
type feelCase struct {
	text  string
	vars  map[string]any
	want  any
	fails bool
}

func runFEELCases(t *testing.T, opts Options, cases []feelCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: "= " + tc.text}, Value, opts)
			if err == nil {
				var got any
				got, err = p.Eval(tc.vars)
				if err == nil {
					assert.Equal(t, tc.want, got)
				}
			}
			if tc.fails {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// TestCompile_FEELRangeProperties: a range's start, end, start included
// and end included (DMN 1.5 10.3.2.7, Table 42), for ranges written with
// two end points and with one comparison, whose other end is undefined.
func TestCompile_FEELRangeProperties(t *testing.T) {
	runFEELCases(t, Options{}, []feelCase{
		{text: "[3..9].start", want: 3.0},
		{text: "[3..9).end", want: 9.0},
		{text: "(3..9].start included", want: false},
		{text: "[3..9].start included", want: true},
		{text: "[3..9).end included", want: false},
		{text: `["b".."y"].end`, want: "y"},
		{text: "(< 9).end", want: 9.0},
		{text: "(< 9).start", want: nil},
		{text: "(< 9).end included", want: false},
		{text: "(<= 9).end included", want: true},
		{text: "(> 3).start", want: 3.0},
		{text: "(> 3).start included", want: false},
		{text: "(>= 3).start included", want: true},
		{text: "(> 3).end included", want: false},
		{text: "(= 3).start", want: 3.0}, // "= e" is the range [e..e], as the DMN TCK (0074-feel-properties) reads it
		{text: "[[1..2], [5..6]].end", want: []any{2.0, 6.0}},
		{text: "[3..9].middle", want: nil},
		{text: "{start included: 1}.start included", want: 1.0}, // still a context entry
	})
}

// TestCompile_FEELSingletonConversion: a lone value given where a
// built-in's parameter is a list is a list of one, and a list of one
// given where it is not a list is its item (DMN 1.5 10.3.2.9.4); null is
// never converted.
func TestCompile_FEELSingletonConversion(t *testing.T) {
	runFEELCases(t, Options{}, []feelCase{
		{text: `append("foo", "bar")`, want: []any{"foo", "bar"}},
		{text: `count("x")`, want: 1.0},
		{text: `reverse(7)`, want: []any{7.0}},
		{text: `list contains(3, 3)`, want: true},
		{text: `index of(4, 4)`, want: []any{1.0}},
		{text: `concatenate(1, [2])`, want: []any{1.0, 2.0}},
		{text: `contains(["foobar"], "of")`, want: false},
		{text: `contains(["foobar"], "ob")`, want: true},
		{text: `upper case(["abc"])`, want: "ABC"},
		{text: `string length(["four"])`, want: 4.0},
		{text: `substring("abcdef", [3])`, want: "cdef"},
		{text: `abs([-3])`, want: 3.0},
		{text: `date(["2024-02-29"]) = date("2024-02-29")`, want: true},
		{text: `list replace(list: [1, 2], position: [2], newItem: 0)`, want: []any{1.0, 0.0}},
		{text: `upper case(["a", "b"])`, want: nil}, // two items: no conversion
		{text: `upper case([])`, want: nil},
		{text: `count(null)`, want: nil},
		{text: `string(["a"])`, want: `["a"]`}, // string's parameter takes any type
	})
}

// TestCompile_FEELListReplaceMatch: list replace(list, match, newItem)
// replaces every item for which match(item, newItem) is true (DMN 1.5
// 10.3.4.4), by position or by name; a match yielding null or false
// keeps the item.
func TestCompile_FEELListReplaceMatch(t *testing.T) {
	runFEELCases(t, Options{}, []feelCase{
		{text: "list replace([2, 4, 7, 8], function(item, newItem) item < newItem, 5)", want: []any{5.0, 5.0, 7.0, 8.0}},
		{text: "list replace(list: [1, 5, 9], match: function(item, newItem) item = 5, newItem: 0)", want: []any{1.0, 0.0, 9.0}},
		{text: "list replace([2, 4], function(item, newItem) item, 5)", want: nil}, // the match answers no boolean
		{text: "list replace([1, 5, 9], function(a, b) null, 0)", want: []any{1.0, 5.0, 9.0}},
		{text: "list replace([1, 5, 9], function(a) true, 0)", want: nil}, // match takes two parameters
		{text: "list replace([1, 5, 9], 2, 0)", want: []any{1.0, 0.0, 9.0}},
		{text: "list replace([1, 5, 9], 4, 0)", want: nil},
	})
}

// TestCompile_FEELListReplaceTruncatesPosition: a position with decimals
// is truncated to an integer, toward zero (DMN 1.5 list replace).
func TestCompile_FEELListReplaceTruncatesPosition(t *testing.T) {
	runFEELCases(t, Options{}, []feelCase{
		{text: "list replace([1, 2, 3], 2.5, 4)", want: []any{1.0, 4.0, 3.0}},
		{text: "list replace([1, 2, 3], 2.9999, 4)", want: []any{1.0, 4.0, 3.0}},
		{text: "list replace([1, 2, 3], -1.5, 4)", want: []any{1.0, 2.0, 4.0}},
		{text: "list replace([1, 2, 3], 0.5, 4)", want: nil}, // position 0
		{text: "list replace([1, 2, 3], 3.5, 4)", want: []any{1.0, 2.0, 4.0}},
		{text: "list replace([1, 2, 3], 4.5, 4)", want: nil},
		{text: `list replace([1, 2, 3], "2", 4)`, want: nil},
	})
}

// TestCompile_FEELSpacedNames: names with spaces, keywords or operators
// resolve against the scope (DMN 1.5 grammar notes): the variables, the
// context entries and iteration variables around, and Options.Names,
// the longest name in scope winning.
func TestCompile_FEELSpacedNames(t *testing.T) {
	sum := map[string]any{"a + b": 10.0, "a": 1.0, "b": 2.0}
	runFEELCases(t, Options{}, []feelCase{
		{text: "a + b", vars: sum, want: 10.0},
		{text: "a+b", vars: sum, want: 10.0},
		{text: "a + b * 2", vars: sum, want: 20.0},
		{text: "a + b + a", vars: sum, want: 11.0},
		{text: "a + b", vars: map[string]any{"a": 1.0, "b": 2.0}, want: 3.0},
		{text: "a + b", vars: sum, want: 10.0}, // again: the program parsed for this set is kept
		{text: "date and time", vars: map[string]any{"date and time": "t"}, want: "t"},
		{text: `date and time("2024-01-02T03:04:05") = date and time("2024-01-02T03:04:05")`,
			vars: map[string]any{"date and time": "t"}, want: true}, // a call stays the built-in
		{text: "total in cart * 2", vars: map[string]any{"total in cart": 4.0}, want: 8.0},
		{text: "for d in days in week return d * 2", vars: map[string]any{"days in week": []any{1.0, 2.0}}, want: []any{2.0, 4.0}},
		{text: "every d in days in week satisfies d > 0", vars: map[string]any{"days in week": []any{1.0, 2.0}}, want: true},
		{text: "for days in week in [3, 4] return days in week + 1", vars: map[string]any{"days in week": 0.0}, want: []any{4.0, 5.0}},
		{text: "{p + q: 4, r: p + q * 3}.r", want: 12.0},
		{text: "{first name: \"Ann\", g: first name}.g", want: "Ann"},
		{text: "{a + 1: 2, b: a + 1}.b", want: 2.0},
		{text: "order id", vars: map[string]any{"order id": 3.0}, fails: true}, // no scope knows it at compile time
	})
	runFEELCases(t, Options{Names: []string{"order id", "line item+tax"}}, []feelCase{
		{text: "order id + 1", vars: map[string]any{"order id": 3.0}, want: 4.0},
		{text: "line item + tax * 2", vars: map[string]any{"line item+tax": 3.0}, want: 6.0},
	})
}

// TestProgram_SpacedNamesBounded: a text parsed again for many sets of
// spaced variables keeps at most maxScoped of them, and still answers
// every set right.
func TestProgram_SpacedNamesBounded(t *testing.T) {
	p, err := Compile(model.Expression{Text: "= a + b + c + d + e"}, Value, Options{})
	require.NoError(t, err)
	names := []string{"a + b", "b + c", "c + d", "d + e", "a+b", "b+c", "c+d", "d+e"}
	for mask := 1; mask < 1<<len(names); mask++ {
		vars := map[string]any{"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0}
		for i, n := range names {
			if mask&(1<<i) != 0 {
				vars[n] = 100.0
			}
		}
		_, err := p.Eval(vars)
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, p.variants.count(), maxScoped)
	got, err := p.Eval(map[string]any{"a + b": 10.0, "c": 1.0, "d": 1.0, "e": 1.0})
	require.NoError(t, err)
	assert.Equal(t, 13.0, got)
}

// TestCompile_FEELDurationWeeks: FEEL durations are XML Schema's, which
// have no weeks: P1W is no duration, as a literal or to duration().
func TestCompile_FEELDurationWeeks(t *testing.T) {
	runFEELCases(t, Options{}, []feelCase{
		{text: `duration("P1W")`, want: nil},
		{text: `duration("-P2W")`, want: nil},
		{text: `duration("P1WT1H")`, want: nil},
		{text: `@"P1W"`, fails: true}, // a literal that is no value is refused at compile time
		{text: `string(duration("P14D"))`, want: "P14D"},
	})
}

// TestCompile_FEELInvalidPattern: a pattern XPath refuses (a back-
// reference inside a class or before its group, an unclosed class, an
// unknown flag) makes matches, replace and split null, never an error.
func TestCompile_FEELInvalidPattern(t *testing.T) {
	runFEELCases(t, Options{}, []feelCase{
		{text: `matches("abcd", "(asd)[\1]")`, want: nil},
		{text: `matches("abc", "\1(b)")`, want: nil},
		{text: `matches("abc", "[a-")`, want: nil},
		{text: `matches("abc", "b", "q")`, want: nil},
		{text: `replace("abc", "[\2](b)(c)", "x")`, want: nil},
		{text: `split("a,b", "[")`, want: nil},
		{text: `matches("abc", "(?:a)\1(b)")`, want: nil},
		{text: `matches("aa", "(a)\1")`, fails: true}, // valid, but RE2 cannot run it
	})
}
