package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/nats-io/nats.go/jetstream"
)

// fence guards a partition's store: after its deadline (or once tripped)
// every commit is refused with ErrFenced, for good. The deadline is half
// a lease TTL after the last renewal was sent, on the node's monotonic
// clock: the lease entry cannot expire before a full TTL after the bucket
// stored that renewal, which is after it was sent, so a fenced node has
// stopped writing for at least half a TTL before anyone else may start.
//
// A fence never reopens, even when a late renewal shows the lease was
// still the node's: the commands whose commits it refused took effect in
// the engine's memory only, and were answered as not taken (the router
// sends them again), so the engine must never commit them. The partition
// is closed and opened again from its store.
type fence struct {
	epoch time.Time
	until atomic.Int64 // nanoseconds since epoch; -1 once closed
}

func newFence(epoch time.Time, sent time.Time, ttl time.Duration) *fence {
	f := &fence{epoch: epoch}
	f.until.Store(int64(sent.Sub(epoch) + ttl/2))
	return f
}

// extend moves the deadline to half a TTL after a renewal sent at sent,
// and reports whether the fence is still open.
func (f *fence) extend(sent time.Time, ttl time.Duration) bool {
	until := int64(sent.Sub(f.epoch) + ttl/2)
	for {
		if !f.open() {
			return false
		}
		cur := f.until.Load()
		if until <= cur || f.until.CompareAndSwap(cur, until) {
			return true
		}
	}
}

func (f *fence) trip() { f.until.Store(-1) }

// deadline returns the fence's current deadline (in the past once
// closed).
func (f *fence) deadline() time.Time {
	cur := f.until.Load()
	if cur < 0 {
		return f.epoch
	}
	return f.epoch.Add(time.Duration(cur))
}

// open reports whether the partition may still be written; past the
// deadline it closes the fence for good.
func (f *fence) open() bool {
	cur := f.until.Load()
	if cur >= 0 && int64(time.Since(f.epoch)) < cur {
		return true
	}
	f.trip()
	return false
}

// fencedStore is a partition's store behind its fence.
type fencedStore struct {
	engine.Store
	fence *fence
}

func (s fencedStore) Commit(ctx context.Context, b *engine.StoreBatch) error {
	if !s.fence.open() {
		return ErrFenced
	}
	// The store waits out JetStream's transient states (a leader
	// election) no longer than the fence's deadline: a commit still
	// waiting then gives up and is refused as fenced. While renewals
	// move the deadline on, the commit is tried again (it is written
	// whole again, harmlessly: see jetstore.Store.Commit).
	var err error
	for {
		fctx, cancel := context.WithDeadline(ctx, s.fence.deadline())
		err = s.Store.Commit(fctx, b)
		waited := fctx.Err() != nil
		cancel()
		if err == nil || !waited || ctx.Err() != nil {
			break
		}
		if !s.fence.open() {
			return fmt.Errorf("%w (the commit waited: %w)", ErrFenced, err)
		}
	}
	if errors.Is(err, jetstore.ErrSuperseded) {
		// Another node opened the partition: this one lost it, whatever
		// its lease loop knows yet.
		s.fence.trip()
	}
	return err
}

// run is the lease loop: every TTL/4 it renews the node's entry and its
// partitions' leases, fences what it could not renew in time, and takes
// or releases partitions toward its fair share.
//
// Its first round comes one round after the node joined, not at once: a
// settle window in which nodes started together register and see each
// other, so that each takes its share of a new cluster rather than the
// first taking every partition and handing most over again as the
// others join (measured by flowbench cluster's start-up line).
func (n *Node) run() {
	defer close(n.done)
	tick := time.NewTicker(n.ttl / 4)
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
			n.tick()
		}
	}
}

// tick is one round of the lease loop.
//
// The renewals run side by side, each partition's for as long as its
// fence is open (a renewal answered later is of no use: the fence has
// closed), not within one shared quarter TTL: on a loaded machine, where
// a bucket update can take longer than a quarter TTL, renewals in turn
// under one deadline left the later partitions no time at all, and
// partitions whose leases were never in danger were fenced and reopened
// again and again (make flake, load 40 on 2 cores).
func (n *Node) tick() {
	var wg sync.WaitGroup
	wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), n.ttl/2)
		defer cancel()
		n.renewNode(ctx)
	})
	for _, id := range n.ownedIDs() {
		wg.Go(func() { n.renewPartition(context.Background(), id) })
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), n.ttl/4)
	defer cancel()
	n.balance(ctx)
}

// renewNode keeps the node's membership entry alive, registering the node
// again if it expired (the node was cut off longer than a TTL).
func (n *Node) renewNode(ctx context.Context) {
	val := []byte(time.Now().UTC().Format(time.RFC3339Nano))
	rev, err := n.leases.Update(ctx, nodeKey(n.cfg.Node), val, n.nodeRev)
	if err != nil {
		rev, err = n.leases.Create(ctx, nodeKey(n.cfg.Node), val)
	}
	if err == nil {
		n.nodeRev = rev
	}
}

// renewPartition renews partition id's lease, trying until its fence
// closes (or ctx ends). A lease another node holds now (the revision
// moved) is lost at once; one that could not be renewed is lost once its
// fence closes.
func (n *Node) renewPartition(ctx context.Context, id int) {
	n.mu.Lock()
	o := n.owned[id]
	n.mu.Unlock()
	if o == nil {
		return
	}
	ctx, cancel := context.WithDeadline(ctx, o.fence.deadline())
	defer cancel()
	sent := time.Now()
	rev, err := n.leases.Update(ctx, partitionKey(id), []byte(n.cfg.Node), o.rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		// A renewal whose answer was lost (it timed out in an earlier
		// round) may have landed: the lease then holds this node's
		// name at a later revision, which only this node writes. That
		// revision is adopted and renewed at once, with a send time
		// known, rather than the lease taken for lost.
		if e, gerr := n.leases.Get(ctx, partitionKey(id)); gerr == nil && e.Revision() > o.rev && string(e.Value()) == n.cfg.Node {
			sent = time.Now()
			rev, err = n.leases.Update(ctx, partitionKey(id), []byte(n.cfg.Node), e.Revision())
		}
	}
	if n.cfg.Monitor != nil {
		n.cfg.Monitor.LeaseRenewed(err == nil)
	}
	switch {
	case err == nil:
		n.mu.Lock()
		o.rev = rev
		n.mu.Unlock()
		if o.fence.extend(sent, n.ttl) {
			return
		}
		// Renewed too late: the fence closed meanwhile. Reopen the
		// partition from its store, on this node or another.
		n.logf("partition %d: lease renewed after its fence closed: released to be opened again from its store", id)
		n.handOver(o)
		return
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch), errors.Is(err, jetstream.ErrKeyExists):
		n.logf("partition %d: lease lost (%v): fenced", id, err)
		o.fence.trip()
	}
	if !o.fence.open() {
		n.logf("partition %d: lease not renewed in time (%v): fenced", id, err)
		n.dropFenced(o)
	}
}

// balance takes free partitions up to the node's fair share and releases
// the partitions above it.
func (n *Node) balance(ctx context.Context) {
	keys, err := n.leases.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return
	}
	live, taken := 0, map[string]bool{}
	for _, k := range keys {
		if strings.HasPrefix(k, "node.") {
			live++
		}
		taken[k] = true
	}
	live = max(live, 1)
	share := (n.parts + live - 1) / live
	ids := n.ownedIDs()
	if len(ids) > share {
		// Release the newest-numbered surplus; the others take them.
		for _, id := range ids[share:] {
			n.logf("partition %d: released for rebalance (%d live nodes, share %d)", id, live, share)
			n.mu.Lock()
			o := n.owned[id]
			n.mu.Unlock()
			n.handOver(o)
		}
		return
	}
	for _, id := range n.preference() {
		if len(ids) >= share {
			return
		}
		if taken[partitionKey(id)] || slices.Contains(ids, id) {
			continue
		}
		if n.take(ctx, id) {
			ids = append(ids, id)
		}
	}
}

// preference is the order the node tries free partitions in: from a
// point its name picks, so that nodes starting together try different
// partitions first.
func (n *Node) preference() []int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(n.cfg.Node))
	start := int(h.Sum32() % uint32(n.parts))
	out := make([]int, n.parts)
	for i := range out {
		out[i] = (start+i)%n.parts + 1
	}
	return out
}

// take acquires partition id's lease and opens it in the background.
func (n *Node) take(ctx context.Context, id int) bool {
	sent := time.Now()
	rev, err := n.leases.Create(ctx, partitionKey(id), []byte(n.cfg.Node))
	if err != nil {
		return false
	}
	o := &owned{id: id, rev: rev, fence: newFence(n.epoch, sent, n.ttl), opening: make(chan struct{})}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		_ = n.leases.Delete(ctx, partitionKey(id), jetstream.LastRevision(rev))
		return false
	}
	n.owned[id] = o
	n.mu.Unlock()
	n.logf("partition %d: lease taken", id)
	go func() {
		defer close(o.opening)
		p, err := n.open(context.Background(), id, o.fence)
		n.mu.Lock()
		if err == nil {
			o.part = p
			n.mu.Unlock()
			n.logf("partition %d: serving", id)
			return
		}
		// Give the lease up, so that this node or another tries again.
		if n.owned[id] == o {
			delete(n.owned, id)
		}
		rev := o.rev
		n.mu.Unlock()
		n.logf("partition %d: open: %v; lease given up", id, err)
		dctx, cancel := context.WithTimeout(context.Background(), n.ttl/2)
		defer cancel()
		_ = n.leases.Delete(dctx, partitionKey(id), jetstream.LastRevision(rev))
	}()
	return true
}

// release hands partition id over cleanly: it stops serving and closes
// (a last commit, under the lease still), then deletes the lease.
func (n *Node) release(ctx context.Context, id int) error {
	n.mu.Lock()
	o := n.owned[id]
	n.mu.Unlock()
	if o == nil {
		return nil
	}
	err := n.drop(ctx, o)
	n.mu.Lock()
	rev := o.rev
	n.mu.Unlock()
	// The revision guards the delete: a lease another node took since
	// is not touched.
	if derr := n.leases.Delete(ctx, partitionKey(id), jetstream.LastRevision(rev)); derr != nil {
		err = errors.Join(err, derr)
	}
	return err
}

// drop forgets partition o, so that the lease loop no longer renews it
// and Owned no longer lists it, then stops serving it and closes it
// (after its opening, if it is opening).
func (n *Node) drop(ctx context.Context, o *owned) error {
	n.forget(o)
	return n.closeOwned(ctx, o)
}

func (n *Node) forget(o *owned) {
	n.mu.Lock()
	if n.owned[o.id] == o {
		delete(n.owned, o.id)
	}
	n.mu.Unlock()
}

// closeOwned closes what o opened, once.
func (n *Node) closeOwned(ctx context.Context, o *owned) error {
	<-o.opening
	n.mu.Lock()
	p := o.part
	o.part = nil
	n.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.close(ctx)
}

// handOver releases partition o from the lease loop: it is forgotten at
// once (no longer renewed, listed or taken again while its lease stands)
// and closed in the background, and its lease is deleted once it has
// closed, so that this node or another takes it then. The loop must not
// wait for the close: it may wait for an opening, for operations under
// way and for a last commit, and meanwhile the leases of the node's other
// partitions would go unrenewed and their fences close in turn.
func (n *Node) handOver(o *owned) {
	if o == nil {
		return
	}
	n.forget(o)
	n.closing.Go(func() {
		err := n.closeOwned(context.Background(), o)
		n.mu.Lock()
		rev := o.rev
		n.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), n.ttl/2)
		defer cancel()
		// The revision guards the delete: a lease another node took
		// since (this one expired meanwhile) is not touched.
		if derr := n.leases.Delete(ctx, partitionKey(o.id), jetstream.LastRevision(rev)); derr != nil {
			err = errors.Join(err, derr)
		}
		if err != nil {
			n.logf("partition %d: hand over: %v", o.id, err)
		}
	})
}

// dropFenced drops a fenced partition: it is forgotten at once and closed
// in the background, for its close may wait for a commit the fence did
// not stop in time to time out, and the loop must go on renewing the
// other partitions meanwhile.
func (n *Node) dropFenced(o *owned) {
	n.forget(o)
	n.closing.Go(func() { _ = n.closeOwned(context.Background(), o) })
}

// MessagePartition returns the partition, 1 to parts, that owns
// correlation key key: where publish_message goes, and where a start with
// that business key goes (Config.BusinessKey). It is FNV-1a of the key's
// text, mod parts, plus 1, so clients in any language can compute it.
func MessagePartition(key string, parts int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32()%uint32(parts)) + 1
}
