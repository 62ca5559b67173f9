package decision

import (
	"fmt"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// dtype is a resolved DMN type: a FEEL built-in type, an item definition
// (a structure, a collection, a constrained base type) or a function
// type. A nil *dtype is Any.
type dtype struct {
	name string
	// feel is the FEEL type name when the type is a built-in one.
	feel       string
	base       *dtype // the type an item definition refers to
	collection bool
	elem       *dtype // a collection's element type
	comps      []component
	allowed    *expr.Tests
	function   bool
}

type component struct {
	name string
	typ  *dtype
}

// String names the type.
func (t *dtype) String() string {
	if t == nil {
		return "Any"
	}
	return t.name
}

// resolveType resolves a typeRef in model m: a FEEL type, one of m's item
// definitions, or an imported model's ("import.tType").
func (m *modelC) resolveType(ref string) (*dtype, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" || ref == "Any" {
		return nil, nil
	}
	if t, ok := m.types[ref]; ok {
		return t, nil
	}
	if _, known := expr.Conforms(nil, ref); known {
		t := &dtype{name: ref, feel: ref}
		m.types[ref] = t
		return t, nil
	}
	if imp, rest, ok := strings.Cut(ref, "."); ok {
		if im := m.imports[imp]; im != nil {
			return im.resolveType(rest)
		}
	}
	if _, rest, ok := strings.Cut(ref, ":"); ok {
		// A QName of DMN 1.1 (tns:tType).
		return m.resolveType(rest)
	}
	if it := m.itemDefs[ref]; it != nil {
		if m.resolving[ref] {
			return nil, fmt.Errorf("item definition %s refers to itself", ref)
		}
		m.resolving[ref] = true
		defer delete(m.resolving, ref)
		t, err := m.itemType(it)
		if err != nil {
			return nil, err
		}
		m.types[ref] = t
		return t, nil
	}
	switch ref {
	case "dateTime":
		return m.resolveType("date and time")
	case "dayTimeDuration":
		return m.resolveType("days and time duration")
	case "yearMonthDuration":
		return m.resolveType("years and months duration")
	case "integer", "double", "decimal":
		return m.resolveType("number")
	}
	return nil, fmt.Errorf("unknown type %q", ref)
}

// itemType builds the type of an item definition.
func (m *modelC) itemType(it *model.ItemDefinition) (*dtype, error) {
	t := &dtype{name: it.Name}
	if it.TypeRef != "" {
		b, err := m.resolveType(it.TypeRef)
		if err != nil {
			return nil, fmt.Errorf("item definition %s: %w", it.Name, err)
		}
		t.base = b
	}
	for _, c := range it.Components {
		ct, err := m.itemType(c)
		if err != nil {
			return nil, fmt.Errorf("item definition %s: %w", it.Name, err)
		}
		t.comps = append(t.comps, component{name: c.Name, typ: ct})
	}
	if it.Function != nil {
		t.function = true
	}
	if strings.TrimSpace(it.AllowedValues) != "" {
		tests, err := expr.CompileTests(it.AllowedValues, m.exprOpts())
		if err != nil {
			return nil, fmt.Errorf("item definition %s: allowed values: %w", it.Name, err)
		}
		t.allowed = tests
	}
	if it.IsCollection {
		elem := *t
		return &dtype{name: it.Name, collection: true, elem: &elem}, nil
	}
	return t, nil
}

// conforms reports whether v is a value of type t (null is a value of
// every type).
func conforms(v any, t *dtype) bool { return conformsAs(v, t, true) }

// conformsAs is conforms, checking allowed values or not: "instance of"
// asks for the type alone.
func conformsAs(v any, t *dtype, allowed bool) bool {
	if t == nil || v == nil {
		return true
	}
	if t.collection {
		l, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range l {
			if !conformsAs(e, t.elem, allowed) {
				return false
			}
		}
		return true
	}
	if t.feel != "" {
		ok, _ := expr.Conforms(v, t.feel)
		return ok
	}
	if t.function {
		return expr.IsFunction(v)
	}
	if t.base != nil && !conformsAs(v, t.base, allowed) {
		return false
	}
	if len(t.comps) > 0 {
		// A context conforms to a structure when it has every component
		// (of its type); it may have more entries.
		c, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, comp := range t.comps {
			e, has := c[comp.name]
			if !has || !conformsAs(e, comp.typ, allowed) {
				return false
			}
		}
	}
	if allowed && t.allowed != nil {
		ok, err := t.allowed.Match(v, map[string]any{})
		if err != nil || !ok {
			return false
		}
	}
	return true
}

// coerce converts v to type t as DMN 1.5 10.3.2.9.4 says: a conforming
// value is kept, a singleton list becomes its element and a value becomes
// a singleton list where that conforms; anything else is null, with an
// error saying why.
func coerce(v any, t *dtype) (any, error) {
	if t == nil || v == nil || conforms(v, t) {
		return v, nil
	}
	if l, ok := v.([]any); ok && !t.collection && len(l) == 1 && conforms(l[0], t) {
		return l[0], nil
	}
	if _, ok := v.([]any); !ok && t.collection && conforms(v, t.elem) {
		return []any{v}, nil
	}
	return nil, fmt.Errorf("value %s does not conform to type %s", show(v), t)
}

// show renders a value for an error message.
func show(v any) string {
	s := fmt.Sprintf("%v", expr.Normalize(v))
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	if _, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return s
}
