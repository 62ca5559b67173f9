package host_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// Example runs the order process of the package documentation in the
// embedded WebAssembly module.
func Example() {
	ctx := context.Background()
	xml, err := os.ReadFile("testdata/order.bpmn")
	if err != nil {
		log.Fatal(err)
	}

	e, err := host.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := e.Deploy(ctx, "order.bpmn", xml); err != nil {
		log.Fatal(err)
	}
	key, err := e.Start(ctx, "order", map[string]any{"amount": 120})
	if err != nil {
		log.Fatal(err)
	}
	// Each call returns once the engine has settled: work jobs until none
	// is left.
	for {
		jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: key})
		if err != nil {
			log.Fatal(err)
		}
		if len(jobs) == 0 {
			break
		}
		for _, job := range jobs {
			if err := e.CompleteJob(ctx, job.Key, map[string]any{"valid": true}); err != nil {
				log.Fatal(err)
			}
		}
	}
	state, err := e.State(ctx, key)
	fmt.Println(state, err)
	// Output: completed <nil>
}
