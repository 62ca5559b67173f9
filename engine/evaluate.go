package engine

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// EvaluateExpression evaluates one expression over vars, outside any
// instance, as the engine evaluates an expression of a model: FEEL when
// it starts with "=" (Camunda 8's convention; a bare text is FEEL too),
// JUEL when written "${...}". now() and today() read clk (nil: the real
// clock). The result is JSON-compatible, as Instance variables are.
//
// It is what Camunda's REST API calls expression evaluation (POST
// /v2/expression/evaluation, package server/rest): a tool to try an
// expression against variables before putting it in a model.
//
// # Errors
//
// A text that does not compile or does not evaluate (an unknown
// function, a budget exceeded) is an error wrapping ErrInvalidArgument
// with the expression's own message.
func EvaluateExpression(text string, vars map[string]any, clk clock.Clock) (any, error) {
	if clk == nil {
		clk = clock.Real{}
	}
	p, err := expr.Compile(model.Expression{Text: text}, expr.Value, expr.Options{Clock: clk, Language: "feel"})
	if err != nil {
		return nil, fmt.Errorf("expression %q: %v: %w", text, err, ErrInvalidArgument)
	}
	v, err := p.Eval(vars)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %v: %w", text, err, ErrInvalidArgument)
	}
	return v, nil
}
