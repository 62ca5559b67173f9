package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/flowtrack/flowtrack/internal/reply"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
	"github.com/flowtrack/flowtrack/server/monitor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config configures Start. Node and, when the cluster is created,
// Partitions are required; the rest has defaults.
type Config struct {
	// Cluster names the cluster in subjects, buckets and streams:
	// letters, digits, "_" and "-". Default "default".
	Cluster string
	// Node names this node, unique among the cluster's live nodes:
	// letters, digits, "_" and "-".
	Node string
	// Partitions is the cluster's partition count, 1 to
	// engine.MaxPartitions. The first node writes it; later nodes must
	// give the same count or 0 (read it).
	Partitions int
	// Replicas is the replication factor of the partitions' streams, the
	// deployment log and the buckets (3 in a 3-server NATS cluster).
	// Default 1.
	Replicas int
	// LeaseTTL is how long a lease outlives its last renewal: a dead
	// node's partitions are taken over about LeaseTTL after it died. It is
	// fixed when the cluster is created; later nodes use the bucket's.
	// Default DefaultLeaseTTL.
	LeaseTTL time.Duration
	// BusinessKey names the start variable that places an instance: an
	// instance started with a string or number in it runs on the
	// partition of that value as a correlation key, where its messages
	// go. Without it (or without the variable), starts go round robin.
	BusinessKey string
	// Engine are further options of every partition's engine; the node
	// sets the store, the clock and the key space.
	Engine []engine.Option
	// Services start with every partition the node comes to own, once
	// it serves, and stop before it closes: the place for per-partition workers (a job
	// feeder, an exporter). A service that fails to start fails the
	// partition's opening (its lease is given up).
	Services []Service
	// Logf receives what the node does with leases and partitions (taken,
	// released, fenced); nil logs nothing.
	Logf func(format string, args ...any)
	// Logger, when set, gets the same reports as records (log/slog) with
	// the cluster, the node and the partition as attributes, at level
	// Warn when they report an error and Info otherwise; every partition's
	// server logs to it too (server.Config.Logger). Nil logs nothing.
	Logger *slog.Logger
	// WrapStore, for tests and fault injection only, wraps the store of
	// every partition the node opens (a slow disk: commits delayed). It
	// sits beneath the partition's fence: the fence checks a commit
	// before the wrapper sees it, so a delay in the wrapper is a commit
	// under way while the fence may close and another node take the
	// partition over (TestCluster_SlowDisk). The wrapper must pass every
	// call on to s, with its result. Nil wraps nothing.
	WrapStore func(partition int, s engine.Store) engine.Store
	// Access, when set, checks every request against its caller's role
	// (server.Access): the router refuses what the role does not allow,
	// and each partition's server checks again, with the job types of
	// the jobs it holds, the caller's identity the router passes on.
	// Nil checks nothing.
	Access *server.Access
	// Monitor, when set, gets the node's metrics and readiness
	// (server/monitor): every partition the node serves as an engine of
	// its own, the cluster's partitions and which the node owns, and its
	// lease renewals. The node is ready while it serves a partition.
	Monitor *monitor.Monitor
}

// Service is started on a partition the node comes to own (Config.
// Services), on the goroutine opening it, once its engine holds the
// cluster's deployments and the partition answers requests. The stop function
// it returns runs when the partition is released, fenced or closed,
// before its engine closes (a fenced engine commits nothing more). The
// partition's engine is safe for concurrent use.
type Service func(ctx context.Context, p *Partition) (stop func(context.Context) error, err error)

// setupWait bounds how long Start waits out JetStream's transient
// states (servers of a NATS cluster started together cannot place a
// replicated bucket or stream at once; a leader is elected) while it
// creates or opens the cluster's buckets and deployment log, when its
// context has no earlier deadline.
const setupWait = 2 * time.Minute

// DefaultLeaseTTL is the lease TTL of a cluster created without one.
const DefaultLeaseTTL = 6 * time.Second

// Errors of Start.
var (
	// ErrPartitions is returned by Start for a partition count that
	// differs from the one the cluster was created with, or a cluster
	// created with none.
	ErrPartitions = api.ErrPartitions
	// ErrNodeLive is returned by Start when a live node already has the
	// node's name.
	ErrNodeLive = api.ErrNodeLive
	// ErrReconnectBuffer is returned by Start for a connection that
	// keeps what is published while it reconnects (nats.go's default): a
	// commit buffered while the node was cut off would reach the stream
	// when it reconnects, after its fence closed and another node took
	// the partition. Connect with nats.ReconnectBufSize(-1).
	ErrReconnectBuffer = api.ErrReconnectBuffer
	// ErrFenced is what a partition's store answers to a commit once the
	// node can no longer be sure it holds the partition's lease.
	// It wraps engine.ErrStoreLost: the partition's engine takes no
	// command after it.
	ErrFenced = api.ErrFenced
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Node is one flowtrack node of a cluster. Start starts it; Close stops
// it, handing its partitions over cleanly. Its methods are safe for
// concurrent use.
type Node struct {
	cfg    Config
	nc     *nats.Conn
	js     jetstream.JetStream
	leases jetstream.KeyValue
	meta   jetstream.KeyValue // the settings bucket: partition count, members
	deploy jetstream.Stream
	// subs and corr are the buckets of the message protocol (messages.go).
	subs  jetstream.KeyValue
	corr  jetstream.KeyValue
	ttl   time.Duration
	parts int
	epoch time.Time // the node's monotonic origin for lease deadlines

	router *router
	// mux sends the node's requests to partitions, whose answers may
	// come in chunks (package reply).
	mux *reply.Mux

	mu      sync.Mutex
	owned   map[int]*owned
	nodeRev uint64
	closed  bool

	// closing counts the fenced partitions closing in the background.
	closing sync.WaitGroup

	stop chan struct{}
	done chan struct{}
}

// owned is a partition the node holds the lease of.
type owned struct {
	id  int
	rev uint64 // the lease entry's revision
	// fence is shared with the partition's store: commits are refused
	// after its deadline.
	fence *fence
	part  *Partition // nil while it opens
	// opening is closed when the partition has opened or failed to.
	opening chan struct{}
}

// Start joins (or creates) the cluster on nc: it checks the partition
// count, registers the node, answers the cluster's operations and takes
// partitions up to its fair share. nc must not buffer while reconnecting
// (nats.ReconnectBufSize(-1)); it stays the caller's; close the node
// before it.
//
// # Errors
//
// ErrReconnectBuffer, ErrPartitions, ErrNodeLive, server.ErrClusterServed
// (a single server answers the cluster's subjects), a bad name, or
// JetStream's error.
func Start(ctx context.Context, nc *nats.Conn, cfg Config) (*Node, error) {
	if cfg.Cluster == "" {
		cfg.Cluster = "default"
	}
	if !validName.MatchString(cfg.Cluster) {
		return nil, fmt.Errorf("cluster: name %q: only letters, digits, \"_\" and \"-\" are allowed", cfg.Cluster)
	}
	if !validName.MatchString(cfg.Node) {
		return nil, fmt.Errorf("cluster %s: node name %q: only letters, digits, \"_\" and \"-\" are allowed, and it is required", cfg.Cluster, cfg.Node)
	}
	if cfg.Partitions < 0 || cfg.Partitions > engine.MaxPartitions {
		return nil, fmt.Errorf("cluster %s: %w %d: 1 to %d", cfg.Cluster, ErrPartitions, cfg.Partitions, engine.MaxPartitions)
	}
	if nc.Opts.ReconnectBufSize >= 0 {
		return nil, fmt.Errorf("cluster %s: %w", cfg.Cluster, ErrReconnectBuffer)
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cfg.Cluster, err)
	}
	n := &Node{cfg: cfg, nc: nc, js: js, mux: reply.NewMux(nc), epoch: time.Now(), owned: map[int]*owned{},
		stop: make(chan struct{}), done: make(chan struct{})}
	// Servers of a NATS cluster that start together may not place a
	// replicated bucket or stream at once: setup waits that out (and
	// returns ErrPartitions, ErrClusterServed or a refusal at once).
	sctx, scancel := jswait.Bound(ctx, setupWait)
	err = jswait.Do(sctx, func(ctx context.Context) error {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := n.setup(actx)
		if err != nil && jswait.Transient(err) {
			n.logf("setup: %v; waiting", err)
		}
		return err
	})
	scancel()
	if err != nil {
		return nil, err
	}
	if err := n.join(ctx); err != nil {
		return nil, err
	}
	if cfg.Monitor != nil {
		cfg.Monitor.SetOwnership(func() ([]int, int) { return n.Owned(), n.parts })
	}
	n.router = newRouter(n)
	if err := n.router.start(); err != nil {
		_ = n.leases.Delete(context.Background(), nodeKey(cfg.Node))
		return nil, err
	}
	go n.run()
	return n, nil
}

// setup creates or opens the cluster's bucket, leases and deployment log
// and settles the partition count.
func (n *Node) setup(ctx context.Context) error {
	c := n.cfg
	// ensureKeyValue and ensureStream, not CreateOrUpdate: see
	// streams.go, why nodes started together waited 10 s here.
	meta, err := ensureKeyValue(ctx, n.js, jetstream.KeyValueConfig{Bucket: metaBucket(c.Cluster),
		Description: "flowtrack cluster settings (package cluster)", Replicas: c.Replicas})
	if err != nil {
		return fmt.Errorf("cluster %s: settings bucket: %w", c.Cluster, err)
	}
	meta = jswait.KeyValue(meta)
	n.meta = meta
	want := strconv.Itoa(c.Partitions)
	if c.Partitions > 0 {
		_, err = meta.Create(ctx, "partitions", []byte(want))
	}
	switch {
	case c.Partitions > 0 && err == nil:
		n.parts = c.Partitions
	case c.Partitions == 0 || errors.Is(err, jetstream.ErrKeyExists):
		e, gerr := meta.Get(ctx, "partitions")
		if errors.Is(gerr, jetstream.ErrKeyNotFound) && c.Partitions > 0 {
			// Another node wrote it, and the replica read has not seen it
			// yet (nodes started together): read again.
			return jswait.Again(fmt.Errorf("cluster %s: the partition count another node wrote is not readable yet: %w", c.Cluster, gerr))
		}
		if errors.Is(gerr, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("cluster %s: %w: the cluster does not exist yet; give its partition count", c.Cluster, ErrPartitions)
		}
		if gerr != nil {
			return fmt.Errorf("cluster %s: read the partition count: %w", c.Cluster, gerr)
		}
		got, perr := strconv.Atoi(string(e.Value()))
		if perr != nil || got < 1 || got > engine.MaxPartitions {
			return fmt.Errorf("cluster %s: %w: the settings hold %q", c.Cluster, ErrPartitions, e.Value())
		}
		if c.Partitions > 0 && got != c.Partitions {
			return fmt.Errorf("cluster %s: %w: it was created with %d partitions, this node was started with %d", c.Cluster, ErrPartitions, got, c.Partitions)
		}
		n.parts = got
	default:
		return fmt.Errorf("cluster %s: write the partition count: %w", c.Cluster, err)
	}
	n.leases, err = ensureKeyValue(ctx, n.js, jetstream.KeyValueConfig{Bucket: leaseBucket(c.Cluster),
		Description: "flowtrack cluster leases (package cluster)", TTL: c.LeaseTTL, Replicas: c.Replicas})
	if err != nil {
		return fmt.Errorf("cluster %s: lease bucket: %w", c.Cluster, err)
	}
	n.leases = jswait.KeyValue(n.leases)
	st, err := n.leases.Status(ctx)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		err = jswait.Again(err) // as above
	}
	if err != nil {
		return fmt.Errorf("cluster %s: lease bucket: %w", c.Cluster, err)
	}
	if n.ttl = st.TTL(); n.ttl <= 0 {
		return fmt.Errorf("cluster %s: lease bucket %s has no TTL", c.Cluster, leaseBucket(c.Cluster))
	}
	if err := n.refuseSingleServer(ctx); err != nil {
		return err
	}
	n.deploy, err = ensureStream(ctx, n.js, jetstream.StreamConfig{
		Name:        deployStream(c.Cluster),
		Description: "flowtrack cluster deployment log (package cluster)",
		Subjects:    []string{deploySubject(c.Cluster)},
		Storage:     jetstream.FileStorage,
		Replicas:    c.Replicas,
		AllowDirect: true,
	})
	if err != nil {
		return fmt.Errorf("cluster %s: deployment log: %w", c.Cluster, err)
	}
	n.subs, err = ensureKeyValue(ctx, n.js, jetstream.KeyValueConfig{Bucket: subsBucket(c.Cluster),
		Description: "flowtrack cluster message waits across partitions (package cluster)", Replicas: c.Replicas})
	if err != nil {
		return fmt.Errorf("cluster %s: message subscription bucket: %w", c.Cluster, err)
	}
	n.subs = jswait.KeyValue(n.subs)
	n.corr, err = ensureKeyValue(ctx, n.js, jetstream.KeyValueConfig{Bucket: doneBucket(c.Cluster),
		Description: "flowtrack cluster correlations made on request (package cluster)", TTL: DoneTTL, Replicas: c.Replicas})
	if err != nil {
		return fmt.Errorf("cluster %s: correlation bucket: %w", c.Cluster, err)
	}
	n.corr = jswait.KeyValue(n.corr)
	// The job stream is created here, with the cluster's replicas, rather
	// than by the first partition's job queue to open.
	if _, err := ensureStream(ctx, n.js, server.JobStreamConfig(c.Cluster, c.Replicas)); err != nil {
		return fmt.Errorf("cluster %s: job stream: %w", c.Cluster, err)
	}
	return nil
}

// refuseSingleServer refuses to join a cluster whose subjects a single
// flowtrack serve (no --node) answers: it would take requests meant for
// the partitions. Nodes answer too, naming themselves (NodeHeader); their
// lease entries may all have expired while they still answer (a restart
// after the others lost NATS for a while), and a router whose partitions
// have no owner answers only after its request's timeout (router.timeout). So a live node entry,
// an answer naming a node or no answer within a second lets the node
// join; only an answer without the header tells a single server, which
// answers "now" at once.
func (n *Node) refuseSingleServer(ctx context.Context) error {
	keys, err := n.leases.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return fmt.Errorf("cluster %s: lease bucket: %w", n.cfg.Cluster, err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "node.") {
			return nil
		}
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	reply, err := n.nc.RequestWithContext(rctx, wire.OpSubject(n.cfg.Cluster, "now"), nil)
	switch {
	case err == nil && reply.Header.Get(NodeHeader) != "":
		return nil
	case err == nil:
		return fmt.Errorf("cluster %s: %w (a single flowtrack serve without --node)", n.cfg.Cluster, server.ErrClusterServed)
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return nil
	}
	return fmt.Errorf("cluster %s: ask whether a single server answers: %w", n.cfg.Cluster, err)
}

// join registers the node as live. A node of the same name that died
// leaves an entry until its TTL: join waits that long for it to expire.
func (n *Node) join(ctx context.Context) error {
	deadline := time.Now().Add(n.ttl + n.ttl/2)
	for {
		rev, err := n.leases.Create(ctx, nodeKey(n.cfg.Node), []byte(time.Now().UTC().Format(time.RFC3339Nano)))
		if err == nil {
			n.nodeRev = rev
			// A member entry outlives the lease, so that a node that dies
			// is listed as dead (ReadStatus) rather than vanish.
			if _, err := n.meta.Put(ctx, memberPrefix+n.cfg.Node, []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
				return fmt.Errorf("cluster %s: register member %s: %w", n.cfg.Cluster, n.cfg.Node, err)
			}
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("cluster %s: register node %s: %w", n.cfg.Cluster, n.cfg.Node, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster %s: node %s: %w", n.cfg.Cluster, n.cfg.Node, ErrNodeLive)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster %s: register node %s: %w", n.cfg.Cluster, n.cfg.Node, ctx.Err())
		case <-time.After(n.ttl / 8):
		}
	}
}

// Partitions returns the cluster's partition count.
func (n *Node) Partitions() int { return n.parts }

// Owned returns the partitions the node serves now, ascending.
func (n *Node) Owned() []int {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []int
	for id, o := range n.owned {
		if o.part != nil {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Partition returns the partition id the node serves, or nil.
func (n *Node) Partition(id int) *Partition {
	n.mu.Lock()
	defer n.mu.Unlock()
	if o := n.owned[id]; o != nil {
		return o.part
	}
	return nil
}

// Close stops the node cleanly: it stops answering, releases its
// partitions (each stops serving, commits and closes, then its lease is
// deleted, so another node takes it at once) and leaves the cluster.
func (n *Node) Close(ctx context.Context) error {
	if !n.halt() {
		return nil
	}
	n.router.close()
	var errs []error
	for _, id := range n.ownedIDs() {
		errs = append(errs, n.release(ctx, id))
	}
	n.closing.Wait()
	if err := n.leases.Delete(ctx, nodeKey(n.cfg.Node)); err != nil {
		errs = append(errs, fmt.Errorf("leave: %w", err))
	}
	if err := n.meta.Delete(ctx, memberPrefix+n.cfg.Node); err != nil {
		errs = append(errs, fmt.Errorf("leave: member entry: %w", err))
	}
	if err := n.mux.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster %s: close node %s: %w", n.cfg.Cluster, n.cfg.Node, err)
	}
	return nil
}

// Kill stops the node as a crash would, for fault tests: it stops
// answering, fences every partition (no commit from here on) and closes
// them, and leaves its leases to expire.
func (n *Node) Kill() {
	if !n.halt() {
		return
	}
	n.router.close()
	for _, id := range n.ownedIDs() {
		n.mu.Lock()
		o := n.owned[id]
		n.mu.Unlock()
		o.fence.trip()
		_ = n.drop(context.Background(), o)
	}
	n.closing.Wait()
	_ = n.mux.Close() // a crash: nothing to report
}

// halt stops the lease loop; false if the node was already stopped.
func (n *Node) halt() bool {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return false
	}
	n.closed = true
	n.mu.Unlock()
	close(n.stop)
	<-n.done
	return true
}

func (n *Node) ownedIDs() []int {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids := make([]int, 0, len(n.owned))
	for id := range n.owned {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func metaBucket(cluster string) string    { return "flowtrack_" + cluster }
func leaseBucket(cluster string) string   { return "flowtrack_" + cluster + "_leases" }
func deployStream(cluster string) string  { return "FLOWTRACK_" + cluster + "_DEPLOYMENTS" }
func deploySubject(cluster string) string { return "flowtrack." + cluster + ".deployments" }
func nodeKey(node string) string          { return "node." + node }
func partitionKey(p int) string           { return "partition." + strconv.Itoa(p) }
func storeName(cluster string, p int) string {
	return cluster + "_p" + strconv.Itoa(p)
}

// syncSubject is where partition p's owner applies the deployment log up
// to a sequence (deployments.go).
func syncSubject(cluster string, p int) string {
	return "flowtrack." + cluster + ".sync." + strconv.Itoa(p)
}
