package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/bench/workload"
	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/server"
)

// clusterPartitions is the benchmark cluster's partition count: a fair
// share of it is whole on 1, 2 and 3 nodes.
const clusterPartitions = 6

// clusterName names the benchmark cluster in subjects and streams.
const clusterName = "bench"

// clusterOptions keeps a cluster row to a few seconds: calls through
// NATS and fsynced JetStream commits run at hundreds of instances a
// second, not the in-memory engine's hundreds of thousands.
var clusterOptions = workload.Options{Runs: 3, RunTime: time.Second, WarmupN: 100, MinN: 100, MaxN: 5_000}

// clusterWorkloads are the workloads of issue #19's scaling table.
var clusterWorkloads = []string{"straight", "message"}

// clusterBench measures straight and message through package client on
// in-process clusters of sizes nodes (each node a NATS server with
// JetStream, synced, and a flowtrack node connected to it alone;
// replicas min(3, nodes)), after the embedded engine on the bbolt store,
// synced, driven by the same loop (host "bbolt"). Rows have kind
// "cluster" and host "bbolt" or "cluster-<nodes>". Every node, every
// NATS server and the driver run in this process, so a CPU profile of it
// shows them all.
func clusterBench(dirs workload.Dirs, sizes []int, modes []string, fixedN int) []workload.Result {
	opts := clusterOptions
	opts.FixedN = fixedN
	var out []workload.Result
	measure := func(host string, target func() (workload.Target, error)) {
		for _, name := range clusterWorkloads {
			w, _ := workload.Find(name)
			for _, m := range modes {
				// A cluster serves several rows: keys never repeat.
				opts.KeyOffset += 1_000_000
				r := measureCluster(host, w, workload.Mode(m), dirs, opts, target)
				fmt.Fprintf(os.Stderr, "%-9s %-9s %-4s %8.0f inst/s  p50 %8.1fms  p99 %8.1fms  %s\n",
					host, w.Name, m, r.Median, r.P50us/1000, r.P99us/1000, r.Error)
				out = append(out, r)
			}
		}
	}
	measure("bbolt", func() (workload.Target, error) { return workload.NewNativeStore(false) })
	for _, size := range sizes {
		c, err := startBenchCluster(size)
		if err != nil {
			for _, name := range clusterWorkloads {
				for _, m := range modes {
					out = append(out, workload.Result{Kind: "cluster", Host: fmt.Sprintf("cluster-%d", size), Workload: name,
						Mode: workload.Mode(m), Error: err.Error()})
				}
			}
			continue
		}
		// One client connection to every server, as an application has;
		// each row a fresh subscription to the events, on the cluster
		// kept for the size's rows.
		measure(fmt.Sprintf("cluster-%d", size), func() (workload.Target, error) {
			return workload.NewRemote(c.client, clusterName)
		})
		c.stop()
	}
	return out
}

// measureCluster measures one row on a fresh target.
func measureCluster(host string, w workload.Workload, mode workload.Mode, dirs workload.Dirs, opts workload.Options,
	target func() (workload.Target, error)) workload.Result {
	res := workload.Result{Kind: "cluster", Host: host, Workload: w.Name, Mode: mode}
	xml, err := dirs.XML(w)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	t, err := target()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if err := t.Deploy(w.File, xml); err != nil {
		res.Error = "deploy: " + err.Error()
	} else {
		res = workload.Measure(host, t, w, mode, opts)
		res.Kind = "cluster"
	}
	if err := t.Close(); err != nil && res.OK {
		res.OK, res.Error = false, "close: "+err.Error()
	}
	return res
}

// benchCluster is an in-process cluster on loopback.
type benchCluster struct {
	dir    string
	ns     []*natsserver.Server
	conns  []*nats.Conn
	nodes  []*cluster.Node
	client *nats.Conn
	// taken and released count the partition leases the nodes took and
	// released for a rebalance while the cluster started: the start-up
	// churn (taken beyond the partition count is churn).
	taken, released atomic.Int64
}

// logf counts what the nodes say of their leases.
func (c *benchCluster) logf(format string, args ...any) {
	switch msg := fmt.Sprintf(format, args...); {
	case strings.HasSuffix(msg, ": lease taken"):
		c.taken.Add(1)
	case strings.Contains(msg, ": released for rebalance"):
		c.released.Add(1)
	}
}

// startBenchCluster starts size NATS servers (routed to each other when
// more than one), a node on each, waits until the partitions are spread
// evenly, and connects a client to every server.
func startBenchCluster(size int) (c *benchCluster, err error) {
	dir, err := os.MkdirTemp("", "flowbench-cluster")
	if err != nil {
		return nil, err
	}
	c = &benchCluster{dir: dir}
	defer func() {
		if err != nil {
			c.stop()
			err = fmt.Errorf("start a cluster of %d: %w", size, err)
		}
	}()
	ports := make([]int, size)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return c, err
		}
	}
	for i := range size {
		var ns *natsserver.Server
		if size == 1 {
			ns, err = server.StartNATS(filepath.Join(dir, "n1"), 0)
		} else {
			var routes []string
			for j, p := range ports {
				if j != i {
					routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
				}
			}
			ns, err = server.StartClusteredNATS(server.NATSNode{Name: fmt.Sprintf("n%d", i+1),
				Dir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)), ClusterPort: ports[i], Routes: routes})
		}
		if err != nil {
			return c, err
		}
		c.ns = append(c.ns, ns)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var urls []string
	var begin time.Time
	for i, ns := range c.ns {
		urls = append(urls, ns.ClientURL())
		nc, err := nats.Connect(ns.ClientURL(), nats.IgnoreDiscoveredServers(), nats.ReconnectBufSize(-1))
		if err != nil {
			return c, err
		}
		c.conns = append(c.conns, nc)
		if err := server.WaitForJetStream(ctx, nc); err != nil {
			return c, err
		}
		if i == 0 {
			begin = time.Now()
		}
		n, err := cluster.Start(ctx, nc, cluster.Config{Cluster: clusterName, Node: fmt.Sprintf("n%d", i+1),
			Partitions: clusterPartitions, Replicas: min(3, size), BusinessKey: "key", Logf: c.logf})
		if err != nil {
			return c, err
		}
		c.nodes = append(c.nodes, n)
	}
	if err := c.waitBalanced(ctx); err != nil {
		return c, err
	}
	fmt.Fprintf(os.Stderr, "cluster-%d start-up: nodes started one after another, balanced %.1f s after the first; "+
		"%d partitions opened %d times, %d released for rebalance\n",
		size, time.Since(begin).Seconds(), clusterPartitions, c.taken.Load(), c.released.Load())
	c.client, err = nats.Connect(strings.Join(urls, ","))
	return c, err
}

// waitBalanced waits until every partition is served, each by one node
// and no node above its fair share, so that no row measures a rebalance.
func (c *benchCluster) waitBalanced(ctx context.Context) error {
	share := (clusterPartitions + len(c.nodes) - 1) / len(c.nodes)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		seen, fair := map[int]bool{}, true
		var owners []string
		for i, n := range c.nodes {
			owned := n.Owned()
			fair = fair && len(owned) <= share
			for _, p := range owned {
				seen[p] = true
			}
			owners = append(owners, fmt.Sprintf("n%d=%v", i+1, owned))
		}
		if fair && len(seen) == clusterPartitions {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("partitions not spread evenly: %s: %w", strings.Join(owners, " "), ctx.Err())
		case <-tick.C:
		}
	}
}

// stop kills the nodes (no hand-over: the cluster is thrown away), shuts
// the servers down and removes their directories.
func (c *benchCluster) stop() {
	if c.client != nil {
		c.client.Close()
	}
	for _, n := range c.nodes {
		n.Kill()
	}
	for _, nc := range c.conns {
		nc.Close()
	}
	for _, ns := range c.ns {
		ns.Shutdown()
		ns.WaitForShutdown()
	}
	_ = os.RemoveAll(c.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
