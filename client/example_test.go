package client_test

import (
	"context"
	"log"
	"time"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/nats-io/nats.go"
)

// A job worker on a flowtrack server's job queue: it serves the jobs of
// type "charge-payment" until ctx ends, completing each with variables.
// Any number of such workers, in this process or others, share the queue.
func ExampleClient_HandleJobs() {
	nc, err := nats.Connect("nats://127.0.0.1:4222")
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	c := client.New(nc, "orders")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = c.HandleJobs(ctx, "charge-payment", func(_ context.Context, job engine.Job) (map[string]any, error) {
		return map[string]any{"charged": job.Variables["amount"]}, nil
	}, engine.WorkerOptions{Concurrency: 4, Timeout: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
}
