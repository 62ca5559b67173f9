package cluster_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/server"
)

// testCluster is an in-process cluster on loopback: size NATS servers
// with JetStream and routes between them, and one flowtrack node on each,
// connected to its own server only, so that killing a member kills both.
type testCluster struct {
	t     testing.TB
	cfg   cluster.Config
	nats  []server.NATSNode
	ns    []*natsserver.Server
	conns []*nats.Conn
	nodes []*cluster.Node
	// tweak, if set, changes member i's node config before it starts
	// (TestCluster_SlowDisk wraps one node's stores).
	tweak func(i int, cfg *cluster.Config)
	mu    sync.Mutex
	// logged counts the nodes' log lines by what they report (see
	// logPatterns).
	logged map[string]int
	// journal records every partition store's loads and commits, printed
	// when the test fails.
	journal *journal
}

// logPatterns are the lease events the harness counts in the nodes'
// logs.
var logPatterns = []string{"lease taken", ": fenced", "lease renewed after its fence closed", "released for rebalance"}

// logf logs a node's line and counts it.
func (c *testCluster) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	c.mu.Lock()
	for _, p := range logPatterns {
		if !strings.Contains(line, p) {
			continue
		}
		c.logged[p]++
		for _, n := range c.nats {
			if strings.Contains(line, " node "+n.Name+": ") {
				c.logged[p+"@"+n.Name]++ // by node
			}
		}
	}
	c.mu.Unlock()
	c.t.Log(line)
}

// counted returns how many log lines reported pattern; pattern@NODE
// counts node NODE's only.
func (c *testCluster) counted(pattern string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logged[pattern]
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// newTestCluster starts size NATS servers and, once JetStream serves, a
// node on each, one after the other (so the later ones join and the
// partitions are rebalanced), and waits until every partition is served.
func newTestCluster(t testing.TB, size int, cfg cluster.Config) *testCluster {
	t.Helper()
	return newTestClusterWith(t, size, cfg, nil)
}

// newTestClusterWith is newTestCluster with tweak changing each member's
// node config (nil: none).
func newTestClusterWith(t testing.TB, size int, cfg cluster.Config, tweak func(i int, cfg *cluster.Config)) *testCluster {
	t.Helper()
	c := &testCluster{t: t, cfg: cfg, tweak: tweak, logged: map[string]int{}, journal: newJournal()}
	t.Cleanup(func() {
		if t.Failed() {
			for p := 1; p <= cfg.Partitions; p++ {
				t.Logf("partition %d's stores:\n%s", p, c.journal.story(p))
			}
		}
	})
	cports := make([]int, size)
	for i := range cports {
		cports[i] = freePort(t)
	}
	dir := t.TempDir()
	for i := range size {
		var routes []string
		for j, p := range cports {
			if j != i {
				routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
			}
		}
		c.nats = append(c.nats, server.NATSNode{Name: fmt.Sprintf("n%d", i+1), Dir: fmt.Sprintf("%s/n%d", dir, i+1),
			Port: freePort(t), ClusterPort: cports[i], Routes: routes})
	}
	c.ns = make([]*natsserver.Server, size)
	c.conns = make([]*nats.Conn, size)
	c.nodes = make([]*cluster.Node, size)
	t.Cleanup(c.shutdown)
	for i := range size {
		c.startNATS(i)
	}
	for i := range size {
		c.startNode(i)
	}
	c.waitBalanced(testtime.Scale(60 * time.Second))
	return c
}

func (c *testCluster) startNATS(i int) {
	c.t.Helper()
	ns, err := server.StartClusteredNATS(c.nats[i])
	require.NoError(c.t, err)
	c.mu.Lock()
	c.ns[i] = ns
	c.mu.Unlock()
}

func (c *testCluster) startNode(i int) {
	c.t.Helper()
	nc, err := nats.Connect(c.ns[i].ClientURL(), nats.MaxReconnects(-1), nats.ReconnectBufSize(-1),
		nats.ReconnectWait(100*time.Millisecond), nats.IgnoreDiscoveredServers()) // a node lives and dies with its own server
	require.NoError(c.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(60*time.Second))
	defer cancel()
	require.NoError(c.t, server.WaitForJetStream(ctx, nc))
	cfg := c.cfg
	cfg.Node = c.nats[i].Name
	cfg.Logf = c.logf
	if c.tweak != nil {
		c.tweak(i, &cfg)
	}
	cfg.WrapStore = c.journal.wrap(cfg.Node, cfg.WrapStore)
	n, err := cluster.Start(ctx, nc, cfg)
	require.NoError(c.t, err)
	c.mu.Lock()
	c.conns[i], c.nodes[i] = nc, n
	c.mu.Unlock()
}

// kill stops member i as a crash would: its node (no further commit,
// leases left to expire) and its NATS server.
func (c *testCluster) kill(i int) {
	c.mu.Lock()
	n, nc, ns := c.nodes[i], c.conns[i], c.ns[i]
	c.nodes[i], c.conns[i], c.ns[i] = nil, nil, nil
	c.mu.Unlock()
	n.Kill()
	nc.Close()
	ns.Shutdown()
	ns.WaitForShutdown()
}

// restart starts member i again on its directory and ports.
func (c *testCluster) restart(i int) {
	c.startNATS(i)
	c.startNode(i)
}

// client returns a client connected to every server of the cluster.
func (c *testCluster) client() *client.Client {
	c.t.Helper()
	var urls []string
	for _, n := range c.nats {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", n.Port))
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1))
	require.NoError(c.t, err)
	c.t.Cleanup(nc.Close)
	return client.New(nc, c.cfg.Cluster)
}

// served reports whether the live nodes serve every partition, each
// once.
func (c *testCluster) served() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []int
	for _, n := range c.nodes {
		if n != nil {
			all = append(all, n.Owned()...)
		}
	}
	slices.Sort(all)
	if len(all) != c.cfg.Partitions {
		return false
	}
	for i, p := range all {
		if p != i+1 {
			return false
		}
	}
	return true
}

// waitServed waits until every partition is served and returns how long
// that took; the test fails past limit.
func (c *testCluster) waitServed(limit time.Duration) time.Duration {
	c.t.Helper()
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !c.served() {
		if time.Since(start) > limit {
			c.t.Fatalf("partitions not all served within %s: %s", limit, c.owners())
		}
		<-tick.C
	}
	return time.Since(start)
}

func (c *testCluster) owners() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for i, n := range c.nodes {
		if n != nil {
			parts = append(parts, fmt.Sprintf("%s=%v", c.nats[i].Name, n.Owned()))
		}
	}
	return strings.Join(parts, " ")
}

func (c *testCluster) shutdown() {
	for i := range c.nodes {
		c.mu.Lock()
		n, nc, ns := c.nodes[i], c.conns[i], c.ns[i]
		c.mu.Unlock()
		if n != nil {
			n.Kill() // quicker than handing partitions over at the end
		}
		if nc != nil {
			nc.Close()
		}
		if ns != nil {
			ns.Shutdown()
			ns.WaitForShutdown()
		}
	}
}

// waitBalanced waits until every partition is served and each live node
// serves its fair share.
func (c *testCluster) waitBalanced(limit time.Duration) {
	c.t.Helper()
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !c.served() || !c.balanced() {
		if time.Since(start) > limit {
			c.t.Fatalf("partitions not balanced within %s: %s", limit, c.owners())
		}
		<-tick.C
	}
}

func (c *testCluster) balanced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := 0
	for _, n := range c.nodes {
		if n != nil {
			live++
		}
	}
	share := (c.cfg.Partitions + live - 1) / live
	for _, n := range c.nodes {
		if n != nil && len(n.Owned()) > share {
			return false
		}
	}
	return true
}

// cutOff shuts member i's NATS server down and leaves its node running,
// cut off from the cluster: it must fence itself off its partitions.
func (c *testCluster) cutOff(i int) {
	c.mu.Lock()
	ns := c.ns[i]
	c.ns[i] = nil
	c.mu.Unlock()
	ns.Shutdown()
	ns.WaitForShutdown()
}

// survivorsServe reports whether the members other than i serve every
// partition.
func (c *testCluster) survivorsServe(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for j, node := range c.nodes {
		if j != i && node != nil {
			n += len(node.Owned())
		}
	}
	return n == c.cfg.Partitions
}

// until calls cond every interval on the test's goroutine until it holds
// or limit passed, and reports whether it held. Unlike testify's
// Eventually, which runs the condition on a goroutine of its own and may
// give up while a call is still running, cond runs one call at a time on
// the caller's goroutine: what it writes is settled when until returns,
// and it may call require.
func until(limit, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}

// requireEventually fails the test unless cond holds within limit
// (until).
func requireEventually(t testing.TB, cond func() bool, limit, interval time.Duration, msgAndArgs ...any) {
	t.Helper()
	if !until(limit, interval, cond) {
		require.Fail(t, fmt.Sprintf("condition not met within %s", limit), msgAndArgs...)
	}
}
