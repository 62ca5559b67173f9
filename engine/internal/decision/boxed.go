package decision

import (
	"fmt"
	"maps"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// evalFn evaluates a compiled boxed expression in a scope (the names it
// may read). It never modifies scope.
type evalFn func(r *run, scope map[string]any) (any, error)

// compileBoxed compiles a boxed expression, coercing its result to its
// declared type.
func (m *modelC) compileBoxed(b model.BoxedExpression) (evalFn, error) {
	f, err := m.compileBoxedBare(b)
	if err != nil {
		return nil, err
	}
	_, typeRef := b.Where()
	if typeRef == "" {
		return f, nil
	}
	t, err := m.resolveType(typeRef)
	if err != nil || t == nil {
		return f, err
	}
	return func(r *run, scope map[string]any) (any, error) {
		v, err := f(r, scope)
		if err != nil {
			return nil, err
		}
		return coerce(v, t)
	}, nil
}

func (m *modelC) compileBoxedBare(b model.BoxedExpression) (evalFn, error) {
	switch x := b.(type) {
	case nil:
		return func(*run, map[string]any) (any, error) { return nil, nil }, nil
	case *model.LiteralExpression:
		return m.compileLiteral(x)
	case *model.DecisionTable:
		return m.compileTable(x)
	case *model.ContextExpression:
		return m.compileContext(x)
	case *model.Invocation:
		return m.compileInvocation(x)
	case *model.ListExpression:
		items := make([]evalFn, len(x.Items))
		for i, it := range x.Items {
			f, err := m.compileBoxed(it)
			if err != nil {
				return nil, err
			}
			items[i] = f
		}
		return func(r *run, scope map[string]any) (any, error) {
			out := make([]any, len(items))
			for i, f := range items {
				v, err := f(r, scope)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}, nil
	case *model.Relation:
		cols := make([]*dtype, len(x.Columns))
		for i, c := range x.Columns {
			t, err := m.resolveType(c.TypeRef)
			if err != nil {
				return nil, fmt.Errorf("relation column %s: %w", c.Name, err)
			}
			cols[i] = t
		}
		rows := make([][]evalFn, len(x.Rows))
		for i, row := range x.Rows {
			for _, cell := range row {
				f, err := m.compileBoxed(cell)
				if err != nil {
					return nil, err
				}
				rows[i] = append(rows[i], f)
			}
		}
		return func(r *run, scope map[string]any) (any, error) {
			out := make([]any, len(rows))
			for i, row := range rows {
				c := make(map[string]any, len(row))
				for j, f := range row {
					v, err := f(r, scope)
					if err != nil {
						return nil, err
					}
					if v, err = coerce(v, cols[j]); err != nil {
						return nil, fmt.Errorf("relation column %s: %w", x.Columns[j].Name, err)
					}
					c[x.Columns[j].Name] = v
				}
				out[i] = c
			}
			return out, nil
		}, nil
	case *model.FunctionDefinition:
		fc, err := m.compileFunction(x)
		if err != nil {
			return nil, err
		}
		return func(r *run, scope map[string]any) (any, error) {
			captured := maps.Clone(scope)
			return &expr.Native{Params: fc.params(), Fn: func(args []any) (any, error) {
				return fc.call(r, captured, args)
			}}, nil
		}, nil
	case *model.Conditional:
		cond, err := m.compileBoxed(x.If)
		if err != nil {
			return nil, err
		}
		then, err := m.compileBoxed(x.Then)
		if err != nil {
			return nil, err
		}
		els, err := m.compileBoxed(x.Else)
		if err != nil {
			return nil, err
		}
		return func(r *run, scope map[string]any) (any, error) {
			c, err := cond(r, scope)
			if err != nil {
				return nil, err
			}
			if c == true {
				return then(r, scope)
			}
			return els(r, scope)
		}, nil
	case *model.FilterExpression:
		in, err := m.compileBoxed(x.In)
		if err != nil {
			return nil, err
		}
		match, err := m.compileBoxed(x.Match)
		if err != nil {
			return nil, err
		}
		return func(r *run, scope map[string]any) (any, error) {
			l, err := in(r, scope)
			if err != nil {
				return nil, err
			}
			items, ok := l.([]any)
			if !ok {
				if l == nil {
					return nil, nil
				}
				items = []any{l}
			}
			out := []any{}
			for _, it := range items {
				if err := r.step(); err != nil {
					return nil, err
				}
				s := maps.Clone(scope)
				if c, ok := it.(map[string]any); ok {
					maps.Copy(s, c)
				}
				s["item"] = it
				keep, err := match(r, s)
				if err != nil {
					return nil, err
				}
				if _, isBool := keep.(bool); !isBool && keep != nil {
					return nil, fmt.Errorf("filter: the match of %s is %s, no boolean", show(it), show(keep))
				}
				if keep == true {
					out = append(out, it)
				}
			}
			return out, nil
		}, nil
	case *model.Iterator:
		in, err := m.compileBoxed(x.In)
		if err != nil {
			return nil, err
		}
		body, err := m.compileBoxed(x.Body)
		if err != nil {
			return nil, err
		}
		return func(r *run, scope map[string]any) (any, error) {
			l, err := in(r, scope)
			if err != nil {
				return nil, err
			}
			items, ok := l.([]any)
			if !ok {
				if l == nil {
					return nil, nil
				}
				items = []any{l}
			}
			out := []any{}
			for _, it := range items {
				if err := r.step(); err != nil {
					return nil, err
				}
				s := maps.Clone(scope)
				s[x.Variable] = it
				v, err := body(r, s)
				if err != nil {
					return nil, err
				}
				if _, isBool := v.(bool); x.Kind != "for" && !isBool {
					return nil, fmt.Errorf("%s: satisfies is %s for %s, no boolean", x.Kind, show(v), show(it))
				}
				switch x.Kind {
				case "some":
					if v == true {
						return true, nil
					}
				case "every":
					if v != true {
						return false, nil
					}
				default:
					out = append(out, v)
				}
			}
			switch x.Kind {
			case "some":
				return false, nil
			case "every":
				return true, nil
			}
			return out, nil
		}, nil
	}
	return nil, fmt.Errorf("unsupported boxed expression %T", b)
}

// compileLiteral compiles FEEL text.
func (m *modelC) compileLiteral(l *model.LiteralExpression) (evalFn, error) {
	if l.Language != "" && !isFEEL(l.Language) {
		return nil, fmt.Errorf("expression language %q: only FEEL is supported", l.Language)
	}
	p, err := expr.Compile(model.Expression{Text: l.Text, Language: "FEEL"}, expr.Value, m.exprOpts())
	if err != nil {
		if isBlank(l.Text) {
			return func(*run, map[string]any) (any, error) { return nil, nil }, nil
		}
		return nil, err
	}
	return func(_ *run, scope map[string]any) (any, error) {
		return p.EvalFEEL(scope)
	}, nil
}

func isBlank(s string) bool {
	for _, c := range s {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

func isFEEL(lang string) bool {
	l := []rune(lang)
	_ = l
	switch lang {
	case "FEEL", "feel", "https://www.omg.org/spec/DMN/20230324/FEEL/", "http://www.omg.org/spec/FEEL/20140401",
		"https://www.omg.org/spec/DMN/20191111/FEEL/", "http://www.omg.org/spec/DMN/20180521/FEEL/",
		"https://www.omg.org/spec/DMN/20211108/FEEL/":
		return true
	}
	return false
}

// compileContext compiles a boxed context: each entry sees the ones
// before it.
func (m *modelC) compileContext(c *model.ContextExpression) (evalFn, error) {
	type entryC struct {
		name string
		typ  *dtype
		f    evalFn
	}
	var entries []entryC
	result := -1
	for i, e := range c.Entries {
		f, err := m.compileBoxed(e.Value)
		if err != nil {
			return nil, err
		}
		ec := entryC{f: f}
		if e.Variable != nil {
			ec.name = e.Variable.Name
			t, err := m.resolveType(e.Variable.TypeRef)
			if err != nil {
				return nil, fmt.Errorf("context entry %s: %w", ec.name, err)
			}
			ec.typ = t
		} else {
			result = i
		}
		entries = append(entries, ec)
	}
	return func(r *run, scope map[string]any) (any, error) {
		s := maps.Clone(scope)
		out := map[string]any{}
		for i, e := range entries {
			v, err := e.f(r, s)
			if err != nil {
				return nil, err
			}
			if i == result {
				return v, nil
			}
			if v, err = coerce(v, e.typ); err != nil {
				return nil, fmt.Errorf("context entry %s: %w", e.name, err)
			}
			s[e.name] = v
			out[e.name] = v
		}
		return out, nil
	}, nil
}

// compileInvocation compiles a call of a function by parameter names.
func (m *modelC) compileInvocation(inv *model.Invocation) (evalFn, error) {
	callee, err := m.compileBoxed(inv.Callee)
	if err != nil {
		return nil, err
	}
	type bindingC struct {
		name string
		f    evalFn
	}
	var binds []bindingC
	for _, b := range inv.Bindings {
		f, err := m.compileBoxed(b.Value)
		if err != nil {
			return nil, fmt.Errorf("binding %s: %w", b.Param.Name, err)
		}
		binds = append(binds, bindingC{name: b.Param.Name, f: f})
	}
	return func(r *run, scope map[string]any) (any, error) {
		fn, err := callee(r, scope)
		if err != nil {
			return nil, err
		}
		params, ok := expr.FunctionParams(fn)
		if !ok {
			return nil, fmt.Errorf("invocation: %s is no function", show(fn))
		}
		args := make([]any, len(params))
		for _, b := range binds {
			i := -1
			for j, p := range params {
				if p == b.name {
					i = j
				}
			}
			if i < 0 {
				return nil, fmt.Errorf("invocation: the function has no parameter %q", b.name)
			}
			v, err := b.f(r, scope)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
		return expr.Call(fn, args)
	}, nil
}

// funcC is a compiled FEEL function definition (a BKM's logic or a
// boxed function).
type funcC struct {
	def   *model.FunctionDefinition
	types []*dtype
	body  evalFn
	// external is set for Java and PMML functions, which are not
	// supported: calling one fails.
	external string
}

func (f *funcC) params() []string {
	ps := make([]string, len(f.def.Params))
	for i, p := range f.def.Params {
		ps[i] = p.Name
	}
	return ps
}

func (m *modelC) compileFunction(def *model.FunctionDefinition) (*funcC, error) {
	fc := &funcC{def: def}
	for _, p := range def.Params {
		t, err := m.resolveType(p.TypeRef)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		fc.types = append(fc.types, t)
	}
	if def.Kind != "" && def.Kind != "FEEL" {
		fc.external = def.Kind
		return fc, nil
	}
	body, err := m.compileBoxed(def.Body)
	if err != nil {
		return nil, err
	}
	fc.body = body
	return fc, nil
}

// call runs the function's body in scope with the arguments bound to the
// parameters (coerced to their types; an argument that does not conform
// makes the result null).
func (f *funcC) call(r *run, scope map[string]any, args []any) (any, error) {
	if f.external != "" {
		return nil, fmt.Errorf("%s functions are not supported", f.external)
	}
	if err := r.enter("function"); err != nil {
		return nil, err
	}
	defer r.leave()
	s := maps.Clone(scope)
	for i, p := range f.def.Params {
		v, err := coerce(args[i], f.types[i])
		if err != nil {
			return nil, nil
		}
		s[p.Name] = v
	}
	return f.body(r, s)
}
