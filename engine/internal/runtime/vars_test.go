package runtime

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckValue(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = []any{cyclic}
	deep := any("leaf")
	for range MaxValueDepth {
		deep = map[string]any{"a": deep}
	}
	shared := any(strings.Repeat("y", 1000))
	for range 40 {
		shared = []any{shared, shared} // 2^40 leaves, 40 slices
	}
	for name, tc := range map[string]struct {
		v    any
		want string
	}{
		"cycle":         {cyclic, fmt.Sprintf("nested deeper than %d levels", MaxValueDepth)},
		"too deep":      {[]any{deep}, fmt.Sprintf("nested deeper than %d levels", MaxValueDepth)},
		"shared doubly": {shared, "larger than the 1000000 bytes"},
		"long string":   {strings.Repeat("x", 1_000_001), "larger than the 1000000 bytes"},
	} {
		err := checkValue(tc.v, 1_000_000)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), tc.want, name)
	}
	for name, v := range map[string]any{
		"at the depth limit": deep,
		"scalars":            "x",
		"nil":                nil,
		"mixed":              map[string]any{"l": []any{1.0, true, nil, "s"}},
	} {
		assert.NoError(t, checkValue(v, 1_000_000), name)
	}
}

func TestNormalize_Depth(t *testing.T) {
	deep := any(1)
	for range MaxValueDepth {
		deep = []any{deep}
	}
	_, err := Normalize(map[string]any{"v": deep})
	require.NoError(t, err, "a value at the depth limit")
	cyclic := []any{nil}
	cyclic[0] = cyclic
	type wrapped struct{ V any }
	for name, v := range map[string]any{
		"deeper":       []any{deep},
		"cyclic":       cyclic,
		"deep in JSON": wrapped{V: deep}, // through its JSON form
	} {
		_, err := Normalize(map[string]any{"v": v})
		require.ErrorIs(t, err, ErrBadVariables, name)
		assert.Contains(t, err.Error(), fmt.Sprintf("nested deeper than %d levels", MaxValueDepth), name)
	}
}
