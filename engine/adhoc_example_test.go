package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// ExampleEngine_ActivateAdHoc runs an ad-hoc sub-process that starts with
// a search; the host then decides to summarize, and the summary fulfils
// the completion condition.
func ExampleEngine_ActivateAdHoc() {
	ctx := context.Background()
	xml, err := os.ReadFile("testdata/adhoc_tools.bpmn")
	if err != nil {
		log.Fatal(err)
	}
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := e.Deploy("adhoc_tools.bpmn", xml); err != nil {
		log.Fatal(err)
	}
	inst, err := e.Start(ctx, "research", map[string]any{"summary": nil})
	if err != nil {
		log.Fatal(err)
	}
	e.Settle(ctx)
	for _, job := range e.Jobs(engine.JobFilter{Type: "search"}) {
		e.CompleteJob(ctx, job.Key, map[string]any{"hits": 3})
	}
	e.Settle(ctx)
	fmt.Println(inst.State()) // the condition does not hold yet: the sub-process waits

	if err := e.ActivateAdHoc(ctx, inst.Key(), "tools", []string{"summarize"}); err != nil {
		log.Fatal(err)
	}
	e.Settle(ctx)
	for _, job := range e.Jobs(engine.JobFilter{Type: "summarize"}) {
		e.CompleteJob(ctx, job.Key, map[string]any{"summary": "three hits"})
	}
	state, _ := inst.Wait(ctx)
	fmt.Println(state, inst.Variables()["summary"])
	// Output:
	// active
	// completed three hits
}
