package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

func TestHeaderSpec_Value(t *testing.T) {
	vars := map[string]any{"groups": []any{"a", "b"}, "mixed": []any{"a", 1.0}, "when": "2026-02-28T17:00:00+01:00", "n": 42.0}
	tests := []struct {
		name    string
		form    headerForm
		text    string
		want    string
		unset   bool
		wantErr string
	}{
		{"fixed list is split on commas", headerList, "sales, support,", `["sales","support"]`, false, ""},
		{"list expression", headerList, "= groups", `["a","b"]`, false, ""},
		{"list expression with a number", headerList, "= mixed", "", false, "not only text"},
		{"list expression yielding text", headerList, `= "a,b"`, "", false, "yielded text, not a list"},
		{"null leaves the header unset", headerText, "= missing", "", true, ""},
		{"date keeps its offset", headerDate, "= when", "2026-02-28T17:00:00+01:00", false, ""},
		{"date that is not one", headerDate, "soon", "", false, "ISO-8601 date-time"},
		{"text from a number", headerText, "= n", "42", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := expr.Compile(model.Expression{Text: tt.text}, expr.Static, expr.Options{})
			require.NoError(t, err)
			got, ok, err := headerSpec{key: "k", form: tt.form, prog: prog}.value(vars)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, !tt.unset, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
