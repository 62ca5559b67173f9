package expr

import (
	"fmt"
	"strconv"
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/checker"
	exprcompiler "github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// fnInfo is a function the generated programs may call.
type fnInfo struct {
	fn func(...any) (any, error)
	// pure functions depend only on their arguments, so calls with constant
	// arguments are folded at compile time.
	pure bool
	// view functions only look at or pick from their arguments, in
	// constant time (a member, an index, a variable): a call costs one
	// step, whatever the size of the arguments, and allocates nothing.
	view bool
	// projects marks the view function that maps over a list given as its
	// first argument (FEEL's path on a list, list.name), which costs as
	// any other function does.
	projects bool
	// calls marks functions that call FEEL function values (sort with
	// its precedes, a user function's call): they get the evaluation's
	// meter as their first argument, so that the calls share its budgets.
	calls bool
	// min and max bound the number of arguments of user-callable
	// functions; max -1 means any number.
	min, max int
}

// compiler parses one expression text of one dialect into an expr-lang
// tree and compiles it. A compiler is used once.
type compiler struct {
	src   string  // the whole original text; token positions index it
	toks  []token // the body's tokens, ending with tEOF
	i     int
	funcs map[string]fnInfo // every function this dialect may call
	used  map[string]fnInfo // the ones this program calls
	clock clock.Clock
	// filterDepth > 0 while parsing a FEEL filter predicate, where names
	// resolve against the current item first.
	filterDepth int
	// noFilter is set while parsing the end of a FEEL range, where "[" is
	// the range's open end ("1..5["), not a filter.
	noFilter bool
	// itemRefs maps the nodes made for names inside filters to the plain
	// variable nodes, for filters that turn out to be indexes.
	itemRefs map[ast.Node]itemRef
	// bound are the FEEL iteration variables in scope, innermost last;
	// vars counts the ones made so far, to name them uniquely.
	bound []boundName
	vars  int
	// items are the internal names of the items of the FEEL filters being
	// parsed, innermost last.
	items []string
	depth int // nesting of expressions, bounded by maxDepth
	// usedBound records the internal names of the bound names read so
	// far ("partial" makes a for accumulate only when its body reads it).
	usedBound map[string]bool
	// outer is the compiler of the expression around a FEEL function
	// body (feel_function.go); nil at the top. captures are the internal
	// names of outer's bound names the body reads, and self the internal
	// name of the context entry the function is the value of, so that it
	// can call itself.
	outer    *compiler
	captures []string
	self     string
	// names are the names with several tokens in scope besides the
	// bound ones (Options.Names, and the variables a text is parsed
	// again for): see feel_names.go.
	names []string
	// known are the names of Options.Names, joined into one token each
	// before parsing (dmn.go).
	known map[string]bool
	// types are the named types of Options.Types (dmn.go).
	types func(name string) (func(any) bool, bool)
}

// maxDepth bounds the nesting of parentheses, brackets and sub-expressions,
// so that hostile input cannot exhaust the stack of the parser or of
// expr-lang's checker and compiler.
const maxDepth = 100

func (c *compiler) enter() {
	c.depth++
	if c.depth > maxDepth {
		panic(c.errAt(c.peek().pos, fmt.Sprintf("expression nested more than %d deep", maxDepth)))
	}
}

func (c *compiler) leave() { c.depth-- }

func newCompiler(src string, funcs map[string]fnInfo, clk clock.Clock) *compiler {
	c := &compiler{src: src, funcs: make(map[string]fnInfo, len(funcs)+2), used: map[string]fnInfo{}, clock: clk}
	for k, v := range funcs {
		c.funcs[k] = v
	}
	// now() and today() read the clock of the compile options at
	// evaluation time; the closures capture it here, once.
	c.funcs["now"] = fnInfo{min: 0, max: 0, fn: func(...any) (any, error) { return clk.Now(), nil }}
	c.funcs["today"] = fnInfo{min: 0, max: 0, fn: func(...any) (any, error) { return dateOf(clk.Now()), nil }}
	return c
}

// lex tokenizes src[from:to] into c.toks. For JUEL "${...}" bodies stop is
// true: lexing ends at the first '}' outside brackets, whose position is
// returned.
func (c *compiler) lex(from, to int, feel, stop bool) int {
	l := &lexer{src: c.src, i: from, end: to, feel: feel}
	c.toks = c.toks[:0]
	c.i = 0
	for {
		t := l.next()
		if stop && t.kind == tOp {
			switch t.text {
			case "}":
				// JUEL has no braces of its own: the first } closes ${.
				c.toks = append(c.toks, token{kind: tEOF, pos: t.pos, end: t.pos})
				return t.pos
			}
		}
		if t.kind == tEOF {
			if stop {
				panic(c.errAt(from-2, "missing } to close ${"))
			}
			c.toks = append(c.toks, t)
			return to
		}
		c.toks = append(c.toks, t)
	}
}

func (c *compiler) peek() token { return c.toks[c.i] }
func (c *compiler) peekAt(k int) token {
	if c.i+k < len(c.toks) {
		return c.toks[c.i+k]
	}
	return c.toks[len(c.toks)-1]
}

func (c *compiler) next() token {
	t := c.toks[c.i]
	if t.kind != tEOF {
		c.i++
	}
	return t
}

// isOp reports whether the current token is the operator op.
func (c *compiler) isOp(op string) bool {
	t := c.toks[c.i]
	return t.kind == tOp && t.text == op
}

// isWord reports whether the current token is the unquoted name w.
func (c *compiler) isWord(w string) bool {
	t := c.toks[c.i]
	return t.kind == tName && !t.quoted && t.text == w
}

func (c *compiler) expectOp(op string) token {
	if !c.isOp(op) {
		panic(c.errAt(c.peek().pos, fmt.Sprintf("expected %q, found %s", op, describe(c.peek()))))
	}
	return c.next()
}

func (c *compiler) expectWord(w string) token {
	if !c.isWord(w) {
		panic(c.errAt(c.peek().pos, fmt.Sprintf("expected %q, found %s", w, describe(c.peek()))))
	}
	return c.next()
}

func (c *compiler) errAt(pos int, msg string) *SyntaxError {
	return &SyntaxError{Text: c.src, Pos: pos, Msg: msg}
}

func (c *compiler) unexpected(t token) *SyntaxError {
	return c.errAt(t.pos, "unexpected "+describe(t))
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return "string " + strconv.Quote(t.text)
	case tAt:
		return "@" + strconv.Quote(t.text)
	case tNumber:
		return "number " + t.text
	case tName:
		return "name " + strconv.Quote(t.text)
	}
	return strconv.Quote(t.text)
}

// call is callNode for a registered internal function, recording its use.
func (c *compiler) call(pos, end int, name string, args ...ast.Node) ast.Node {
	f, ok := c.funcs[name]
	if !ok {
		panic(fmt.Sprintf("expr: internal function %s not registered", name))
	}
	n := c.callNode(pos, end, name, args...)
	if _, isCall := n.(*ast.CallNode); isCall {
		c.used[name] = f
	}
	return n
}

// number parses a number token.
func (c *compiler) number(t token) ast.Node {
	f, err := strconv.ParseFloat(t.text, 64)
	if err != nil {
		panic(c.errAt(t.pos, "bad number "+t.text))
	}
	return at(&ast.FloatNode{Value: f}, t.pos, t.end)
}

// build checks and compiles root with exactly the functions it uses. A
// tree deeper than maxTreeDepth panics with a *SyntaxError.
func (c *compiler) build(root ast.Node) (*vm.Program, error) {
	if deep := walkTree(&root, func(*ast.Node, int) {}); deep != nil {
		panic(c.errAt(deep.Location().From, fmt.Sprintf("expression nested more than %d deep", maxTreeDepth)))
	}
	root = addMeter(root)
	cfg := conf.CreateNew()
	cfg.WithEnv(map[string]any{})
	cfg.Strict = false // any name may be a variable; FEEL reads missing ones as null
	cfg.Builtins = map[string]*builtin.Function{}
	cfg.MaxNodes = maxNodes
	for name, f := range c.used {
		cfg.Functions[funcPrefix+name] = &builtin.Function{Name: funcPrefix + name, Func: metered(f)}
	}
	tree := &parser.Tree{Node: root, Source: file.NewSource(c.src)}
	if _, err := checker.Check(tree, cfg); err != nil {
		return nil, err
	}
	// expr-lang's optimizer is not run: it would fold constant lists into
	// one shared value that a caller could mutate, and our own calls are
	// already folded by callNode.
	prog, err := exprcompiler.Compile(tree, cfg)
	if err != nil {
		return nil, err
	}
	if err := keepMeter(prog); err != nil {
		return nil, err
	}
	return prog, nil
}

// maxNodes bounds the size of one expression's tree.
const maxNodes = 10000

// durationOf converts an evaluation result to a duration: a FEEL duration
// or ISO-8601 text.
func durationOf(v any) (time.Duration, error) {
	switch x := v.(type) {
	case time.Duration:
		return x, nil
	case ymDuration:
		return 0, fmt.Errorf("yielded the years and months duration %s, which has no fixed length", x)
	case string:
		return parseDuration(x)
	}
	return 0, fmt.Errorf("yielded %s, not a duration", typeName(v))
}

// timeOf converts an evaluation result to an instant: a FEEL date and time
// or date, or RFC 3339 text.
func timeOf(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case date:
		return time.Time(x), nil
	case localDateTime:
		return time.Time(x), nil // no zone: UTC, as timer dates read
	case string:
		return parseDateTime(x)
	}
	return time.Time{}, fmt.Errorf("yielded %s, not a date and time", typeName(v))
}
