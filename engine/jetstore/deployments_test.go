package jetstore_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/engine/storetest"
	"github.com/flowtrack/flowtrack/server"
)

// Deployments counts the deployments committed, without loading them,
// across a reopening of the store.
func TestStore_Deployments(t *testing.T) {
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	xml := storetest.Model(t, "tick.bpmn")
	s, err := jetstore.Open(ctx, nc, &jetstore.Options{Name: "deps"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Deployments(ctx); err != nil || n != 0 {
		t.Fatalf("empty store: %d deployments, %v", n, err)
	}
	e, err := engine.New(engine.WithStore(s))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := e.Deploy("tick.bpmn", xml); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := jetstore.Open(ctx, nc, &jetstore.Options{Name: "deps"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := again.Deployments(ctx); err != nil || n != 3 {
		t.Errorf("after three deployments: %d, %v; want 3", n, err)
	}
}
