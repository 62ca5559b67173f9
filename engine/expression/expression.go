// Package expression evaluates one expression outside any instance, as
// the engine evaluates the expressions of a model: the REST API's
// expression evaluation (server/rest) and any tool that tries an
// expression before putting it in a model.
//
// It is a package of its own, not a function of package engine, so that
// the WebAssembly module, which links package engine, does not carry it.
package expression

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Evaluate evaluates one expression over vars, outside any
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
// function, a budget exceeded) is an error wrapping engine.ErrInvalidArgument
// with the expression's own message.
func Evaluate(text string, vars map[string]any, clk clock.Clock) (any, error) {
	if clk == nil {
		clk = clock.Real{}
	}
	p, err := expr.Compile(model.Expression{Text: text}, expr.Value, expr.Options{Clock: clk, Language: "feel"})
	if err != nil {
		return nil, fmt.Errorf("expression %q: %v: %w", text, err, engine.ErrInvalidArgument)
	}
	v, err := p.Eval(vars)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %v: %w", text, err, engine.ErrInvalidArgument)
	}
	return v, nil
}
