package runtime

import (
	"fmt"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// mappingSpec is a compiled input or output mapping (zeebe:ioMapping,
// camunda:inputOutput).
type mappingSpec struct {
	source *expr.Program
	// target is the variable to set, as a path ("order.total" sets the
	// total field of the order variable).
	target []string
	// maxBytes bounds the size of the variable the mapping sets: the
	// evaluation byte budget of the engine.
	maxBytes int64
}

func compileMappings(ms []model.Mapping, opts expr.Options) ([]mappingSpec, error) {
	out := make([]mappingSpec, 0, len(ms))
	for _, m := range ms {
		if m.Target == "" {
			return nil, fmt.Errorf("mapping from %q has no target", m.Source.Text)
		}
		target := strings.Split(m.Target, ".")
		if len(target) > MaxValueDepth {
			return nil, fmt.Errorf("mapping to %q: the target path is deeper than %d levels", m.Target, MaxValueDepth)
		}
		prog, err := expr.Compile(m.Source, expr.Static, opts)
		if err != nil {
			return nil, fmt.Errorf("mapping to %q: %w", m.Target, err)
		}
		out = append(out, mappingSpec{source: prog, target: target, maxBytes: prog.MaxBytes()})
	}
	return out, nil
}

// applyMappings evaluates each mapping over scope (mappings see the
// targets of the mappings before them, as in Zeebe) and returns the
// targets it set. This is where every value an expression yields becomes
// a variable, so each variable set is checked here (see checkValue): a
// mapping cannot build a value too deep or too large to copy, encode or
// walk, one mapping at a time.
func applyMappings(ms []mappingSpec, scope map[string]any) (map[string]any, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	view := overlay(scope, nil)
	out := make(map[string]any, len(ms))
	for _, m := range ms {
		v, err := m.source.Eval(view)
		if err != nil {
			return nil, fmt.Errorf("mapping to %s: %w", strings.Join(m.target, "."), err)
		}
		setPath(out, view, m.target, v)
		if err := checkValue(out[m.target[0]], m.maxBytes); err != nil {
			return nil, fmt.Errorf("mapping to %s: %q: variable %s %w", strings.Join(m.target, "."), m.source.Text(), m.target[0], err)
		}
		view[m.target[0]] = out[m.target[0]]
	}
	return out, nil
}

// setPath sets out[path] = v, copying the maps along the path from base so
// that no published value is ever changed in place.
func setPath(out, base map[string]any, path []string, v any) {
	if len(path) == 1 {
		out[path[0]] = v
		return
	}
	var inner map[string]any
	if m, ok := out[path[0]].(map[string]any); ok {
		inner = m
	} else {
		inner = map[string]any{}
		if m, ok := base[path[0]].(map[string]any); ok {
			for k, x := range m {
				inner[k] = x
			}
		}
	}
	setPath(inner, inner, path[1:], v)
	out[path[0]] = inner
}

// overlay returns base with top laid over it, as a new map.
func overlay(base, top map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(top))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range top {
		out[k] = v
	}
	return out
}
