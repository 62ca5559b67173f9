package decision

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine/internal/dmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

const ns15 = "https://www.omg.org/spec/DMN/20230324/MODEL/"

// dmnDoc wraps elements in DMN 1.5 definitions.
func dmnDoc(body string) string {
	return `<definitions xmlns="` + ns15 + `" id="m" name="m" namespace="urn:m">` + body + `</definitions>`
}

// compileDoc imports and compiles one model.
func compileDoc(t *testing.T, body string, others ...string) *Set {
	t.Helper()
	var defs []*model.DMNDefinitions
	for i, doc := range append([]string{dmnDoc(body)}, others...) {
		d, err := dmnxml.Import("m.dmn", []byte(doc))
		if err != nil {
			t.Fatalf("import %d: %v", i, err)
		}
		defs = append(defs, d)
	}
	s, err := Compile(defs, Options{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

// table is a decision "d" over input data "x" (a number) with a decision
// table of that hit policy and aggregation, outputs and rules.
func table(hit, agg, outputs, rules string) string {
	a := ""
	if agg != "" {
		a = ` aggregation="` + agg + `"`
	}
	return `<inputData id="x" name="x"><variable name="x" typeRef="number"/></inputData>` +
		`<decision id="d" name="d"><variable name="d"/><informationRequirement><requiredInput href="#x"/></informationRequirement>` +
		`<decisionTable hitPolicy="` + hit + `"` + a + `><input><inputExpression typeRef="number"><text>x</text></inputExpression></input>` +
		outputs + rules + `</decisionTable></decision>`
}

func rule(id, in string, outs ...string) string {
	r := `<rule id="` + id + `"><inputEntry><text>` + in + `</text></inputEntry>`
	for _, o := range outs {
		r += `<outputEntry><text>` + o + `</text></outputEntry>`
	}
	return r + `</rule>`
}

const oneOut = `<output name="o"/>`

func eval(t *testing.T, s *Set, ref string, in map[string]any) (any, error) {
	t.Helper()
	r, err := s.Evaluate(ref, in)
	if r == nil {
		t.Fatalf("evaluate %s: %v", ref, err)
	}
	return expr.Normalize(r.Value), err
}

func same(got, want any) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	return expr.Equal(got, want)
}

func TestSet_HitPolicies(t *testing.T) {
	three := rule("r1", "&lt; 10", `"a"`) + rule("r2", "&lt; 5", `"b"`) + rule("r3", "-", `"c"`)
	nums := rule("r1", "&lt; 10", "3") + rule("r2", "&lt; 5", "1") + rule("r3", "-", "3")
	for _, c := range []struct {
		name, hit, agg, outputs, rules string
		x                              float64
		want                           any
		fails                          string
	}{
		{"unique one", "UNIQUE", "", oneOut, rule("r1", "&lt; 5", `"s"`) + rule("r2", "&gt;= 5", `"l"`), 7, "l", ""},
		{"unique two", "UNIQUE", "", oneOut, three, 1, nil, "UNIQUE"},
		{"any same", "ANY", "", oneOut, rule("r1", "&lt; 5", `"s"`) + rule("r2", "&lt; 9", `"s"`), 1, "s", ""},
		{"any different", "ANY", "", oneOut, three, 1, nil, "different outputs"},
		{"first", "FIRST", "", oneOut, three, 1, "a", ""},
		{"priority", "PRIORITY", "", `<output name="o"><outputValues><text>"c", "b", "a"</text></outputValues></output>`, three, 1, "c", ""},
		{"rule order", "RULE ORDER", "", oneOut, three, 1, []any{"a", "b", "c"}, ""},
		{"output order", "OUTPUT ORDER", "", `<output name="o"><outputValues><text>"b", "c", "a"</text></outputValues></output>`, three, 1, []any{"b", "c", "a"}, ""},
		{"collect", "COLLECT", "", oneOut, three, 7, []any{"a", "c"}, ""},
		{"collect sum", "COLLECT", "SUM", oneOut, nums, 1, 7.0, ""},
		{"collect min", "COLLECT", "MIN", oneOut, nums, 1, 1.0, ""},
		{"collect max", "COLLECT", "MAX", oneOut, nums, 1, 3.0, ""},
		{"collect count", "COLLECT", "COUNT", oneOut, nums, 1, 3.0, ""},
		{"collect none", "COLLECT", "", oneOut, rule("r1", "&gt; 100", "1"), 1, []any{}, ""},
		{"collect sum none", "COLLECT", "SUM", oneOut, rule("r1", "&gt; 100", "1"), 1, nil, ""},
		{"no match", "UNIQUE", "", oneOut, rule("r1", "&gt; 100", "1"), 1, nil, ""},
		{"default", "UNIQUE", "", `<output name="o"><defaultOutputEntry><text>"none"</text></defaultOutputEntry></output>`, rule("r1", "&gt; 100", `"big"`), 1, "none", ""},
		{"two outputs", "FIRST", "", `<output name="a"/><output name="b"/>`, rule("r1", "-", "1", `"one"`), 1, map[string]any{"a": 1.0, "b": "one"}, ""},
		{"output value not allowed", "FIRST", "", `<output name="o"><outputValues><text>"a", "b"</text></outputValues></output>`, rule("r1", "-", `string(x)`), 1, nil, "output values"},
		{"ranges", "FIRST", "", oneOut, rule("r1", "[1..5)", `"in"`) + rule("r2", "-", `"out"`), 5, "out", ""},
		{"not", "FIRST", "", oneOut, rule("r1", "not(1, 2)", `"other"`) + rule("r2", "-", `"one or two"`), 2, "one or two", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := compileDoc(t, table(c.hit, c.agg, c.outputs, c.rules))
			got, err := eval(t, s, "d", map[string]any{"x": c.x})
			if c.fails != "" {
				if err == nil || !strings.Contains(err.Error(), c.fails) {
					t.Fatalf("error %v, want one saying %q", err, c.fails)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !same(got, c.want) {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestSet_InputValuesAndMatchedRules(t *testing.T) {
	body := `<inputData id="x" name="x"><variable name="x" typeRef="string"/></inputData>` +
		`<decision id="d" name="d"><variable name="d"/><informationRequirement><requiredInput href="#x"/></informationRequirement>` +
		`<decisionTable hitPolicy="RULE ORDER"><input><inputExpression typeRef="string"><text>x</text></inputExpression>` +
		`<inputValues><text>"a", "b"</text></inputValues></input>` + oneOut +
		rule("first", `"a"`, "1") + rule("second", `-`, "2") + `</decisionTable></decision>`
	s := compileDoc(t, body)
	r, err := s.Evaluate("d", map[string]any{"x": "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Evaluated) != 1 || len(r.Evaluated[0].Matched) != 2 || r.Evaluated[0].Matched[1] != (MatchedRule{ID: "second", Index: 2}) {
		t.Errorf("matched %+v", r.Evaluated)
	}
	if _, err := eval(t, s, "d", map[string]any{"x": "c"}); err == nil || !strings.Contains(err.Error(), "input values") {
		t.Errorf("an input out of its input values: %v", err)
	}
}

func TestSet_BoxedExpressions(t *testing.T) {
	lit := func(text string) string { return `<literalExpression><text>` + text + `</text></literalExpression>` }
	for _, c := range []struct {
		name, logic string
		want        any
	}{
		{"context", `<context><contextEntry><variable name="a b"/>` + lit("2") + `</contextEntry>` +
			`<contextEntry><variable name="c"/>` + lit("a b * 3") + `</contextEntry></context>`, map[string]any{"a b": 2.0, "c": 6.0}},
		{"context result", `<context><contextEntry><variable name="a"/>` + lit("2") + `</contextEntry><contextEntry>` + lit("a + 1") + `</contextEntry></context>`, 3.0},
		{"list", `<list>` + lit("1") + lit(`"two"`) + `</list>`, []any{1.0, "two"}},
		{"relation", `<relation><column name="n"/><column name="sq"/><row>` + lit("1") + lit("1") + `</row><row>` + lit("2") + lit("4") + `</row></relation>`,
			[]any{map[string]any{"n": 1.0, "sq": 1.0}, map[string]any{"n": 2.0, "sq": 4.0}}},
		{"function and invocation", `<context><contextEntry><variable name="f"/><functionDefinition><formalParameter name="a"/><formalParameter name="b"/>` + lit("a - b") +
			`</functionDefinition></contextEntry><contextEntry><invocation>` + lit("f") + `<binding><parameter name="b"/>` + lit("1") +
			`</binding><binding><parameter name="a"/>` + lit("10") + `</binding></invocation></contextEntry></context>`, 9.0},
		{"conditional", `<conditional><if>` + lit("1 &gt; 2") + `</if><then>` + lit(`"yes"`) + `</then><else>` + lit(`"no"`) + `</else></conditional>`, "no"},
		{"filter", `<filter><in>` + lit("[{n: 1}, {n: 5}, {n: 7}]") + `</in><match>` + lit("n &gt; 2") + `</match></filter>`, []any{map[string]any{"n": 5.0}, map[string]any{"n": 7.0}}},
		{"for", `<for iteratorVariable="i"><in>` + lit("[1, 2, 3]") + `</in><return>` + lit("i * i") + `</return></for>`, []any{1.0, 4.0, 9.0}},
		{"some", `<some iteratorVariable="i"><in>` + lit("[1, 2, 3]") + `</in><satisfies>` + lit("i &gt; 2") + `</satisfies></some>`, true},
		{"every", `<every iteratorVariable="i"><in>` + lit("[1, 2, 3]") + `</in><satisfies>` + lit("i &gt; 2") + `</satisfies></every>`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := compileDoc(t, `<decision id="d" name="d"><variable name="d"/>`+c.logic+`</decision>`)
			got, err := eval(t, s, "d", nil)
			if err != nil || !same(got, c.want) {
				t.Errorf("got %#v, %v; want %#v", got, err, c.want)
			}
		})
	}
}

func TestSet_KnowledgeAndServices(t *testing.T) {
	body := `<businessKnowledgeModel id="bkm" name="Monthly payment"><variable name="Monthly payment"/><encapsulatedLogic>` +
		`<formalParameter name="amount" typeRef="number"/><formalParameter name="months" typeRef="number"/>` +
		`<literalExpression><text>amount / months</text></literalExpression></encapsulatedLogic></businessKnowledgeModel>` +
		`<inputData id="loan" name="Loan amount"><variable name="Loan amount" typeRef="number"/></inputData>` +
		`<decision id="pay" name="Payment"><variable name="Payment" typeRef="number"/>` +
		`<informationRequirement><requiredInput href="#loan"/></informationRequirement>` +
		`<knowledgeRequirement><requiredKnowledge href="#bkm"/></knowledgeRequirement>` +
		`<literalExpression><text>Monthly payment(Loan amount, 12)</text></literalExpression></decision>` +
		`<decisionService id="svc" name="Pay service"><variable name="Pay service"/><outputDecision href="#pay"/><inputData href="#loan"/></decisionService>` +
		`<decision id="via" name="Via service"><variable name="Via service"/><knowledgeRequirement><requiredKnowledge href="#svc"/></knowledgeRequirement>` +
		`<literalExpression><text>Pay service(2400)</text></literalExpression></decision>`
	s := compileDoc(t, body)
	if got, err := eval(t, s, "pay", map[string]any{"Loan amount": 1200}); err != nil || !same(got, 100.0) {
		t.Errorf("payment %v, %v", got, err)
	}
	if got, err := eval(t, s, "Via service", nil); err != nil || !same(got, 200.0) {
		t.Errorf("through the service %v, %v", got, err)
	}
	if got, err := s.Invoke("svc", map[string]any{"Loan amount": 120}); err != nil || !same(got, 10.0) {
		t.Errorf("invoke %v, %v", got, err)
	}
	if got, _ := eval(t, s, "pay", map[string]any{"Loan amount": "much"}); got != nil {
		t.Errorf("a string for a number input is null, got %v", got)
	}
}

func TestSet_EndlessRecursionFails(t *testing.T) {
	body := `<businessKnowledgeModel id="loop" name="loop"><variable name="loop"/><knowledgeRequirement><requiredKnowledge href="#loop"/></knowledgeRequirement>` +
		`<encapsulatedLogic><formalParameter name="n"/><literalExpression><text>loop(n + 1)</text></literalExpression></encapsulatedLogic></businessKnowledgeModel>` +
		`<decision id="d" name="d"><variable name="d"/><knowledgeRequirement><requiredKnowledge href="#loop"/></knowledgeRequirement>` +
		`<literalExpression><text>loop(0)</text></literalExpression></decision>`
	s := compileDoc(t, body)
	got, err := eval(t, s, "d", nil)
	if got != nil || err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("got %v, %v", got, err)
	}
}

func TestSet_BoxedIterationsAreBounded(t *testing.T) {
	lit := func(text string) string { return `<literalExpression><text>` + text + `</text></literalExpression>` }
	body := `<decision id="d" name="d"><variable name="d"/><for iteratorVariable="i"><in>` + lit("for k in 1..2000 return k") + `</in><return>` +
		`<for iteratorVariable="j"><in>` + lit("for k in 1..2000 return k") + `</in><return>` + lit("i") + `</return></for></return></for></decision>`
	s := compileDoc(t, body)
	got, err := eval(t, s, "d", nil)
	if got != nil || err == nil || !strings.Contains(err.Error(), "iterations") {
		t.Errorf("got %v, %v", got, err)
	}
}

func TestSet_ItemDefinitions(t *testing.T) {
	body := `<itemDefinition name="tScore"><typeRef>number</typeRef><allowedValues><text>[0..100]</text></allowedValues></itemDefinition>` +
		`<itemDefinition name="tPerson"><itemComponent name="name"><typeRef>string</typeRef></itemComponent>` +
		`<itemComponent name="born"><typeRef>date</typeRef></itemComponent></itemDefinition>` +
		`<itemDefinition name="tNames" isCollection="true"><typeRef>string</typeRef></itemDefinition>` +
		`<inputData id="p" name="person"><variable name="person" typeRef="tPerson"/></inputData>` +
		`<inputData id="s" name="score"><variable name="score" typeRef="tScore"/></inputData>` +
		`<decision id="year" name="year"><variable name="year" typeRef="number"/><informationRequirement><requiredInput href="#p"/></informationRequirement>` +
		`<literalExpression><text>person.born.year</text></literalExpression></decision>` +
		`<decision id="half" name="half"><variable name="half" typeRef="number"/><informationRequirement><requiredInput href="#s"/></informationRequirement>` +
		`<literalExpression><text>score / 2</text></literalExpression></decision>` +
		`<decision id="names" name="names"><variable name="names" typeRef="tNames"/><literalExpression><text>"solo"</text></literalExpression></decision>` +
		`<decision id="one" name="one"><variable name="one" typeRef="string"/><literalExpression><text>["only"]</text></literalExpression></decision>` +
		`<decision id="bad" name="bad"><variable name="bad" typeRef="number"/><literalExpression><text>"text"</text></literalExpression></decision>`
	s := compileDoc(t, body)
	if got, err := eval(t, s, "year", map[string]any{"person": map[string]any{"name": "Ada", "born": "1815-12-10"}}); err != nil || !same(got, 1815.0) {
		t.Errorf("a date component given as text: %v, %v", got, err)
	}
	if got, _ := eval(t, s, "year", map[string]any{"person": map[string]any{"name": "Ada"}}); got != nil {
		t.Errorf("a structure without a component does not conform: %v", got)
	}
	if got, _ := eval(t, s, "half", map[string]any{"score": 120}); got != nil {
		t.Errorf("a value outside the allowed values is null: %v", got)
	}
	if got, _ := eval(t, s, "names", nil); !same(got, []any{"solo"}) {
		t.Errorf("a value is a singleton list of a collection type: %v", got)
	}
	if got, _ := eval(t, s, "one", nil); !same(got, "only") {
		t.Errorf("a singleton list is its element: %v", got)
	}
	if got, err := eval(t, s, "bad", nil); got != nil || err == nil {
		t.Errorf("a string for a number decision: %v, %v", got, err)
	}
}

func TestCompile_Imports(t *testing.T) {
	imported := `<definitions xmlns="` + ns15 + `" id="lib" name="lib" namespace="urn:lib">` +
		`<itemDefinition name="tAge"><typeRef>number</typeRef></itemDefinition>` +
		`<businessKnowledgeModel id="greet" name="Greet"><variable name="Greet"/><encapsulatedLogic><formalParameter name="n"/>` +
		`<literalExpression><text>"Hello " + n</text></literalExpression></encapsulatedLogic></businessKnowledgeModel></definitions>`
	body := `<import namespace="urn:lib" name="lib" importType="` + ns15 + `"/>` +
		`<decision id="d" name="d"><variable name="d"/><knowledgeRequirement><requiredKnowledge href="urn:lib#greet"/></knowledgeRequirement>` +
		`<literalExpression><text>lib.Greet("Ada")</text></literalExpression></decision>`
	s := compileDoc(t, body, imported)
	if got, err := eval(t, s, "d", nil); err != nil || !same(got, "Hello Ada") {
		t.Errorf("got %v, %v", got, err)
	}
	d, _ := dmnxml.Import("m.dmn", []byte(dmnDoc(body)))
	if _, err := Compile([]*model.DMNDefinitions{d}, Options{}); err == nil || !strings.Contains(err.Error(), "urn:lib") {
		t.Errorf("an import of a model not given: %v", err)
	}
}

func TestCompile_Refuses(t *testing.T) {
	for _, c := range []struct{ name, body, says string }{
		{"cycle", `<decision id="a" name="a"><variable name="a"/><informationRequirement><requiredDecision href="#b"/></informationRequirement><literalExpression><text>b</text></literalExpression></decision>` +
			`<decision id="b" name="b"><variable name="b"/><informationRequirement><requiredDecision href="#a"/></informationRequirement><literalExpression><text>a</text></literalExpression></decision>`, "cycle"},
		{"missing requirement", `<decision id="a" name="a"><variable name="a"/><informationRequirement><requiredDecision href="#zz"/></informationRequirement></decision>`, "#zz"},
		{"bad unary test", table("UNIQUE", "", oneOut, rule("r", "&lt; &lt;", "1")), "rule 1 input entry 1"},
		{"bad expression", `<decision id="a" name="a"><variable name="a"/><literalExpression><text>1 +</text></literalExpression></decision>`, "decision a"},
		{"output value not allowed", table("UNIQUE", "", `<output name="o"><outputValues><text>"a", "b"</text></outputValues></output>`, rule("r", "1", `"c"`)), `"c" is not among the output's output values`},
		{"unknown type", `<decision id="a" name="a"><variable name="a" typeRef="tNothing"/><literalExpression><text>1</text></literalExpression></decision>`, "tNothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := dmnxml.Import("m.dmn", []byte(dmnDoc(c.body)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Compile([]*model.DMNDefinitions{d}, Options{})
			var ce *CompileError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.says) || ce.Pos.Line == 0 {
				t.Errorf("got %v, want a located *CompileError saying %q", err, c.says)
			}
		})
	}
}

func TestCompile_LenientDefersBrokenDecisions(t *testing.T) {
	body := `<decision id="ok" name="ok"><variable name="ok"/><literalExpression><text>1</text></literalExpression></decision>` +
		`<decision id="broken" name="broken"><variable name="broken"/><literalExpression><text>abs()</text></literalExpression></decision>`
	d, _ := dmnxml.Import("m.dmn", []byte(dmnDoc(body)))
	s, err := Compile([]*model.DMNDefinitions{d}, Options{Lenient: true})
	if err != nil || len(s.Problems()) != 1 {
		t.Fatalf("%v, problems %v", err, s.Problems())
	}
	if got, err := eval(t, s, "ok", nil); err != nil || !same(got, 1.0) {
		t.Errorf("ok: %v, %v", got, err)
	}
	if got, err := eval(t, s, "broken", nil); got != nil || err == nil {
		t.Errorf("broken: %v, %v", got, err)
	}
}

// TestSet_EvaluateInScope: a decision table that reads a variable no
// input data declares (as Camunda Modeler writes them) sees it with
// EvaluateInScope, not with Evaluate (the TCK's scoping); a required
// input data's value, coerced to its type, wins over the variable.
func TestSet_EvaluateInScope(t *testing.T) {
	body := `<inputData id="y" name="y"><variable name="y" typeRef="number"/></inputData>` +
		`<decision id="d" name="d"><variable name="d"/><informationRequirement><requiredInput href="#y"/></informationRequirement>` +
		`<decisionTable hitPolicy="FIRST"><input><inputExpression typeRef="number"><text>score + y</text></inputExpression></input>` + oneOut +
		rule("high", `&gt;= 90`, `"A"`) + rule("other", `-`, `"B"`) + `</decisionTable></decision>`
	s := compileDoc(t, body)
	vars := map[string]any{"score": 95.0, "y": 0.0}
	if r, err := s.EvaluateInScope("d", vars); err != nil || expr.Normalize(r.Value) != "A" {
		t.Errorf("in scope: %v %v, want A", r, err)
	}
	if v, _ := eval(t, s, "d", vars); v != "B" {
		t.Errorf("required inputs only: %v, want B (score is not required)", v)
	}
	if r, err := s.EvaluateInScope("d", map[string]any{"score": 80.0, "y": 20.0}); err != nil || expr.Normalize(r.Value) != "A" {
		t.Errorf("with y: %v %v, want A", r, err)
	}
}
