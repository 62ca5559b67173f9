package expr

import (
	"encoding/json"
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
