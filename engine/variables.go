package engine

import (
	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/internal/value"
)

// MaxVariableDepth is how deeply arrays and objects may nest inside one
// variable's value (api.MaxVariableDepth, which says why 64).
const MaxVariableDepth = api.MaxVariableDepth

// normalize is NormalizeVariables, for the calls of Engine.
func normalize(vars map[string]any) (map[string]any, error) { return value.NormalizeChecked(vars) }

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
	return value.NormalizeChecked(vars)
}

// CheckVariables returns an error wrapping api.ErrBadVariables, naming the
// variable, if vars are not what every call of Engine that takes variables
// accepts: JSON values (no NaN or infinities, functions or channels)
// nesting at most MaxVariableDepth levels (a map that contains itself does
// not). The Go host checks it before it encodes a request, so that both
// report the same error; its depth walk stops at the limit, so it costs
// little however deep the value.
func CheckVariables(vars map[string]any) error {
	return value.Check(vars)
}
