package jetstore_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/internal/testtime"
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
	c := startCluster(t, 3)
	nc := c.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(60*time.Second))
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
	for i, n := range c.nodes {
		if n.Name != leader() && n.Name != nc.ConnectedServerName() {
			follower = i
		}
	}
	c.stop(follower)
	for k := int64(21); k <= 400; k += 20 {
		commit(k, k+19)
	}
	require.NoError(t, c.start(follower))
	for range 10 {
		st, err := s.Load(ctx)
		require.NoError(t, err)
		require.JSONEq(t, `{"lastKey":400}`, string(st.Engine))
		require.Len(t, st.Instances, 400)
	}
}

// natsCluster is a cluster of embedded NATS servers on loopback.
type natsCluster struct {
	nodes   []server.NATSNode
	mu      sync.Mutex
	servers []*natsserver.Server
}

// startCluster starts n servers of a NATS cluster, shut down when the test
// ends.
func startCluster(t *testing.T, n int) *natsCluster {
	c := newCluster(t, n)
	for i := range n {
		require.NoError(t, c.start(i))
	}
	return c
}

// newCluster describes a NATS cluster of n servers without starting any.
func newCluster(t *testing.T, n int) *natsCluster {
	t.Helper()
	c := &natsCluster{nodes: make([]server.NATSNode, n), servers: make([]*natsserver.Server, n)}
	ports := freePorts(t, 2*n)
	cports := ports[n:]
	dir := t.TempDir()
	for i := range c.nodes {
		c.nodes[i] = server.NATSNode{Name: fmt.Sprintf("s%d", i+1), Dir: fmt.Sprintf("%s/s%d", dir, i+1), Port: ports[i], ClusterPort: cports[i]}
		for j, p := range cports {
			if j != i {
				c.nodes[i].Routes = append(c.nodes[i].Routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
			}
		}
	}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, ns := range c.servers {
			if ns != nil {
				ns.Shutdown()
				ns.WaitForShutdown()
			}
		}
	})
	return c
}

// start starts (or restarts) server i.
func (c *natsCluster) start(i int) error {
	ns, err := server.StartClusteredNATS(c.nodes[i])
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.servers[i] = ns
	c.mu.Unlock()
	return nil
}

// stop shuts server i down.
func (c *natsCluster) stop(i int) {
	c.mu.Lock()
	ns := c.servers[i]
	c.servers[i] = nil
	c.mu.Unlock()
	ns.Shutdown()
	ns.WaitForShutdown()
}

// index returns the index of the server named name.
func (c *natsCluster) index(name string) int {
	for i, n := range c.nodes {
		if n.Name == name {
			return i
		}
	}
	return -1
}

// connect connects to the cluster's servers, reconnecting for ever.
func (c *natsCluster) connect(t *testing.T) *nats.Conn {
	t.Helper()
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", n.Port))
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond), nats.RetryOnFailedConnect(true))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
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
