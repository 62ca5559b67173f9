package server_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/server"
)

// TestServer_StopsWhenNotServing: once Config.Serving says no (a cluster
// partition whose fence closed), the server answers that request CLOSED
// and takes no more: a later request finds no responder, so a router
// reaches the partition's next owner instead of state it moved past.
// Close still closes the engine.
func TestServer_StopsWhenNotServing(t *testing.T) {
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var serving atomic.Bool
	serving.Store(true)
	ctx := context.Background()
	srv, err := server.New(ctx, nc, server.Config{Cluster: "serving", Serving: serving.Load})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(nc, "serving")
	if _, err := c.Incidents(ctx); err != nil {
		t.Fatalf("while serving: %v", err)
	}
	serving.Store(false)
	_, err = c.Incidents(ctx)
	if !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("the first request after Serving said no: got %v, want CLOSED", err)
	}
	if _, err := c.Incidents(ctx); !errors.Is(err, client.ErrNoServer) {
		t.Fatalf("a later request: got %v, want no responders", err)
	}
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, err := srv.Engine().Start(ctx, "p", nil); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("the engine after Close: got %v, want ErrClosed", err)
	}
}
