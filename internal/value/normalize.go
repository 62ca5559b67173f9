package value

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/flowtrack/flowtrack/api"
)

// MaxDepth bounds how deeply a variable's value may nest lists and
// objects (contexts): a list of lists is two levels. It is
// api.MaxVariableDepth, which says why 64. Every value that
// enters an instance is checked against it (variables given with a start,
// a job result, a BPMN error, a message or a signal, and the values
// expressions yield in mappings), so that every walk of a value (copying,
// JSON encoding, expression functions, a host's JSON decoder) stays far
// below the smallest stack of any host. A value that contains itself is
// infinitely deep, so it is rejected too.
const MaxDepth = api.MaxVariableDepth

// Normalize returns a deep copy of vars in the engine's value model, the
// JSON data model: numbers become float64 (-0 as 0), or json.Number with
// their exact text when no float64 holds them (Number: 2^60 + 1, 0.1
// with 20 more digits), objects map[string]any, arrays []any. Every host then sees the
// same values (a wasm host receives JSON).
// Values JSON cannot carry (channels, functions, NaN) and values nested
// deeper than MaxDepth are an error naming the variable.
func Normalize(vars map[string]any) (map[string]any, error) {
	if vars == nil {
		return nil, nil
	}
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		n, err := normalizeValue(v, 1)
		if err != nil {
			return nil, fmt.Errorf("%w: variable %q: %v", api.ErrBadVariables, k, err)
		}
		out[k] = n
	}
	return out, nil
}

// NormalizeValue normalizes one value v, found depth levels deep (1 for a
// variable's value); errors are Normalize's without the variable's name.
func NormalizeValue(v any, depth int) (any, error) { return normalizeValue(v, depth) }

// normalizeValue normalizes v, found depth levels deep.
// Only lists and objects count as levels.
func normalizeValue(v any, depth int) (any, error) {
	switch v.(type) {
	case map[string]any, []any:
		if depth > MaxDepth {
			return nil, ErrTooDeep
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
		n, ok := Number(v)
		if !ok {
			return nil, fmt.Errorf("%v is not a JSON number in decimal128's range", v)
		}
		return n, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			n, err := normalizeValue(e, depth+1)
			if errors.Is(err, ErrTooDeep) {
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
			if errors.Is(err, ErrTooDeep) {
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

// ErrTooDeep is why a value nested deeper than MaxDepth is refused.
var ErrTooDeep = api.ErrTooDeep
