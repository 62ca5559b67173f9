package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// ExampleEngine_Checkpoint is the README's checkpoint and restore: an
// instance waiting on a job moves into a new engine, where the job is
// completed. Keep the two in step.
func ExampleEngine_Checkpoint() {
	ctx := context.Background()
	xml, err := os.ReadFile("testdata/readme_order.bpmn")
	if err != nil {
		log.Fatal(err)
	}
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := e.Deploy("order.bpmn", xml); err != nil {
		log.Fatal(err)
	}
	inst, err := e.Start(ctx, "order", map[string]any{"orderId": "o-1", "amount": 120})
	if err != nil {
		log.Fatal(err)
	}

	state, err := e.Checkpoint(ctx) // settles, then writes the state document
	if err != nil {
		log.Fatal(err)
	}
	e.Close(ctx)

	r, err := engine.Restore(state) // on this host or any other
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close(ctx)
	for _, job := range r.Jobs(engine.JobFilter{Type: "check-order"}) {
		r.CompleteJob(ctx, job.Key, map[string]any{"valid": true})
	}
	r.Settle(ctx)
	restored, _ := r.Instance(inst.Key())
	toks, _ := restored.Tokens(ctx)
	fmt.Println(toks[0].ElementID, toks[0].Waiting)
	// Output: paid message
}
