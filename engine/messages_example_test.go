package engine_test

import (
	"context"
	"fmt"
	"log"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// ExampleEngine_PublishMessageReached publishes a message and goes on with
// the instance it reached: here the instance waiting for key k1 (the
// other waits on), then the instance the message started.
func ExampleEngine_PublishMessageReached() {
	ctx := context.Background()
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := e.Deploy("reach.bpmn", []byte(reachXML)); err != nil {
		log.Fatal(err)
	}
	for _, key := range []string{"k1", "k2"} {
		if _, err := e.Start(ctx, "waits", map[string]any{"key": key}); err != nil {
			log.Fatal(err)
		}
	}
	e.Settle(ctx) // both wait at the message catch, subscribed
	reached, err := e.PublishMessageReached(ctx, engine.Message{Name: "go", CorrelationKey: "k1"})
	if err != nil {
		log.Fatal(err)
	}
	e.Settle(ctx)
	for _, inst := range reached {
		jobs := e.Jobs(engine.JobFilter{InstanceKey: inst.Key()})
		fmt.Println(inst.ProcessID(), inst.Variables()["key"], inst.State(), len(jobs))
	}
	// Output:
	// waits k1 active 1
	// starts <nil> completed 0
}
