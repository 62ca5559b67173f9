package workload

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/server"
)

// TestRemote plays the message workload through a served engine: the
// target sees the instance park on its message (from the events), the
// publish ends it, and Finish reports it completed; an instance cancelled
// while parked is reported as not completed, not as done.
func TestRemote(t *testing.T) {
	xml, err := os.ReadFile("../../cmd/flowtrack/testdata/message.bpmn")
	if err != nil {
		t.Fatal(err)
	}
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := server.New(ctx, nc, server.Config{Cluster: "remote"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })

	r, err := NewRemote(nc, "remote")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Deploy("message.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	w, _ := Find("message")
	if err := playOne(r, w, 0, 1, false); err != nil {
		t.Fatalf("message workload through the server: %v", err)
	}

	ref, err := r.Start(0, "message", map[string]any{"key": "k2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AwaitWaiting(ref, "message"); err != nil {
		t.Fatal(err)
	}
	if err := r.C.Cancel(ctx, ref.(int64)); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(ref); !errors.Is(err, ErrNotCompleted) {
		t.Fatalf("Finish of a cancelled instance: %v, want ErrNotCompleted", err)
	}
}
