package expr

import (
	"fmt"

	"github.com/expr-lang/expr/ast"
)

// JUEL parser: recursive descent over the Unified Expression Language
// grammar subset, lowest precedence first:
//
//	expression = or [ "?" expression ":" expression ]
//	or         = and { ("||" | "or") and }
//	and        = equality { ("&&" | "and") equality }
//	equality   = relational { ("==" | "!=" | "eq" | "ne") relational }
//	relational = additive { ("<" | ">" | "<=" | ">=" | "lt" | "gt" | "le" | "ge") additive }
//	additive   = multiplicative { ("+" | "-") multiplicative }
//	multiplicative = unary { ("*" | "/" | "div" | "%" | "mod") unary }
//	unary      = ("-" | "!" | "not" | "empty") unary | postfix
//	postfix    = primary { "." name [ "(" arguments ")" ] | "[" expression "]" }
//	primary    = literal | "(" expression ")" | name

var juelKeywords = map[string]bool{
	"and": true, "or": true, "not": true, "eq": true, "ne": true, "lt": true, "gt": true,
	"le": true, "ge": true, "true": true, "false": true, "null": true, "empty": true,
	"div": true, "mod": true, "instanceof": true,
}

func (c *compiler) juelTop() ast.Node {
	n := c.juelExpr()
	if t := c.peek(); t.kind != tEOF {
		if t.kind == tOp && t.text == "=" {
			panic(c.errAt(t.pos, `JUEL compares with "==", not "="`))
		}
		panic(c.unexpected(t))
	}
	return n
}

func (c *compiler) juelExpr() ast.Node {
	c.enter()
	defer c.leave()
	n := c.juelOr()
	if c.isOp("?") {
		t := c.next()
		a := c.juelExpr()
		c.expectOp(":")
		b := c.juelExpr()
		return at(&ast.ConditionalNode{Cond: c.call(t.pos, t.end, "j.bool", n), Exp1: a, Exp2: b}, t.pos, t.end)
	}
	return n
}

// juelOr and juelAnd short-circuit as EL does, through expr-lang's
// conditional jumps: the right side is not evaluated (and cannot fail) when
// the left side decides.
func (c *compiler) juelOr() ast.Node {
	n := c.juelAnd()
	for c.isOp("||") || c.isWord("or") {
		t := c.next()
		r := c.juelAnd()
		n = at(&ast.ConditionalNode{
			Cond: c.call(t.pos, t.end, "j.bool", n),
			Exp1: at(&ast.BoolNode{Value: true}, t.pos, t.end),
			Exp2: c.call(t.pos, t.end, "j.bool", r),
		}, t.pos, t.end)
	}
	return n
}

func (c *compiler) juelAnd() ast.Node {
	n := c.juelEquality()
	for c.isOp("&&") || c.isWord("and") {
		t := c.next()
		r := c.juelEquality()
		n = at(&ast.ConditionalNode{
			Cond: c.call(t.pos, t.end, "j.bool", n),
			Exp1: c.call(t.pos, t.end, "j.bool", r),
			Exp2: at(&ast.BoolNode{Value: false}, t.pos, t.end),
		}, t.pos, t.end)
	}
	return n
}

var juelBinary = map[string]string{
	"==": "j.eq", "eq": "j.eq", "!=": "j.ne", "ne": "j.ne",
	"<": "j.lt", "lt": "j.lt", "<=": "j.le", "le": "j.le",
	">": "j.gt", "gt": "j.gt", ">=": "j.ge", "ge": "j.ge",
	"+": "j.add", "-": "j.sub", "*": "j.mul", "/": "j.div", "div": "j.div", "%": "j.mod", "mod": "j.mod",
}

// juelBinaryLevel parses one left-associative precedence level whose
// operators are ops (symbols or keywords).
func (c *compiler) juelBinaryLevel(next func() ast.Node, ops ...string) ast.Node {
	n := next()
	for {
		t := c.peek()
		matched := false
		for _, op := range ops {
			if (t.kind == tOp || t.kind == tName && !t.quoted) && t.text == op {
				matched = true
				break
			}
		}
		if !matched {
			return n
		}
		c.next()
		n = c.call(t.pos, t.end, juelBinary[t.text], n, next())
	}
}

func (c *compiler) juelEquality() ast.Node {
	return c.juelBinaryLevel(c.juelRelational, "==", "!=", "eq", "ne")
}

func (c *compiler) juelRelational() ast.Node {
	return c.juelBinaryLevel(c.juelAdditive, "<", ">", "<=", ">=", "lt", "gt", "le", "ge")
}

func (c *compiler) juelAdditive() ast.Node {
	return c.juelBinaryLevel(c.juelMultiplicative, "+", "-")
}

func (c *compiler) juelMultiplicative() ast.Node {
	return c.juelBinaryLevel(c.juelUnary, "*", "/", "div", "%", "mod")
}

func (c *compiler) juelUnary() ast.Node {
	t := c.peek()
	if t.kind == tOp && (t.text == "-" || t.text == "!") || c.isWord("not") || c.isWord("empty") {
		c.enter()
		defer c.leave()
	}
	switch {
	case t.kind == tOp && t.text == "-":
		c.next()
		return c.call(t.pos, t.end, "j.neg", c.juelUnary())
	case t.kind == tOp && t.text == "!" || c.isWord("not"):
		c.next()
		return c.call(t.pos, t.end, "j.not", c.juelUnary())
	case c.isWord("empty"):
		c.next()
		return c.call(t.pos, t.end, "j.empty", c.juelUnary())
	}
	return c.juelPostfix()
}

func (c *compiler) juelPostfix() ast.Node {
	n := c.juelPrimary()
	for {
		t := c.peek()
		switch {
		case t.kind == tOp && t.text == ".":
			c.next()
			name := c.next()
			if name.kind != tName {
				panic(c.errAt(name.pos, "expected a property or method name after ., found "+describe(name)))
			}
			if !c.isOp("(") {
				n = c.call(t.pos, name.end, "j.get", n, at(&ast.StringNode{Value: name.text}, name.pos, name.end))
				continue
			}
			m, ok := juelMethods[name.text]
			if !ok {
				panic(c.errAt(name.pos, fmt.Sprintf("unknown method %q", name.text)))
			}
			args := append([]ast.Node{n}, c.juelArgs()...)
			if len(args)-1 < m.min || len(args)-1 > m.max {
				panic(c.errAt(name.pos, fmt.Sprintf("%s() takes %s, got %d", name.text, arity(m), len(args)-1)))
			}
			n = c.call(name.pos, name.end, "m."+name.text, args...)
		case t.kind == tOp && t.text == "[":
			c.next()
			k := c.juelExpr()
			c.expectOp("]")
			n = c.call(t.pos, t.end, "j.get", n, k)
		default:
			return n
		}
	}
}

func (c *compiler) juelArgs() []ast.Node {
	c.expectOp("(")
	var args []ast.Node
	if !c.isOp(")") {
		for {
			args = append(args, c.juelExpr())
			if !c.isOp(",") {
				break
			}
			c.next()
		}
	}
	c.expectOp(")")
	return args
}

func (c *compiler) juelPrimary() ast.Node {
	t := c.next()
	switch t.kind {
	case tNumber:
		return c.number(t)
	case tString:
		return at(&ast.StringNode{Value: t.text}, t.pos, t.end)
	case tName:
		switch t.text {
		case "true", "false":
			return at(&ast.BoolNode{Value: t.text == "true"}, t.pos, t.end)
		case "null":
			return nullNode(t.pos, t.end)
		}
		if juelKeywords[t.text] {
			panic(c.unexpected(t))
		}
		if c.isOp("(") {
			if t.text == "now" {
				c.juelArgsNone(t)
				return c.call(t.pos, t.end, "now")
			}
			panic(c.errAt(t.pos, fmt.Sprintf("unknown function %q", t.text)))
		}
		return c.call(t.pos, t.end, "j.var",
			at(&ast.IdentifierNode{Value: "$env"}, t.pos, t.end),
			at(&ast.StringNode{Value: t.text}, t.pos, t.end))
	case tOp:
		if t.text == "(" {
			n := c.juelExpr()
			c.expectOp(")")
			return n
		}
	}
	panic(c.unexpected(t))
}

func (c *compiler) juelArgsNone(fn token) {
	if args := c.juelArgs(); len(args) != 0 {
		panic(c.errAt(fn.pos, fn.text+"() takes no arguments"))
	}
}
