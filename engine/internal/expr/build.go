package expr

import (
	"fmt"

	"github.com/cockroachdb/apd/v3"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
)

// Why emit expr-lang AST instead of expr-lang source text?
//
// FEEL and JUEL are parsed by our own small recursive-descent parsers (one
// per dialect, sharing the lexer). They build expr-lang ast.Node trees
// directly and hand them to expr-lang's checker, optimizer and compiler;
// expr-lang's own parser never runs. Compared with translating to expr-lang
// source text and re-parsing it:
//
//   - syntax errors carry byte offsets in the text the user wrote, because
//     only our parser ever sees that text;
//   - nothing needs escaping: a variable called "in", "matches" or "len",
//     a context key with spaces, or a string with quotes reaches the VM
//     as written, with no injection into a second grammar;
//   - every operator whose dialect semantics differ from expr-lang's (FEEL
//     null propagation and 1-based lists, JUEL coercions and unknown-variable
//     errors) is a call to a registered function (names start with '@', which
//     no FEEL or JUEL identifier can), while structure (lists, contexts,
//     if-then-else, short-circuit &&/||, filters) uses expr-lang's own
//     nodes and bytecode.
//
// The price is that our parsers must produce trees the checker accepts;
// Compile recovers panics from the checker and compiler and reports them as
// errors, and the fuzz test keeps that honest.

// funcName prefixes all internal function names so that they can never
// collide with a user variable.
const funcPrefix = "@"

// at sets n's location to the byte range [from, to) of the original text and
// returns n.
func at(n ast.Node, from, to int) ast.Node {
	n.SetLocation(file.Location{From: from, To: to})
	return n
}

// callNode builds a call of the registered function name. When every
// argument is a constant and the function is pure, the call is evaluated
// now and replaced by its (scalar) result: duration("PT1H") or
// date and time("...") cost nothing at run time.
func (c *compiler) callNode(pos, end int, name string, args ...ast.Node) ast.Node {
	f, ok := c.funcs[name]
	if !ok {
		panic(fmt.Sprintf("expr: internal function %s not registered", name))
	}
	if f.pure && len(args) > 0 {
		vals := make([]any, len(args))
		allConst := true
		for i, a := range args {
			v, ok := constValue(a)
			if !ok {
				allConst = false
				break
			}
			vals[i] = v
		}
		if allConst {
			if v, err := safeCall(f.fn, vals); err == nil && isScalar(v) {
				return constNode(v, pos, end)
			}
		}
	}
	return at(&ast.CallNode{
		Callee:    at(&ast.IdentifierNode{Value: funcPrefix + name}, pos, end),
		Arguments: args,
	}, pos, end)
}

func safeCall(fn func(...any) (any, error), args []any) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return fn(args...)
}

// constValue returns the value of a literal node.
func constValue(n ast.Node) (any, bool) {
	switch n := n.(type) {
	case *ast.FloatNode:
		return n.Value, true
	case *ast.StringNode:
		return n.Value, true
	case *ast.BoolNode:
		return n.Value, true
	case *ast.NilNode:
		return nil, true
	case *ast.ConstantNode:
		if isScalar(n.Value) {
			return n.Value, true
		}
	}
	return nil, false
}

// constNode is the literal node for a scalar value.
func constNode(v any, pos, end int) ast.Node {
	switch v := v.(type) {
	case nil:
		return nullNode(pos, end)
	case bool:
		return at(&ast.BoolNode{Value: v}, pos, end)
	case string:
		return at(&ast.StringNode{Value: v}, pos, end)
	case float64:
		return at(&ast.FloatNode{Value: v}, pos, end)
	}
	return at(&ast.ConstantNode{Value: v}, pos, end)
}

// nullNode is the literal null. It is a constant rather than expr-lang's
// nil literal because expr-lang's checker types the nil literal as nil and
// takes a predicate whose body is typed nil for one with no result: "for x
// in l return null" would not compile. A nil constant is typed unknown.
func nullNode(pos, end int) ast.Node { return at(&ast.ConstantNode{Value: nil}, pos, end) }

// isScalar reports whether v is immutable, so that one value may be shared
// by every evaluation.
func isScalar(v any) bool {
	switch v.(type) {
	case nil, bool, string, float64, *apd.Decimal: // decimals are never mutated
		return true
	}
	return isTemporal(v)
}
