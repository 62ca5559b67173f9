package cluster_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/internal/testtime"
)

// TestCluster_EveryStreamReplicated lists every stream of a 3-node
// cluster's NATS system (the KV buckets are streams KV_*) and checks that
// each has the configured replicas, the job work-queue stream included
// (it was created with one, whatever Replicas said), and that every
// stream the cluster is documented to use exists.
func TestCluster_EveryStreamReplicated(t *testing.T) {
	c := newTestCluster(t, 3, cluster.Config{Cluster: "repl", Partitions: 3, Replicas: 3, LeaseTTL: testtime.Scale(4 * time.Second)})
	js, err := jetstream.New(c.conns[0])
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	var names []string
	list := js.ListStreams(ctx)
	for info := range list.Info() {
		names = append(names, info.Config.Name)
		if info.Config.Replicas != 3 {
			t.Errorf("stream %s has %d replicas, want 3", info.Config.Name, info.Config.Replicas)
		}
	}
	require.NoError(t, list.Err())
	slices.Sort(names)
	want := []string{
		"FLOWTRACK_JOBS_repl", "FLOWTRACK_STORE_repl_p1", "FLOWTRACK_STORE_repl_p2", "FLOWTRACK_STORE_repl_p3",
		"FLOWTRACK_repl_DEPLOYMENTS", "KV_flowtrack_repl", "KV_flowtrack_repl_leases", "KV_flowtrack_repl_msgdone",
		"KV_flowtrack_repl_msgsubs",
	}
	require.Equal(t, want, names, "the streams of the cluster")
}

// TestCluster_RaisesReplicas: a cluster whose job stream was created with
// one replica (by an earlier version) has it raised to the configured
// replicas when a node starts.
func TestCluster_RaisesReplicas(t *testing.T) {
	c := newTestCluster(t, 3, cluster.Config{Cluster: "raise", Partitions: 1, Replicas: 3, LeaseTTL: testtime.Scale(4 * time.Second)})
	js, err := jetstream.New(c.conns[0])
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	s, err := js.Stream(ctx, "FLOWTRACK_JOBS_raise")
	require.NoError(t, err)
	cfg := s.CachedInfo().Config
	cfg.Replicas = 1
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	c.kill(2)
	c.restart(2)
	s, err = js.Stream(ctx, "FLOWTRACK_JOBS_raise")
	require.NoError(t, err)
	require.Equal(t, 3, s.CachedInfo().Config.Replicas, "the job stream's replicas once a node started")
}
