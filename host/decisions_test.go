package host_test

import (
	"errors"
	"os"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
)

// TestEngine_EvaluateDecision: the module deploys a DMN model and
// evaluates its decisions as the native engine does, matched rules and
// failures included.
func TestEngine_EvaluateDecision(t *testing.T) {
	e := newHost(t)
	dmn, err := os.ReadFile("../engine/testdata/discount.dmn")
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.Deploy(ctxT(t), "discount.dmn", dmn)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Decisions) != 4 || d.Decisions[0].ID != "discount" || d.Decisions[0].Version != 1 {
		t.Fatalf("deployed %+v", d.Decisions)
	}
	r, err := e.EvaluateDecision(ctxT(t), "price", 0, map[string]any{"customer": "gold", "order amount": 2000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != 1700.0 || len(r.MatchedRules) != 1 || r.MatchedRules[0] != (engine.MatchedRule{DecisionID: "discount", RuleID: "gold_big", RuleIndex: 1}) {
		t.Errorf("result %+v", r)
	}
	r, err = e.EvaluateDecision(ctxT(t), "strict", 0, map[string]any{"order amount": 50})
	var de *engine.DecisionError
	if !errors.As(err, &de) || r == nil || r.Output != nil {
		t.Errorf("UNIQUE with two matches: %+v, %v", r, err)
	}
	if _, err := e.EvaluateDecision(ctxT(t), "nope", 0, nil); !errors.Is(err, engine.ErrUnknownDecision) {
		t.Errorf("unknown decision: %v", err)
	}
}
