package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// ExampleEngine_ActivateJobs works a job as a Zeebe job worker does: the
// activation holds it for a minute of engine time; a worker that comes back
// after another took it over is refused.
func ExampleEngine_ActivateJobs() {
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
	if _, err := e.Start(ctx, "order", map[string]any{"orderId": "o-1", "amount": 120}); err != nil {
		log.Fatal(err)
	}
	e.Settle(ctx)

	slow, _ := e.ActivateJobs(ctx, "check-order", "slow", time.Minute, 1)
	e.Advance(ctx, time.Minute) // the slow worker's activation times out
	fast, _ := e.ActivateJobs(ctx, "check-order", "fast", time.Minute, 1)

	err = e.CompleteJob(ctx, slow[0].Key, nil, engine.JobActivation(slow[0].Activation))
	fmt.Println("slow refused:", errors.Is(err, engine.ErrStaleActivation))
	err = e.CompleteJob(ctx, fast[0].Key, map[string]any{"valid": true}, engine.JobActivation(fast[0].Activation))
	fmt.Println("fast:", err)
	// Output:
	// slow refused: true
	// fast: <nil>
}
