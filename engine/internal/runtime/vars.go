package runtime

import (
	"encoding/json"
	"fmt"
	"math"
)

// Normalize returns a deep copy of vars in the engine's value model, the
// JSON data model: numbers become float64, objects map[string]any, arrays
// []any. Every host then sees the same values (a wasm host receives JSON).
// Values JSON cannot carry (channels, functions, NaN) are an error naming
// the variable.
func Normalize(vars map[string]any) (map[string]any, error) {
	if vars == nil {
		return nil, nil
	}
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		n, err := normalizeValue(v)
		if err != nil {
			return nil, fmt.Errorf("%w: variable %q: %v", ErrBadVariables, k, err)
		}
		out[k] = n
	}
	return out, nil
}

func normalizeValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, string, bool:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%v is not a JSON number", v)
		}
		return v, nil
	case float32:
		return normalizeValue(float64(v))
	case int:
		return float64(v), nil
	case int8:
		return float64(v), nil
	case int16:
		return float64(v), nil
	case int32:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case uint:
		return float64(v), nil
	case uint8:
		return float64(v), nil
	case uint16:
		return float64(v), nil
	case uint32:
		return float64(v), nil
	case uint64:
		return float64(v), nil
	case json.Number:
		f, err := v.Float64()
		return f, err
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			n, err := normalizeValue(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = n
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			n, err := normalizeValue(e)
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
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
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
