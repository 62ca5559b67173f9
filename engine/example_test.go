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

// Example is the README's walk through the Go API: deploy a model, start an
// instance, work its job, deliver its message, move virtual time, and wait
// for the end. Keep the two in step.
func Example() {
	ctx := context.Background()
	xml, err := os.ReadFile("testdata/readme_order.bpmn")
	if err != nil {
		log.Fatal(err)
	}

	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
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
	e.Settle(ctx) // wait until nothing moves without outside input
	for _, job := range e.Jobs(engine.JobFilter{Type: "check-order"}) {
		e.CompleteJob(ctx, job.Key, map[string]any{"valid": true})
	}
	e.Settle(ctx) // the token moves on to the message catch and subscribes
	e.PublishMessage(ctx, engine.Message{Name: "paid", CorrelationKey: "o-1"})
	e.Settle(ctx)             // ... and on to the timer
	e.Advance(ctx, time.Hour) // virtual time: due timers fire in order
	state, err := inst.Wait(ctx)
	fmt.Println(state, err, inst.Variables()["valid"])
	// Output: completed <nil> true
}

// ExampleEngine_Subscribe prints the elements an instance enters, as they
// are entered.
func ExampleEngine_Subscribe() {
	ctx := context.Background()
	xml, err := os.ReadFile("testdata/readme_order.bpmn")
	if err != nil {
		log.Fatal(err)
	}
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)
	entered := make(chan string, 16)
	stop := e.Subscribe(func(ev engine.Event) {
		if ev.Type == engine.ElementEntered {
			entered <- ev.ElementID
		}
	})
	defer stop()
	if _, err := e.Deploy("order.bpmn", xml); err != nil {
		log.Fatal(err)
	}
	if _, err := e.Start(ctx, "order", map[string]any{"orderId": "o-2"}); err != nil {
		log.Fatal(err)
	}
	e.Settle(ctx) // observers have seen every record once Settle returns
	close(entered)
	for id := range entered {
		fmt.Println(id)
	}
	// Output:
	// received
	// check
}
