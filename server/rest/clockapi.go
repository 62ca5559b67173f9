package rest

import (
	"net/http"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/expression"
)

func (a *API) pinClock(r *http.Request) (int, any, error) {
	if a.cfg.Clock == nil {
		return 0, nil, unsupported("this server's clock cannot be pinned (a cluster's partitions each keep their own)")
	}
	var req ClockPinRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Timestamp == nil || *req.Timestamp < 0 {
		return 0, nil, badRequest("field \"timestamp\" (Unix milliseconds, not negative) is required")
	}
	a.cfg.Clock.Pin(time.UnixMilli(*req.Timestamp))
	return http.StatusNoContent, nil, nil
}

func (a *API) resetClock(*http.Request) (int, any, error) {
	if a.cfg.Clock == nil {
		return 0, nil, unsupported("this server's clock cannot be pinned (a cluster's partitions each keep their own)")
	}
	a.cfg.Clock.Reset()
	return http.StatusNoContent, nil, nil
}

// evaluateExpression serves POST /v2/expression/evaluation with the
// engine's FEEL (engine/expression); it needs no instance, so it
// runs on the node that took the request.
func (a *API) evaluateExpression(r *http.Request) (int, any, error) {
	var req ExpressionEvaluationRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Expression == "" {
		return 0, nil, badRequest("field \"expression\" is required")
	}
	var clk clock.Clock // nil: the real clock
	if a.cfg.Clock != nil {
		clk = a.cfg.Clock
	}
	v, err := expression.Evaluate(req.Expression, req.Variables, clk)
	if err != nil {
		return 0, nil, badRequest("%v", err)
	}
	return http.StatusOK, ExpressionEvaluationResult{Expression: req.Expression, Result: v, Warnings: []map[string]any{}}, nil
}
