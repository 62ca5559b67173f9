package jetstore_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/server"
)

// TestStore_ReadsFromTheLeader: on a stream of three replicas every read
// (Load, Instance) is served by the stream's leader, never by a follower
// that may lag behind it, even while a restarted server catches up. A
// consumer of one replica lands on any of the stream's servers; a read
// there once gave a cluster partition's next owner an empty engine
// document, and it started the partition afresh.
func TestStore_ReadsFromTheLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS servers: make race (part of make test) runs it")
	}
	nodes := make([]server.NATSNode, 3)
	ports := freePorts(t, 6)
	cports := ports[3:]
	dir := t.TempDir()
	for i := range nodes {
		nodes[i] = server.NATSNode{Name: fmt.Sprintf("s%d", i+1), Dir: fmt.Sprintf("%s/s%d", dir, i+1), Port: ports[i], ClusterPort: cports[i]}
		for j, p := range cports {
			if j != i {
				nodes[i].Routes = append(nodes[i].Routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
			}
		}
	}
	servers := make([]*natsserver.Server, 3)
	start := func(i int) {
		ns, err := server.StartClusteredNATS(nodes[i])
		require.NoError(t, err)
		servers[i] = ns
	}
	for i := range servers {
		start(i)
	}
	t.Cleanup(func() {
		for _, ns := range servers {
			ns.Shutdown()
			ns.WaitForShutdown()
		}
	})
	var urls string
	for i, n := range nodes {
		if i > 0 {
			urls += ","
		}
		urls += fmt.Sprintf("nats://127.0.0.1:%d", n.Port)
	}
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, server.WaitForJetStream(ctx, nc))
	s, err := jetstore.Open(ctx, nc, &jetstore.Options{Name: "replicas", Replicas: 3})
	require.NoError(t, err)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	leader := func() string {
		info, err := js.Stream(ctx, "FLOWTRACK_STORE_replicas")
		require.NoError(t, err)
		return info.CachedInfo().Cluster.Leader
	}

	commit := func(from, to int64) {
		b := &engine.StoreBatch{Engine: []byte(fmt.Sprintf(`{"lastKey":%d}`, to)), Put: map[int64][]byte{}}
		for k := from; k <= to; k++ {
			b.Put[k] = []byte(fmt.Sprintf(`{"key":%d}`, k))
		}
		require.NoError(t, s.Commit(ctx, b))
	}
	commit(1, 20)
	for range 12 {
		got, err := s.ReaderServer(ctx, "flowtrack.store.replicas.>")
		require.NoError(t, err)
		require.Equal(t, leader(), got, "a read placed on a follower")
	}

	// A follower restarted behind the others is never read while it
	// catches up: every load holds every instance committed.
	// The follower stopped is not the server the store's connection
	// uses, so that its commits go on meanwhile.
	var follower int
	for i, ns := range servers {
		if ns.Name() != leader() && ns.Name() != nc.ConnectedServerName() {
			follower = i
		}
	}
	servers[follower].Shutdown()
	servers[follower].WaitForShutdown()
	for k := int64(21); k <= 400; k += 20 {
		commit(k, k+19)
	}
	start(follower)
	for range 10 {
		st, err := s.Load(ctx)
		require.NoError(t, err)
		require.JSONEq(t, `{"lastKey":400}`, string(st.Engine))
		require.Len(t, st.Instances, 400)
	}
}

// freePorts returns n distinct free ports on loopback: each listener is
// held until all are chosen, so that none is handed out twice.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}
