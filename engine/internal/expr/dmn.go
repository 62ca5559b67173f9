package expr

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/expr-lang/expr/ast"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// What DMN needs of FEEL, beside expressions: names in scope that hold
// spaces (Options.Names), function values implemented outside FEEL
// (Native: business knowledge models, decision services), unary tests
// matched against an input (Tests: the input entries of decision tables,
// allowed values), and raw FEEL values in and out (EvalFEEL, Equal,
// Conforms, ParseLiteral).

// Native is a FEEL function value whose body is Go: a DMN business
// knowledge model or decision service, invocable from FEEL by the name it
// is bound to ("PMT(rate, term, amount)"), positionally or by parameter
// names.
type Native struct {
	// Params are the parameters' names, in order.
	Params []string
	// Fn computes the result from the arguments, one per parameter (a
	// parameter left out of a call by name is null). An error fails the
	// evaluation that made the call.
	Fn func(args []any) (any, error)
}

// String renders the function's signature.
func (n *Native) String() string { return "function(" + strings.Join(n.Params, ", ") + ")" }

func (n *Native) invoke(m *meter, args []any) (any, error) {
	if len(args) != len(n.Params) {
		return nil, nil
	}
	if m != nil {
		if m.calls >= maxCallDepth {
			return nil, fmt.Errorf("%s: calls nested more than %d deep", n, maxCallDepth)
		}
		m.calls++
		defer func() { m.calls-- }()
	}
	return n.Fn(args)
}

func (n *Native) invokeNamed(m *meter, names []string, vals []any) (any, error) {
	args := make([]any, len(n.Params))
	for i, name := range names {
		j := slices.Index(n.Params, name)
		if j < 0 {
			return nil, nil
		}
		args[j] = vals[i]
	}
	return n.invoke(m, args)
}

// Call calls fn, a FEEL function value (a function definition's value or a
// *Native), with args; a value that is no function, or the wrong number of
// arguments, yields null.
func Call(fn any, args []any) (any, error) {
	if _, ok := fn.(*Native); ok {
		return callValue(nil, fn, args)
	}
	m := &meter{maxSteps: DefaultMaxSteps, maxBytes: DefaultMaxBytes}
	return callValue(m, fn, args)
}

// IsFunction reports whether v is a FEEL function value.
func IsFunction(v any) bool {
	switch v.(type) {
	case *Native, *feelFunc:
		return true
	}
	return false
}

// FunctionParams returns the parameters of a FEEL function value.
func FunctionParams(v any) ([]string, bool) {
	switch f := v.(type) {
	case *Native:
		return f.Params, true
	case *feelFunc:
		return f.def.params, true
	}
	return nil, false
}

// EvalFEEL evaluates the program over vars and returns the raw FEEL value:
// numbers as float64 or apd decimals, dates, times, durations and function
// values as themselves, so that it can be given to another evaluation
// unchanged. Normalize turns it into what Eval returns.
func (p *Program) EvalFEEL(vars map[string]any) (any, error) { return p.run(vars) }

// Normalize turns a raw FEEL value into the JSON-compatible value Eval
// returns (temporal values as ISO text, functions as null).
func Normalize(v any) any { return normalize(v) }

// Equal reports whether two FEEL values are equal (FEEL's =: numbers by
// value, lists and contexts element by element).
func Equal(a, b any) bool { return feelEqual(a, b) == true }

// ParseNumber reads a decimal number's text exactly.
func ParseNumber(s string) (any, bool) { return parseNumber(strings.TrimSpace(s)) }

// ParseTemporal reads a date, time, date and time or duration as FEEL's
// @"..." literal does; ok is false when s is none.
func ParseTemporal(s string) (any, bool) {
	v := atLiteral(strings.TrimSpace(s))
	return v, v != nil
}

// IsNumber reports whether v is a FEEL number.
func IsNumber(v any) bool {
	if _, ok := v.(bool); ok {
		return false
	}
	return isNumber(v)
}

// Kind names the FEEL type of a raw value: "number", "string", "boolean",
// "date", "time", "date and time", "days and time duration", "years and
// months duration", "list", "context", "range", "function", or "Null".
func Kind(v any) string {
	if v == nil {
		return "Null"
	}
	for _, name := range []string{"number", "string", "boolean", "date and time", "date", "time",
		"days and time duration", "years and months duration", "list", "context", "range", "function"} {
		if ok, _ := Conforms(v, name); ok {
			return name
		}
	}
	return "Any"
}

// Conforms reports whether v is an instance of the FEEL type written as
// typ ("number", "date and time", "list<string>", "context<a: number>");
// known is false when typ is no FEEL type (an item definition's name).
func Conforms(v any, typ string) (ok, known bool) {
	ft, err := parseTypeText(typ)
	if err != nil {
		return false, false
	}
	if _, isNative := v.(*Native); isNative && ft.name == "function" {
		return true, true
	}
	return ft.has(v), true
}

// parsedTypes caches parseTypeText's answers by text (type names repeat:
// every coercion of a value to a declared type asks), up to
// maxParsedTypes of them.
var parsedTypes = struct {
	sync.RWMutex
	m map[string]parsedType
}{m: map[string]parsedType{}}

type parsedType struct {
	ft  *feelType
	err error
}

const maxParsedTypes = 4096

func parseTypeText(typ string) (*feelType, error) {
	parsedTypes.RLock()
	p, ok := parsedTypes.m[typ]
	parsedTypes.RUnlock()
	if ok {
		return p.ft, p.err
	}
	ft, err := parseTypeUncached(typ)
	parsedTypes.Lock()
	if len(parsedTypes.m) < maxParsedTypes {
		parsedTypes.m[typ] = parsedType{ft, err}
	}
	parsedTypes.Unlock()
	return ft, err
}

func parseTypeUncached(typ string) (ft *feelType, err error) {
	defer func() {
		if r := recover(); r != nil {
			ft = nil
			err = fmt.Errorf("type %q: %v", typ, r)
		}
	}()
	c := newCompiler(typ, feelFuncs, clock.Real{})
	c.lex(0, len(typ), true, false)
	ft = c.parseType()
	if t := c.peek(); t.kind != tEOF {
		return nil, fmt.Errorf("type %q: unexpected %s", typ, describe(t))
	}
	switch ft.name {
	case "number", "string", "boolean", "date", "time", "date and time", "days and time duration",
		"years and months duration", "list", "context", "range", "function", "Any", "Null":
		return ft, nil
	}
	return nil, fmt.Errorf("type %q: not a FEEL type", typ)
}

// joinNames merges the tokens that spell a name of names (longest first)
// into one known name token, so that "Monthly Salary * 12" reads the
// variable "Monthly Salary". A name matches only where it starts at a
// token and ends where a token ends.
func (c *compiler) joinNames(names []string) {
	if len(names) == 0 {
		return
	}
	sorted := slices.Clone(names)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	c.known = make(map[string]bool, len(names))
	for _, n := range names {
		c.known[n] = true
	}
	out := make([]token, 0, len(c.toks))
	for i := 0; i < len(c.toks); {
		t := c.toks[i]
		if !(t.kind == tName && !t.quoted || t.kind == tOp && t.text == "?") {
			out = append(out, t)
			i++
			continue
		}
		rest := c.src[t.pos:]
		matched := false
		for _, n := range sorted {
			if !strings.HasPrefix(rest, n) {
				continue
			}
			end := t.pos + len(n)
			j := i
			for j < len(c.toks) && c.toks[j].kind != tEOF && c.toks[j].end < end {
				j++
			}
			if j >= len(c.toks) || c.toks[j].kind == tEOF || c.toks[j].end != end {
				continue
			}
			if j == i && t.kind == tName {
				break // one word already: keep it as written (keywords, calls)
			}
			if _, builtin := feelLibrary[n]; builtin {
				break // a built-in's name ("met by") stays the built-in
			}
			if j > i && c.toks[j].kind == tString {
				continue
			}
			out = append(out, token{kind: tName, text: n, pos: t.pos, end: end, quoted: true, known: true})
			i = j + 1
			matched = true
			break
		}
		if !matched {
			out = append(out, t)
			i++
		}
	}
	c.toks = out
}

// namedType returns the named type of Options.Types called name, or nil.
func (c *compiler) namedType(name string) *feelType {
	for ; c != nil; c = c.outer {
		if c.types != nil {
			if test, ok := c.types(name); ok {
				return &feelType{name: name, pred: test}
			}
			return nil
		}
	}
	return nil
}

// rangeProperty is a range's start, end, start included or end included
// (a comparison test is the range it stands for: < 10 ends at 10).
func rangeProperty(v any, key string) any {
	var r feelRange
	switch x := v.(type) {
	case feelRange:
		r = x
	case unaryTest:
		switch x.op {
		case "<", "<=":
			r = feelRange{hi: x.v, hiIncl: x.op == "<="}
		case ">", ">=":
			r = feelRange{lo: x.v, loIncl: x.op == ">="}
		case "=":
			r = feelRange{lo: x.v, hi: x.v, loIncl: true, hiIncl: true}
		default:
			return nil
		}
	}
	switch key {
	case "start":
		return r.lo
	case "end":
		return r.hi
	case "start included":
		return r.loIncl
	case "end included":
		return r.hiIncl
	}
	return nil
}

// knownName reports whether name is one of the names in scope given in
// Options.Names, here or around a function body.
func (c *compiler) knownName(name string) bool {
	for ; c != nil; c = c.outer {
		if c.known[name] {
			return true
		}
	}
	return false
}

// feelKnownCall parses a call of a name in scope that holds a function
// value ("PMT(rate, term, amount)"), and returns nil when the current
// token is no such name followed by "(". A built-in function's name is
// the built-in unless the name is bound in the expression.
func (c *compiler) feelKnownCall() ast.Node {
	t := c.peek()
	if t.kind != tName || c.peekAt(1).kind != tOp || c.peekAt(1).text != "(" {
		return nil
	}
	if !t.known && !(c.knownName(t.text) && !t.quoted) {
		return nil
	}
	if _, builtin := feelLibrary[t.text]; builtin && !c.hasBound(t.text) {
		return nil
	}
	c.next()
	return c.feelCall(c.feelVar(t), c.next())
}

// Tests are compiled unary tests, the input entry of a decision table
// rule or an allowed values list: "-", "< 5, > 10", "[1..5]", "not(\"a\",
// \"b\")", or any expression, compared with the input (or, when it
// yields a boolean and reads the input as "?", that boolean).
type Tests struct {
	text   string
	any    bool
	negate bool
	prog   *Program
	usesQ  []bool
	// consts holds the tests' values when they read no name (the usual
	// "< 10", "[1..5]", "\"gold\""): computed once, matched without the VM.
	consts []any
}

// Text returns the tests as written.
func (t *Tests) Text() string { return t.text }

// Any reports whether the tests are "-" (or empty): every input passes.
func (t *Tests) Any() bool { return t.any }

// CompileTests compiles unary tests. A text that does not compile is a
// *SyntaxError. The input is read in the tests as "?".
func CompileTests(text string, opts Options) (t *Tests, err error) {
	defer func() {
		if r := recover(); r != nil {
			t = nil
			if se, ok := r.(*SyntaxError); ok {
				err = se
				return
			}
			err = &SyntaxError{Text: text, Pos: -1, Msg: fmt.Sprintf("%v: cannot compile: %v", errInternal, r)}
		}
	}()
	trimmed := strings.TrimSpace(text)
	t = &Tests{text: text}
	if trimmed == "" || trimmed == "-" {
		t.any = true
		return t, nil
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	c := newCompiler(text, feelFuncs, clk)
	c.lex(0, len(text), true, false)
	c.joinNames(append(slices.Clone(opts.Names), "?"))
	// not(tests): the whole text, when the "not" call spans it.
	if tk := c.peek(); tk.kind == tName && tk.text == "not" && !tk.quoted &&
		c.peekAt(1).kind == tOp && c.peekAt(1).text == "(" {
		depth := 0
		closeAt := -1
		for k := 1; k < len(c.toks); k++ {
			x := c.toks[k]
			if x.kind != tOp {
				continue
			}
			switch x.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
			if depth == 0 {
				closeAt = k
				break
			}
		}
		if closeAt == len(c.toks)-2 { // then EOF
			t.negate = true
			c.toks = append(c.toks[2:closeAt:closeAt], token{kind: tEOF, pos: c.toks[closeAt].pos, end: c.toks[closeAt].pos})
		}
	}
	var items []ast.Node
	for {
		startTok := c.i
		var n ast.Node
		if u := c.feelUnaryTest(); u != nil {
			n = u
		} else {
			n = c.feelExpr()
			if c.isOp("..") { // a range without brackets is no unary test
				panic(c.errAt(c.peek().pos, "a range needs brackets: [a..b]"))
			}
		}
		uses := false
		for k := startTok; k < c.i; k++ {
			if c.toks[k].known && c.toks[k].text == "?" {
				uses = true
			}
		}
		items = append(items, n)
		t.usesQ = append(t.usesQ, uses)
		if !c.isOp(",") {
			break
		}
		c.next()
	}
	if tk := c.peek(); tk.kind != tEOF {
		panic(c.unexpected(tk))
	}
	root := at(&ast.ArrayNode{Nodes: items}, 0, len(text))
	prog, err := c.build(root)
	if err != nil {
		return nil, &SyntaxError{Text: text, Pos: -1, Msg: fmt.Sprintf("%v: %v", errInternal, err)}
	}
	p := &Program{text: text, mode: Value, dialect: FEEL, prog: prog, vars: 1 + c.vars,
		maxSteps: opts.MaxSteps, maxBytes: opts.MaxBytes}
	if p.maxSteps <= 0 {
		p.maxSteps = DefaultMaxSteps
	}
	if p.maxBytes <= 0 {
		p.maxBytes = DefaultMaxBytes
	}
	t.prog = p
	constant := true
	for _, tk := range c.toks {
		if tk.kind == tName && !(tk.text == "true" || tk.text == "false" || tk.text == "null") || tk.known {
			constant = false
		}
	}
	if constant {
		if out, err := p.run(map[string]any{}); err == nil {
			if vals, ok := out.([]any); ok {
				t.consts = vals
			}
		}
	}
	return t, nil
}

// Match reports whether input passes the tests, evaluated over vars (the
// names in scope). It sets vars["?"] to input. A test that cannot be
// compared with the input does not pass.
func (t *Tests) Match(input any, vars map[string]any) (bool, error) {
	if t.any {
		return true, nil
	}
	vals := t.consts
	if vals == nil {
		if vars == nil {
			vars = map[string]any{}
		}
		vars["?"] = input
		out, err := t.prog.run(vars)
		if err != nil {
			return false, err
		}
		vals, _ = out.([]any)
	}
	hit := false
	for i, v := range vals {
		if testOne(input, v, t.usesQ[i]) {
			hit = true
			break
		}
	}
	return hit != t.negate, nil
}

// testOne applies one positive unary test's value to the input (DMN 1.5
// 10.3.2.9.1 semantics of unary tests).
func testOne(x, v any, usesQ bool) bool {
	switch tv := v.(type) {
	case feelRange, unaryTest:
		return feelInOne(x, tv)
	case bool:
		if usesQ {
			return tv
		}
		if _, isBool := x.(bool); !isBool && x != nil {
			return tv
		}
		return feelEqual(x, tv) == true
	case []any:
		if feelEqual(x, tv) == true {
			return true
		}
		for _, e := range tv {
			if feelInOne(x, e) {
				return true
			}
		}
		return false
	}
	return feelEqual(x, v) == true
}

// Literal compiles and evaluates a FEEL expression without variables and
// returns its raw value, for the constants of a model (default output
// entries, output values written as text).
func Literal(text string, opts Options) (any, error) {
	p, err := Compile(model.Expression{Text: text, Language: "FEEL"}, Value, opts)
	if err != nil {
		return nil, err
	}
	return p.run(map[string]any{})
}

// feelDMNLibrary are the built-ins DMN 1.5 added that the rest of the
// library lacks: range(from), a range from its text.
var feelDMNLibrary = map[string]fnInfo{
	"range": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, nil
		}
		return rangeOf(s), nil
	}},
}

// literalValue evaluates a literal; set by init, since the library that
// range() belongs to is what Compile reads.
var literalValue func(string) (any, error)

func init() {
	literalValue = func(s string) (any, error) { return Literal(s, Options{}) }
}

// rangeLiteral is an end point of range(): a number, a string, an
// @-literal, or a temporal conversion of a string literal.
var rangeLiteral = regexp.MustCompile(`^(-?[0-9]+(\.[0-9]+)?|-?\.[0-9]+|"(\\.|[^"\\])*"|@"(\\.|[^"\\])*"|(date|time|date and time|duration)\(\s*"(\\.|[^"\\])*"\s*\))$`)

// rangeOf reads a range literal ("[1..10)", "]1..5]") as range() does
// (DMN 1.5 10.3.2.7): end points must be literals of one kind, in
// ascending order; anything else (a comparison such as ">= 10" too) is
// null.
func rangeOf(s string) any {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if len(s) < 2 || !strings.ContainsRune("[(]", rune(s[0])) || !strings.ContainsRune("])[", rune(s[len(s)-1])) {
		return nil
	}
	lo, hi, ok := strings.Cut(s[1:len(s)-1], "..")
	if !ok {
		return nil
	}
	lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
	if !rangeLiteral.MatchString(lo) || !rangeLiteral.MatchString(hi) {
		return nil
	}
	lv, err1 := literalValue(lo)
	hv, err2 := literalValue(hi)
	if err1 != nil || err2 != nil || lv == nil || hv == nil {
		return nil
	}
	if c, ok := compare(lv, hv); !ok || c > 0 {
		return nil
	}
	return mkRange(lv, hv, s[0] == '[', s[len(s)-1] == ']')
}
