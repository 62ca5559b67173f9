package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
)

// MaxValueDepth bounds how deeply a variable's value may nest lists and
// objects (contexts): a list of lists is two levels. It is
// engine.MaxVariableDepth, which says why 64. Every value that
// enters an instance is checked against it (variables given with a start,
// a job result, a BPMN error, a message or a signal, and the values
// expressions yield in mappings), so that every walk of a value (copying,
// JSON encoding, expression functions, a host's JSON decoder) stays far
// below the smallest stack of any host. A value that contains itself is
// infinitely deep, so it is rejected too.
const MaxValueDepth = 64

// Normalize returns a deep copy of vars in the engine's value model, the
// JSON data model: numbers become float64 (-0 as 0), or json.Number with
// their exact text when no float64 holds them (expr.Number: 2^60 + 1, 0.1
// with 20 more digits), objects map[string]any, arrays []any. Every host then sees the
// same values (a wasm host receives JSON).
// Values JSON cannot carry (channels, functions, NaN) and values nested
// deeper than MaxValueDepth are an error naming the variable.
func Normalize(vars map[string]any) (map[string]any, error) {
	if vars == nil {
		return nil, nil
	}
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		n, err := normalizeValue(v, 1)
		if err != nil {
			return nil, fmt.Errorf("%w: variable %q: %v", ErrBadVariables, k, err)
		}
		out[k] = n
	}
	return out, nil
}

// normalizeValue normalizes v, found depth levels deep.
// Only lists and objects count as levels.
func normalizeValue(v any, depth int) (any, error) {
	switch v.(type) {
	case map[string]any, []any:
		if depth > MaxValueDepth {
			return nil, errTooDeep
		}
	}
	switch v := v.(type) {
	case nil, string, bool:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%v is not a JSON number", v)
		}
		if v == 0 {
			// -0 as 0: FEEL's decimals have no negative zero, a document's
			// "-0" is read as 0, and JavaScript writes -0 as 0.
			return 0.0, nil
		}
		return v, nil
	case float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		n, ok := expr.Number(v)
		if !ok {
			return nil, fmt.Errorf("%v is not a JSON number in decimal128's range", v)
		}
		return n, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			n, err := normalizeValue(e, depth+1)
			if errors.Is(err, errTooDeep) {
				return nil, err // a path a hundred levels long would say nothing more
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = n
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			n, err := normalizeValue(e, depth+1)
			if errors.Is(err, errTooDeep) {
				return nil, err
			}
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = n
		}
		return out, nil
	}
	// Anything else (structs, typed slices and maps) goes through its JSON
	// form, exactly as a wasm host would send it.
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a *big.Int or a decimal type keeps its digits
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return normalizeValue(out, depth)
}

// errTooDeep is why a value nested deeper than MaxValueDepth is refused.
var errTooDeep = fmt.Errorf("nested deeper than %d levels (or contains itself)", MaxValueDepth)

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
