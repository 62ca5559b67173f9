package expr

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// testVars are the variables every evaluation case sees.
func testVars() map[string]any {
	return map[string]any{
		"amount":          150.0,
		"count":           3, // an int, as Go callers may pass
		"big":             int64(1) << 40,
		"status":          "ok",
		"name":            "Ada Lovelace",
		"empty":           "",
		"flag":            true,
		"off":             false,
		"nothing":         nil,
		"list":            []any{1.0, 2.0, 3.0},
		"strs":            []any{"a", "b"},
		"noList":          []any{},
		"order":           map[string]any{"id": "o-1", "total": 99.5, "items": []any{map[string]any{"sku": "x", "qty": 2.0}, map[string]any{"sku": "y", "qty": 5.0}}},
		"customer":        map[string]any{"address": map[string]any{"city": "Berlin"}},
		"test":            "abc",
		"integerVariable": 2.0,
		"activationCount": 1.0,
		"numText":         "42",
		"iso":             "PT1H",
	}
}

type evalCase struct {
	text string
	want any
	// err, when set, is a substring of the expected evaluation error.
	err string
}

func runEvalCases(t *testing.T, cases []evalCase, opts Options) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, Value, opts)
			require.NoError(t, err)
			got, err := p.Eval(testVars())
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				var ee *EvalError
				assert.True(t, errors.As(err, &ee), "error is an *EvalError")
				assert.Contains(t, err.Error(), tc.text, "error names the expression")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCompile_FEEL(t *testing.T) {
	runEvalCases(t, []evalCase{
		// literals
		{text: `= 1`, want: 1.0},
		{text: `= -2.5`, want: -2.5},
		{text: `= .5`, want: 0.5},
		{text: `= 1e3`, want: 1000.0},
		{text: `= "a\"b"`, want: `a"b`},
		{text: `= "tab\there"`, want: "tab\there"},
		{text: `= "\u00e9"`, want: "é"},
		{text: `= true`, want: true},
		{text: `= false`, want: false},
		{text: `= null`, want: nil},
		{text: `= []`, want: []any{}},
		{text: `= [1, "a", true, null]`, want: []any{1.0, "a", true, nil}},
		{text: `= [[1], [2, 3]]`, want: []any{[]any{1.0}, []any{2.0, 3.0}}},
		{text: `= {a: 1, "b c": 2}`, want: map[string]any{"a": 1.0, "b c": 2.0}},
		{text: `= {first name: "Ada"}`, want: map[string]any{"first name": "Ada"}},
		{text: `= {}`, want: map[string]any{}},
		{text: `= {a: {b: [1]}}.a.b`, want: []any{1.0}},
		{text: "= 1 // comment", want: 1.0},
		{text: "= 1 /* c */ + 2", want: 3.0},
		// variables and paths
		{text: `= amount`, want: 150.0},
		{text: `= count`, want: 3.0},
		{text: `= big`, want: float64(int64(1) << 40)},
		{text: `= missing`, want: nil},
		{text: `= missing.deeper.still`, want: nil},
		{text: `= order.id`, want: "o-1"},
		{text: `= order.nope`, want: nil},
		{text: `= customer.address.city`, want: "Berlin"},
		{text: `= status.length`, want: nil},
		{text: `= order.items.sku`, want: []any{"x", "y"}},
		{text: "= `order`.id", want: "o-1"},
		// 1-based index, negative from the end
		{text: `= list[1]`, want: 1.0},
		{text: `= list[3]`, want: 3.0},
		{text: `= list[-1]`, want: 3.0},
		{text: `= list[-3]`, want: 1.0},
		{text: `= list[0]`, want: nil},
		{text: `= list[4]`, want: nil},
		{text: `= list[-4]`, want: nil},
		{text: `= list[1.5]`, want: nil},
		{text: `= list[count]`, want: 3.0},
		{text: `= list[count - 1]`, want: 2.0},
		{text: `= order.items[2].sku`, want: "y"},
		{text: `= missing[1]`, want: nil},
		{text: `= [1,2,3][2]`, want: 2.0},
		{text: `= list[true]`, want: []any{1.0, 2.0, 3.0}},
		// filters
		{text: `= list[item > 1]`, want: []any{2.0, 3.0}},
		{text: `= list[item > 5]`, want: []any{}},
		{text: `= list[item >= 2 and item < 3]`, want: []any{2.0}},
		{text: `= order.items[qty > 3].sku`, want: []any{"y"}},
		{text: `= order.items[item.qty > 3][1].sku`, want: "y"},
		{text: `= order.items[sku = "x"].qty`, want: []any{2.0}},
		{text: `= list[item = count]`, want: []any{3.0}},
		{text: `= count(list[item > 1])`, want: 2.0},
		{text: `= missing[item > 1]`, want: []any{}},
		{text: `= list[list[2]]`, want: 2.0},
		{text: `= list[list[item > 2][1]]`, want: 3.0},
		{text: `= order.items[qty = list[2]].sku`, want: []any{"x"}},
		{text: `= order.items[item.qty > list[item = 2][1]].sku`, want: []any{"y"}},
		// comparison: "=" is equality
		{text: `= amount = 150`, want: true},
		{text: `= amount = 150.0`, want: true},
		{text: `= count = 3`, want: true},
		{text: `= status = "ok"`, want: true},
		{text: `= status != "ok"`, want: false},
		{text: `= amount > 100`, want: true},
		{text: `= amount >= 150`, want: true},
		{text: `= amount < 100`, want: false},
		{text: `= amount <= 149.99`, want: false},
		{text: `= "a" < "b"`, want: true},
		{text: `= [1,2] = [1,2]`, want: true},
		{text: `= [1,2] = [2,1]`, want: false},
		{text: `= {a:1} = {a:1}`, want: true},
		{text: `= {a:1} = {a:2}`, want: false},
		{text: `= true = true`, want: true},
		{text: `= true != false`, want: true},
		// null semantics
		{text: `= null = null`, want: true},
		{text: `= null != null`, want: false},
		{text: `= missing = null`, want: true},
		{text: `= nothing = null`, want: true},
		{text: `= amount = null`, want: false},
		{text: `= missing > 1`, want: nil},
		{text: `= missing < 1`, want: nil},
		{text: `= 1 = "1"`, want: nil},
		{text: `= "a" > 1`, want: nil},
		{text: `= true < false`, want: nil},
		{text: `= missing + 1`, want: nil},
		{text: `= -missing`, want: nil},
		// three-valued logic
		{text: `= true and true`, want: true},
		{text: `= true and false`, want: false},
		{text: `= null and false`, want: false},
		{text: `= false and null`, want: false},
		{text: `= null and true`, want: nil},
		{text: `= true or null`, want: true},
		{text: `= null or true`, want: true},
		{text: `= null or false`, want: nil},
		{text: `= false or false`, want: false},
		{text: `= 1 and true`, want: nil},
		{text: `= not(true)`, want: false},
		{text: `= not(false)`, want: true},
		{text: `= not(null)`, want: nil},
		{text: `= not(1)`, want: nil},
		{text: `= not(amount > 100)`, want: false},
		{text: `= amount > 100 and status = "ok"`, want: true},
		{text: `= amount > 200 or status = "ok"`, want: true},
		{text: `= amount > 100 and status = "ok" or false`, want: true},
		// arithmetic
		{text: `= 1 + 2 * 3`, want: 7.0},
		{text: `= (1 + 2) * 3`, want: 9.0},
		{text: `= 10 / 4`, want: 2.5},
		{text: `= 1 / 0`, want: nil},
		{text: `= 2 ** 10`, want: 1024.0},
		{text: `= 2 * 3 ** 2`, want: 18.0},
		{text: `= 7 - 2 - 1`, want: 4.0},
		{text: `= -(1 + 2)`, want: -3.0},
		{text: `= - - 1`, want: 1.0},
		{text: `= count * 2`, want: 6.0},
		{text: `= amount + count`, want: 153.0},
		{text: `= "a" + "b"`, want: "ab"},
		{text: `= "n: " + string(count)`, want: "n: 3"},
		{text: `= "a" + 1`, want: nil},
		{text: `= true + 1`, want: nil},
		{text: `= (-8) ** 0.5`, want: nil},
		// if then else
		{text: `= if amount > 100 then "big" else "small"`, want: "big"},
		{text: `= if amount > 1000 then "big" else "small"`, want: "small"},
		{text: `= if null then 1 else 2`, want: 2.0},
		{text: `= if missing > 1 then 1 else 2`, want: 2.0},
		{text: `= if "yes" then 1 else 2`, want: 2.0},
		{text: `= if flag then if off then 1 else 2 else 3`, want: 2.0},
		{text: `= 1 + (if flag then 1 else 0)`, want: 2.0},
		// in, ranges, between
		{text: `= 2 in [1,2,3]`, want: true},
		{text: `= 5 in [1,2,3]`, want: false},
		{text: `= status in ["ok", "done"]`, want: true},
		{text: `= count in list`, want: true},
		{text: `= 3 in 3`, want: true},
		{text: `= 3 in 1..5`, want: true},
		{text: `= 6 in 1..5`, want: false},
		{text: `= 5 in [1..5]`, want: true},
		{text: `= 5 in [1..5[`, want: false},
		{text: `= 5 in [1..5)`, want: false},
		{text: `= 1 in ]1..5]`, want: false},
		{text: `= 1 in (1..5]`, want: false},
		{text: `= 2 in (1..5]`, want: true},
		{text: `= "b" in ["a".."c"]`, want: true},
		{text: `= 2 in (1, 2, 3)`, want: true},
		{text: `= 4 in (1, 2, 3)`, want: false},
		{text: `= 3 in (count)`, want: true},
		{text: `= 3 in [count]`, want: true},
		{text: `= amount in > 100`, want: true},
		{text: `= amount in <= 100`, want: false},
		{text: `= missing in [1..5]`, want: nil},
		{text: `= null in [1, null]`, want: true},
		{text: `= amount between 100 and 200`, want: true},
		{text: `= amount between 150 and 150`, want: true},
		{text: `= amount between 1 and 2`, want: false},
		{text: `= missing between 1 and 2`, want: nil},
		{text: `= amount between 100 and 200 and flag`, want: true},
		// string functions, multi-word names
		{text: `= contains(name, "Love")`, want: true},
		{text: `= contains(name, "love")`, want: false},
		{text: `= contains(missing, "x")`, want: nil},
		{text: `= starts with(name, "Ada")`, want: true},
		{text: `= ends with(name, "Ada")`, want: false},
		{text: `= upper case(status)`, want: "OK"},
		{text: `= lower case("ÀB")`, want: "àb"},
		{text: `= string length(name)`, want: 12.0},
		{text: `= string length("héllo")`, want: 5.0},
		{text: `= string length(1)`, want: nil},
		{text: `= substring("foobar", 3)`, want: "obar"},
		{text: `= substring("foobar", 3, 3)`, want: "oba"},
		{text: `= substring("foobar", -2, 1)`, want: "a"},
		{text: `= substring("foobar", 1, 100)`, want: "foobar"},
		{text: `= substring("foobar", 10)`, want: ""},
		{text: `= substring("héllo", 2, 1)`, want: "é"},
		{text: `= string(1.5)`, want: "1.5"},
		{text: `= string(10)`, want: "10"},
		{text: `= string(true)`, want: "true"},
		{text: `= string(null)`, want: nil},
		{text: `= string([1, "a"])`, want: `[1, "a"]`},
		{text: `= string({b: 1, a: "x"})`, want: `{a:"x", b:1}`},
		{text: `= number("42")`, want: 42.0},
		{text: `= number(numText) + 1`, want: 43.0},
		{text: `= number("4x")`, want: nil},
		{text: `= number(7)`, want: 7.0},
		// list functions
		{text: `= count(list)`, want: 3.0},
		{text: `= count([])`, want: 0.0},
		{text: `= count(status)`, want: 1.0}, // a lone value is a list of one (DMN 1.5 10.3.2.9.4)
		{text: `= sum(list)`, want: 6.0},
		{text: `= sum(1, 2, 3)`, want: 6.0},
		{text: `= sum(["a"])`, want: nil},
		{text: `= min(list)`, want: 1.0},
		{text: `= max(list)`, want: 3.0},
		{text: `= max(3, 9, 4)`, want: 9.0},
		{text: `= min(["b", "a"])`, want: "a"},
		{text: `= min([])`, want: nil},
		{text: `= max([1, "a"])`, want: nil},
		{text: `= list contains(list, 2)`, want: true},
		{text: `= abs(-2)`, want: 2.0},
		{text: `= floor(1.5)`, want: 1.0},
		{text: `= ceiling(1.5)`, want: 2.0},
		// is defined
		{text: `= is defined(amount)`, want: true},
		{text: `= is defined(nothing)`, want: true},
		{text: `= is defined(missing)`, want: false},
		{text: `= is defined(order.id)`, want: true},
		{text: `= is defined(order.nope)`, want: false},
		{text: `= is defined(customer.address.city)`, want: true},
		{text: `= is defined(status.x)`, want: false},
		{text: `= is defined(list[1])`, want: true},
		{text: `= is defined(list[9])`, want: false},
		// temporal
		{text: `= duration("PT1H")`, want: "PT1H"},
		{text: `= duration("P1DT2H30M")`, want: "P1DT2H30M"},
		{text: `= duration("PT1H") + duration("PT30M")`, want: "PT1H30M"},
		{text: `= duration("PT1H") * 2`, want: "PT2H"},
		{text: `= duration("PT1H") / 2`, want: "PT30M"},
		{text: `= duration("PT1H") / duration("PT30M")`, want: 2.0},
		{text: `= duration("PT1H") > duration("PT30M")`, want: true},
		{text: `= duration("P1Y")`, want: "P1Y"},
		{text: `= duration("P14M")`, want: "P1Y2M"},
		{text: `= duration("P1Y") = duration("P2Y")`, want: false},
		{text: `= duration("P1Y") = duration("P12M")`, want: true},
		{text: `= duration("P1Y") = duration("P365D")`, want: nil},
		{text: `= duration("P1Y") < duration("P13M")`, want: true},
		{text: `= duration("P1Y2M").years + duration("P1Y2M").months`, want: 3.0},
		{text: `= duration("P1Y2M3D")`, want: nil},
		{text: `= date("2026-01-31") + duration("P1M")`, want: "2026-02-28"},
		{text: `= date and time("2026-01-31T10:00:00Z") - duration("P1Y")`, want: "2025-01-31T10:00:00Z"},
		{text: `= years and months duration(date("2011-12-22"), date("2013-08-24"))`, want: "P1Y8M"},
		{text: `= time("10:30:00")`, want: "10:30:00"},
		{text: `= time("10:30:00+02:00") = time("08:30:00Z")`, want: true},
		{text: `= time("10:30:00") = time("10:30:00Z")`, want: nil},
		{text: `= time("23:30:00") + duration("PT1H")`, want: "00:30:00"},
		{text: `= time(10, 30, 15.5, duration("-PT5H"))`, want: "10:30:15.5-05:00"},
		{text: `= time(date and time("2026-01-01T10:00:00+01:00")).hour`, want: 10.0},
		{text: `= time("10:00:00-05:00").time offset = duration("-PT5H")`, want: true},
		{text: `= date and time("2026-01-01T10:00:00").time offset`, want: nil},
		{text: `= date(2026, 2, 29)`, want: nil},
		{text: `= date(2024, 2, 29)`, want: "2024-02-29"},
		{text: `= date("-2017-12-31")`, want: "-2017-12-31"},
		{text: `= string(date and time("2011-12-31T10:15:30@Europe/Paris"))`, want: "2011-12-31T10:15:30@Europe/Paris"},
		{text: `= date and time("2011-12-31T10:15:30+01:00@Europe/Paris")`, want: nil},
		{text: `= date and time("2011-12-31T10:15:30@Europe/Paris").timezone`, want: "Europe/Paris"},
		{text: `= date and time(date("2026-01-02"), time("10:00:00Z"))`, want: "2026-01-02T10:00:00Z"},
		{text: `= date and time("2026-01-02T10:00:00") = date and time("2026-01-02T10:00:00Z")`, want: nil},
		{text: `= duration("nope")`, want: nil},
		{text: `= duration(iso)`, want: "PT1H"},
		{text: `= date and time("2026-01-01T10:00:00Z")`, want: "2026-01-01T10:00:00Z"},
		{text: `= date and time("2026-01-01T10:00:00")`, want: "2026-01-01T10:00:00"}, // local: no zone
		{text: `= date and time("2026-01-01T10:00:00+02:00") = date and time("2026-01-01T08:00:00Z")`, want: true},
		{text: `= date and time("2026-01-01T10:00:00Z") + duration("PT1H")`, want: "2026-01-01T11:00:00Z"},
		{text: `= date and time("2026-01-02T00:00:00Z") - date and time("2026-01-01T00:00:00Z")`, want: "P1D"},
		{text: `= date and time("2026-01-01T10:00:00Z") < date and time("2026-01-01T11:00:00Z")`, want: true},
		{text: `= date and time("2026-01-01T10:00:00Z").hour`, want: 10.0},
		{text: `= date and time("bad")`, want: nil},
		{text: `= date("2026-03-01")`, want: "2026-03-01"},
		{text: `= date("2026-03-01") - duration("P1D")`, want: "2026-02-28"},
		{text: `= date("2026-03-01").month`, want: 3.0},
		{text: `= date("2026-03-01") > date("2026-02-01")`, want: true},
		{text: `= date("2026-03-01") = date and time("2026-03-01T00:00:00Z")`, want: nil},
		{text: `= [duration("PT1M")]`, want: []any{"PT1M"}},
		// a context entry sees the entries before it
		{text: `= {a: 1, b: a + 1, c: {d: a + b}}`, want: map[string]any{"a": 1.0, "b": 2.0, "c": map[string]any{"d": 3.0}}},
		{text: `= {amount: 1, b: amount}.b`, want: 1.0},
		// in a filter, item is the item unless it has an entry "item"
		{text: `= [{item: 1}, {item: 2}][item >= 2]`, want: []any{map[string]any{"item": 2.0}}},
		{text: `= [1, 2, 3][item >= 2]`, want: []any{2.0, 3.0}},
		// strings: surrogate pairs, six-digit escapes, other escapes kept
		{text: `= string length("\uD83D\uDCA9")`, want: 1.0},
		{text: `= "\U01F40E" = "🐎"`, want: true},
		{text: `= "a\d"`, want: `a\d`},
		{text: `= substring("foobar", 3, 3.8)`, want: "oba"},
		// instance of
		{text: `= 1 instance of number`, want: true},
		{text: `= null instance of Any`, want: false},
		{text: `= null instance of Null`, want: true},
		{text: `= "a" instance of date and time`, want: false},
		{text: `= [1, null] instance of list<number>`, want: true},
		{text: `= [1, "a"] instance of list<number>`, want: false},
		{text: `= {a: 1, b: 2} instance of context<a: number>`, want: true},
		{text: `= duration("P1Y") instance of years and months duration and true`, want: true},
		// @ literals
		{text: `= @"2026-01-02"`, want: "2026-01-02"},
		{text: `= @"2026-01-02T10:00:00Z".hour`, want: 10.0},
		{text: `= @"10:00:00" instance of time`, want: true},
		{text: `= @"P1Y" + @"P2M"`, want: "P1Y2M"},
		// built-ins of DMN 1.5 10.3.4 and Camunda's extensions
		{text: `= sum([])`, want: nil},
		{text: `= mean([1, 2, 6])`, want: 3.0},
		{text: `= product(2, 3)`, want: 6.0},
		{text: `= median([3, 1, 4, 2])`, want: 2.5},
		{text: `= stddev([2, 4, 7, 5]) > 2.08`, want: true},
		{text: `= mode([3, 1, 3, 1, 2])`, want: []any{1.0, 3.0}},
		{text: `= all([true, null, false])`, want: false},
		{text: `= all([true, null])`, want: nil},
		{text: `= any([])`, want: false},
		{text: `= sublist([1, 2, 3], -2, 1)`, want: []any{2.0}},
		{text: `= append([1], 2, 3)`, want: []any{1.0, 2.0, 3.0}},
		{text: `= concatenate([1], [], [2])`, want: []any{1.0, 2.0}},
		{text: `= insert before([1, 3], 2, 2)`, want: []any{1.0, 2.0, 3.0}},
		{text: `= remove([1, 2, 3], -1)`, want: []any{1.0, 2.0}},
		{text: `= list replace([1, 2, 3], 2, 9)`, want: []any{1.0, 9.0, 3.0}},
		{text: `= reverse([1, 2])`, want: []any{2.0, 1.0}},
		{text: `= index of([1, 2, 1], 1)`, want: []any{1.0, 3.0}},
		{text: `= union([1, 2], [2, 3])`, want: []any{1.0, 2.0, 3.0}},
		{text: `= distinct values([1, 1, "a", "a"])`, want: []any{1.0, "a"}},
		{text: `= flatten([1, [2, [3]]])`, want: []any{1.0, 2.0, 3.0}},
		{text: `= is empty([])`, want: true},
		{text: `= decimal(2.5, 0)`, want: 2.0},
		{text: `= round half up(2.675, 2)`, want: 2.68},
		{text: `= round half down(-2.5, 0)`, want: -2.0},
		{text: `= round up(1.21, 1)`, want: 1.3},
		{text: `= round down(-1.29, 1)`, want: -1.2},
		{text: `= floor(-1.56, 1)`, want: -1.6},
		{text: `= ceiling(1.51, 1)`, want: 1.6},
		{text: `= modulo(-12, 5)`, want: 3.0},
		{text: `= modulo(1, 0)`, want: nil},
		{text: `= sqrt(-1)`, want: nil},
		{text: `= odd(5) and even(4) and even(1.5) = null`, want: true},
		{text: `= number("1.000.000,01", ".", ",")`, want: 1000000.01},
		{text: `= number("1,5", ",", ",")`, want: nil},
		{text: `= substring before("foobar", "bar") + substring after("foobar", "foo")`, want: "foobar"},
		{text: `= matches("Mary\u000DJones", "Mary.Jones")`, want: false},
		{text: `= matches("hello world", "hello\ sworld", "x")`, want: true},
		// XML Schema class subtraction, written out as ranges for RE2.
		{text: `= matches("b", "^[a-z-[aeiou]]$")`, want: true},
		{text: `= matches("e", "^[a-z-[aeiou]]$")`, want: false},
		{text: `= matches("E", "^[a-z-[aeiou]]$", "i")`, want: false},
		{text: `= matches("B", "^[a-z-[aeiou]]$", "i")`, want: true},
		{text: `= matches("1", "^[^a-z-[0-4]]$")`, want: false},
		{text: `= matches("7", "^[^a-z-[0-4]]$")`, want: true},
		{text: `= matches("a", "[a-[a]]")`, want: false},
		{text: `= matches("-", "^[\--[a]]$")`, want: true},
		{text: `= matches("x", "[a-z-[aeiou]")`, want: nil}, // unclosed
		{text: `= replace("abcd", "(ab)|(a)", "[1=$1][2=$2]")`, want: "[1=ab][2=]cd"},
		{text: `= replace("abc", "x*", "-")`, want: nil},
		{text: `= split("a;b;;c", ";")`, want: []any{"a", "b", "", "c"}},
		{text: `= extract("a1b22", "[0-9]+")`, want: []any{"1", "22"}},
		{text: `= string join(["a", null, "c"], "-")`, want: "a-c"},
		{text: `= string join("a")`, want: "a"},
		{text: `= is(date("2026-01-01"), date("2026-01-01"))`, want: true},
		{text: `= is(time("10:00:00Z"), time("10:00:00+00:00"))`, want: true},
		{text: `= is(1, "1")`, want: false},
		{text: `= get or else(missing, 5)`, want: 5.0},
		{text: `= get value({a: {b: 1}}, ["a", "b"])`, want: 1.0},
		{text: `= get entries({b: 2, a: 1})`, want: []any{map[string]any{"key": "a", "value": 1.0}, map[string]any{"key": "b", "value": 2.0}}},
		{text: `= context([{key: "a", value: 1}])`, want: map[string]any{"a": 1.0}},
		{text: `= context([{key: "a", value: 1}, {key: "a", value: 2}])`, want: nil},
		{text: `= context put({a: 1}, ["b", "c"], 2)`, want: map[string]any{"a": 1.0, "b": map[string]any{"c": 2.0}}},
		{text: `= context merge([{a: 1}, {a: 2, b: 3}])`, want: map[string]any{"a": 2.0, "b": 3.0}},
		{text: `= day of year(date("2026-02-01"))`, want: 32.0},
		{text: `= day of week(date("2026-01-01"))`, want: "Thursday"},
		{text: `= month of year(date("2026-01-01"))`, want: "January"},
		{text: `= week of year(date("2026-01-01"))`, want: 1.0},
		// ranges and unary tests as values
		{text: `= [1..10] = [1..10]`, want: true},
		{text: `= (1..10] = ]1..10]`, want: true},
		{text: `= (< 10) = (null..10)`, want: false},
		{text: `= (< 10) = (< 10)`, want: true},
		{text: `= 5 in [[1..3], [4..6]]`, want: true},
		{text: `= 10 in (1, < 5, >= 10)`, want: true},
		{text: `= true in (= true)`, want: true},
		{text: `= [1, 2] in [[1], [1, 2]]`, want: true},
		{text: `= 3 in (!= 3)`, want: false},
		{text: `= [1..5] instance of range<number>`, want: true},
		{text: `= string([1..5))`, want: "[1..5)"},
		{text: `= for i in 3..1 return i`, want: []any{3.0, 2.0, 1.0}},
		{text: `= for i in [1..3) return i`, want: []any{1.0, 2.0}},
		{text: `= for d in @"2026-01-30"..@"2026-02-01" return string(d)`, want: []any{"2026-01-30", "2026-01-31", "2026-02-01"}},
		// named arguments
		{text: `= substring(start position: 2, string: "abc")`, want: "bc"},
		{text: `= date(year: 2026, month: 1, day: 2)`, want: "2026-01-02"},
		{text: `= round half up(n: 2.5, scale: 0)`, want: 3.0},
		{text: `= context put(context: {}, key: ["a"], value: 1)`, want: nil},
		{text: `= context put(context: {}, keys: ["a"], value: 1)`, want: map[string]any{"a": 1.0}},
		// FEEL never errors at run time
		{text: `= substring(1, 2)`, want: nil},
		{text: `= upper case(list)`, want: nil},
	}, Options{})
}

func TestCompile_JUEL(t *testing.T) {
	runEvalCases(t, []evalCase{
		// literals
		{text: `${1}`, want: 1.0},
		{text: `${'single'}`, want: "single"},
		{text: `${"double"}`, want: "double"},
		{text: `${'it\'s'}`, want: "it's"},
		{text: `${true}`, want: true},
		{text: `${null}`, want: nil},
		{text: `#{1 + 1}`, want: 2.0},
		{text: `  ${amount}  `, want: 150.0},
		// bare expressions, as betsy writes them
		{text: `true`, want: true},
		{text: `test.contains("a")`, want: true},
		{text: `!test.contains("a")`, want: false},
		{text: `test.contains("z")`, want: false},
		{text: `integerVariable<3`, want: true},
		{text: `activationCount >= 1`, want: true},
		{text: `test == "abc"`, want: true},
		// equality and coercion
		{text: `${amount == 150}`, want: true},
		{text: `${count == 3}`, want: true},
		{text: `${status == 'ok'}`, want: true},
		{text: `${status eq 'ok'}`, want: true},
		{text: `${status != 'ok'}`, want: false},
		{text: `${status ne 'ok'}`, want: false},
		{text: `${numText == 42}`, want: true},
		{text: `${flag == 'true'}`, want: true},
		{text: `${nothing == null}`, want: true},
		{text: `${amount == null}`, want: false},
		{text: `${status == 1}`, err: `cannot coerce "ok" to a number`},
		{text: `${amount > 100}`, want: true},
		{text: `${amount gt 100}`, want: true},
		{text: `${amount lt 100}`, want: false},
		{text: `${amount le 150}`, want: true},
		{text: `${amount ge 151}`, want: false},
		{text: `${numText > 41}`, want: true},
		{text: `${nothing > 1}`, want: false},
		{text: `${'a' < 'b'}`, want: true},
		// logic: short-circuit, coercion
		{text: `${flag && off}`, want: false},
		{text: `${flag and !off}`, want: true},
		{text: `${off || flag}`, want: true},
		{text: `${off or off}`, want: false},
		{text: `${not flag}`, want: false},
		{text: `${!nothing}`, want: true},
		{text: `${false && missing}`, want: false},
		{text: `${true || missing}`, want: true},
		{text: `${true && missing}`, err: `unknown variable "missing"`},
		{text: `${amount > 100 && status == "ok"}`, want: true},
		{text: `${flag ? 'y' : 'n'}`, want: "y"},
		{text: `${off ? 'y' : missing}`, err: `unknown variable "missing"`},
		{text: `${flag ? 'y' : missing}`, want: "y"},
		{text: `${amount > 1 ? amount > 2 ? 'a' : 'b' : 'c'}`, want: "a"},
		{text: `${1 && true}`, err: "cannot coerce number to boolean"},
		// empty
		{text: `${empty ''}`, want: true},
		{text: `${empty status}`, want: false},
		{text: `${empty nothing}`, want: true},
		{text: `${empty noList}`, want: true},
		{text: `${not empty list}`, want: true},
		{text: `${empty missing}`, err: `unknown variable "missing"`},
		// arithmetic
		{text: `${1 + 2 * 3}`, want: 7.0},
		{text: `${7 / 2}`, want: 3.5},
		{text: `${7 div 2}`, want: 3.5},
		{text: `${7 % 2}`, want: 1.0},
		{text: `${7 mod 2}`, want: 1.0},
		{text: `${-amount}`, want: -150.0},
		{text: `${numText + 1}`, want: 43.0},
		{text: `${nothing + 1}`, want: 1.0},
		{text: `${count * 2}`, want: 6.0},
		{text: `${1 / 0}`, err: "division by zero"},
		{text: `${'a' + 'b'}`, err: `cannot coerce "a" to a number`},
		{text: `${flag + 1}`, err: "cannot coerce boolean"},
		// properties, 0-based index
		{text: `${order.id}`, want: "o-1"},
		{text: `${order["id"]}`, want: "o-1"},
		{text: `${order.nope}`, want: nil},
		{text: `${customer.address.city}`, want: "Berlin"},
		{text: `${list[0]}`, want: 1.0},
		{text: `${list[2]}`, want: 3.0},
		{text: `${list[3]}`, want: nil},
		{text: `${list[-1]}`, want: nil},
		{text: `${order.items[1].sku}`, want: "y"},
		{text: `${nothing.x}`, want: nil},
		{text: `${status.x}`, err: "cannot read property x of string"},
		{text: `${missing.x}`, err: `unknown variable "missing"`},
		// methods
		{text: `${name.startsWith("Ada")}`, want: true},
		{text: `${name.endsWith("lace")}`, want: true},
		{text: `${name.length()}`, want: 12.0},
		{text: `${list.size()}`, want: 3.0},
		{text: `${order.size()}`, want: 3.0},
		{text: `${list.contains(2)}`, want: true},
		{text: `${strs.contains('b')}`, want: true},
		{text: `${order.containsKey('id')}`, want: true},
		{text: `${status.equals('ok')}`, want: true},
		{text: `${status.equals(1)}`, want: false},
		{text: `${status.equalsIgnoreCase('OK')}`, want: true},
		{text: `${status.toUpperCase()}`, want: "OK"},
		{text: `${' x '.trim()}`, want: "x"},
		{text: `${name.substring(4)}`, want: "Lovelace"},
		{text: `${name.substring(0, 3)}`, want: "Ada"},
		{text: `${name.substring(5, 1)}`, err: "out of range"},
		{text: `${name.indexOf('L')}`, want: 4.0},
		{text: `${noList.isEmpty()}`, want: true},
		{text: `${list.get(1)}`, want: 2.0},
		{text: `${nothing.length()}`, err: "null has no length"},
		{text: `${amount.contains(1)}`, err: "contains: not defined on number"},
		// templates
		{text: `order-${order.id}`, want: "order-o-1"},
		{text: `${count}-${status}`, want: "3-ok"},
		{text: `P${count}D`, want: "P3D"},
		{text: `a ${nothing} b`, want: "a  b"},
		{text: `${'}'}`, want: "}"},
		// missing variables are errors in JUEL
		{text: `${missing}`, err: `unknown variable "missing"`},
		{text: `missing > 1`, err: `unknown variable "missing"`},
	}, Options{})
}

// TestEval_DialectDifferences pins the places where the same question gets
// different answers in FEEL and JUEL.
func TestEval_DialectDifferences(t *testing.T) {
	cases := []struct {
		name       string
		feel, juel string
		feelWant   any
		juelWant   any
		juelErr    string
	}{
		{name: "equality", feel: `= status = "ok"`, juel: `${status == "ok"}`, feelWant: true, juelWant: true},
		{name: "first element", feel: `= list[1]`, juel: `${list[0]}`, feelWant: 1.0, juelWant: 1.0},
		{name: "index 1", feel: `= list[1]`, juel: `${list[1]}`, feelWant: 1.0, juelWant: 2.0},
		{name: "missing variable", feel: `= missing`, juel: `${missing}`, feelWant: nil, juelErr: `unknown variable "missing"`},
		{name: "null comparison", feel: `= nothing > 1`, juel: `${nothing > 1}`, feelWant: nil, juelWant: false},
		{name: "string concat", feel: `= "a" + "b"`, juel: `${"a" + "b"}`, feelWant: "ab", juelErr: "cannot coerce"},
		{name: "number vs text", feel: `= numText = 42`, juel: `${numText == 42}`, feelWant: nil, juelWant: true},
		{name: "null plus one", feel: `= nothing + 1`, juel: `${nothing + 1}`, feelWant: nil, juelWant: 1.0},
		{name: "not null", feel: `= not(nothing)`, juel: `${not nothing}`, feelWant: nil, juelWant: true},
		{name: "division by zero", feel: `= 1 / 0`, juel: `${1 / 0}`, feelWant: nil, juelErr: "division by zero"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fp, err := Compile(model.Expression{Text: tc.feel}, Value, Options{})
			require.NoError(t, err)
			got, err := fp.Eval(testVars())
			require.NoError(t, err)
			assert.Equal(t, tc.feelWant, got, "FEEL")

			jp, err := Compile(model.Expression{Text: tc.juel}, Value, Options{})
			require.NoError(t, err)
			got, err = jp.Eval(testVars())
			if tc.juelErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.juelErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.juelWant, got, "JUEL")
		})
	}
	// FEEL "=" in JUEL, and "==" in FEEL, are caught at compile time.
	_, err := Compile(model.Expression{Text: `= a == 1`}, Condition, Options{})
	assert.ErrorContains(t, err, `FEEL compares with "="`)
	_, err = Compile(model.Expression{Text: `${a = 1}`}, Condition, Options{})
	assert.ErrorContains(t, err, `JUEL compares with "=="`)
}

func TestCompile_SyntaxErrors(t *testing.T) {
	cases := []struct {
		text string
		pos  int
		msg  string
	}{
		{`=`, 1, "empty expression"},
		{`=   `, 1, "empty expression"},
		{`= 1 +`, 5, "unexpected end of expression"},
		{`= (1 + 2`, 8, `expected ")"`},
		{`= [1, 2`, 7, `expected "]"`},
		{`= {a 1}`, 5, `expected ":"`},
		{`= {a: 1, a: 2}`, 9, "duplicate context key"},
		{`= "abc`, 2, "unterminated string"},
		{`= 'abc'`, 2, "unexpected character"},
		{`= a # b`, 4, "unexpected character"},
		{`= foo(1)`, 2, `unknown function "foo"`},
		{`= string length()`, 2, "string length() takes 1 argument(s), got 0"},
		{`= substring("a")`, 2, "substring() takes 2 to 3 arguments"},
		{`= if a then b`, 13, `expected "else"`},
		{`= a == 1`, 4, `FEEL compares with "="`},
		{`= !a`, 2, `FEEL negates with not(...)`},
		{`= 1 < 2 < 3`, 8, "comparisons cannot be chained"},
		{`= a in [1..`, 11, "unexpected end"},
		{`= a in [1..5`, 12, "expected ] or )"},
		{`= [1, 2..5]`, 7, "a range cannot follow list items"},
		{`= substring(text: "a", start position: 1)`, 12, `substring() has no parameter "text"`},
		{`= abs(n: 1, n: 2)`, 12, `parameter "n" given twice`},
		{`= a instance of tMyType`, 16, `unknown type "tMyType" (item definitions are not supported)`},
		{`= a instance of list<`, 21, "expected a type"},
		{`= @"2026-13-01"`, 2, `@"2026-13-01" is not a date, time, date and time or duration`},
		{`= a.1`, 4, "expected a name after ."},
		{`= 1a`, 3, "after number"},
		{`= a % 2`, 4, `no "%" operator`},
		{`= then`, 2, `unexpected name "then"`},
		{"= /* open", 2, "unterminated comment"},
		{"= `open", 2, "unterminated `name`"},
		{`${`, 0, "missing } to close ${"},
		{`${}`, 0, "empty ${}"},
		{`${1 +}`, 5, "unexpected end of expression"},
		{`${a.foo()}`, 4, `unknown method "foo"`},
		{`${a.contains()}`, 4, "contains() takes 1 argument(s), got 0"},
		{`${f(1)}`, 2, `unknown function "f"`},
		{`${a ? b}`, 7, `expected ":"`},
		{`${a = 1}`, 4, `JUEL compares with "=="`},
		{`${'x}`, 2, "unterminated string"},
		{`${"\q"}`, 3, `unknown escape \q`},
		{`a >`, 3, "unexpected end"},
		{`a b`, 2, `unexpected name "b"`},
		{`x ${a +} y`, 7, "unexpected"},
		{`${and}`, 2, `unexpected name "and"`},
		{`${a[1}`, 5, `expected "]"`},
		{`= 1 in ]1, 2]`, 9, "expected .. in the range"},
		{"= " + strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200), 102, "nested more than 100 deep"},
		{"${" + strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200) + "}", 102, "nested more than 100 deep"},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			_, err := Compile(model.Expression{Text: tc.text}, Value, Options{})
			var se *SyntaxError
			require.True(t, errors.As(err, &se), "want *SyntaxError, got %v", err)
			assert.Equal(t, tc.text, se.Text)
			assert.Equal(t, tc.pos, se.Pos, "position in %q: %v", tc.text, err)
			assert.Contains(t, se.Msg, tc.msg)
		})
	}
}

func TestCompile_Language(t *testing.T) {
	cases := []struct {
		text, lang string
		opts       Options
		want       any
		err        string
	}{
		{text: `amount > 100`, want: true},
		{text: `status = "ok"`, lang: "https://www.omg.org/spec/DMN/20191111/FEEL/", want: true},
		{text: `status = "ok"`, lang: "FEEL", want: true},
		{text: `list[1]`, lang: "feel", want: 1.0},
		{text: `list[1]`, lang: "juel", want: 2.0},
		{text: `list[1]`, lang: "http://camunda.org/schema/1.0/juel", want: 2.0},
		{text: `list[1]`, opts: Options{Language: "feel"}, want: 1.0},
		{text: `list[1]`, lang: "juel", opts: Options{Language: "feel"}, want: 2.0},
		{text: `= list[1]`, lang: "juel", want: 1.0},
		{text: `${list[1]}`, lang: "feel", want: 2.0},
		{text: `a`, lang: "http://www.w3.org/1999/XPath", err: "unsupported expression language"},
		{text: `a`, lang: "groovy", err: `unknown expression language "groovy"`},
		{text: `a`, opts: Options{Language: "python"}, err: "unknown expression language"},
	}
	for _, tc := range cases {
		t.Run(tc.lang+" "+tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text, Language: tc.lang}, Value, tc.opts)
			if tc.err != "" {
				var se *SyntaxError
				require.True(t, errors.As(err, &se), "want *SyntaxError, got %v", err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			got, err := p.Eval(testVars())
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCompile_Static(t *testing.T) {
	cases := []struct {
		text   string
		static bool
		want   string
	}{
		{"payment-service", true, "payment-service"},
		{"  padded  ", true, "padded"},
		{"PT10S", true, "PT10S"},
		{`= "job-" + status`, false, "job-ok"},
		{`${status}`, false, "ok"},
		{`job-${status}`, false, "job-ok"},
		{`= count`, false, "3"},
		{`= amount / 100`, false, "1.5"},
		{`= duration("PT90M")`, false, "PT1H30M"},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, Static, Options{})
			require.NoError(t, err)
			assert.Equal(t, tc.static, p.IsStatic())
			assert.Equal(t, tc.text, p.Text())
			got, err := p.EvalString(testVars())
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestEval_Bool(t *testing.T) {
	cases := []struct {
		text string
		want bool
		err  string
	}{
		{text: `= amount > 100 and status = "ok"`, want: true},
		{text: `= amount > 1000`, want: false},
		{text: `= missing > 1`, err: "condition yielded null, not a boolean"},
		{text: `= amount`, err: "condition yielded number, not a boolean"},
		{text: `= "true"`, err: "condition yielded string"},
		{text: `${amount > 100}`, want: true},
		{text: `${status}`, err: "condition yielded string"},
		{text: `${missing == 1}`, err: `unknown variable "missing"`},
		{text: `activationCount >= 1`, want: true},
		{text: `true`, want: true},
		{text: `false`, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, Condition, Options{})
			require.NoError(t, err)
			got, err := p.EvalBool(testVars())
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				var ee *EvalError
				assert.True(t, errors.As(err, &ee))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestEval_String(t *testing.T) {
	cases := []struct {
		text string
		want string
		err  string
	}{
		{text: `= status`, want: "ok"},
		{text: `= 42`, want: "42"},
		{text: `= 1.25`, want: "1.25"},
		{text: `= 1e21`, want: "1e+21"},
		{text: `= true`, want: "true"},
		{text: `= missing`, err: "yielded null, not text"},
		{text: `= list`, err: "yielded list, not text"},
		{text: `= date and time("2026-01-01T00:00:00Z")`, want: "2026-01-01T00:00:00Z"},
		{text: `${order.id}`, want: "o-1"},
		{text: `${count}`, want: "3"},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, Value, Options{})
			require.NoError(t, err)
			got, err := p.EvalString(testVars())
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestEval_DurationAndTime(t *testing.T) {
	vc := clock.NewVirtual(clock.Epoch)
	opts := Options{Clock: vc}
	durations := []struct {
		text string
		mode Mode
		want time.Duration
		err  string
	}{
		{text: "PT10S", mode: Static, want: 10 * time.Second},
		{text: "P1DT1H", mode: Static, want: 25 * time.Hour},
		{text: "P2W", mode: Static, want: 14 * 24 * time.Hour},
		{text: "PT0.5S", mode: Static, want: 500 * time.Millisecond},
		{text: "-PT1M", mode: Static, want: -time.Minute},
		{text: `= duration("PT1H") * 3`, mode: Value, want: 3 * time.Hour},
		{text: `= "PT" + string(count) + "M"`, mode: Value, want: 3 * time.Minute},
		{text: `P${count}D`, mode: Static, want: 3 * 24 * time.Hour},
		{text: "P1M", mode: Static, err: "years and months have no fixed length"},
		{text: "PT", mode: Static, err: "invalid ISO-8601 duration"},
		{text: "10s", mode: Static, err: "must start with P"},
		{text: `= 5`, mode: Value, err: "yielded number, not a duration"},
		{text: `= duration("P1M")`, mode: Value, err: "years and months duration P1M, which has no fixed length"},
	}
	for _, tc := range durations {
		t.Run(tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, tc.mode, opts)
			require.NoError(t, err)
			got, err := p.EvalDuration(testVars())
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	times := []struct {
		text string
		want time.Time
	}{
		{"2026-02-01T10:00:00Z", time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)},
		{`= now() + duration("PT1H")`, clock.Epoch.Add(time.Hour)},
		{`= today()`, clock.Epoch},
		{`= date and time("2026-05-01T00:00:00+02:00")`, time.Date(2026, 4, 30, 22, 0, 0, 0, time.UTC)},
		{`= date and time("2026-05-01T10:00:00")`, time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}, // no zone: UTC
	}
	for _, tc := range times {
		t.Run(tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, Static, opts)
			require.NoError(t, err)
			got, err := p.EvalTime(nil)
			require.NoError(t, err)
			assert.True(t, tc.want.Equal(got), "want %v, got %v", tc.want, got)
		})
	}
}

// TestEval_Clock checks that now() and today() read the options' clock at
// evaluation time, not at compile time.
func TestEval_Clock(t *testing.T) {
	vc := clock.NewVirtual(time.Date(2026, 3, 31, 23, 30, 0, 0, time.UTC))
	opts := Options{Clock: vc}
	now, err := Compile(model.Expression{Text: `= now()`}, Value, opts)
	require.NoError(t, err)
	today, err := Compile(model.Expression{Text: `= today()`}, Value, opts)
	require.NoError(t, err)
	late, err := Compile(model.Expression{Text: `= now() > date and time("2026-04-01T00:00:00Z")`}, Condition, opts)
	require.NoError(t, err)
	juelNow, err := Compile(model.Expression{Text: `${now()}`}, Value, opts)
	require.NoError(t, err)

	got, err := now.Eval(nil)
	require.NoError(t, err)
	assert.Equal(t, "2026-03-31T23:30:00Z", got)
	got, err = today.Eval(nil)
	require.NoError(t, err)
	assert.Equal(t, "2026-03-31", got)
	b, err := late.EvalBool(nil)
	require.NoError(t, err)
	assert.False(t, b)

	vc.Advance(time.Hour)
	got, err = now.Eval(nil)
	require.NoError(t, err)
	assert.Equal(t, "2026-04-01T00:30:00Z", got)
	got, err = today.Eval(nil)
	require.NoError(t, err)
	assert.Equal(t, "2026-04-01", got)
	b, err = late.EvalBool(nil)
	require.NoError(t, err)
	assert.True(t, b)
	got, err = juelNow.Eval(nil)
	require.NoError(t, err)
	assert.Equal(t, "2026-04-01T00:30:00Z", got)

	// The default clock is the real one.
	p, err := Compile(model.Expression{Text: `= now()`}, Value, Options{})
	require.NoError(t, err)
	before := time.Now().Add(-time.Second)
	tm, err := p.EvalTime(nil)
	require.NoError(t, err)
	assert.True(t, tm.After(before))
}

// TestEval_ErrorPosition checks that evaluation errors point at the
// operation that failed.
func TestEval_ErrorPosition(t *testing.T) {
	p, err := Compile(model.Expression{Text: `${ok == 1 && missing}`}, Condition, Options{})
	require.NoError(t, err)
	_, err = p.EvalBool(map[string]any{"ok": 1.0})
	var ee *EvalError
	require.True(t, errors.As(err, &ee))
	assert.Equal(t, 13, ee.Pos)
	assert.True(t, errors.Is(err, errUnknownVariable))
	assert.Equal(t, `evaluate "${ok == 1 && missing}": at 13: unknown variable "missing"`, err.Error())
}

// TestEval_NoMutation checks that evaluation never changes the variables
// and that results do not alias constants shared between evaluations.
func TestEval_NoMutation(t *testing.T) {
	p, err := Compile(model.Expression{Text: `= [1, 2]`}, Value, Options{})
	require.NoError(t, err)
	a, err := p.Eval(nil)
	require.NoError(t, err)
	a.([]any)[0] = "changed"
	b, err := p.Eval(nil)
	require.NoError(t, err)
	assert.Equal(t, []any{1.0, 2.0}, b)

	vars := testVars()
	p, err = Compile(model.Expression{Text: `= order.items[qty > 1]`}, Value, Options{})
	require.NoError(t, err)
	_, err = p.Eval(vars)
	require.NoError(t, err)
	assert.Equal(t, testVars(), vars)
}

// TestEval_Concurrent runs one program from many goroutines (run with
// -race).
func TestEval_Concurrent(t *testing.T) {
	p, err := Compile(model.Expression{Text: `= amount > limit and status = "ok"`}, Condition, Options{})
	require.NoError(t, err)
	done := make(chan error)
	for g := range 8 {
		go func() {
			for i := range 500 {
				ok, err := p.EvalBool(map[string]any{"amount": float64(i), "limit": float64(g * 50), "status": "ok"})
				if err == nil && ok != (i > g*50) {
					err = errors.New("wrong result")
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		require.NoError(t, <-done)
	}
}

// TestCompile_NestingIsLinear guards against parsers that backtrack: deeply
// nested filters and ranges must compile quickly.
func TestCompile_NestingIsLinear(t *testing.T) {
	for _, text := range []string{
		"= " + strings.Repeat("list[", 40) + "1" + strings.Repeat("]", 40),
		"= " + strings.Repeat("1 in [", 40) + "1" + strings.Repeat("]", 40),
		"= " + strings.Repeat("1 in (", 40) + "1" + strings.Repeat(")", 40),
	} {
		start := time.Now()
		_, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err)
		assert.Less(t, time.Since(start), time.Second, text)
	}
}

func TestCompile_FEELQuantified(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: `= some x in [1, 2, 3] satisfies x > 2`, want: true},
		{text: `= some x in [1, 2, 3] satisfies x > 3`, want: false},
		{text: `= every x in [1, 2, 3] satisfies x > 0`, want: true},
		{text: `= every x in [1, 2, 3] satisfies x > 1`, want: false},
		{text: `= some x in [] satisfies true`, want: false},
		{text: `= every x in [] satisfies false`, want: true},
		{text: `= some x in [1, null] satisfies x > 0`, want: true},
		{text: `= every x in [1, null] satisfies x > 0`, want: false},      // null does not satisfy
		{text: `= some x in [1, 2] satisfies x = amount / 75`, want: true}, // outer variables stay visible
		{text: `= some c in [{level: "green"}, {level: "red"}] satisfies c.level = "red"`, want: true},
		{text: `= if some x in [5] satisfies x = 5 then "yes" else "no"`, want: "yes"},
	}, Options{})
	for text, msg := range map[string]string{
		`= some in [1] satisfies true`: "variable name",
		`= some x [1] satisfies true`:  `"in"`,
		`= some x in [1] x > 0`:        `"satisfies"`,
	} {
		_, err := Compile(model.Expression{Text: text}, Value, Options{})
		var se *SyntaxError
		require.ErrorAs(t, err, &se, text)
		assert.Contains(t, se.Msg, msg, text)
	}
}

func TestCompile_FEELFor(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: `= for x in [1, 2, 3] return x * 2`, want: []any{2.0, 4.0, 6.0}},
		{text: `= for x in [] return x`, want: []any{}},
		{text: `= for i in order.items return i.qty`, want: []any{2.0, 5.0}},
		{text: `= sum(for i in order.items return i.qty)`, want: 7.0},
		{text: `= for x in [1, 2] return x + amount`, want: []any{151.0, 152.0}}, // outer variables stay visible
		{text: `= for x in [[1], [2, 3]] return count(x)`, want: []any{1.0, 2.0}},
		// A body known to be null before evaluation is a list of nulls.
		{text: `= for x in [1, 2] return null`, want: []any{nil, nil}},
		{text: `= for x in [1], y in [2] return if x > 0 then null else null`, want: []any{nil}},
		{text: `= for x in 1..2 return 0.a`, want: []any{nil, nil}},
		{text: `= for x in [1] return date(null)`, want: []any{nil}},
	}, Options{})
}

// A pattern that XML Schema accepts but RE2 cannot run is an evaluation
// error naming what is missing, never a silently wrong match.
func TestFEEL_UnsupportedPattern(t *testing.T) {
	for _, text := range []string{
		`= matches("aA", "(a)\1", "i")`,
		`= matches("x", "[a-z-[b-[c]]]")`, // nested subtraction
		`= matches("x", "\p{IsGreek}")`,
	} {
		p, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err, text)
		_, err = p.Eval(nil)
		var ee *EvalError
		require.ErrorAs(t, err, &ee, text)
		assert.ErrorContains(t, err, "which is not supported", text)
	}
}

// A for over what cannot be iterated (a range of strings, a descending
// range value) fails naming it, rather than iterating over nothing.
func TestFEEL_ForOverRange(t *testing.T) {
	for text, want := range map[string]string{
		`= for i in "a".."z" return i`: `cannot iterate from a to z`,
		`= for i in [2..1] return i`:   `cannot iterate over the range [2..1]`,
		`= for i in (< 3) return i`:    `cannot iterate over the unary test < 3`,
	} {
		p, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err, text)
		_, err = p.Eval(nil)
		assert.ErrorContains(t, err, want, text)
	}
}

func TestFEEL_NamesZonesAndOmittedArguments(t *testing.T) {
	runEvalCases(t, []evalCase{
		{`= {foo+bar: 1, a-b/c: 2}`, map[string]any{"foo+bar": 1.0, "a-b/c": 2.0}, ""},
		{`= {🐎: "😀"}`, map[string]any{"🐎": "😀"}, ""},
		{`= string(@"23:00:50@Etc/GMT")`, "23:00:50@Etc/GMT", ""},
		{`= is(@"23:00:50@Etc/GMT", @"23:00:50Z")`, false, ""},
		{`= is(value1: 1)`, false, ""},
		{`= is(value2: null)`, true, ""},
		// Any expression may be an operand, and x in [] is false.
		{`= "a" + if flag then "b" else "c"`, "ab", ""},
		{`= 1 + for x in [1, 2] return x`, nil, ""},
		{`= 2 in for x in [1, 2] return x`, true, ""},
		{`= false or some x in list satisfies x > 2`, true, ""},
		{`= 1 in []`, false, ""},
	}, Options{})
}
