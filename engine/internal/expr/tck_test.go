package expr

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// The FEEL cases of the DMN TCK (../shared/conformance/feel-tck, read from
// $FLOWTRACK_EXTERNAL at test time, never copied here): TestFeelTCK runs
// every case, fails on any case that compiles and gives a wrong result,
// and fails when a case listed in testdata/feel-tck-agree.txt (the
// ratchet) no longer agrees. make conformance prints the table per group.

var (
	tckReport = flag.Bool("feeltck.report", false, "print the FEEL TCK table per group, the wrong results and the total")
	tckUpdate = flag.Bool("feeltck.update", false, "rewrite testdata/feel-tck-agree.txt from the current results")
	tckList   = flag.String("feeltck.list", "", "print the cases of this outcome (agree, wrong, error, unsupported, leftout) with why")
)

const tckRatchet = "testdata/feel-tck-agree.txt"

// tckCase is one line of cases.jsonl (its README describes the fields).
type tckCase struct {
	ID            string         `json:"id"`
	Name          string         `json:"name"`
	Group         string         `json:"group"`
	Expr          string         `json:"expr"`
	Vars          map[string]any `json:"vars"`
	Expected      any            `json:"expected"`
	ExpectedError bool           `json:"expected_error"`
	TypeRef       string         `json:"typeRef"`
	Coercion      bool           `json:"coercion"`
}

// tckOutcome classifies a case's result.
type tckOutcome string

const (
	// tckAgree: the result is the expected one (for a case expecting an
	// error: null, an evaluation error or a compile error).
	tckAgree tckOutcome = "agree"
	// tckWrong: compiled and evaluated, but to another value. Worse than
	// unsupported: a modeller gets a silently wrong answer.
	tckWrong tckOutcome = "wrong"
	// tckError: compiled, but evaluation failed where a value was expected.
	tckError tckOutcome = "error"
	// tckUnsupported: did not compile where a value was expected.
	tckUnsupported tckOutcome = "unsupported"
	// tckLeftOut: the case depends on a declared item definition that the
	// TCK extract does not carry (coercion cases without a usable
	// typeRef), so its expected result cannot be derived from the
	// expression alone.
	tckLeftOut tckOutcome = "leftout"
)

func tckCases(t *testing.T) []tckCase {
	t.Helper()
	dir := os.Getenv("FLOWTRACK_EXTERNAL")
	if dir == "" {
		t.Skip("the FEEL TCK was not run: FLOWTRACK_EXTERNAL is not set (make conformance sets it)")
	}
	f, err := os.Open(filepath.Join(dir, "feel-tck", "cases.jsonl"))
	if err != nil {
		t.Skipf("the FEEL TCK was not run: %v", err)
	}
	defer f.Close()
	var cases []tckCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c tckCase
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber() // the expected number's digits say how precise it is
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("cases.jsonl: %v", err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// tckTypes are the declared result types whose coercion the runner
// applies (DMN 1.5 10.3.2.9.4: a value that does not conform becomes null,
// a singleton list of a conforming value becomes that value).
var tckTypes = map[string]func(any) bool{
	"number":  func(v any) bool { _, isBool := v.(bool); return !isBool && isNumber(v) },
	"string":  func(v any) bool { _, ok := v.(string); return ok },
	"boolean": func(v any) bool { _, ok := v.(bool); return ok },
}

// tckDisputed are cases whose expected result this dialect does not
// follow, with why.
var tckDisputed = map[string]string{
	"tck-0344": "expects times 0.1 ms apart to be equal; FEEL time equality is value equality (DMN 1.5 10.3.2.3.4)",
	"tck-0352": "expects date-times 0.1 ms apart to be equal; FEEL date and time equality is value equality (DMN 1.5 10.3.2.3.5)",
}

// runTCK evaluates one case and says how it went and why.
func runTCK(c tckCase) (tckOutcome, string) {
	if why, ok := tckDisputed[c.ID]; ok {
		return tckLeftOut, why
	}
	conform, typed := tckTypes[c.TypeRef]
	if c.Coercion && !typed {
		return tckLeftOut, "declared type " + strings.TrimSpace(c.TypeRef+" (item definition not in the extract)")
	}
	vars := map[string]any{}
	for k, v := range c.Vars {
		vars[k] = tckValue(v)
	}
	p, err := Compile(model.Expression{Text: c.Expr, Language: "FEEL"}, Value, Options{})
	if err != nil {
		if c.ExpectedError {
			return tckAgree, "rejected: " + err.Error()
		}
		return tckUnsupported, err.Error()
	}
	got, err := p.run(vars)
	if err != nil {
		if c.ExpectedError {
			return tckAgree, "failed: " + err.Error()
		}
		return tckError, err.Error()
	}
	if typed {
		if l, ok := got.([]any); ok && len(l) == 1 && conform(l[0]) {
			got = l[0]
		}
		if got != nil && !conform(got) {
			got = nil
		}
	}
	if c.ExpectedError {
		if got == nil {
			return tckAgree, ""
		}
		return tckWrong, "expected an error or null, got " + tckShow(got)
	}
	if why := tckDiff(got, c.Expected); why != "" {
		return tckWrong, why
	}
	return tckAgree, ""
}

// tckValue converts a TCK JSON value to this package's values.
func tckValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		return canonical(x) // exactly, as the TCK's decimals are
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tckValue(e)
		}
		return out
	case map[string]any:
		if len(x) == 1 {
			for k, e := range x {
				if s, ok := e.(string); ok && strings.HasPrefix(k, "@") {
					if t := tckTemporal(k, s); t != nil {
						return t
					}
				}
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = tckValue(e)
		}
		return out
	}
	return v
}

// tckTemporal parses a typed TCK value with FEEL's own conversion
// functions.
func tckTemporal(kind, text string) any {
	fn := map[string]string{"@date": "date", "@time": "time", "@datetime": "date and time", "@duration": "duration"}[kind]
	f, ok := feelLibrary[fn]
	if !ok || f.fn == nil {
		return nil
	}
	v, err := f.fn(text)
	if err != nil {
		return nil
	}
	return v
}

// tckDiff returns why got is not want, or "" when it is.
func tckDiff(got, want any) string {
	switch w := want.(type) {
	case nil:
		if got != nil {
			return "expected null, got " + tckShow(got)
		}
		return ""
	case json.Number:
		if c, ok := numCmp(got, w); ok && c == 0 {
			return "" // the same decimal
		}
		g, ok := toFloat(got)
		if _, isBool := got.(bool); isBool || !ok || !tckClose(g, w) {
			return fmt.Sprintf("expected %v, got %s", w, tckShow(got))
		}
		tckInexact++
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("expected %s, got %s", tckShow(want), tckShow(got))
		}
		for i := range w {
			if d := tckDiff(g[i], w[i]); d != "" {
				return fmt.Sprintf("item %d: %s", i+1, d)
			}
		}
		return ""
	case map[string]any:
		if len(w) == 1 {
			for k, e := range w {
				if s, ok := e.(string); ok && strings.HasPrefix(k, "@") {
					if got == nil || tckKind(got) != k || feelString(got) != s {
						return fmt.Sprintf("expected %s %s, got %s", k, s, tckShow(got))
					}
					return ""
				}
			}
		}
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("expected %s, got %s", tckShow(want), tckShow(got))
		}
		for k := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("entry %q missing", k)
			}
			if d := tckDiff(gv, w[k]); d != "" {
				return fmt.Sprintf("entry %q: %s", k, d)
			}
		}
		return ""
	}
	if got != want {
		return fmt.Sprintf("expected %s, got %s", tckShow(want), tckShow(got))
	}
	return ""
}

// tckInexact counts the numbers that agreed only at float64 precision
// or at the decimals the TCK cut an irrational result to, not exactly.
var tckInexact int

// tckClose compares a number with the TCK's, at the precision of float64
// (the TCK's decimals have 34 digits, ours about 16) or, where the TCK
// gives an irrational result cut to 8 or more decimals (exp(4) is
// 54.59815003), to those decimals.
func tckClose(a float64, want json.Number) bool {
	b, err := want.Float64()
	if err != nil {
		return false
	}
	if a == b || math.Abs(a-b) <= 1e-14*math.Max(math.Abs(a), math.Abs(b)) {
		return true
	}
	text := strings.ToLower(want.String())
	if strings.Contains(text, "e") {
		return false
	}
	if i := strings.IndexByte(text, '.'); i >= 0 && len(text)-i-1 >= 8 {
		return math.Abs(a-b) < math.Pow(10, -float64(len(text)-i-1))
	}
	return false
}

// tckKind names a temporal value's kind as the TCK's JSON does.
func tckKind(v any) string {
	switch typeName(v) {
	case "date":
		return "@date"
	case "time":
		return "@time"
	case "date and time":
		return "@datetime"
	case "days and time duration", "years and months duration", "duration":
		return "@duration"
	}
	return ""
}

func tckShow(v any) string {
	if v == nil {
		return "null"
	}
	if k := tckKind(v); k != "" {
		return k + " " + feelString(v).(string)
	}
	s, _ := feelString(v).(string)
	return typeName(v) + " " + s
}

func TestFeelTCK(t *testing.T) {
	cases := tckCases(t)
	tckInexact = 0
	ratchet, err := readTCKRatchet()
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ n, agree, rejected, wrong, errs, unsupported, leftout int }
	groups := map[string]*row{}
	var total row
	var agreeing []string
	byOutcome := map[tckOutcome][]string{}
	for _, c := range cases {
		out, why := runTCK(c)
		r := groups[c.Group]
		if r == nil {
			r = &row{}
			groups[c.Group] = r
		}
		for _, r := range []*row{r, &total} {
			r.n++
			switch out {
			case tckAgree:
				r.agree++
				if strings.HasPrefix(why, "rejected: ") {
					r.rejected++
				}
			case tckWrong:
				r.wrong++
			case tckError:
				r.errs++
			case tckUnsupported:
				r.unsupported++
			case tckLeftOut:
				r.leftout++
			}
		}
		line := fmt.Sprintf("%s %s %s: %s", c.ID, c.Group, strings.Join(strings.Fields(c.Expr), " "), why)
		byOutcome[out] = append(byOutcome[out], line)
		if out == tckAgree {
			agreeing = append(agreeing, c.ID)
		} else if ratchet[c.ID] {
			t.Errorf("%s listed in %s but now %s", line, tckRatchet, out)
		}
		if out == tckWrong {
			t.Errorf("wrong result: %s", line)
		}
	}
	if *tckReport {
		names := make([]string, 0, len(groups))
		for g := range groups {
			names = append(names, g)
		}
		sort.Strings(names)
		// rej counts the agreeing cases that expect an error and got a
		// compile error, which may also be a feature not supported.
		fmt.Printf("%-44s %5s %5s %5s %5s %5s %5s %5s\n", "feel-tck group", "cases", "agree", "rej", "wrong", "error", "unsup", "left")
		for _, g := range append(names, "total") {
			r := groups[g]
			if g == "total" {
				r = &total
			}
			fmt.Printf("%-44s %5d %5d %5d %5d %5d %5d %5d\n", g, r.n, r.agree, r.rejected, r.wrong, r.errs, r.unsupported, r.leftout)
		}
		for _, l := range byOutcome[tckWrong] {
			fmt.Println("feel-tck wrong:", l)
		}
		for _, l := range byOutcome[tckLeftOut] {
			fmt.Println("feel-tck left out:", l)
		}
		fmt.Printf("feel-tck numbers: %d agreed only to float64 precision or to the decimals the TCK cut them to\n", tckInexact)
		fmt.Printf("feel-tck: %d/%d agree (%d of them by rejecting the expression), %d wrong, %d error, %d unsupported, %d left out\n",
			total.agree, total.n, total.rejected, total.wrong, total.errs, total.unsupported, total.leftout)
	}
	if *tckList != "" {
		for _, l := range byOutcome[tckOutcome(*tckList)] {
			fmt.Println(l)
		}
	}
	for _, id := range agreeing {
		if !ratchet[id] && !*tckUpdate && !*tckReport {
			t.Logf("newly agreeing (run with -feeltck.update): %s", id)
		}
	}
	if *tckUpdate {
		sort.Strings(agreeing)
		text := "# FEEL TCK cases that must agree (the ratchet): a listed case that stops\n" +
			"# agreeing fails TestFeelTCK. Regenerate: make conformance-feel-update\n" +
			strings.Join(agreeing, "\n") + "\n"
		if err := os.MkdirAll(filepath.Dir(tckRatchet), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tckRatchet, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readTCKRatchet() (map[string]bool, error) {
	data, err := os.ReadFile(tckRatchet)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			ids[l] = true
		}
	}
	return ids, nil
}
