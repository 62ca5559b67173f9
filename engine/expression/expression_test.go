package expression_test

import (
	"errors"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/expression"
)

func TestEvaluate(t *testing.T) {
	cases := []struct {
		text string
		vars map[string]any
		want any
	}{
		{"=a + b", map[string]any{"a": 2.0, "b": 3.0}, 5.0},
		{"= upper case(name)", map[string]any{"name": "ada"}, "ADA"},
		{"count([1,2,3])", nil, 3.0},
	}
	for _, c := range cases {
		got, err := expression.Evaluate(c.text, c.vars, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		if got != c.want {
			t.Errorf("%s = %#v, want %#v", c.text, got, c.want)
		}
	}
	if _, err := expression.Evaluate("= 1 +", nil, nil); !errors.Is(err, engine.ErrInvalidArgument) {
		t.Errorf("a broken expression: %v, want ErrInvalidArgument", err)
	}
}
