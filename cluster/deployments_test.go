package cluster

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
)

// A deployment applied by an earlier owner of every partition is
// reported from the partition's definitions: the newest version of each
// of its processes from its resource, with that partition's keys.
func TestRouter_DeployedAs(t *testing.T) {
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	nc, err := nats.Connect(ns.ClientURL(), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	n, err := Start(ctx, nc, Config{Cluster: "dep", Node: "a", Partitions: 2, LeaseTTL: testtime.Scale(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = n.Close(context.Background()) }()
	xml, err := os.ReadFile("testdata/signal.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	cl := client.New(nc, "dep")
	for range 2 {
		if _, err := cl.Deploy(ctx, "signal.bpmn", xml); err != nil {
			t.Fatal(err)
		}
	}
	fresh := &wire.DeployResult{Name: "signal.bpmn", Processes: []engine.Process{{ID: "waiter", Version: 1}}}
	out, err := n.router.deployedAs(ctx, 2, fresh)
	if err != nil {
		t.Fatal(err)
	}
	var res wire.DeployResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Processes) != 1 || res.Processes[0].Version != 2 || engine.PartitionOf(res.Processes[0].Key) != 2 {
		t.Errorf("deployedAs = %s, want waiter version 2 with a key of partition 2", out)
	}
}
