// Package expr compiles and evaluates every expression in the engine:
// sequence flow conditions, correlation keys, timer values, job types,
// input/output mappings and activation conditions.
//
// Expressions are compiled once, at deploy, and evaluated many times without
// recompiling. The dialect is chosen by the text:
//
//   - "= ..." is FEEL (Camunda 8): "= amount > 100 and status = \"ok\"";
//   - "${...}" is JUEL (Camunda 7): "${amount > 100 && status == 'ok'}";
//     text mixing literal parts and "${...}" parts ("order-${id}") is a JUEL
//     template whose parts are joined as text;
//   - anything else is a bare expression when compiled as a Condition or
//     Value ("activationCount >= 1", `!test.contains("a")`), in the dialect
//     named by the expression's language or Options.Language (JUEL by
//     default), or a literal string when compiled as Static.
//
// # The dialects differ, on purpose
//
// FEEL compares with "=", indexes lists from 1 (negative from the end),
// treats a missing variable as null and never fails at run time: an
// operation on null or on values of the wrong types yields null, and a
// condition that yields null is an error from EvalBool (Zeebe raises an
// incident). JUEL compares with "==" (or eq), indexes lists from 0, follows
// EL coercion rules (null is false, 0 or "" where EL says so) and fails on a
// variable that is not set, naming it, as Camunda 7 does.
//
// # Implementation
//
// Both dialects are parsed by small parsers in this package that build
// expr-lang syntax trees, compiled once to expr-lang bytecode and run on
// pooled expr-lang VMs (see build.go for why).
package expr

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Mode says what the compiled expression is for, which decides how plain
// text is read and what result type is required.
type Mode uint8

const (
	// Condition expressions must yield a boolean. Plain text is an
	// expression.
	Condition Mode = iota
	// Value expressions yield any JSON-compatible value. Plain text is an
	// expression.
	Value
	// Static expressions are literal strings unless written as "= ..." or
	// "${...}" (job types, timer values, correlation key literals).
	Static
)

// SyntaxError reports an expression that does not compile: bad syntax, an
// unknown function or an unsupported expression language.
type SyntaxError struct {
	// Text is the expression as written.
	Text string
	// Pos is the byte offset of the problem within Text, or -1.
	Pos int
	// Msg says what is wrong.
	Msg string
}

// Error renders the expression, the position and the problem.
func (e *SyntaxError) Error() string {
	if e.Pos >= 0 {
		return fmt.Sprintf("expression %q: at %d: %s", e.Text, e.Pos, e.Msg)
	}
	return fmt.Sprintf("expression %q: %s", e.Text, e.Msg)
}

// EvalError reports an expression that compiled but failed when evaluated:
// a JUEL variable that is not set, a value of the wrong type, a condition
// that did not yield a boolean.
type EvalError struct {
	// Text is the expression as written.
	Text string
	// Pos is the byte offset within Text of the operation that failed, or
	// -1 when the failure concerns the whole result.
	Pos int
	// Err is the cause.
	Err error
}

// Error renders the expression and what went wrong evaluating it.
func (e *EvalError) Error() string {
	if e.Pos >= 0 {
		return fmt.Sprintf("evaluate %q: at %d: %v", e.Text, e.Pos, e.Err)
	}
	return fmt.Sprintf("evaluate %q: %v", e.Text, e.Err)
}

// Unwrap returns the cause.
func (e *EvalError) Unwrap() error { return e.Err }

// Dialect is an expression language.
type Dialect uint8

const (
	// JUEL is the Java Unified Expression Language of Camunda 7.
	JUEL Dialect = iota
	// FEEL is the DMN Friendly Enough Expression Language of Camunda 8.
	FEEL
)

// String returns the dialect's name.
func (d Dialect) String() string {
	if d == FEEL {
		return "FEEL"
	}
	return "JUEL"
}

// Program is a compiled expression. It is immutable and safe for concurrent
// use.
type Program struct {
	text    string
	mode    Mode
	dialect Dialect
	static  bool
	literal any
	prog    *vm.Program
	// name is set for a program that only reads one variable ("= key",
	// the usual correlation key): run looks it up without the VM.
	name string
	// call is set for a program that is one call of a library function
	// on variables and constants ("= x > 5", the usual condition): run
	// calls the function without the VM. The VM's frame is large enough
	// that running it made each new track goroutine grow its stack.
	call *loneCall
	// vars is how many expr-lang variables prog uses, the meter included.
	vars               int
	maxSteps, maxBytes int64
	// spaced are the ways a variable with several tokens in its name
	// could be written in a FEEL text that compiled without them
	// (feel_names.go); scoped parses the text again, with expr and opts,
	// when the variables hold one, keeping the result in variants.
	spaced   []string
	expr     model.Expression
	opts     Options
	variants *scopedPrograms
}

// scopedPrograms are a Program's texts parsed again with spaced names in
// scope, by the names' set.
type scopedPrograms struct {
	sync.Map // string -> *Program
	n        atomic.Int64
}

// Text returns the expression as written.
func (p *Program) Text() string { return p.text }

// IsStatic reports whether the program is a literal string (Static mode,
// plain text): Eval returns it without evaluating anything.
func (p *Program) IsStatic() bool { return p.static }

// MaxBytes returns the program's evaluation byte budget (Options.MaxBytes
// or its default).
func (p *Program) MaxBytes() int64 { return p.maxBytes }

// Dialect returns the language the program was compiled in. Static
// programs report JUEL.
func (p *Program) Dialect() Dialect { return p.dialect }

// Options configure compilation. The zero value is ready to use.
type Options struct {
	// Clock is read by now() and today() each time they are evaluated.
	// Default: clock.Real{}.
	Clock clock.Clock
	// Language is the dialect of bare expressions (no leading "=" and no
	// "${"), unless the expression names its own language: a FEEL or JUEL
	// URI or word, as in the BPMN expressionLanguage attribute. Default:
	// JUEL.
	Language string
	// MaxSteps bounds the work of one evaluation: every operator or
	// function applied, every loop iteration and every list or context
	// entry built is a step, and a function reading a list or context
	// argument pays a step per entry. Default: DefaultMaxSteps.
	MaxSteps int64
	// MaxBytes bounds what one evaluation allocates: the text of every
	// string and the entries of every list and context an operator or
	// function yields, and the whole (tree) size of the result.
	// Default: DefaultMaxBytes.
	MaxBytes int64
	// Names are names in scope that contain spaces, keywords, symbols or
	// operators ("Monthly Salary", "date and time", "a + b"), which a FEEL
	// text may then write without backticks: DMN decisions, input data,
	// business knowledge models, context entries and item components. The
	// longest name in scope that a run of tokens spells is that name (DMN
	// 1.5 grammar notes), and a name in scope followed by "(" calls the
	// function value it holds. A text that compiles without them is also
	// parsed against the variables it is evaluated over (feel_names.go).
	// Default: none.
	Names []string
	// Types are the named types "instance of" may name besides FEEL's
	// (DMN item definitions): the function returns the test of a value
	// for a name it knows. Default: none.
	Types func(name string) (test func(any) bool, ok bool)
}

// Defaults of Options.
const (
	// DefaultMaxSteps lets an evaluation iterate a million times (three
	// nested quantifiers over 100 elements), which takes tens of
	// milliseconds natively.
	DefaultMaxSteps = 1_000_000
	// DefaultMaxBytes lets an evaluation allocate 16 MiB.
	DefaultMaxBytes = 16 << 20
)

// BudgetError reports an evaluation that exceeded one of its budgets
// (Options.MaxSteps, Options.MaxBytes). It is the Err of an *EvalError.
type BudgetError struct {
	// Budget is "step" or "byte".
	Budget string
	// Limit is the budget's figure.
	Limit int64
}

// Error names the budget and its figure.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("exceeded the evaluation %s budget of %d %ss", e.Budget, e.Limit, e.Budget)
}

// Compile compiles e for the given mode. A text that does not compile, or
// an unknown or unsupported e.Language (XPath), is a *SyntaxError.
func Compile(e model.Expression, mode Mode, opts Options) (p *Program, err error) {
	return compile(e, mode, opts, true)
}

// compile is Compile; discover says whether a FEEL text records the
// spaced names it could read (Program.spaced), which a text parsed
// again for them does not.
func compile(e model.Expression, mode Mode, opts Options, discover bool) (p *Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			p = nil
			if se, ok := r.(*SyntaxError); ok {
				err = se
				return
			}
			err = &SyntaxError{Text: e.Text, Pos: -1, Msg: fmt.Sprintf("%v: cannot compile: %v", errInternal, r)}
		}
	}()
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	dialect := JUEL
	if d, ok, err := dialectOf(opts.Language); err != nil {
		return nil, &SyntaxError{Text: e.Text, Pos: -1, Msg: "Options.Language: " + err.Error()}
	} else if ok {
		dialect = d
	}
	if d, ok, err := dialectOf(e.Language); err != nil {
		return nil, &SyntaxError{Text: e.Text, Pos: -1, Msg: err.Error()}
	} else if ok {
		dialect = d
	}

	text := e.Text
	p = &Program{text: text, mode: mode, maxSteps: opts.MaxSteps, maxBytes: opts.MaxBytes}
	if p.maxSteps <= 0 {
		p.maxSteps = DefaultMaxSteps
	}
	if p.maxBytes <= 0 {
		p.maxBytes = DefaultMaxBytes
	}
	start := len(text) - len(strings.TrimLeft(text, " \t\r\n"))
	trimmed := strings.TrimSpace(text)
	var root ast.Node
	var c *compiler
	switch {
	case strings.HasPrefix(trimmed, "="):
		p.dialect = FEEL
		c = newCompiler(text, feelFuncs, clk)
		c.lex(start+1, len(strings.TrimRight(text, " \t\r\n")), true, false)
		c.joinNames(opts.Names)
		c.types = opts.Types
		if c.peek().kind == tEOF {
			return nil, &SyntaxError{Text: text, Pos: start + 1, Msg: "empty expression after ="}
		}
		c.feelScope(p, e, opts, discover)
		root = c.feelTop()
	case strings.Contains(text, "${") || strings.Contains(text, "#{"):
		p.dialect = JUEL
		c = newCompiler(text, juelFuncs, clk)
		root = c.juelTemplate()
	case mode == Static:
		p.static = true
		p.literal = trimmed
		return p, nil
	case trimmed == "":
		return nil, &SyntaxError{Text: text, Pos: -1, Msg: "empty expression"}
	case dialect == FEEL:
		p.dialect = FEEL
		c = newCompiler(text, feelFuncs, clk)
		c.lex(0, len(text), true, false)
		c.joinNames(opts.Names)
		c.types = opts.Types
		c.feelScope(p, e, opts, discover)
		root = c.feelTop()
	default:
		p.dialect = JUEL
		c = newCompiler(text, juelFuncs, clk)
		c.lex(0, len(text), false, false)
		root = c.juelTop()
	}
	lone := c.loneCallOf(root)
	prog, err := c.build(root)
	if err != nil {
		// Our parsers only build trees expr-lang accepts, so this is ours.
		return nil, &SyntaxError{Text: text, Pos: -1, Msg: fmt.Sprintf("%v: %v", errInternal, err)}
	}
	p.prog = prog
	p.vars = 1 + c.vars
	if id, ok := root.(*ast.IdentifierNode); ok && plainName(id.Value) {
		p.name = id.Value
	}
	p.call = lone
	return p, nil
}

// loneCall is a call of one library function whose arguments are
// variables and constants: what run does for it without the VM.
type loneCall struct {
	fn   func(...any) (any, error) // metered: the meter comes first
	args []loneArg
	pos  int // the call's offset, where the VM reports its failure
}

// loneArg is a variable's name, or a constant when name is empty.
type loneArg struct {
	name  string
	value any
}

// plainName reports whether an identifier of a tree is one of the
// variables the expression is evaluated over, not one of ours.
func plainName(name string) bool {
	return !strings.HasPrefix(name, funcPrefix) && name != "$env"
}

// loneCallOf returns root as a loneCall, or nil. It runs before the
// meter is added to the calls.
func (c *compiler) loneCallOf(root ast.Node) *loneCall {
	call, ok := root.(*ast.CallNode)
	if !ok {
		return nil
	}
	id, ok := call.Callee.(*ast.IdentifierNode)
	if !ok || !strings.HasPrefix(id.Value, funcPrefix) {
		return nil
	}
	f, ok := c.used[strings.TrimPrefix(id.Value, funcPrefix)]
	if !ok {
		return nil
	}
	lc := &loneCall{fn: metered(f), pos: call.Location().From}
	for _, a := range call.Arguments {
		if v, ok := a.(*ast.IdentifierNode); ok && plainName(v.Value) {
			lc.args = append(lc.args, loneArg{name: v.Value})
			continue
		}
		v, ok := constValue(a)
		if !ok {
			return nil
		}
		lc.args = append(lc.args, loneArg{value: v})
	}
	return lc
}

// juelTemplate compiles text holding "${...}" (or "#{...}") parts: one part
// alone is that expression's value; parts with literal text around them
// are joined as text.
func (c *compiler) juelTemplate() ast.Node {
	text := c.src
	var parts []ast.Node
	i := 0
	for i < len(text) {
		j := strings.Index(text[i:], "${")
		if k := strings.Index(text[i:], "#{"); k >= 0 && (j < 0 || k < j) {
			j = k
		}
		if j < 0 {
			parts = append(parts, at(&ast.StringNode{Value: text[i:]}, i, len(text)))
			break
		}
		j += i
		if j > i {
			parts = append(parts, at(&ast.StringNode{Value: text[i:j]}, i, j))
		}
		end := c.lex(j+2, len(text), false, true)
		if c.peek().kind == tEOF {
			panic(c.errAt(j, "empty ${}"))
		}
		parts = append(parts, c.juelTop())
		i = end + 1
	}
	// Surrounding white space does not make a single ${...} a template.
	var kept []ast.Node
	for _, p := range parts {
		if s, ok := p.(*ast.StringNode); ok && strings.TrimSpace(s.Value) == "" {
			continue
		}
		kept = append(kept, p)
	}
	if len(kept) == 1 {
		if _, lit := kept[0].(*ast.StringNode); !lit {
			return kept[0]
		}
	}
	return c.call(0, len(text), "j.concat", parts...)
}

// dialectOf reads an expression language URI or word. ok is false for
// the empty string (not declared).
func dialectOf(lang string) (d Dialect, ok bool, err error) {
	l := strings.ToLower(strings.TrimSpace(lang))
	switch {
	case l == "":
		return 0, false, nil
	case strings.Contains(l, "feel"):
		return FEEL, true, nil
	case strings.Contains(l, "juel") || l == "el" || strings.Contains(l, "java.sun.com/products/jsp"):
		return JUEL, true, nil
	case strings.Contains(l, "xpath"):
		return 0, false, fmt.Errorf("unsupported expression language %q (XPath is not supported; use FEEL or JUEL)", lang)
	case l == "http://www.omg.org/spec/bpmn/20100524/model":
		return 0, false, nil // the BPMN namespace itself: nothing declared
	}
	return 0, false, fmt.Errorf("unknown expression language %q", lang)
}

// errInternal marks failures of this package rather than of the
// expression: they are reported, never panicked, and the fuzz test hunts
// for them.
var errInternal = errors.New("internal error")

// evaluator is a VM and the meter of the evaluation it runs, pooled
// together.
type evaluator struct {
	vm    vm.VM
	meter meter
	args  []any // a lone call's arguments
}

var evaluators = sync.Pool{New: func() any { return new(evaluator) }}

// run evaluates the program and returns its raw result (temporal values
// not yet converted to text).
func (p *Program) run(vars map[string]any) (out any, err error) {
	if p.prog == nil {
		return p.literal, nil
	}
	if p.spaced != nil {
		q, err := p.scoped(vars)
		if err != nil {
			return nil, err
		}
		if q != p {
			return q.run(vars)
		}
	}
	if p.name != "" {
		// What the VM does for a lone name: the variable, null when absent.
		return vars[p.name], nil
	}
	ev := evaluators.Get().(*evaluator)
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &EvalError{Text: p.text, Pos: -1, Err: fmt.Errorf("%w: %v", errInternal, r)}
			return // the VM is dropped, not returned to the pool
		}
		clear(ev.vm.Variables) // drop references to this evaluation's values
		evaluators.Put(ev)
	}()
	ev.meter = meter{maxSteps: p.maxSteps, maxBytes: p.maxBytes}
	if lc := p.call; lc != nil {
		args := append(ev.args[:0], &ev.meter)
		for _, a := range lc.args {
			if a.name != "" {
				args = append(args, vars[a.name])
			} else {
				args = append(args, a.value)
			}
		}
		ev.args = args
		out, err = lc.fn(args...)
		clear(args) // drop references to this evaluation's values
		if err != nil {
			// As the VM reports a function's error: at the call.
			return nil, &EvalError{Text: p.text, Pos: lc.pos, Err: err}
		}
		return out, nil
	}
	ev.vm.MemoryBudget = uint(p.maxSteps)
	if len(ev.vm.Variables) < p.vars {
		ev.vm.Variables = make([]any, p.vars)
	}
	ev.vm.Variables[0] = &ev.meter
	out, err = ev.vm.Run(p.prog, vars)
	if err != nil {
		return nil, p.evalError(err)
	}
	return out, nil
}

// evalError unwraps expr-lang's error into the cause our functions
// reported and the position of the operation.
func (p *Program) evalError(err error) error {
	pos, cause := vmCause(err, p.maxSteps)
	return &EvalError{Text: p.text, Pos: pos, Err: cause}
}

// vmCause unwraps an error of expr-lang's VM into the cause our functions
// reported and the byte offset of the operation (-1 if unknown).
func vmCause(err error, maxSteps int64) (int, error) {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return -1, err
	}
	cause := fe.Prev
	var re runtime.Error
	if cause == nil && fe.Message == "memory budget exceeded" {
		// expr-lang's count of loop iterations and of the entries
		// of the lists and contexts it builds, set to the step budget.
		cause = &BudgetError{Budget: "step", Limit: maxSteps}
	} else if cause == nil || errors.As(cause, &re) {
		// Not one of our functions' errors: the VM itself, or a Go
		// runtime panic inside a function, failed.
		cause = fmt.Errorf("%w: %s", errInternal, fe.Message)
	}
	return fe.From, cause
}

// Eval evaluates the program over vars, the variables visible where it is
// evaluated, and returns a JSON-compatible value: nil, bool, float64,
// json.Number, string, []any or map[string]any. A number is a float64
// when it is one's shortest decimal form and otherwise a json.Number with
// its exact text (Number), so 0.1 + 0.2 yields 0.3 and 2^60 + 1 every digit. FEEL dates, date-times and durations are
// returned as ISO-8601 text. vars is only read.
func (p *Program) Eval(vars map[string]any) (any, error) {
	v, err := p.run(vars)
	if err != nil {
		return nil, err
	}
	return normalize(v), nil
}

// EvalBool evaluates a condition. A non-boolean result, null included, is
// an error, never silently false.
func (p *Program) EvalBool(vars map[string]any) (bool, error) {
	v, err := p.run(vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, &EvalError{Text: p.text, Pos: -1, Err: fmt.Errorf("condition yielded %s, not a boolean", typeName(v))}
	}
	return b, nil
}

// EvalString evaluates an expression that must yield text (a job type, a
// correlation key, an ISO-8601 timer value). Numbers are formatted as FEEL
// and Zeebe do for correlation keys ("42", "1.5"); dates, date-times and
// durations as ISO-8601 text. Null, lists and contexts are errors.
func (p *Program) EvalString(vars map[string]any) (string, error) {
	v, err := p.run(vars)
	if err != nil {
		return "", err
	}
	if _, isFloat := v.(float64); !isFloat && isNumber(v) {
		// Decimals, json.Number and Go integers in full, not rounded
		// to a float64.
		if t, ok := numText(canonical(v)); ok {
			return t, nil
		}
	}
	switch x := normalize(v).(type) {
	case string:
		return x, nil
	case float64:
		return formatNumber(x), nil
	case bool:
		return fmt.Sprint(x), nil
	}
	return "", &EvalError{Text: p.text, Pos: -1, Err: fmt.Errorf("yielded %s, not text", typeName(v))}
}

// EvalDuration evaluates a timer duration: a FEEL duration or ISO-8601
// duration text ("PT1H30M", "P2D"). Years and months are rejected, having
// no fixed length.
func (p *Program) EvalDuration(vars map[string]any) (time.Duration, error) {
	v, err := p.run(vars)
	if err != nil {
		return 0, err
	}
	d, err := durationOf(v)
	if err != nil {
		return 0, &EvalError{Text: p.text, Pos: -1, Err: err}
	}
	return d, nil
}

// EvalTime evaluates a timer date: a FEEL date and time or date, or
// RFC 3339 text ("2026-01-01T10:00:00Z"; no offset means UTC).
func (p *Program) EvalTime(vars map[string]any) (time.Time, error) {
	v, err := p.run(vars)
	if err != nil {
		return time.Time{}, err
	}
	t, err := timeOf(v)
	if err != nil {
		return time.Time{}, &EvalError{Text: p.text, Pos: -1, Err: err}
	}
	return t, nil
}
