package boltstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/boltstore"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// Example is the README's store section: an engine on a file, closed with
// an instance waiting on a job, and a second engine on the same file that
// completes it. Keep the two in step.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "flowtrack")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "flowtrack.db")
	xml, err := os.ReadFile("../storetest/testdata/mixed.bpmn")
	if err != nil {
		log.Fatal(err)
	}

	s, err := boltstore.Open(path, nil) // one file, synced on every commit
	if err != nil {
		log.Fatal(err)
	}
	e, err := engine.New(engine.WithStore(s), engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := e.Deploy("mixed.bpmn", xml); err != nil {
		log.Fatal(err)
	}
	inst, err := e.Start(ctx, "mixed", map[string]any{"orderId": "o-1"}) // durable once it returns
	if err != nil {
		log.Fatal(err)
	}
	e.Close(ctx) // or a crash: the instance stays in the file
	s.Close()

	s, err = boltstore.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	e, err = engine.New(engine.WithStore(s)) // resumes what the file holds
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)
	for _, job := range e.Jobs(engine.JobFilter{InstanceKey: inst.Key()}) {
		fmt.Println("job", job.Type, "of instance", job.InstanceKey == inst.Key())
	}
	// Output: job pack of instance true
}
