package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	// unwatch ends watch.
	unwatch func() error
	// Misplaced counts the message subscriptions opened on this
	// partition for a correlation key another partition owns (watch).
	misplaced atomic.Int64

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

// open opens partition id behind fence f: its store (the stream
// FLOWTRACK_STORE_<cluster>_p<id>), its engine from what the store holds,
// the deployments of the cluster's log it misses, and then serves it and
// starts its services.
func (n *Node) open(ctx context.Context, id int, f *fence) (*Partition, error) {
	c := n.cfg
	// A request to the store gives up after half a TTL (at most
	// jetstore's default), so that a commit the fence did not stop in
	// time does not hold the partition's closing for long.
	st, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: storeName(c.Cluster, id), Replicas: c.Replicas,
		Timeout: min(n.ttl/2, 10*time.Second)})
	if err != nil {
		return nil, err
	}
	applied, err := st.Deployments(ctx)
	if err != nil {
		return nil, err
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
	p.srv, err = server.New(ctx, n.nc, server.Config{Cluster: c.Cluster, Partition: id, Engine: opts,
		Store: fencedStore{Store: st, fence: f},
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
	p.unwatch = p.Engine().Subscribe(p.watch)
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

// watch reports each message subscription an instance of the partition
// opens for a correlation key of another partition: publish_message goes
// to the key's partition, so that message will not reach the instance
// (see the package doc, Messages). It is the only sign of a model or a
// business key that does not fit the cluster's rule, so the node says it.
func (p *Partition) watch(ev engine.Event) {
	if ev.Type != engine.MessageSubscribed {
		return
	}
	if owner := MessagePartition(ev.CorrelationKey, p.n.parts); owner != p.id {
		p.misplaced.Add(1)
		p.n.logf("partition %d: instance %d waits at %s for message %q with correlation key %q, which partition %d owns: "+
			"a message published for that key will not reach it (start it with the key as its business key)",
			p.id, ev.InstanceKey, ev.ElementID, ev.Name, ev.CorrelationKey, owner)
	}
}

// Misplaced returns how many message subscriptions instances of the
// partition opened for correlation keys other partitions own: waits no
// published message can end (see the package doc, Messages).
func (p *Partition) Misplaced() int64 { return p.misplaced.Load() }

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
