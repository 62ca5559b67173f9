package engine

import (
	"encoding/json"
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// MaxVariableDepth is how deeply arrays and objects may nest inside one
// variable's value: 1 is a flat array or object, a scalar is 0. Every
// surface enforces the same limit before it decodes or walks a value: the
// Go API here (ErrBadVariables), the WebAssembly module on the request's
// JSON bytes (BAD_REQUEST, wasm/ABI.md), the Go host through the module,
// and the JavaScript SDK before it stringifies a request.
//
// # Why 64?
//
// Every walk of a value (normalizing, cloning, encoding, decoding, FEEL
// paths) recurses once per level, and the smallest stack of any host is
// Node's: the module traps there at about 3,000 levels. 64 keeps every
// walk far below that with room for the frames around it, while no
// realistic business document comes near it (they rarely pass 10).
const MaxVariableDepth = runtime.MaxValueDepth

// normalize checks the depth of every variable in vars, then returns
// runtime.Normalize's copy of them. The depth is checked first, with a
// walk that stops at the limit, because Normalize recurses without one
// (a map that contains itself would exhaust the stack); values Normalize
// converts through their JSON form (structs, typed maps) are checked again
// in that form.
func normalize(vars map[string]any) (map[string]any, error) {
	converted := false
	if err := checkVariables(vars, &converted); err != nil {
		return nil, err
	}
	norm, err := runtime.Normalize(vars)
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

// NormalizeVariables returns a copy of vars in the engine's value model,
// as every call that takes variables stores them: numbers of any Go type
// become float64 when a float64 holds them exactly and json.Number with
// their exact text otherwise (12345678901234567890, 0.1 with twenty more
// digits), -0 becomes 0 (FEEL's decimals have none), structs and typed
// containers their JSON form. Errors are those
// of CheckVariables. The Go host applies it to the variables it decodes
// from the module (numbers kept as json.Number), so that they are the
// values a native engine returns.
func NormalizeVariables(vars map[string]any) (map[string]any, error) {
	return normalize(vars)
}

// CheckVariables returns an error wrapping ErrBadVariables, naming the
// variable, if vars are not what every call of Engine that takes variables
// accepts: JSON values (no NaN or infinities, functions or channels)
// nesting at most MaxVariableDepth levels (a map that contains itself does
// not). The Go host checks it before it encodes a request, so that both
// report the same error; its depth walk stops at the limit, so it costs
// little however deep the value.
func CheckVariables(vars map[string]any) error {
	_, err := normalize(vars)
	return err
}

func checkVariables(vars map[string]any, converted *bool) error {
	for k, v := range vars {
		if err := checkDepth(k, v, converted); err != nil {
			return err
		}
	}
	return nil
}

// checkDepth returns an ErrBadVariables error naming variable name if v
// nests deeper than MaxVariableDepth. It sets *converted when v holds a
// container other than map[string]any and []any, which Normalize converts
// through JSON.
func checkDepth(name string, v any, converted *bool) error {
	if !withinDepth(v, MaxVariableDepth, converted) {
		return fmt.Errorf("%w: variable %q nests deeper than %d levels of arrays and objects (engine.MaxVariableDepth)",
			ErrBadVariables, name, MaxVariableDepth)
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
