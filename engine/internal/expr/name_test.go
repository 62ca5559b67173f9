package expr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// TestProgram_LoneName checks the lone-name path (a FEEL program that
// reads one variable, the usual correlation key) against the VM it stands
// in for: the same value or error, for every kind of value, an absent
// variable and no variables at all; and that anything more than a name
// keeps the VM.
func TestProgram_LoneName(t *testing.T) {
	vars := map[string]any{
		"key": "k-1", "n": 42.0, "big": json.Number("12345678901234567890"), "ok": true,
		"list": []any{1.0, "a"}, "ctx": map[string]any{"a": 1.0}, "nul": nil, "order id": "x",
	}
	for _, text := range []string{"= key", " =  n ", "= big", "= ok", "= list", "= ctx", "= nul", "= missing", "= item"} {
		for _, mode := range []Mode{Value, Static, Condition} {
			p, err := Compile(model.Expression{Text: text}, mode, Options{})
			require.NoError(t, err, text)
			assert.NotEmpty(t, p.name, "%q reads one variable", text)
			vm := *p
			vm.name = "" // the same program through the VM
			for _, vs := range []map[string]any{vars, nil} {
				got, gerr := p.Eval(vs)
				want, werr := vm.Eval(vs)
				assert.Equal(t, want, got, "%q", text)
				assert.Equal(t, werr, gerr, "%q", text)
				gs, gerr := p.EvalString(vs)
				ws, werr := vm.EvalString(vs)
				assert.Equal(t, ws, gs, "%q", text)
				assert.Equal(t, werr == nil, gerr == nil, "%q: %v / %v", text, gerr, werr)
				if werr != nil && gerr != nil {
					assert.Equal(t, werr.Error(), gerr.Error(), "%q", text)
				}
			}
		}
	}
	for _, text := range []string{"= key + \"x\"", "= ctx.a", "= $env", `= "key"`, "= 1", "= key[1]", "${key}-suffix"} {
		p, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err, text)
		assert.Empty(t, p.name, "%q is more than a name", text)
	}
}

// TestProgram_LoneCall checks the lone-call path (one library call on
// variables and constants, the usual condition) against the VM it stands
// in for: the same value, or an error with the same text and position,
// budgets included.
func TestProgram_LoneCall(t *testing.T) {
	vars := map[string]any{
		"x": 7.0, "s": "ok", "big": json.Number("12345678901234567890"), "b": true, "nul": nil,
		"list": []any{1.0, 2.0}, "ctx": map[string]any{"a": 1.0}, "long": strings.Repeat("a", 100),
	}
	texts := []string{"= x > 5", "= x < 5", "= x >= big", "= s = \"ok\"", "= s != x", "= x > s", "= x + 1", "= x * 1.19",
		"= nul > 1", "= missing = null", "= b and true", "= not(b)", "= string length(s)", "= upper case(s)",
		"= count(list)", "= sum(list)", "= x > \"a\"", "= substring(s, 5)", "= ctx.a", "= -x", "= long + long"}
	for _, text := range texts {
		for _, opts := range []Options{{}, {MaxBytes: 150}} {
			p, err := Compile(model.Expression{Text: text}, Value, opts)
			require.NoError(t, err, text)
			vm := *p
			vm.call = nil // the same program through the VM
			for _, vs := range []map[string]any{vars, nil} {
				got, gerr := p.Eval(vs)
				want, werr := vm.Eval(vs)
				assert.Equal(t, want, got, "%q", text)
				require.Equal(t, werr == nil, gerr == nil, "%q: %v / %v", text, gerr, werr)
				if werr != nil {
					assert.Equal(t, werr.Error(), gerr.Error(), "%q", text)
					var we, ge *EvalError
					require.ErrorAs(t, werr, &we)
					require.ErrorAs(t, gerr, &ge)
					assert.Equal(t, we.Pos, ge.Pos, "%q", text)
					assert.Equal(t, errors.Unwrap(werr) != nil, errors.Unwrap(gerr) != nil, "%q", text)
				}
			}
		}
	}
	lone := 0
	for _, text := range texts {
		p, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err)
		if p.call != nil {
			lone++
		}
	}
	assert.Greater(t, lone, len(texts)/2, "most of these are one call")
	for _, text := range []string{"= x > 5 and s = \"ok\"", "= if b then 1 else 2", "= [x]", "= key", "= 1 + 2"} {
		p, err := Compile(model.Expression{Text: text}, Value, Options{})
		require.NoError(t, err, text)
		assert.Nil(t, p.call, "%q is not one call on names and constants", text)
	}
}
