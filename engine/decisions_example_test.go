package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/flowtrack/flowtrack/engine"
)

// ExampleEngine_EvaluateDecision is docs/dmn.md's: deploy a DMN model and
// evaluate a decision, which requires another decided by a table.
func ExampleEngine_EvaluateDecision() {
	ctx := context.Background()
	dmn, err := os.ReadFile("testdata/discount.dmn")
	if err != nil {
		log.Fatal(err)
	}
	e, err := engine.New()
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := e.Deploy("discount.dmn", dmn); err != nil {
		log.Fatal(err)
	}
	res, err := e.EvaluateDecision(ctx, "price", map[string]any{"customer": "gold", "order amount": 2000})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output, res.MatchedRules)
	// Output: 1700 [{discount gold_big 1}]
}
