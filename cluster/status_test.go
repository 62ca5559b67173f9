package cluster_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/server"
)

// nodeStates returns the state of every member ReadStatus lists.
func nodeStates(t *testing.T, nc *nats.Conn, name string) (*cluster.Status, map[string]cluster.NodeState) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(20*time.Second))
	defer cancel()
	st, err := cluster.ReadStatus(ctx, nc, name)
	require.NoError(t, err)
	out := map[string]cluster.NodeState{}
	for _, n := range st.Nodes {
		out[n.Name] = n.State
	}
	return st, out
}

// TestReadStatus_DeadNodes: a killed node is reported late, then dead,
// and stays listed as dead once JetStream removed its lease, its
// partitions taken by live nodes; started again it is live; a node that
// leaves cleanly is no longer listed.
func TestReadStatus_DeadNodes(t *testing.T) {
	ttl := testtime.Scale(4 * time.Second)
	c := newTestCluster(t, 3, cluster.Config{Cluster: "dead", Partitions: 3, Replicas: 3, LeaseTTL: ttl})
	st, states := nodeStates(t, c.conns[0], "dead")
	require.Equal(t, map[string]cluster.NodeState{"n1": cluster.NodeLive, "n2": cluster.NodeLive, "n3": cluster.NodeLive}, states)
	for _, p := range st.Owners {
		require.Equal(t, cluster.NodeLive, p.OwnerState, "partition %d", p.ID)
		require.Equal(t, 3, p.Replicas, "partition %d", p.ID)
	}

	c.kill(1)
	var seen []cluster.NodeState
	requireEventually(t, func() bool {
		_, states := nodeStates(t, c.conns[0], "dead")
		if len(seen) == 0 || seen[len(seen)-1] != states["n2"] {
			seen = append(seen, states["n2"])
		}
		return states["n2"] == cluster.NodeDead
	}, 3*ttl, 50*time.Millisecond, "the killed node reported dead")
	require.NotContains(t, seen, cluster.NodeState(""), "the killed node vanished from the status: %v", seen)
	t.Logf("states of the killed node: %v", seen)
	// Once its lease is gone and its partitions taken, it is still there.
	requireEventually(t, func() bool {
		st, states := nodeStates(t, c.conns[0], "dead")
		for _, p := range st.Owners {
			if p.Owner == "" || p.Owner == "n2" {
				return false
			}
		}
		for _, n := range st.Nodes {
			if n.Name == "n2" && n.LeaseAge != 0 {
				return false // its expired lease lingers yet
			}
		}
		return states["n2"] == cluster.NodeDead
	}, 6*ttl, 50*time.Millisecond, "the dead node listed once its lease expired")

	c.restart(1)
	_, states = nodeStates(t, c.conns[0], "dead")
	require.Equal(t, cluster.NodeLive, states["n2"], "a dead node started again")

	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	require.NoError(t, c.nodes[2].Close(ctx))
	// The listing may come from a replica a moment behind.
	requireEventually(t, func() bool {
		_, states := nodeStates(t, c.conns[0], "dead")
		_, listed := states["n3"]
		return !listed
	}, ttl, 50*time.Millisecond, "a node that left cleanly is no longer listed")
}

// TestReadStatus_RightAfterStart: the status reads as soon as the first
// node's Start returned (the partition count written, the node live, its
// partitions not yet taken: moving), and as forming while the settings
// hold no partition count yet.
func TestReadStatus_RightAfterStart(t *testing.T) {
	ns, err := server.StartNATS(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL(), nats.ReconnectBufSize(-1))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()

	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "flowtrack_forming"})
	require.NoError(t, err)
	st, err := cluster.ReadStatus(ctx, nc, "forming")
	require.NoError(t, err)
	require.True(t, st.Forming, "a cluster whose settings hold no partition count yet")

	n, err := cluster.Start(ctx, nc, cluster.Config{Cluster: "early", Node: "a", Partitions: 2, LeaseTTL: testtime.Scale(8 * time.Second)})
	require.NoError(t, err)
	t.Cleanup(func() { n.Kill() })
	st, err = cluster.ReadStatus(ctx, nc, "early")
	require.NoError(t, err)
	require.False(t, st.Forming)
	require.Equal(t, 2, st.Partitions)
	require.Len(t, st.Owners, 2)
	require.Len(t, st.Nodes, 1)
	require.Equal(t, cluster.NodeLive, st.Nodes[0].State)

	out, err := json.Marshal(st)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out, &doc))
	require.EqualValues(t, testtime.Scale(8*time.Second).Milliseconds(), doc["leaseTtlMs"], "%s", out)
	require.NotContains(t, doc, "leaseTtl")
	node := doc["nodes"].([]any)[0].(map[string]any)
	require.Contains(t, node, "leaseAgeMs")
	require.Less(t, node["leaseAgeMs"].(float64), float64(testtime.Scale(8*time.Second).Milliseconds()))
}
