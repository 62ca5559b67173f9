package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/expr-lang/expr/ast"
)

// feelType is a FEEL type, as written after "instance of": a built-in
// type name, or list<T>, range<T>, context<name: T, ...> or
// function<T, ...> -> T.
type feelType struct {
	name   string // "number", "list", "context", ...
	elem   *feelType
	fields []feelField // a context's entries, a function's parameters (no names)
	result *feelType   // a function's result
	// pred decides a named type of Options.Types (a DMN item definition).
	pred func(any) bool
}

type feelField struct {
	name string
	typ  *feelType
}

// feelTypeNames are the built-in type names, the multi-word ones first so
// that "date and time" is not read as "date" and a conjunction.
var feelTypeNames = [][]string{
	{"days", "and", "time", "duration"}, {"years", "and", "months", "duration"}, {"date", "and", "time"},
	{"number"}, {"string"}, {"boolean"}, {"date"}, {"time"}, {"Any"}, {"Null"},
}

// parseType parses a type at the current token.
func (c *compiler) parseType() *feelType {
	c.enter()
	defer c.leave()
	t := c.peek()
	if t.kind != tName {
		panic(c.errAt(t.pos, "expected a type, found "+describe(t)))
	}
	switch t.text {
	case "list", "range":
		if c.peekAt(1).kind == tOp && c.peekAt(1).text == "<" {
			c.next()
			c.next()
			elem := c.parseType()
			c.expectOp(">")
			return &feelType{name: t.text, elem: elem}
		}
	case "context":
		if c.peekAt(1).kind == tOp && c.peekAt(1).text == "<" {
			c.next()
			c.next()
			ft := &feelType{name: "context"}
			for !c.isOp(">") {
				k := c.next()
				if k.kind != tName && k.kind != tString {
					panic(c.errAt(k.pos, "expected an entry name in the context type, found "+describe(k)))
				}
				c.expectOp(":")
				ft.fields = append(ft.fields, feelField{name: k.text, typ: c.parseType()})
				if !c.isOp(",") {
					break
				}
				c.next()
			}
			c.expectOp(">")
			return ft
		}
	case "function":
		if c.peekAt(1).kind == tOp && c.peekAt(1).text == "<" {
			c.next()
			c.next()
			ft := &feelType{name: "function"}
			for !c.isOp(">") {
				ft.fields = append(ft.fields, feelField{typ: c.parseType()})
				if !c.isOp(",") {
					break
				}
				c.next()
			}
			c.expectOp(">")
			c.expectOp("-")
			c.expectOp(">")
			ft.result = c.parseType()
			return ft
		}
	}
	for _, words := range feelTypeNames {
		ok := true
		for k, w := range words {
			if tk := c.peekAt(k); tk.kind != tName || tk.quoted || tk.text != w {
				ok = false
				break
			}
		}
		if ok {
			for range words {
				c.next()
			}
			return &feelType{name: strings.Join(words, " ")}
		}
	}
	if ft := c.namedType(t.text); ft != nil {
		c.next()
		return ft
	}
	panic(c.errAt(t.pos, fmt.Sprintf("unknown type %q (item definitions are not supported)", t.text)))
}

// feelInstanceOf compiles "x instance of T".
func (c *compiler) feelInstanceOf(x ast.Node, kw token) ast.Node {
	c.expectWord("of")
	typ := c.parseType()
	return c.call(kw.pos, kw.end, "f.instance", x, at(&ast.ConstantNode{Value: typ}, kw.pos, kw.end))
}

// has reports whether v is an instance of the type. Null is an instance
// of Null only (DMN 1.5 10.3.2.9.2), but conforms to any type as an
// element or entry; list and context types look at every element and
// every named entry (a context may have more entries).
func (ft *feelType) has(v any) bool {
	if v == nil {
		return ft.name == "Null"
	}
	if ft.pred != nil {
		return ft.pred(v)
	}
	switch ft.name {
	case "Any":
		return true
	case "number":
		_, ok := v.(float64)
		if !ok {
			_, isBool := v.(bool)
			_, ok = toFloat(v)
			ok = ok && !isBool
		}
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "date":
		_, ok := v.(date)
		return ok
	case "time":
		_, ok := v.(timeOfDay)
		return ok
	case "date and time":
		switch v.(type) {
		case time.Time, localDateTime:
			return true
		}
		return false
	case "days and time duration":
		_, ok := v.(time.Duration)
		return ok
	case "years and months duration":
		_, ok := v.(ymDuration)
		return ok
	case "list":
		l, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range l {
			if e != nil && !ft.elem.has(e) {
				return false
			}
		}
		return true
	case "context":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range ft.fields {
			e, ok := m[f.name]
			if !ok || e != nil && !f.typ.has(e) {
				return false
			}
		}
		return true
	case "range":
		r, ok := v.(feelRange)
		return ok && (r.lo == nil || ft.elem.has(r.lo)) && (r.hi == nil || ft.elem.has(r.hi))
	}
	if f, ok := v.(*feelFunc); ok && ft.name == "function" {
		// The parameters and result of a function value have no declared
		// types: its arity is what can be checked.
		return len(f.def.params) == len(ft.fields)
	}
	return false
}
