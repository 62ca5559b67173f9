// Command wazero-host runs the order process on flowtrack's WebAssembly
// module inside this Go program, through wazero (package host): the same
// steps as examples/native, behind the same operations. It exits non-zero
// if the instance does not complete as the model says it must.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"log"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

//go:embed order.bpmn
var orderBPMN []byte

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := host.New(ctx) // compiles the embedded module once, cached on disk
	if err != nil {
		return err
	}
	defer e.Close(ctx)
	e.Subscribe(func(ev engine.Event) {
		if ev.Type == engine.JobCreated || ev.Type == engine.InstanceCompleted {
			fmt.Printf("%3d %-18s %s %s\n", ev.Seq, ev.Type, ev.ElementID, ev.JobType)
		}
	})

	if _, err := e.Deploy(ctx, "order.bpmn", orderBPMN); err != nil {
		return err
	}
	key, err := e.Start(ctx, "order", map[string]any{"amount": 250})
	if err != nil {
		return err
	}
	results := map[string]map[string]any{
		"check-order":    {"valid": true},
		"userTask":       {"approvedBy": "ana"},
		"charge-payment": {"receipt": "R-1001"},
	}
	// Every call returns once the engine has settled: no Settle needed.
	for {
		jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: key})
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			break
		}
		for _, j := range jobs {
			if err := e.CompleteJob(ctx, j.Key, results[j.Type]); err != nil {
				return err
			}
		}
	}
	info, err := e.Instance(ctx, key)
	if err != nil {
		return err
	}
	fmt.Printf("final state: %s, variables: %v\n", info.State, info.Variables)
	if info.State != engine.Completed || info.Variables["approvedBy"] != "ana" || info.Variables["receipt"] != "R-1001" {
		return fmt.Errorf("order instance ended %s with %v; want completed, approved and charged", info.State, info.Variables)
	}
	return nil
}
