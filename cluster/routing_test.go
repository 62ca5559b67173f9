package cluster_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
)

//go:embed testdata/signal.bpmn
var signalBPMN []byte

// singleNATS starts one embedded NATS server and returns a connection
// to it.
func singleNATS(t testing.TB) *nats.Conn {
	t.Helper()
	ns, err := server.StartNATS(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL(), nats.ReconnectBufSize(-1))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// startNodes starts nodes on nc and waits until they serve every
// partition between them, each its fair share.
func startNodes(t testing.TB, nc *nats.Conn, cfg cluster.Config, names ...string) []*cluster.Node {
	t.Helper()
	var nodes []*cluster.Node
	for _, name := range names {
		c := cfg
		c.Node = name
		n, err := cluster.Start(context.Background(), nc, c)
		require.NoError(t, err)
		t.Cleanup(func() { _ = n.Close(context.Background()) })
		nodes = append(nodes, n)
	}
	share := (cfg.Partitions + len(nodes) - 1) / len(nodes)
	requireEventually(t, func() bool {
		total := 0
		for _, n := range nodes {
			owned := len(n.Owned())
			if owned > share {
				return false // still rebalancing
			}
			total += owned
		}
		return total == cfg.Partitions
	}, testtime.Scale(30*time.Second), 10*time.Millisecond)
	return nodes
}

// TestCluster_Routing checks what each kind of operation reaches: starts
// spread over partitions and keys name them; a signal reaches every
// partition; lists merge; a refused deploy logs nothing; a key of no
// partition and the operations a cluster cannot do are refused.
func TestCluster_Routing(t *testing.T) {
	nc := singleNATS(t)
	cfg := cluster.Config{Cluster: "rt", Partitions: 4, LeaseTTL: testtime.Scale(2 * time.Second)}
	startNodes(t, nc, cfg, "a", "b")
	cl := client.New(nc, "rt")
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()

	_, err := cl.Deploy(ctx, "bad.bpmn", []byte("<not-bpmn/>"))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de, "a refused deployment is refused as by one engine")
	d, err := cl.Deploy(ctx, "signal.bpmn", signalBPMN)
	require.NoError(t, err)
	assert.Equal(t, 1, d.Processes[0].Version, "the refused deployment took no version")

	parts := map[int]bool{}
	var keys []int64
	for range 8 {
		key, err := cl.Start(ctx, "waiter", nil)
		require.NoError(t, err)
		parts[engine.PartitionOf(key)] = true
		keys = append(keys, key)
	}
	assert.Len(t, parts, 4, "round robin reaches every partition")

	raw, err := cl.Call(ctx, "metrics", nil)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"instances":8`, "metrics add the partitions' open instances up")

	require.NoError(t, cl.BroadcastSignal(ctx, "go", nil))
	for _, key := range keys {
		res, err := cl.Instance(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, engine.Completed, res.State, "instance %d on partition %d", key, engine.PartitionOf(key))
	}

	_, err = cl.Instance(ctx, 9<<engine.KeySpaceBits|1)
	assert.ErrorIs(t, err, engine.ErrUnknownInstance, "a key of a partition the cluster does not have")
	_, err = cl.Call(ctx, "advance", []byte(`{"byMs":1}`))
	assert.ErrorIs(t, err, client.ErrUnsupported)
	incidents, err := cl.Incidents(ctx)
	require.NoError(t, err)
	assert.Empty(t, incidents)
}

// A node does not join a cluster whose subjects a single flowtrack serve
// answers, nor one created with another partition count.
func TestCluster_Refusals(t *testing.T) {
	nc := singleNATS(t)
	buffering, err := nats.Connect(nc.ConnectedUrl())
	require.NoError(t, err)
	defer buffering.Close()
	_, err = cluster.Start(context.Background(), buffering, cluster.Config{Cluster: "buf", Node: "a", Partitions: 2})
	require.ErrorIs(t, err, cluster.ErrReconnectBuffer)

	srv, err := server.New(context.Background(), nc, server.Config{Cluster: "solo"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	_, err = cluster.Start(context.Background(), nc, cluster.Config{Cluster: "solo", Node: "a", Partitions: 2})
	require.ErrorIs(t, err, server.ErrClusterServed)

	startNodes(t, nc, cluster.Config{Cluster: "two", Partitions: 2, LeaseTTL: testtime.Scale(time.Second)}, "a")
	_, err = cluster.Start(context.Background(), nc, cluster.Config{Cluster: "two", Node: "b", Partitions: 3})
	require.ErrorIs(t, err, cluster.ErrPartitions)
	n, err := cluster.Start(context.Background(), nc, cluster.Config{Cluster: "two", Node: "b"})
	require.NoError(t, err, "a node without a count reads the cluster's")
	assert.Equal(t, 2, n.Partitions())
	require.NoError(t, n.Close(context.Background()))
	_, err = cluster.Start(context.Background(), nc, cluster.Config{Cluster: "nothing", Node: "a"})
	require.True(t, errors.Is(err, cluster.ErrPartitions), "joining a cluster never created, without a count: %v", err)
}

// keyedWait waits for the message "m" correlated by the variable key.
const keyedWait = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:message id="M" name="m"><bpmn:extensionElements><zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>
  <bpmn:process id="keyed" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="done"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="done"/>
  </bpmn:process>
</bpmn:definitions>`

// Per-partition services start on every partition a node opens and stop
// when it closes; an instance started with its business key waits where
// its message goes, and instances started round robin, whose waits are
// on other partitions than their key's, receive their messages through
// the subscriptions registered at the key's partition, one instance of
// the process per message, oldest first.
func TestCluster_ServicesAndRemoteWaits(t *testing.T) {
	nc := singleNATS(t)
	var mu sync.Mutex
	started, stopped := map[int]int{}, map[int]int{}
	cfg := cluster.Config{Cluster: "svc", Partitions: 4, LeaseTTL: testtime.Scale(2 * time.Second), BusinessKey: "order",
		Services: []cluster.Service{func(_ context.Context, p *cluster.Partition) (func(context.Context) error, error) {
			require.NotNil(t, p.Engine())
			mu.Lock()
			started[p.ID()]++
			mu.Unlock()
			return func(context.Context) error {
				mu.Lock()
				stopped[p.ID()]++
				mu.Unlock()
				return nil
			}, nil
		}}}
	nodes := startNodes(t, nc, cfg, "a")
	mu.Lock()
	assert.Equal(t, map[int]int{1: 1, 2: 1, 3: 1, 4: 1}, started)
	mu.Unlock()

	cl := client.New(nc, "svc")
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	_, err := cl.Deploy(ctx, "keyed.bpmn", []byte(keyedWait))
	require.NoError(t, err)
	var keys []int64
	for range 4 { // round robin: one on each partition, all waiting for "k"
		key, err := cl.Start(ctx, "keyed", map[string]any{"key": "k"})
		require.NoError(t, err)
		keys = append(keys, key)
	}
	placed, err := cl.Start(ctx, "keyed", map[string]any{"key": "k2", "order": "k2"})
	require.NoError(t, err)
	assert.Equal(t, cluster.MessagePartition("k2", 4), engine.PartitionOf(placed), "a start goes to its business key's partition")
	require.NoError(t, cl.PublishMessage(ctx, engine.Message{Name: "m", CorrelationKey: "k2"}))
	res, err := cl.Instance(ctx, placed)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, res.State, "the message for its business key reached it")

	// got returns the message number each completed instance received.
	got := func() []float64 {
		var ns []float64
		for _, k := range keys {
			res, err := cl.Instance(ctx, k)
			require.NoError(t, err)
			if res.State == engine.Completed {
				ns = append(ns, res.Variables["n"].(float64))
			}
		}
		slices.Sort(ns)
		return ns
	}
	// The three waits on other partitions are registered at k's partition
	// asynchronously: a message with a TTL waits for them in its buffer.
	// Each message reaches one instance of the process: four messages,
	// four instances, each message once.
	for i := range 4 {
		require.NoError(t, cl.PublishMessage(ctx, engine.Message{Name: "m", CorrelationKey: "k", TTL: time.Minute,
			Variables: map[string]any{"n": i}}))
	}
	requireEventually(t, func() bool { return len(got()) == 4 }, testtime.Scale(10*time.Second), 10*time.Millisecond)
	assert.Equal(t, []float64{0, 1, 2, 3}, got())

	require.NoError(t, nodes[0].Close(ctx))
	mu.Lock()
	assert.Equal(t, map[int]int{1: 1, 2: 1, 3: 1, 4: 1}, stopped)
	mu.Unlock()
}

// A node that leaves cleanly hands its partitions over at once (each
// released with a last commit, its lease deleted): the others serve them
// within a lease loop round or two, not a TTL, and what it held goes on.
func TestCluster_Leave(t *testing.T) {
	nc := singleNATS(t)
	cfg := cluster.Config{Cluster: "lv", Partitions: 4, LeaseTTL: testtime.Scale(4 * time.Second)}
	nodes := startNodes(t, nc, cfg, "a", "b")
	cl := client.New(nc, "lv")
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	_, err := cl.Deploy(ctx, "signal.bpmn", signalBPMN)
	require.NoError(t, err)
	var keys []int64
	for range 8 {
		key, err := cl.Start(ctx, "waiter", nil)
		require.NoError(t, err)
		keys = append(keys, key)
	}
	start := time.Now()
	require.NoError(t, nodes[1].Close(ctx))
	requireEventually(t, func() bool { return len(nodes[0].Owned()) == 4 }, testtime.Scale(30*time.Second), 10*time.Millisecond)
	t.Logf("partitions of the node that left served again after %s (lease TTL %s)", time.Since(start).Round(time.Millisecond), cfg.LeaseTTL)
	require.NoError(t, cl.BroadcastSignal(ctx, "go", nil))
	for _, key := range keys {
		res, err := cl.Instance(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, engine.Completed, res.State, "instance %d", key)
	}
}

//go:embed testdata/starts.bpmn
var startsBPMN []byte

// A timer start event fires once and a signal start event starts one
// instance per broadcast in the whole cluster, on partition 1, though
// every partition holds the deployment.
func TestCluster_TimerAndSignalStartsOnce(t *testing.T) {
	nc := singleNATS(t)
	startNodes(t, nc, cluster.Config{Cluster: "ts", Partitions: 4, LeaseTTL: testtime.Scale(2 * time.Second)}, "a", "b")
	cl := client.New(nc, "ts")
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	_, err := cl.Deploy(ctx, "starts.bpmn", startsBPMN)
	require.NoError(t, err)
	require.NoError(t, cl.BroadcastSignal(ctx, "kick", nil))
	// metrics merges the partitions: its next deadline is the earliest
	// of theirs, none once every timer start has fired.
	var resp wire.Response[engine.Metrics]
	requireEventually(t, func() bool {
		msg, err := nc.RequestWithContext(ctx, "flowtrack.ts.op.metrics", nil)
		if err != nil || json.Unmarshal(msg.Data, &resp) != nil || !resp.OK {
			return false
		}
		return resp.NextDeadline == nil && len(resp.Result.Processes) == 1 && resp.Result.Processes[0].Completed >= 2
	}, testtime.Scale(20*time.Second), 20*time.Millisecond)
	assert.Equal(t, 2, resp.Result.Processes[0].Completed, "one instance by the timer, one by the signal")
}
