package engine_test

import (
	"context"
	"errors"
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

// ExampleEngine_RestoreInstance moves one instance waiting on a job from
// one engine into another that already runs instances of its own: it
// keeps its key, its job gets a key of the engine it moved to.
func ExampleEngine_RestoreInstance() {
	ctx := context.Background()
	xml, err := os.ReadFile("testdata/readme_order.bpmn")
	if err != nil {
		log.Fatal(err)
	}
	newEngine := func() *engine.Engine {
		e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
		if err != nil {
			log.Fatal(err)
		}
		if _, err := e.Deploy("order.bpmn", xml); err != nil {
			log.Fatal(err)
		}
		return e
	}
	simulator, server := newEngine(), newEngine()
	defer simulator.Close(ctx)
	defer server.Close(ctx)
	for range 3 {
		if _, err := simulator.Start(ctx, "order", map[string]any{"orderId": "sim", "amount": 1}); err != nil {
			log.Fatal(err)
		}
	}
	inst, err := simulator.Start(ctx, "order", map[string]any{"orderId": "o-1", "amount": 120})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := server.Start(ctx, "order", map[string]any{"orderId": "o-0", "amount": 80}); err != nil {
		log.Fatal(err)
	}

	state, err := simulator.CheckpointInstance(ctx, inst.Key()) // the instance and its call tree
	if err != nil {
		log.Fatal(err)
	}
	moved, err := server.RestoreInstance(ctx, state)
	if err != nil {
		log.Fatal(err)
	}
	jobs := server.Jobs(engine.JobFilter{Type: "check-order", InstanceKey: moved.Key()})
	fmt.Println(moved.Key() == inst.Key(), len(jobs), moved.Variables()["orderId"])
	_, err = server.RestoreInstance(ctx, state)
	fmt.Println(errors.Is(err, engine.ErrKeyInUse))
	// Output:
	// true 1 o-1
	// true
}
