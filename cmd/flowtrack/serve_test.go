package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
)

// serving runs flowtrack serve with args until the test stops it, and
// returns the NATS URL it prints once it serves and the stop function,
// which waits for the command and returns its exit code.
func serving(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code, err := serveCmd(ctx, args, w)
		if err != nil {
			t.Errorf("serve %v: %v", args, err)
		}
		_ = w.Close()
		done <- code
	}()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("serve %v printed no URL: %v", args, err)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	_, url, ok := strings.Cut(strings.TrimSpace(line), " on ")
	if !ok {
		cancel()
		t.Fatalf("serve printed %q, want the URL it serves on", line)
	}
	return url, func() int { cancel(); return <-done }
}

// TestServe_Restart: flowtrack serve --data DIR alone is a durable
// server: an instance started through one run is waiting at its job in
// the next, on the same directory.
func TestServe_Restart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	xml, err := os.ReadFile("testdata/message.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	url, stop := serving(t, "--data", dir, "--port", "0", "--cluster", "cli")
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(nc, "cli")
	d, err := c.Deploy(ctx, "message.bpmn", xml)
	if err != nil {
		t.Fatal(err)
	}
	key, err := c.Start(ctx, d.Processes[0].ID, map[string]any{"key": "k-1"})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d, want %d", code, exitOK)
	}

	url, stop = serving(t, "--data", dir, "--port", "0", "--cluster", "cli")
	defer stop()
	nc, err = nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	info, err := client.New(nc, "cli").Instance(ctx, key)
	if err != nil {
		t.Fatalf("instance %d after the restart: %v", key, err)
	}
	if info.State != engine.Active || info.Variables["key"] != "k-1" {
		t.Errorf("instance %d after the restart: %s with %v, want active with key k-1", key, info.State, info.Variables)
	}
}

func TestServe_Usage(t *testing.T) {
	for _, args := range [][]string{{"--port", "70000"}, {"extra"}, {"--nope"}} {
		if code, err := serveCmd(context.Background(), args, io.Discard); code != exitUsage || err == nil {
			t.Errorf("serve %v: exit %d, %v; want a usage error", args, code, err)
		}
	}
}

// TestServe_ExistingNATS: with --nats the command serves through a NATS
// system it does not run.
func TestServe_ExistingNATS(t *testing.T) {
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	url, stop := serving(t, "--nats", ns.ClientURL(), "--cluster", "ext")
	if url != ns.ClientURL() {
		t.Errorf("serve reports %s, want the NATS it was given, %s", url, ns.ClientURL())
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := client.New(nc, "ext").Now(context.Background()); err != nil {
		t.Errorf("now through --nats: %v", err)
	}
	if code := stop(); code != exitOK {
		t.Errorf("serve exited %d, want %d", code, exitOK)
	}
	if _, err := client.New(nc, "ext").Now(context.Background()); !errors.Is(err, client.ErrNoServer) {
		t.Errorf("now after serve stopped: %v, want ErrNoServer", err)
	}
}

// TestServe_ClusterNode: flowtrack serve --node runs a node of a
// partitioned cluster, which takes every partition while it is alone and
// serves the one contract over them; cluster status reports it; a node
// started with another partition count is refused.
func TestServe_ClusterNode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	xml, err := os.ReadFile("testdata/message.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	url, stop := serving(t, "--data", dir, "--port", "0", "--cluster", "cn", "--node", "a", "--partitions", "3", "--lease-ttl", "1s")
	defer func() {
		if code := stop(); code != exitOK {
			t.Errorf("serve exited %d", code)
		}
	}()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cl := client.New(nc, "cn")
	if _, err := cl.Deploy(ctx, "message.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	parts := map[int]bool{}
	for range 6 {
		key, err := cl.Start(ctx, "message", map[string]any{"key": "k"})
		if err != nil {
			t.Fatal(err)
		}
		parts[engine.PartitionOf(key)] = true
	}
	if len(parts) != 3 {
		t.Errorf("six starts round robin reached partitions %v, want all 3", parts)
	}
	// The lone node owns every partition once its leases are written.
	var out strings.Builder
	var st struct {
		Partitions int
		Nodes      []struct{ Name string }
		Owners     []struct {
			ID    int
			Owner string
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for ; ; <-tick.C {
		out.Reset()
		code, err := clusterCmd(ctx, []string{"status", "--nats", url, "--cluster", "cn", "--json"}, &out)
		if err != nil || code != exitOK {
			t.Fatalf("cluster status: %d %v", code, err)
		}
		if err := json.Unmarshal([]byte(out.String()), &st); err != nil {
			t.Fatal(err)
		}
		owned := 0
		for _, o := range st.Owners {
			if o.Owner == "a" {
				owned++
			}
		}
		if owned == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lone node does not own every partition: %s", out.String())
		}
	}
	if st.Partitions != 3 || len(st.Nodes) != 1 || st.Nodes[0].Name != "a" {
		t.Errorf("status %s", out.String())
	}
	code, err := serveCmd(ctx, []string{"--nats", url, "--cluster", "cn", "--node", "b", "--partitions", "4"}, io.Discard)
	if code != exitUsage || !errors.Is(err, cluster.ErrPartitions) {
		t.Errorf("a node with another partition count: exit %d, %v; want %d, ErrPartitions", code, err, exitUsage)
	}
}
