package expr

import (
	"testing"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

func TestOptions_Names(t *testing.T) {
	names := []string{"Monthly Salary", "Applicant Data", "Monthly Income", "Is-Eligible", "PMT", "Loan Payment"}
	pmt := &Native{Params: []string{"a", "b"}, Fn: func(args []any) (any, error) { return feelAdd(args[0], args[1]), nil }}
	vars := map[string]any{
		"Monthly Salary": 1000, "Is-Eligible": true, "PMT": pmt, "Loan Payment": pmt,
		"Applicant Data": map[string]any{"Monthly Income": 7},
	}
	for _, c := range []struct {
		text string
		want any
	}{
		{"Monthly Salary * 12", 12000.0},
		{"Applicant Data.Monthly Income + 1", 8.0},
		{"if Is-Eligible then 1 else 2", 1.0},
		{"PMT(1, 2)", 3.0},
		{"Loan Payment(b: 2, a: 5)", 7.0},
		{"{Monthly Salary: 5, r: Monthly Salary + 1}.r", 6.0},
		{"count([1, 2])", 2.0},
	} {
		p, err := Compile(model.Expression{Text: c.text, Language: "FEEL"}, Value, Options{Names: names})
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		got, err := p.Eval(vars)
		if err != nil || !Equal(got, c.want) {
			t.Errorf("%s = %v, %v; want %v", c.text, got, err, c.want)
		}
	}
}

func TestTests_Match(t *testing.T) {
	for _, c := range []struct {
		tests string
		input any
		want  bool
	}{
		{"-", 5, true},
		{"< 5, > 10", 3, true},
		{"< 5, > 10", 7, false},
		{"[1..5]", 5, true},
		{"(1..5)", 5, false},
		{`"a", "b"`, "b", true},
		{`not("a", "b")`, "b", false},
		{`not("a", "b")`, "c", true},
		{"? > 5", 6, true},
		{"? > 5", 4, false},
		{"limit", 3, true},
		{"true", true, true},
		{"false", true, false},
		{"null", nil, true},
		{"[1, 2, 3]", 2, true},
		{`starts with(?, "ab")`, "abc", true},
	} {
		ts, err := CompileTests(c.tests, Options{Names: []string{"limit"}})
		if err != nil {
			t.Fatalf("%s: %v", c.tests, err)
		}
		got, err := ts.Match(c.input, map[string]any{"limit": 3})
		if err != nil || got != c.want {
			t.Errorf("%s on %v = %v, %v; want %v", c.tests, c.input, got, err, c.want)
		}
	}
	if _, err := CompileTests("< ", Options{}); err == nil {
		t.Error("an unfinished test compiled")
	}
}

func TestConforms(t *testing.T) {
	if ok, known := Conforms(5.0, "number"); !ok || !known {
		t.Error("5 is no number")
	}
	if _, known := Conforms(5.0, "tPerson"); known {
		t.Error("an item definition's name is a FEEL type")
	}
	if ok, _ := Conforms([]any{"a"}, "list<string>"); !ok {
		t.Error("[a] is no list<string>")
	}
}

func TestRange(t *testing.T) {
	for _, c := range []struct {
		text string
		want any
	}{
		{`range("[1..3]") = [1..3]`, true},
		{`2 in range("(1..3)")`, true},
		{`1 in range("(1..3)")`, false},
		{`range("[3..1]")`, nil},
		{`range(">= 10")`, nil},
		{`range("[1..\"b\"]")`, nil},
		{`range("[date(\"2020-01-01\")..@\"2020-02-01\"]") = [@"2020-01-01"..@"2020-02-01"]`, true},
		{`range(from: "[x..y]")`, nil},
	} {
		got, err := Literal(c.text, Options{})
		if err != nil || !(got == nil && c.want == nil || Equal(got, c.want)) {
			t.Errorf("%s = %v, %v; want %v", c.text, got, err, c.want)
		}
	}
}

func TestNative_AsSortPrecedes(t *testing.T) {
	desc := &Native{Params: []string{"a", "b"}, Fn: func(args []any) (any, error) { return feelCmp(func(c int) bool { return c > 0 })(args[0], args[1]) }}
	p, err := Compile(model.Expression{Text: "sort([1, 3, 2], by)", Language: "FEEL"}, Value, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Eval(map[string]any{"by": desc})
	if err != nil || !Equal(got, []any{3.0, 2.0, 1.0}) {
		t.Errorf("got %v, %v", got, err)
	}
}
