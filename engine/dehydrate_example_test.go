package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// ExampleEngine_Dehydrate is the README's dehydration: an instance waiting
// on a job is dehydrated, the job's completion wakes it, and it is
// dehydrated again. Keep the two in step.
func ExampleEngine_Dehydrate() {
	ctx := context.Background()
	xml, err := os.ReadFile("testdata/readme_order.bpmn")
	if err != nil {
		log.Fatal(err)
	}
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)),
		engine.WithDehydration(10*time.Minute)) // idle 10 min: dehydrate
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := e.Deploy("order.bpmn", xml); err != nil {
		log.Fatal(err)
	}
	inst, err := e.Start(ctx, "order", map[string]any{"orderId": "o-1", "amount": 120})
	if err != nil {
		log.Fatal(err)
	}
	n, err := e.Dehydrate(ctx) // or now, every idle instance
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, inst.Dehydrated(), inst.Variables()["orderId"])
	for _, job := range e.Jobs(engine.JobFilter{Type: "check-order"}) {
		if err := e.CompleteJob(ctx, job.Key, map[string]any{"valid": true}); err != nil { // wakes it
			log.Fatal(err)
		}
	}
	if err := e.Settle(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(inst.Dehydrated())
	err = inst.Dehydrate(ctx) // or one
	fmt.Println(err, inst.Dehydrated())
	// Output:
	// 1 true o-1
	// false
	// <nil> true
}
