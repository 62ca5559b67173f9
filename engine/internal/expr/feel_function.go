package expr

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// Why is a FEEL function a program of its own?
//
// FEEL functions are values: "function(a, b) a + b" can be kept in a
// context entry, passed to sort and called later, by itself too
// ({fact: function(n) if n < 2 then 1 else n * fact(n - 1)}). expr-lang
// has no function values, so the body is compiled to a program of its own
// when the expression is compiled, and the definition evaluates to a
// *feelFunc: that program, the values of the names of the expression
// around it that the body reads (captured when the definition is
// evaluated, as closures do) and the variables of the evaluation. A call
// runs the body on a pooled VM with the parameters, the captured values and
// the variables as its environment, and charges the caller's meter, so a
// call inside a loop or a recursion is bounded by the same budgets as the
// rest of the evaluation, and by maxCallDepth.

// maxCallDepth bounds how deeply user function calls nest (recursion):
// each level is a VM run on the Go stack.
const maxCallDepth = 64

// varsName is the entry of a function body's environment holding the
// variables of the evaluation, which the body reads names from.
const varsName = funcPrefix + "vars"

// funcDef is a compiled FEEL function definition.
type funcDef struct {
	text     string   // the definition as written, for errors
	params   []string // the parameters as written
	internal []string // the parameters' names in the body's environment
	captures []string // the captured names in the body's environment
	self     int      // the capture that is the function itself, or -1
	prog     *vm.Program
	vars     int // VM variables the body uses, the meter included
}

// feelFunc is a FEEL function value.
type feelFunc struct {
	def      *funcDef
	vars     any   // the evaluation's variables (a map)
	captured []any // the captured values, in def.captures order
}

// String renders the function's signature.
func (f *feelFunc) String() string {
	return "function(" + strings.Join(f.def.params, ", ") + ")"
}

// feelFunction parses a function definition, "function(a, b) body", at
// the word function. self is the internal name of the context entry
// being defined, or "".
func (c *compiler) feelFunction(kw token, self string) ast.Node {
	c.next()
	c.expectOp("(")
	sub := &compiler{src: c.src, toks: c.toks, i: c.i, funcs: c.funcs, used: map[string]fnInfo{},
		clock: c.clock, vars: c.vars, depth: c.depth, outer: c, self: self}
	def := &funcDef{self: -1}
	for !c.isOp(")") {
		p := c.next()
		if p.kind != tName || feelKeywords[p.text] && !p.quoted {
			panic(c.errAt(p.pos, "expected a parameter name, found "+describe(p)))
		}
		name := p.text
		for c.peek().kind == tName && !c.isWord("function") {
			name += " " + c.next().text
		}
		if slices.Contains(def.params, name) {
			panic(c.errAt(p.pos, fmt.Sprintf("parameter %q given twice", name)))
		}
		if c.isOp(":") {
			c.next()
			c.parseType() // documentation only: arguments are not converted
		}
		def.params = append(def.params, name)
		if !c.isOp(",") {
			break
		}
		c.next()
	}
	closeTok := c.expectOp(")")
	if c.isWord("external") {
		panic(c.errAt(c.peek().pos, "external functions (Java, PMML) are not supported"))
	}
	for _, p := range def.params {
		def.internal = append(def.internal, sub.bind(p))
	}
	sub.i = c.i
	body := sub.feelExpr()
	c.i, c.vars = sub.i, sub.vars
	def.text = c.src[kw.pos:c.peek().pos]
	prog, err := sub.build(body)
	if err != nil {
		panic(c.errAt(kw.pos, fmt.Sprintf("%v: %v", errInternal, err)))
	}
	def.prog, def.vars = prog, 1+sub.vars
	def.captures = sub.captures
	args := []ast.Node{at(&ast.ConstantNode{Value: def}, kw.pos, closeTok.end), c.varsNode(kw)}
	for i, name := range sub.captures {
		if name == self {
			def.self = i
			args = append(args, nullNode(kw.pos, closeTok.end))
			continue
		}
		args = append(args, at(&ast.IdentifierNode{Value: name}, kw.pos, closeTok.end))
	}
	return c.call(kw.pos, closeTok.end, "f.closure", args...)
}

// varsNode reads the variables of the evaluation: the environment at the
// top, an entry of it inside a function body.
func (c *compiler) varsNode(t token) ast.Node {
	if c.outer != nil {
		return at(&ast.IdentifierNode{Value: varsName}, t.pos, t.end)
	}
	return at(&ast.IdentifierNode{Value: "$env"}, t.pos, t.end)
}

// lookupBound looks name up among the bound names in scope, inside a
// function body those of the expressions around it too, which the body
// then captures.
func (c *compiler) lookupBound(name string) (boundName, bool) {
	for i := len(c.bound) - 1; i >= 0; i-- {
		if c.bound[i].name == name {
			c.markUsed(c.bound[i].internal)
			return c.bound[i], true
		}
	}
	if c.outer == nil {
		return boundName{}, false
	}
	b, ok := c.outer.lookupBound(name)
	if !ok {
		return boundName{}, false
	}
	if !slices.Contains(c.captures, b.internal) {
		c.captures = append(c.captures, b.internal)
	}
	return boundName{name: b.name, internal: b.internal}, true
}

func (c *compiler) markUsed(internal string) {
	if c.usedBound == nil {
		c.usedBound = map[string]bool{}
	}
	c.usedBound[internal] = true
}

// hasBound reports whether name is bound in scope, without capturing it.
func (c *compiler) hasBound(name string) bool {
	for ; c != nil; c = c.outer {
		for _, b := range c.bound {
			if b.name == name {
				return true
			}
		}
	}
	return false
}

// maxNameWords bounds the words of a bound name called as a function
// ("my function(1)").
const maxNameWords = 8

// feelBoundCall parses a call of a function bound to a name in scope (a
// context entry, a parameter, an iteration variable), which wins over a
// built-in of the same name, and returns nil when the tokens ahead are
// none.
func (c *compiler) feelBoundCall() ast.Node {
	for k := maxNameWords; k >= 1; k-- {
		words := make([]string, 0, k)
		for j := range k {
			t := c.peekAt(j)
			if t.kind != tName || t.quoted {
				break
			}
			words = append(words, t.text)
		}
		if len(words) != k {
			continue
		}
		if open := c.peekAt(k); open.kind != tOp || open.text != "(" {
			continue
		}
		name := strings.Join(words, " ")
		if !c.hasBound(name) {
			continue
		}
		first := c.peek()
		var last token
		for range k {
			last = c.next()
		}
		fn := c.feelVar(token{kind: tName, text: name, pos: first.pos, end: last.end})
		return c.feelCall(fn, c.next())
	}
	return nil
}

// feelCall parses the arguments of a call of a function value, after the
// "(": positional, or named ("f(a: 1, b: 2)").
func (c *compiler) feelCall(fn ast.Node, open token) ast.Node {
	args := []ast.Node{fn}
	var names []string
	if c.namedArgs() {
		for {
			nameTok := c.peek()
			var ws []string
			for c.peek().kind == tName {
				ws = append(ws, c.next().text)
			}
			c.expectOp(":")
			name := strings.Join(ws, " ")
			if slices.Contains(names, name) {
				panic(c.errAt(nameTok.pos, fmt.Sprintf("parameter %q given twice", name)))
			}
			names = append(names, name)
			args = append(args, c.feelExpr())
			if !c.isOp(",") {
				break
			}
			c.next()
		}
	} else if !c.isOp(")") {
		for {
			args = append(args, c.feelExpr())
			if !c.isOp(",") {
				break
			}
			c.next()
		}
	}
	closeTok := c.expectOp(")")
	if names != nil {
		args = slices.Insert(args, 1, at(&ast.ConstantNode{Value: names}, open.pos, closeTok.end))
		return c.call(open.pos, closeTok.end, "f.calln", args...)
	}
	return c.call(open.pos, closeTok.end, "f.call", args...)
}

// callValue calls fn, a FEEL function value, with args. A value that is
// no function, or a call with the wrong number of arguments, yields null
// (DMN 1.5 10.3.2.13: an invalid invocation is null).
func callValue(m *meter, fn any, args []any) (any, error) {
	if n, ok := fn.(*Native); ok {
		return n.invoke(m, args)
	}
	f, ok := fn.(*feelFunc)
	if !ok || len(args) != len(f.def.params) {
		return nil, nil
	}
	return f.call(m, args)
}

// call runs the body with args bound to the parameters.
func (f *feelFunc) call(m *meter, args []any) (any, error) {
	if m.calls >= maxCallDepth {
		return nil, fmt.Errorf("%s: calls nested more than %d deep", f.def.text, maxCallDepth)
	}
	d := f.def
	env := make(map[string]any, len(args)+len(f.captured)+1)
	env[varsName] = f.vars
	for i, name := range d.internal {
		env[name] = args[i]
	}
	for i, name := range d.captures {
		if i == d.self {
			env[name] = f
			continue
		}
		env[name] = f.captured[i]
	}
	m.calls++
	defer func() { m.calls-- }()
	ev := evaluators.Get().(*evaluator)
	ev.vm.MemoryBudget = uint(max(m.maxSteps-m.steps, 1))
	if len(ev.vm.Variables) < d.vars {
		ev.vm.Variables = make([]any, d.vars)
	}
	ev.vm.Variables[0] = m
	out, err := ev.vm.Run(d.prog, env)
	if err != nil {
		// The VM may be mid-run: it is dropped, not pooled.
		_, cause := vmCause(err, m.maxSteps)
		return nil, cause
	}
	clear(ev.vm.Variables)
	evaluators.Put(ev)
	return out, nil
}

// callNamed calls fn with arguments named as its parameters; a parameter
// left out is null, and a name that is no parameter makes the call null.
func callNamed(m *meter, fn any, names []string, vals []any) (any, error) {
	if n, ok := fn.(*Native); ok {
		return n.invokeNamed(m, names, vals)
	}
	f, ok := fn.(*feelFunc)
	if !ok {
		return nil, nil
	}
	args := make([]any, len(f.def.params))
	for i, n := range names {
		j := slices.Index(f.def.params, n)
		if j < 0 {
			return nil, nil
		}
		args[j] = vals[i]
	}
	return f.call(m, args)
}

// feelSort sorts a list with precedes(x, y), a function that says whether
// x comes before y (DMN 1.5 sort). A comparison that yields no boolean
// makes the result null.
func feelSort(a ...any) (any, error) {
	m := a[0].(*meter)
	l, ok := a[1].([]any)
	if !ok {
		return nil, nil
	}
	// precedes is a FEEL function or a DMN one (a business knowledge
	// model, Native).
	if params, ok := FunctionParams(a[2]); !ok || len(params) != 2 {
		return nil, nil
	}
	out := slices.Clone(l)
	var failed error
	bad := false
	slices.SortStableFunc(out, func(x, y any) int {
		if failed != nil || bad {
			return 0
		}
		r, err := callValue(m, a[2], []any{x, y})
		if err != nil {
			failed = err
			return 0
		}
		b, ok := r.(bool)
		switch {
		case !ok:
			bad = true
		case b:
			return -1
		}
		return 0
	})
	if failed != nil {
		return nil, failed
	}
	if bad {
		return nil, nil
	}
	return out, nil
}

// feelFunctionOps are the operators behind function values.
var feelFunctionOps = map[string]fnInfo{
	"f.closure": {view: true, fn: func(a ...any) (any, error) {
		return &feelFunc{def: a[0].(*funcDef), vars: a[1], captured: slices.Clone(a[2:])}, nil
	}},
	"f.call": {calls: true, fn: func(a ...any) (any, error) {
		return callValue(a[0].(*meter), a[1], a[2:])
	}},
	"f.calln": {calls: true, fn: func(a ...any) (any, error) {
		return callNamed(a[0].(*meter), a[1], a[2].([]string), a[3:])
	}},
}

// feelListReplace is list replace(list, position, newItem) and list
// replace(list, match, newItem) (DMN 1.5 10.3.4.4): the item at a
// position, or every item for which match(item, newItem) is true,
// replaced by newItem. A position with decimals is truncated to an
// integer (2.5 is 2, -1.5 is -1), as the DMN TCK reads the spec. Its
// first argument is the evaluation's meter.
func feelListReplace(a ...any) (any, error) {
	m := a[0].(*meter)
	a = a[1:]
	f, ok := a[1].(*feelFunc)
	if !ok {
		pos := a[1]
		if n, isNum := toFloat(pos); isNum {
			pos = math.Trunc(n)
		}
		l, i, ok := listPos([]any{a[0], pos}, 1)
		if !ok {
			return nil, nil
		}
		out := append([]any{}, l...)
		out[i] = a[2]
		return out, nil
	}
	l, ok := a[0].([]any)
	if !ok || len(f.def.params) != 2 {
		return nil, nil
	}
	out := slices.Clone(l)
	for i, item := range l {
		r, err := f.call(m, []any{item, a[2]})
		if err != nil {
			return nil, err
		}
		matched, ok := r.(bool)
		if !ok && r != nil {
			return nil, nil // the match function must answer true or false (null: no match)
		}
		if matched {
			out[i] = a[2]
		}
	}
	return out, nil
}
