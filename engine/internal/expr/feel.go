package expr

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// FEEL parser: recursive descent over the FEEL grammar subset, lowest
// precedence first:
//
//	expression  = "if" expression "then" expression "else" expression
//	            | ("some" | "every") contexts "satisfies" expression
//	            | "for" contexts "return" expression
//	            | disjunction
//	contexts    = name "in" disjunction { "," name "in" disjunction }
//	disjunction = conjunction { "or" conjunction }
//	conjunction = comparison { "and" comparison }
//	comparison  = additive [ ("=" | "!=" | "<" | "<=" | ">" | ">=") additive
//	                       | "between" additive "and" additive
//	                       | "in" positive-tests ]
//	additive    = multiplicative { ("+" | "-") multiplicative }
//	multiplicative = power { ("*" | "/") power }
//	power       = unary { "**" unary }
//	unary       = "-" unary | postfix
//	postfix     = primary { "." name | "[" filter-or-index "]" }
//	primary     = literal | list | context | "(" expression ")" | function call | name

// feelKeywords cannot be used as plain names.
var feelKeywords = map[string]bool{
	"true": true, "false": true, "null": true, "if": true, "then": true, "else": true,
	"and": true, "or": true, "between": true, "in": true, "instance": true, "of": true,
	"for": true, "some": true, "every": true, "satisfies": true, "return": true, "function": true,
}

// feelFuncNames lists the library's names split into words, longest first,
// so that "date and time" wins over "date".
var feelFuncNames = func() [][]string {
	var names [][]string
	for name := range feelLibrary {
		names = append(names, strings.Fields(name))
	}
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) > len(names[j])
		}
		return strings.Join(names[i], " ") < strings.Join(names[j], " ")
	})
	return names
}()

// feelFuncs is every function FEEL programs may call: operators and the
// library.
var feelFuncs = func() map[string]fnInfo {
	m := make(map[string]fnInfo, len(feelOps)+len(feelLibrary))
	for k, v := range feelOps {
		m[k] = v
	}
	for k, v := range feelLibrary {
		if v.fn != nil {
			m[k] = v
		}
	}
	for k, v := range feelFunctionOps {
		m[k] = v
	}
	return m
}()

// feelBoolOps are the functions whose result is a boolean (or null): a
// filter whose expression is one of these is a predicate, not an index.
var feelBoolOps = map[string]bool{
	"f.eq": true, "f.ne": true, "f.lt": true, "f.le": true, "f.gt": true, "f.ge": true,
	"f.and": true, "f.or": true, "f.in": true, "f.between": true, "f.range": true,
	"f.true": true, "f.defined": true, "f.notnull": true, "f.instance": true,
	"not": true, "contains": true, "starts with": true, "ends with": true, "list contains": true,
}

func (c *compiler) feelTop() ast.Node {
	n := c.feelExpr()
	if t := c.peek(); t.kind != tEOF {
		panic(c.unexpected(t))
	}
	return n
}

func (c *compiler) feelExpr() ast.Node {
	c.enter()
	defer c.leave()
	t := c.peek()
	if t.kind == tName && !t.quoted {
		switch t.text {
		case "if":
			c.next()
			cond := c.feelExpr()
			c.expectWord("then")
			a := c.feelExpr()
			c.expectWord("else")
			b := c.feelExpr()
			return at(&ast.ConditionalNode{Cond: c.call(t.pos, t.end, "f.true", cond), Exp1: a, Exp2: b}, t.pos, t.end)
		case "some", "every":
			return c.feelQuantified(t)
		case "for":
			return c.feelFor(t)
		case "function":
			return c.feelFunction(t, "")
		}
	}
	return c.feelOr()
}

// feelIteration parses what the iterating expressions share, after their
// keyword kw: one or more iteration contexts "name in list", separated by
// commas, then the word sep and a body in which each name stands for the
// current element of its list. Later lists may use earlier names. loop
// builds one level: the iteration over list of pred, whose own result is
// the next level's (or, innermost, the body's).
//
// Each name is a variable of expr-lang (a let inside the loop's
// predicate), so that it keeps its element inside nested iterations and
// filters, where expr-lang's "#" is another loop's element.
func (c *compiler) feelIteration(kw token, sep string, loop func(list, pred ast.Node, innermost bool) ast.Node) ast.Node {
	c.next()
	type context struct {
		name string // the internal variable name
		list ast.Node
	}
	var ctxs []context
	for {
		var v token
		if name, k := c.scopeName(); k > 0 && c.peekAt(k).kind == tName && c.peekAt(k).text == "in" {
			v = c.takeScopeName(name, k) // "days in weekend in ...", a name in scope
		} else {
			v = c.next()
		}
		if v.kind != tName || feelKeywords[v.text] && !v.quoted {
			panic(c.errAt(v.pos, fmt.Sprintf("expected a variable name after %q, found %s", kw.text, describe(v))))
		}
		c.expectWord("in")
		src := c.feelOr()
		if c.isOp("..") {
			// "for i in 1..3": the integers (or days) from one end to the
			// other, descending when the first is larger.
			dots := c.next()
			src = c.call(dots.pos, dots.end, "f.steps", src, c.feelOr())
		}
		list := src
		if kw.text == "for" {
			list = c.call(kw.pos, kw.end, "f.source", src)
		} else {
			list = c.call(kw.pos, kw.end, "f.aslist", src)
		}
		ctxs = append(ctxs, context{name: c.bind(v.text), list: list})
		if !c.isOp(",") {
			break
		}
		c.next()
	}
	c.expectWord(sep)
	bound := len(c.bound) - len(ctxs)
	partial := ""
	if kw.text == "for" {
		// In a for body, "partial" is the list of the results so far.
		partial = c.bind("partial")
	}
	n := c.feelExpr()
	c.bound = c.bound[:bound]
	if partial != "" && c.usedBound[partial] {
		if len(ctxs) > 1 {
			panic(c.errAt(kw.pos, `"partial" in a for over several iteration contexts is not supported`))
		}
		// A fold instead of a map: each step appends its result to the
		// results so far, which the body reads.
		pred := at(&ast.VariableDeclaratorNode{Name: partial, Value: at(&ast.PointerNode{Name: "acc"}, kw.pos, kw.end),
			Expr: at(&ast.VariableDeclaratorNode{Name: ctxs[0].name, Value: at(&ast.PointerNode{}, kw.pos, kw.end),
				Expr: c.call(kw.pos, kw.end, "append", at(&ast.IdentifierNode{Value: partial}, kw.pos, kw.end), n)}, kw.pos, kw.end)}, kw.pos, kw.end)
		return at(&ast.BuiltinNode{Name: "reduce", Arguments: []ast.Node{
			ctxs[0].list, at(&ast.PredicateNode{Node: pred}, kw.pos, kw.end), at(&ast.ArrayNode{}, kw.pos, kw.end),
		}}, kw.pos, kw.end)
	}
	for i := len(ctxs) - 1; i >= 0; i-- {
		pred := at(&ast.VariableDeclaratorNode{Name: ctxs[i].name, Value: at(&ast.PointerNode{}, kw.pos, kw.end), Expr: n}, kw.pos, kw.end)
		n = loop(ctxs[i].list, pred, i == len(ctxs)-1)
	}
	return n
}

// boundName is a FEEL iteration variable in scope: the name as written,
// the name of the expr-lang variable that holds it and the filter depth
// it was bound at.
type boundName struct {
	name, internal string
	filterDepth    int
}

// bind brings an iteration variable into scope and returns its internal
// name.
func (c *compiler) bind(name string) string {
	internal := c.internalName(name)
	c.bound = append(c.bound, boundName{name: name, internal: internal, filterDepth: c.filterDepth})
	return internal
}

// internalName returns a new expr-lang variable name for name, unique in
// the expression because expr-lang does not let a variable shadow
// another, and starting with funcPrefix so that no name written in the
// expression reads it (see feelVar).
func (c *compiler) internalName(name string) string {
	c.vars++
	return fmt.Sprintf("%s%d %s", funcPrefix, c.vars, name)
}

// boundAs returns the innermost bound name called name.
func (c *compiler) boundAs(name string) (boundName, bool) { return c.lookupBound(name) }

// feelQuantified parses "some x in list satisfies p" and "every x in list
// satisfies p" into expr-lang's any/all over the list. An empty list gives
// false for some and true for every; an element for which p is null does
// not satisfy it.
func (c *compiler) feelQuantified(q token) ast.Node {
	builtin := "any"
	if q.text == "every" {
		builtin = "all"
	}
	return c.feelIteration(q, "satisfies", func(list, pred ast.Node, innermost bool) ast.Node {
		if innermost {
			d := pred.(*ast.VariableDeclaratorNode)
			d.Expr = c.call(q.pos, q.end, "f.true", d.Expr)
		}
		return at(&ast.BuiltinNode{Name: builtin, Arguments: []ast.Node{
			list, at(&ast.PredicateNode{Node: pred}, q.pos, q.end),
		}}, q.pos, q.end)
	})
}

// feelFor parses "for x in list return e" into expr-lang's map over the
// list. With several iteration contexts the result is one flat list, the
// inner contexts varying fastest.
func (c *compiler) feelFor(f token) ast.Node {
	return c.feelIteration(f, "return", func(list, pred ast.Node, innermost bool) ast.Node {
		n := at(&ast.BuiltinNode{Name: "map", Arguments: []ast.Node{
			list, at(&ast.PredicateNode{Node: pred}, f.pos, f.end),
		}}, f.pos, f.end)
		if !innermost {
			n = c.call(f.pos, f.end, "f.concat", n)
		}
		return n
	})
}

func (c *compiler) feelOr() ast.Node {
	n := c.feelAnd()
	for c.isWord("or") {
		t := c.next()
		n = c.call(t.pos, t.end, "f.or", n, c.feelAnd())
	}
	return n
}

func (c *compiler) feelAnd() ast.Node {
	n := c.feelComparison()
	for c.isWord("and") {
		t := c.next()
		n = c.call(t.pos, t.end, "f.and", n, c.feelComparison())
	}
	return n
}

var feelCmpOps = map[string]string{"=": "f.eq", "!=": "f.ne", "<": "f.lt", "<=": "f.le", ">": "f.gt", ">=": "f.ge"}

func (c *compiler) feelComparison() ast.Node {
	n := c.feelAdditive()
	t := c.peek()
	switch {
	case t.kind == tOp && feelCmpOps[t.text] != "":
		c.next()
		n = c.call(t.pos, t.end, feelCmpOps[t.text], n, c.feelAdditive())
	case t.kind == tOp && t.text == "==":
		panic(c.errAt(t.pos, `FEEL compares with "=", not "=="`))
	case c.isWord("between"):
		c.next()
		lo := c.feelAdditive()
		c.expectWord("and")
		hi := c.feelAdditive()
		n = c.call(t.pos, t.end, "f.between", n, lo, hi)
	case c.isWord("in"):
		c.next()
		n = c.feelIn(n, t)
	case c.isWord("instance"):
		c.next()
		n = c.feelInstanceOf(n, t)
	default:
		return n
	}
	if t2 := c.peek(); t2.kind == tOp && (feelCmpOps[t2.text] != "" || t2.text == "==") {
		panic(c.errAt(t2.pos, "comparisons cannot be chained; use and"))
	}
	return n
}

// feelIn parses the right side of "x in ...": a list or value (membership
// or equality), a range "a..b", "[a..b]", "(a..b)", "]a..b[", a
// parenthesised list of values "(1, 2)", or a comparison test "< 5".
func (c *compiler) feelIn(x ast.Node, in token) ast.Node {
	t := c.peek()
	if t.kind == tOp {
		switch t.text {
		case "<", "<=", ">", ">=", "=", "!=":
			c.next()
			return c.call(t.pos, t.end, feelCmpOps[t.text], x, c.feelAdditive())
		case "[", "(", "]":
			if t.text == "[" && c.peekAt(1).kind == tOp && c.peekAt(1).text == "]" {
				break // x in []: the empty list
			}
			// No backtracking: after the first item, "..", "," or the
			// closing bracket tells a range from a list.
			c.next()
			first := c.feelUnaryTest()
			if first == nil {
				first = c.feelExpr()
			}
			if c.isOp("..") {
				c.next()
				c.noFilter = true
				last := c.feelAdditive()
				c.noFilter = false
				end := c.peek()
				if end.kind != tOp || (end.text != "]" && end.text != ")" && end.text != "[") {
					panic(c.errAt(end.pos, fmt.Sprintf("expected ] or ) to close the range, found %s", describe(end))))
				}
				c.next()
				return c.call(in.pos, in.end, "f.range", x, first, last,
					at(&ast.BoolNode{Value: t.text == "["}, t.pos, t.end),
					at(&ast.BoolNode{Value: end.text == "]"}, end.pos, end.end))
			}
			if t.text == "]" {
				panic(c.errAt(c.peek().pos, "expected .. in the range"))
			}
			closer := "]"
			if t.text == "(" {
				closer = ")"
			}
			items := []ast.Node{first}
			for c.isOp(",") {
				c.next()
				if u := c.feelUnaryTest(); u != nil {
					items = append(items, u)
					continue
				}
				items = append(items, c.feelExpr())
			}
			end := c.expectOp(closer)
			if t.text == "(" && len(items) == 1 {
				return c.call(in.pos, in.end, "f.in", x, first) // x in (expression)
			}
			return c.call(in.pos, in.end, "f.in", x, at(&ast.ArrayNode{Nodes: items}, t.pos, end.end))
		}
	}
	set := c.feelAdditive()
	if c.isOp("..") {
		c.next()
		hi := c.feelAdditive()
		return c.call(in.pos, in.end, "f.range", x, set, hi,
			at(&ast.BoolNode{Value: true}, in.pos, in.end), at(&ast.BoolNode{Value: true}, in.pos, in.end))
	}
	return c.call(in.pos, in.end, "f.in", x, set)
}

func (c *compiler) feelAdditive() ast.Node {
	n := c.feelMultiplicative()
	for c.isOp("+") || c.isOp("-") {
		t := c.next()
		name := "f.add"
		if t.text == "-" {
			name = "f.sub"
		}
		n = c.call(t.pos, t.end, name, n, c.feelMultiplicative())
	}
	return n
}

func (c *compiler) feelMultiplicative() ast.Node {
	n := c.feelPower()
	for c.isOp("*") || c.isOp("/") {
		t := c.next()
		name := "f.mul"
		if t.text == "/" {
			name = "f.div"
		}
		n = c.call(t.pos, t.end, name, n, c.feelPower())
	}
	if c.isOp("%") {
		panic(c.errAt(c.peek().pos, `FEEL has no "%" operator; use modulo(a, b)`))
	}
	return n
}

func (c *compiler) feelPower() ast.Node {
	n := c.feelUnary()
	for c.isOp("**") {
		t := c.next()
		n = c.call(t.pos, t.end, "f.pow", n, c.feelUnary())
	}
	return n
}

func (c *compiler) feelUnary() ast.Node {
	if c.isOp("-") {
		c.enter()
		defer c.leave()
		t := c.next()
		return c.call(t.pos, t.end, "f.neg", c.feelUnary())
	}
	if c.isOp("!") {
		t := c.peek()
		panic(c.errAt(t.pos, `FEEL negates with not(...), not "!"`))
	}
	return c.feelPostfix()
}

func (c *compiler) feelPostfix() ast.Node {
	n := c.feelPrimary()
	for {
		t := c.peek()
		switch {
		case t.kind == tOp && t.text == ".":
			c.next()
			name := c.next()
			if name.kind != tName {
				panic(c.errAt(name.pos, "expected a name after ., found "+describe(name)))
			}
			key := name.text
			if key == "time" && !name.quoted && c.isWord("offset") {
				name.end = c.next().end // the property "time offset"
				key = "time offset"
			}
			if (key == "start" || key == "end") && !name.quoted && c.isWord("included") {
				name.end = c.next().end // a range's "start included", "end included"
				key += " included"
			}
			n = c.call(t.pos, name.end, "f.get", n, at(&ast.StringNode{Value: key}, name.pos, name.end))
		case t.kind == tOp && t.text == "[" && !c.noFilter:
			c.next()
			n = c.feelFilter(n, t)
		case t.kind == tOp && t.text == "(":
			n = c.feelCall(n, c.next())
		default:
			return n
		}
	}
}

// feelFilter parses "list[...]" after the "[". A boolean expression is a
// filter: it runs once per item, where "item" is the item (an expr-lang
// variable, like an iteration variable) and names resolve to the item's
// entries first. Anything else is a 1-based index, evaluated
// once outside any item: the names parsed as item references are turned
// back into plain variables (parsing twice instead would be exponential in
// the nesting of brackets).
func (c *compiler) feelFilter(list ast.Node, open token) ast.Node {
	c.filterDepth++
	c.items = append(c.items, c.internalName("item"))
	pred := c.feelExpr()
	item := c.items[len(c.items)-1]
	c.items = c.items[:len(c.items)-1]
	c.filterDepth--
	c.expectOp("]")
	if isBoolish(pred) {
		return at(&ast.BuiltinNode{
			Name: "filter",
			Arguments: []ast.Node{
				c.call(open.pos, open.end, "f.aslist", list),
				at(&ast.PredicateNode{Node: at(&ast.VariableDeclaratorNode{
					Name: item, Value: at(&ast.PointerNode{}, open.pos, open.end),
					Expr: c.call(open.pos, open.end, "f.true", pred),
				}, open.pos, open.end)}, open.pos, open.end),
			},
		}, open.pos, open.end)
	}
	c.unfilter(&pred, c.filterDepth+1)
	return c.call(open.pos, open.end, "f.index", list, pred)
}

// unfilter rewrites the item references made at one filter depth into
// plain variable references. A tree too deep to walk is left as it is:
// build rejects it.
func (c *compiler) unfilter(root *ast.Node, depth int) {
	walkTree(root, func(n *ast.Node, _ int) {
		if r, ok := c.itemRefs[*n]; ok && r.depth == depth {
			*n = r.plain
		}
	})
}

// itemRef records a name parsed inside a filter: the plain node it stands
// for outside the filter, and the filter depth.
type itemRef struct {
	plain ast.Node
	depth int
}

func isBoolish(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.BoolNode:
		return true
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			return feelBoolOps[strings.TrimPrefix(id.Value, funcPrefix)]
		}
	case *ast.ConditionalNode:
		return isBoolish(n.Exp1) && isBoolish(n.Exp2)
	case *ast.BuiltinNode:
		return n.Name == "any" || n.Name == "all"
	}
	return false
}

func (c *compiler) feelPrimary() ast.Node {
	t := c.peek()
	switch t.kind {
	case tNumber:
		c.next()
		n, ok := parseNumber(t.text)
		if !ok {
			panic(c.errAt(t.pos, "number out of range: "+t.text))
		}
		return constNode(n, t.pos, t.end)
	case tString:
		c.next()
		return at(&ast.StringNode{Value: t.text}, t.pos, t.end)
	case tAt:
		c.next()
		v := atLiteral(t.text)
		if v == nil {
			panic(c.errAt(t.pos, fmt.Sprintf("@%q is not a date, time, date and time or duration", t.text)))
		}
		return constNode(v, t.pos, t.end)
	case tName:
		if !t.quoted {
			switch t.text {
			case "if", "for", "some", "every", "function":
				// An operand may be any expression (DMN 1.5 grammar
				// rules 19-21): 1 + if a then 1 else 2 takes the rest.
				return c.feelExpr()
			}
		}
		if n := c.feelKnownCall(); n != nil {
			return n
		}
		if name, k := c.scopeName(); k > 0 && !t.quoted {
			// A name in scope with spaces, keywords or operators, unless
			// a library function of that spelling is called.
			if after := c.peekAt(k); !(after.kind == tOp && after.text == "(" && feelLibrary[name].fn != nil && !c.hasBound(name)) {
				nt := c.takeScopeName(name, k)
				if c.isOp("(") {
					return c.feelCall(c.feelVar(nt), c.next())
				}
				return c.feelName(nt)
			}
		}
		if n := c.feelBoundCall(); n != nil {
			return n
		}
		if !t.quoted {
			if n := c.feelFuncCall(); n != nil {
				return n
			}
			switch t.text {
			case "true", "false":
				c.next()
				return at(&ast.BoolNode{Value: t.text == "true"}, t.pos, t.end)
			case "null":
				c.next()
				return nullNode(t.pos, t.end)
			}
			if feelKeywords[t.text] {
				panic(c.unexpected(t))
			}
		}
		c.next()
		if c.isOp("(") {
			panic(c.errAt(t.pos, fmt.Sprintf("unknown function %q", t.text)))
		}
		return c.feelName(t)
	case tOp:
		switch t.text {
		case "(":
			c.next()
			if u := c.feelUnaryTest(); u != nil {
				c.expectOp(")")
				return u
			}
			saved := c.noFilter
			c.noFilter = false
			n := c.feelExpr()
			c.noFilter = saved
			if c.isOp("..") {
				return c.feelInterval(t, n)
			}
			c.expectOp(")")
			return n
		case "[":
			return c.feelList()
		case "{":
			return c.feelContext()
		case "]":
			c.next()
			first := c.feelExpr()
			if !c.isOp("..") {
				panic(c.errAt(c.peek().pos, "expected .. in the range"))
			}
			return c.feelInterval(t, first)
		}
	}
	panic(c.unexpected(t))
}

// feelName resolves a variable name, or inside a filter the item or one
// of its entries.
// feelInterval parses the rest of a range written as a value, after its
// opening bracket (open) and first end point and at the "..": the last
// end point and the closing bracket.
func (c *compiler) feelInterval(open token, first ast.Node) ast.Node {
	c.expectOp("..")
	saved := c.noFilter
	c.noFilter = true
	last := c.feelAdditive()
	c.noFilter = saved
	end := c.peek()
	if end.kind != tOp || (end.text != "]" && end.text != ")" && end.text != "[") {
		panic(c.errAt(end.pos, fmt.Sprintf("expected ] or ) to close the range, found %s", describe(end))))
	}
	c.next()
	return c.call(open.pos, end.end, "f.mkrange", first, last,
		at(&ast.BoolNode{Value: open.text == "["}, open.pos, open.end),
		at(&ast.BoolNode{Value: end.text == "]"}, end.pos, end.end))
}

// feelUnaryTest parses a comparison unary test used as a value ("< 10",
// "= 5", "!= 5", as in "(< 10)" or "x in (1, >= 5)"). It returns nil
// when the current token is no comparison.
func (c *compiler) feelUnaryTest() ast.Node {
	t := c.peek()
	if t.kind != tOp || feelCmpOps[t.text] == "" {
		return nil
	}
	c.next()
	e := c.feelAdditive()
	return c.call(t.pos, t.end, "f.test", at(&ast.StringNode{Value: t.text}, t.pos, t.end), e)
}

// atLiteral is the value of @"text": a duration, a date and time, a date
// or a time, told apart by their form; nil when it is none.
func atLiteral(text string) any {
	if strings.HasPrefix(text, "P") || strings.HasPrefix(text, "-P") {
		if d, ok := parseFEELDuration(text); ok {
			return d
		}
		return nil
	}
	clock, _, _ := strings.Cut(text, "@") // a zone name may hold a T (Etc/GMT)
	if strings.Contains(clock, "T") {
		if dt, ok := parseFEELDateTime(text); ok {
			return dt
		}
		return nil
	}
	if d, ok := parseFEELDate(text); ok {
		return d
	}
	if t, ok := parseFEELTime(text); ok {
		return t
	}
	return nil
}

func (c *compiler) feelName(t token) ast.Node {
	if b, ok := c.boundAs(t.text); ok && b.filterDepth == c.filterDepth {
		// Bound inside the innermost filter, so nearer than its item.
		return at(&ast.IdentifierNode{Value: b.internal}, t.pos, t.end)
	}
	if c.filterDepth > 0 {
		outer := c.feelVar(t)
		item := at(&ast.IdentifierNode{Value: c.items[len(c.items)-1]}, t.pos, t.end)
		var n ast.Node
		if t.text == "item" && !t.quoted {
			// The item, unless it is a context with an entry "item".
			n = c.call(t.pos, t.end, "f.item", item, at(&ast.StringNode{Value: t.text}, t.pos, t.end), item)
		} else {
			n = c.call(t.pos, t.end, "f.item", item,
				at(&ast.StringNode{Value: t.text}, t.pos, t.end), outer)
		}
		if c.itemRefs == nil {
			c.itemRefs = map[ast.Node]itemRef{}
		}
		c.itemRefs[n] = itemRef{plain: outer, depth: c.filterDepth}
		return n
	}
	return c.feelVar(t)
}

// feelVar reads the variable named by t: an iteration variable in scope,
// or one of the variables the expression is evaluated over. A name is
// never anything else: "$env", which expr-lang reads as the whole
// environment, and names like the internal ones are looked up as
// variables, so that no expression can yield the variables themselves
// (a mapping would store them inside themselves).
func (c *compiler) feelVar(t token) ast.Node {
	if b, ok := c.boundAs(t.text); ok {
		return at(&ast.IdentifierNode{Value: b.internal}, t.pos, t.end)
	}
	if t.text == "$env" || strings.HasPrefix(t.text, funcPrefix) || c.outer != nil {
		// Inside a function body the variables are an entry of the
		// environment (feel_function.go).
		return c.call(t.pos, t.end, "f.get", c.varsNode(t), at(&ast.StringNode{Value: t.text}, t.pos, t.end))
	}
	return at(&ast.IdentifierNode{Value: t.text}, t.pos, t.end)
}

// feelFuncCall parses a library call if the tokens spell a (possibly
// multi-word) function name followed by "(", and returns nil otherwise.
func (c *compiler) feelFuncCall() ast.Node {
	var words []string
	for _, name := range feelFuncNames {
		ok := true
		for k, w := range name {
			t := c.peekAt(k)
			if t.kind != tName || t.quoted || t.text != w {
				ok = false
				break
			}
		}
		if ok {
			if t := c.peekAt(len(name)); t.kind == tOp && t.text == "(" {
				words = name
				break
			}
		}
	}
	if words == nil {
		return nil
	}
	first := c.peek()
	for range words {
		c.next()
	}
	c.next() // (
	name := strings.Join(words, " ")
	var args []ast.Node
	if c.namedArgs() {
		args = c.feelNamedArgs(name, first)
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
	info := feelLibrary[name]
	if len(args) < info.min || info.max >= 0 && len(args) > info.max {
		panic(c.errAt(first.pos, fmt.Sprintf("%s() takes %s, got %d", name, arity(info), len(args))))
	}
	if name == "is defined" {
		return c.feelIsDefined(args[0], first, closeTok)
	}
	return c.call(first.pos, closeTok.end, name, args...)
}

// namedArgs reports whether the arguments ahead are named: words, then
// a colon ("start position: 2").
func (c *compiler) namedArgs() bool {
	k := 0
	for c.peekAt(k).kind == tName {
		k++
	}
	t := c.peekAt(k)
	return k > 0 && t.kind == tOp && t.text == ":"
}

// feelNamedArgs parses "name: value, ..." and returns the values in the
// order of the parameters of fn's signature that has all the names
// (DMN 1.5 10.3.2.13.3); a parameter left out is null.
func (c *compiler) feelNamedArgs(fn string, at0 token) []ast.Node {
	type named struct {
		name string
		tok  token
		val  ast.Node
	}
	var given []named
	for {
		nameTok := c.peek()
		var ws []string
		for c.peek().kind == tName {
			ws = append(ws, c.next().text)
		}
		if len(ws) == 0 {
			panic(c.errAt(nameTok.pos, "expected a parameter name, found "+describe(nameTok)))
		}
		c.expectOp(":")
		g := named{name: strings.Join(ws, " "), tok: nameTok, val: c.feelExpr()}
		if fn == "context put" && g.name == "key" {
			// context put's two signatures share a position: "key" is a
			// string, "keys" a list.
			g.val = c.call(nameTok.pos, nameTok.end, "f.string", g.val)
		}
		given = append(given, g)
		if !c.isOp(",") {
			break
		}
		c.next()
	}
	sigs := append([][]string{feelParams[fn], feelParamsAlt[fn]}, feelRangeParams[fn]...)
	// A signature whose names come in the order written wins: the range
	// built-ins' (point, range) and (range, point) share their names.
	written := func(params []string) bool {
		for i, g := range given {
			if i >= len(params) || params[i] != g.name {
				return false
			}
		}
		return true
	}
	slices.SortStableFunc(sigs, func(a, b []string) int {
		switch wa, wb := written(a), written(b); {
		case wa && !wb:
			return -1
		case wb && !wa:
			return 1
		}
		return 0
	})
	for _, params := range sigs {
		if params == nil {
			continue
		}
		args := make([]ast.Node, 0, len(params))
		ok := true
		for _, g := range given {
			i := slices.Index(params, g.name)
			if i < 0 {
				ok = false
				break
			}
			for len(args) <= i {
				args = append(args, nil)
			}
			if args[i] != nil {
				panic(c.errAt(g.tok.pos, fmt.Sprintf("parameter %q given twice", g.name)))
			}
			args[i] = g.val
		}
		if !ok {
			continue
		}
		for len(args) < feelLibrary[fn].min {
			args = append(args, nil) // is(value1: x): value2 is null
		}
		for i, a := range args {
			if a == nil {
				args[i] = nullNode(at0.pos, at0.end)
			}
		}
		return args
	}
	for _, g := range given {
		if !slices.ContainsFunc(sigs, func(params []string) bool { return slices.Contains(params, g.name) }) {
			panic(c.errAt(g.tok.pos, fmt.Sprintf("%s() has no parameter %q", fn, g.name)))
		}
	}
	panic(c.errAt(at0.pos, fmt.Sprintf("%s() has no signature with these parameters", fn)))
}

// feelIsDefined compiles is defined(x): for a name or a path of names it
// checks that every step exists (a variable holding null is defined); for
// any other expression it checks for a non-null value.
func (c *compiler) feelIsDefined(arg ast.Node, first, last token) ast.Node {
	var path []ast.Node // innermost step first
	n := arg
	for {
		if call, ok := n.(*ast.CallNode); ok && call.Callee.(*ast.IdentifierNode).Value == funcPrefix+"f.get" {
			path = append(path, call.Arguments[1])
			n = call.Arguments[0]
			continue
		}
		break
	}
	slices.Reverse(path)
	if id, ok := n.(*ast.IdentifierNode); ok && c.filterDepth == 0 && id.Value == "$env" {
		// A variable named like expr-lang's environment: the path starts there.
		return c.call(first.pos, last.end, "f.defined", append([]ast.Node{id}, path...)...)
	}
	if id, ok := n.(*ast.IdentifierNode); ok && c.filterDepth == 0 && strings.HasPrefix(id.Value, funcPrefix) {
		// An iteration variable: always defined, and its value starts the path.
		return c.call(first.pos, last.end, "f.defined", append([]ast.Node{id}, path...)...)
	}
	if id, ok := n.(*ast.IdentifierNode); ok && c.filterDepth == 0 {
		args := append([]ast.Node{at(&ast.IdentifierNode{Value: "$env"}, first.pos, last.end),
			at(&ast.StringNode{Value: id.Value}, first.pos, last.end)}, path...)
		return c.call(first.pos, last.end, "f.defined", args...)
	}
	return c.call(first.pos, last.end, "f.notnull", arg)
}

func arity(f fnInfo) string {
	switch {
	case f.max < 0:
		return fmt.Sprintf("at least %d argument(s)", f.min)
	case f.min == f.max:
		return fmt.Sprintf("%d argument(s)", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

func (c *compiler) feelList() ast.Node {
	open := c.expectOp("[")
	var items []ast.Node
	if !c.isOp("]") {
		for {
			items = append(items, c.feelExpr())
			if c.isOp("..") {
				if len(items) > 1 {
					panic(c.errAt(c.peek().pos, "a range cannot follow list items; write [a, [b..c]]"))
				}
				return c.feelInterval(open, items[0])
			}
			if !c.isOp(",") {
				break
			}
			c.next()
		}
	}
	closeTok := c.expectOp("]")
	return at(&ast.ArrayNode{Nodes: items}, open.pos, closeTok.end)
}

// feelContext parses a context literal. Each entry may use the entries
// before it by name ({a: 1, b: a + 1}): every value is bound to an
// internal variable, in scope for the later entries, and the context is
// built from those variables.
func (c *compiler) feelContext() ast.Node {
	open := c.expectOp("{")
	type entry struct {
		key      ast.Node
		internal string
		value    ast.Node
	}
	var entries []entry
	seen := map[string]bool{}
	bound := len(c.bound)
	if !c.isOp("}") {
		for {
			k := c.next()
			if k.kind != tName && k.kind != tString {
				panic(c.errAt(k.pos, "expected a context key, found "+describe(k)))
			}
			key := k.text
			// Unquoted keys may have several words ({first name: "x"})
			// and the symbols + - * / . between them ({foo+bar: 1},
			// {a + b: 1}, DMN 1.5 additional name symbols): the key is
			// the text up to the colon, its white space collapsed.
			if k.kind == tName && !k.quoted {
				last := k
				for {
					n := c.peek()
					number := n.kind == tNumber && last.kind == tOp // {a + 1: x}
					if n.quoted || n.kind != tName && !number && (n.kind != tOp || !strings.Contains(nameSymbols, n.text)) {
						break
					}
					last = c.next()
				}
				key = strings.Join(strings.Fields(c.src[k.pos:last.end]), " ")
			}
			if seen[key] {
				panic(c.errAt(k.pos, fmt.Sprintf("duplicate context key %q", key)))
			}
			seen[key] = true
			c.expectOp(":")
			var internal string
			var v ast.Node
			if c.isWord("function") {
				// Bound first, so that the function can call itself.
				internal = c.bind(key)
				v = c.feelFunction(c.peek(), internal)
			} else {
				v = c.feelExpr()
				internal = c.bind(key)
			}
			entries = append(entries, entry{key: at(&ast.StringNode{Value: key}, k.pos, k.end), internal: internal, value: v})
			if !c.isOp(",") {
				break
			}
			c.next()
		}
	}
	closeTok := c.expectOp("}")
	c.bound = c.bound[:bound]
	pairs := make([]ast.Node, len(entries))
	for i, e := range entries {
		pairs[i] = at(&ast.PairNode{Key: e.key, Value: at(&ast.IdentifierNode{Value: e.internal}, open.pos, closeTok.end)}, open.pos, closeTok.end)
	}
	n := at(&ast.MapNode{Pairs: pairs}, open.pos, closeTok.end)
	for i := len(entries) - 1; i >= 0; i-- {
		n = at(&ast.VariableDeclaratorNode{Name: entries[i].internal, Value: entries[i].value, Expr: n}, open.pos, closeTok.end)
	}
	return n
}
