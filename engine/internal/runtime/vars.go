package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/internal/value"
)

// MaxValueDepth bounds how deeply a variable's value may nest lists and
// objects: api.MaxVariableDepth, which says why 64 (value.MaxDepth).
const MaxValueDepth = value.MaxDepth

// Normalize returns a deep copy of vars in the engine's value model
// (value.Normalize); errors wrap ErrBadVariables and name the variable.
func Normalize(vars map[string]any) (map[string]any, error) { return value.Normalize(vars) }

// normalizeValue normalizes one value found depth levels deep
// (value.NormalizeValue).
func normalizeValue(v any, depth int) (any, error) { return value.NormalizeValue(v, depth) }

// errTooDeep is why a value nested deeper than MaxValueDepth is refused.
var errTooDeep = value.ErrTooDeep

// checkValue reports why v, a value an expression yielded, may not become
// a variable: it nests deeper than MaxValueDepth (a value that contains
// itself does), or, counted as a tree (a value shared in several places
// counts in each, as it will once copied or encoded), it is larger than
// maxBytes: a string its length, a list entry 16 bytes, an object entry
// 16 bytes and its key, any other value 8. It walks with its own stack
// and stops at the first limit, so its cost is bounded by them.
func checkValue(v any, maxBytes int64) error {
	type entry struct {
		v     any
		depth int
	}
	var size int64
	stack := []entry{{v, 1}}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := e.v.(type) {
		case string:
			size += int64(len(x))
		case []any:
			if e.depth > MaxValueDepth {
				return errTooDeep
			}
			size += 16 * int64(len(x))
			for _, c := range x {
				stack = append(stack, entry{c, e.depth + 1})
			}
		case map[string]any:
			if e.depth > MaxValueDepth {
				return errTooDeep
			}
			for k, c := range x {
				size += 16 + int64(len(k))
				stack = append(stack, entry{c, e.depth + 1})
			}
		default:
			size += 8
		}
		if size > maxBytes {
			return fmt.Errorf("larger than the %d bytes an expression may allocate", maxBytes)
		}
	}
	return nil
}

// cloneVars deep-copies a normalized variable map so that callers can never
// reach engine-owned values.
func cloneVars(vars map[string]any) map[string]any {
	if vars == nil {
		return nil
	}
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneVars(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}
