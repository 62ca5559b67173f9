package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/server"
)

// syncBuffer is a bytes.Buffer safe for a logger writing while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records parses every line as a JSON object.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	text := s.b.String()
	s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// find returns the first record with every field of want.
func find(recs []map[string]any, want map[string]any) map[string]any {
next:
	for _, r := range recs {
		for k, v := range want {
			if r[k] != v {
				continue next
			}
		}
		return r
	}
	return nil
}

// TestServer_Log: with a JSON logger, every line parses, an incident is
// a warning naming its cluster, process, instance, element and job, and
// at level Debug every event is a line with the keys that apply.
func TestServer_Log(t *testing.T) {
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
	var buf syncBuffer
	ctx := context.Background()
	srv, err := server.New(ctx, nc, server.Config{Cluster: "logs",
		Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(ctx) })
	c := client.New(nc, "logs")
	xml, err := os.ReadFile("../engine/tally/testdata/shop.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, "shop.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	key, err := c.Start(ctx, "shop", map[string]any{"orderId": "o1"})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.ActivateJobs(ctx, "charge", "w", time.Minute, 1)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("activate: %v, %v", jobs, err)
	}
	if err := c.FailJob(ctx, jobs[0].Key, 0, "card declined"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Engine().Settle(ctx); err != nil {
		t.Fatal(err)
	}
	recs := buf.records(t)
	inc := find(recs, map[string]any{"msg": "incident created"})
	if inc == nil {
		t.Fatalf("no incident line in %v", recs)
	}
	for k, v := range map[string]any{"level": "WARN", "cluster": "logs", "process": "shop", "instance": float64(key),
		"element": "charge", "job": float64(jobs[0].Key)} {
		if inc[k] != v {
			t.Errorf("incident line %s = %v, want %v (%v)", k, inc[k], v, inc)
		}
	}
	created := find(recs, map[string]any{"msg": "event", "type": "jobCreated"})
	if created == nil || created["level"] != "DEBUG" || created["job"] != float64(jobs[0].Key) ||
		created["jobType"] != "charge" || created["instance"] != float64(key) {
		t.Errorf("jobCreated line: %v", created)
	}
	if find(recs, map[string]any{"msg": "event", "type": "instanceStarted", "process": "shop"}) == nil {
		t.Error("no instanceStarted line")
	}
}
