package value

import (
	"encoding/json"
	"fmt"

	"github.com/flowtrack/flowtrack/api"
)

// NormalizeChecked checks the depth of every variable in vars, then returns
// Normalize's copy of them: engine.NormalizeVariables, what every call
// that takes variables stores. The depth is checked first, with a
// walk that stops at the limit, because normalizeValue recurses without one
// (a map that contains itself would exhaust the stack); values Normalize
// converts through their JSON form (structs, typed maps) are checked again
// in that form.
func NormalizeChecked(vars map[string]any) (map[string]any, error) {
	converted := false
	if err := checkVariables(vars, &converted); err != nil {
		return nil, err
	}
	norm, err := Normalize(vars)
	if err != nil || !converted {
		return norm, err
	}
	for k, v := range norm {
		if err := checkDepth(k, v, nil); err != nil {
			return nil, err
		}
	}
	return norm, nil
}

func checkVariables(vars map[string]any, converted *bool) error {
	for k, v := range vars {
		if err := checkDepth(k, v, converted); err != nil {
			return err
		}
	}
	return nil
}

// checkDepth returns an api.ErrBadVariables error naming variable name if v
// nests deeper than MaxVariableDepth. It sets *converted when v holds a
// container other than map[string]any and []any, which Normalize converts
// through JSON.
func checkDepth(name string, v any, converted *bool) error {
	if !withinDepth(v, MaxDepth, converted) {
		return fmt.Errorf("%w: variable %q nests deeper than %d levels of arrays and objects (engine.MaxVariableDepth)",
			api.ErrBadVariables, name, MaxDepth)
	}
	return nil
}

// withinDepth reports whether v nests at most left levels; its recursion
// is bounded by left.
func withinDepth(v any, left int, converted *bool) bool {
	switch v := v.(type) {
	case nil, string, bool, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, json.Number:
		return true
	case map[string]any:
		if left == 0 {
			return false
		}
		for _, e := range v {
			if !withinDepth(e, left-1, converted) {
				return false
			}
		}
		return true
	case []any:
		if left == 0 {
			return false
		}
		for _, e := range v {
			if !withinDepth(e, left-1, converted) {
				return false
			}
		}
		return true
	}
	if converted != nil {
		*converted = true
	}
	return true
}

// Check returns an error wrapping api.ErrBadVariables, naming the
// variable, if vars are not JSON values nesting at most MaxDepth levels:
// engine.CheckVariables, which the Go host applies before it encodes a
// request so that both report the same error.
func Check(vars map[string]any) error {
	_, err := NormalizeChecked(vars)
	return err
}
