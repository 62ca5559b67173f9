// Command native runs an order process on the native Go engine: it deploys
// the model, starts an instance, works the jobs the instance creates, and
// prints the event stream as a readable trace. It exits non-zero if the
// instance does not complete as the model says it must.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
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
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		return err
	}
	defer e.Close(ctx)

	if _, err := e.Deploy("order.bpmn", orderBPMN); err != nil {
		return err
	}
	inst, err := e.Start(ctx, "order", map[string]any{"amount": 250})
	if err != nil {
		return err
	}
	// Work every job until the instance needs nothing more from us.
	results := map[string]map[string]any{
		"check-order":    {"valid": true},
		"userTask":       {"approvedBy": "ana"},
		"charge-payment": {"receipt": "R-1001"},
	}
	for {
		if err := e.Settle(ctx); err != nil {
			return err
		}
		jobs := e.Jobs(engine.JobFilter{InstanceKey: inst.Key()})
		if len(jobs) == 0 {
			break
		}
		for _, j := range jobs {
			if err := e.CompleteJob(ctx, j.Key, results[j.Type]); err != nil {
				return err
			}
		}
	}
	state, err := inst.Wait(ctx)
	if err != nil {
		return err
	}
	history, err := inst.History(ctx)
	if err != nil {
		return err
	}
	for _, ev := range history {
		printEvent(ev)
	}
	fmt.Printf("final state: %s, variables: %v\n", state, inst.Variables())
	if state != engine.Completed || inst.Variables()["approvedBy"] != "ana" {
		return fmt.Errorf("order instance ended %s with %v; want completed and approved", state, inst.Variables())
	}
	return nil
}

func printEvent(ev engine.Event) {
	line := fmt.Sprintf("%3d %-18s", ev.Seq, ev.Type)
	if ev.ElementID != "" {
		line += " " + ev.ElementID
	}
	if ev.JobType != "" {
		line += fmt.Sprintf(" [job %d %s]", ev.JobKey, ev.JobType)
	}
	if len(ev.Variables) > 0 {
		line += fmt.Sprintf(" %v", ev.Variables)
	}
	fmt.Fprintln(os.Stdout, line)
}
