package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
)

// Partition is one partition a node serves: a native engine on the
// partition's own store, served on the partition's subjects (package
// server), with the node's per-partition services (Config.Services)
// around it.
type Partition struct {
	id    int
	n     *Node
	srv   *server.Server
	stops []func(context.Context) error
	sync  *nats.Subscription
	// unwatch ends the engine observer that drives msgs.
	unwatch func() error
	// msgs is the partition's side of the message protocol (messages.go).
	msgs *messages

	// deployMu orders the deployments the partition applies from the
	// cluster's log; applied is how many it holds (the log's first
	// applied entries), results their results, by log sequence, for the
	// deployments applied while this node owns it.
	deployMu sync.Mutex
	applied  int
	results  map[uint64][]byte
}

// ID returns the partition's number, 1 to the cluster's partition count.
func (p *Partition) ID() int { return p.id }

// Engine returns the partition's engine, for services next to it. Its
// keys are the partition's (engine.PartitionOf).
func (p *Partition) Engine() *engine.Engine { return p.srv.Engine() }

// openWait, in lease TTLs, bounds how long a partition's store waits out
// JetStream's transient states (an election, peers joining) while it
// opens and loads; its commits wait no longer than the partition's
// fence (fencedStore).
const openWait = 10

// open opens partition id behind fence f: its store (the stream
// FLOWTRACK_STORE_<cluster>_p<id>), its engine from what the store holds,
// the deployments of the cluster's log it misses, and then serves it and
// starts its services.
func (n *Node) open(ctx context.Context, id int, f *fence) (*Partition, error) {
	c := n.cfg
	// A request to the store gives up after half a TTL (at most
	// jetstore's default), so that a commit the fence did not stop in
	// time does not hold the partition's closing for long.
	// TakeOver: a commit of the partition's previous owner that reaches
	// the stream after this open, however late, is refused by JetStream
	// (jetstore.ErrSuperseded), so none lands after the engine loaded.
	st, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: storeName(c.Cluster, id), Replicas: c.Replicas,
		Timeout: min(n.ttl/2, 10*time.Second), Wait: openWait * n.ttl, TakeOver: true})
	if err != nil {
		return nil, err
	}
	applied, err := st.Deployments(ctx)
	if err != nil {
		return nil, err
	}
	var store engine.Store = st
	if c.WrapStore != nil {
		store = c.WrapStore(id, st)
	}
	p := &Partition{id: id, n: n, applied: applied, results: map[uint64][]byte{}}
	// The partition applies the deployments it misses before it answers;
	// one logged meanwhile reaches it through the router (deploy, and a
	// start answered UNKNOWN_PROCESS: router.startInstance).
	opts := c.Engine
	if id != 1 {
		// Timer and signal start events start instances on partition 1
		// only, as in Zeebe: one firing, one instance.
		opts = append(opts[:len(opts):len(opts)], engine.WithoutTimerAndSignalStarts())
	}
	p.srv, err = server.New(ctx, n.nc, server.Config{Cluster: c.Cluster, Partition: id, Replicas: c.Replicas, Engine: opts,
		Store: fencedStore{Store: store, fence: f}, Serving: f.open, Access: c.Access, Monitor: c.Monitor, Logger: c.Logger,
		OnError: func(err error) { n.logf("partition %d: %v", id, err) },
		Jobs:    server.JobsConfig{OnError: func(err error) { n.logf("partition %d: %v", id, err) }},
		Prepare: func(ctx context.Context, eng *engine.Engine) error {
			_, err := p.syncTo(ctx, eng, 0)
			return err
		}})
	if err != nil {
		return nil, err
	}
	for _, svc := range c.Services {
		stop, err := svc(ctx, p)
		if err != nil {
			_ = p.close(ctx)
			return nil, fmt.Errorf("partition %d: start a service: %w", id, err)
		}
		p.stops = append(p.stops, stop)
	}
	if err := p.startMessages(ctx); err != nil {
		_ = p.close(ctx)
		return nil, err
	}
	p.unwatch = p.Engine().Subscribe(p.msgs.onEvent)
	p.sync, err = n.nc.Subscribe(syncSubject(c.Cluster, id), p.answerSync)
	if err == nil {
		err = n.nc.Flush()
	}
	if err != nil {
		_ = p.close(ctx)
		return nil, fmt.Errorf("partition %d: subscribe to %s: %w", id, syncSubject(c.Cluster, id), err)
	}
	return p, nil
}

// close stops the partition's services, stops serving and closes its
// engine (a last commit, unless fenced).
func (p *Partition) close(ctx context.Context) error {
	var errs []error
	if p.sync != nil {
		errs = append(errs, p.sync.Unsubscribe())
	}
	if p.unwatch != nil {
		if err := p.unwatch(); err != nil && !errors.Is(err, engine.ErrObserverDropped) {
			errs = append(errs, err)
		}
	}
	if p.msgs != nil {
		p.msgs.close()
	}
	for i := len(p.stops) - 1; i >= 0; i-- {
		errs = append(errs, p.stops[i](ctx))
	}
	err := p.srv.Close(ctx)
	if errors.Is(err, ErrFenced) {
		err = nil // a fenced partition does not write, by design
	}
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("partition %d: close: %w", p.id, err)
	}
	return nil
}
