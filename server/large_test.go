package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/reply"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
)

// TestServer_LargeAnswers: answers larger than a NATS message (1 MB) reach
// the Go client whole, in chunks (jobs, checkpoint); jobs come a page at
// a time; a requester that takes no chunks is answered TOO_LARGE at once,
// not left to time out, and the server reports it.
func TestServer_LargeAnswers(t *testing.T) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var reported []error
	srv, err := server.New(ctx, nc, server.Config{Cluster: "large", OnError: func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	c := client.New(nc, "large")
	xml, err := os.ReadFile(filepath.Join("testdata", "work.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, "work.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	// 24 instances with 100 KB of variables each: every job carries them.
	blob := strings.Repeat("x", 100_000)
	const instances = 24
	for i := range instances {
		if _, err := c.Start(ctx, "work", map[string]any{"blob": blob, "i": i}); err != nil {
			t.Fatal(err)
		}
	}
	max := int(nc.MaxPayload())

	jobs, err := c.Jobs(ctx, engine.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != instances {
		t.Fatalf("%d jobs, want %d", len(jobs), instances)
	}
	size, _ := json.Marshal(jobs)
	t.Logf("jobs answer %d bytes, max payload %d", len(size), max)
	if len(size) <= 2*max {
		t.Fatalf("the jobs answer is %d bytes: not above two messages", len(size))
	}

	page, err := c.JobsPage(ctx, engine.JobFilter{}, 0, 10)
	if err != nil || len(page) != 10 || page[0].Key != jobs[0].Key {
		t.Fatalf("first page: %d jobs, %v", len(page), err)
	}
	rest, err := c.JobsPage(ctx, engine.JobFilter{}, page[9].Key, 100)
	if err != nil || len(rest) != instances-10 || rest[0].Key != jobs[10].Key {
		t.Fatalf("the page after key %d: %d jobs, %v", page[9].Key, len(rest), err)
	}

	doc, err := c.Call(ctx, "checkpoint", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checkpoint answer %d bytes", len(doc))
	if len(doc) <= 2*max || !json.Valid(doc) {
		t.Fatalf("checkpoint: %d bytes, valid %v", len(doc), json.Valid(doc))
	}

	// A plain NATS request takes no chunks: TOO_LARGE, at once.
	m, err := nc.RequestWithContext(ctx, wire.OpSubject("large", "jobs"), []byte(`{}`))
	if err != nil {
		t.Fatalf("a plain request of a large answer: %v", err)
	}
	var resp wire.Response[json.RawMessage]
	if err := json.Unmarshal(m.Data, &resp); err != nil || resp.OK || resp.Error.Code != wire.CodeTooLarge {
		t.Fatalf("a plain request of a large answer: %s", m.Data)
	}
	if !errors.Is(resp.Error.Native(), wire.ErrTooLarge) {
		t.Errorf("TOO_LARGE as a Go error: %v", resp.Error.Native())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !errors.Is(reported[0], reply.ErrTooLarge) {
		t.Errorf("OnError told %v, want one ErrTooLarge", reported)
	}
}
