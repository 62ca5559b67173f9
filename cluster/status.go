package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Status is what an operator reads of a cluster (ReadStatus, flowtrack
// cluster status).
//
// Its JSON gives durations as whole milliseconds in fields whose names
// end in Ms (leaseTtlMs, leaseAgeMs), never as Go's nanoseconds.
type Status struct {
	Cluster string
	// Partitions is the partition count; 0 while the cluster forms (its
	// first node has not written it yet: Forming).
	Partitions int
	// Forming is true while the cluster's first node is creating it.
	Forming bool
	// LeaseTTL is how long a lease outlives its last renewal.
	LeaseTTL time.Duration
	// Nodes are the cluster's members, by name: live, late or dead (see
	// NodeState).
	Nodes []NodeStatus
	// Owners are the partitions, 1 to Partitions.
	Owners []PartitionStatus
}

// NodeState says whether a member of the cluster renews its lease. A node
// renews every TTL/4.
type NodeState string

// Node states.
const (
	// NodeLive renewed its lease less than TTL/2 ago.
	NodeLive NodeState = "live"
	// NodeLate has missed renewals (its last is TTL/2 to TTL old): it
	// is slow, cut off or dead; its partitions fence themselves.
	NodeLate NodeState = "late"
	// NodeDead has not renewed for a TTL or more (its entry lingers until
	// JetStream removes it), or has no lease at all although it joined
	// and never left cleanly: it was killed, or lost NATS for longer than
	// a TTL. The others take its partitions. It is listed until it
	// starts again (or is started and closed cleanly).
	NodeDead NodeState = "dead"
)

// NodeStatus is one member of the cluster: its name, state and how long
// ago it last renewed its membership (0 for a dead node whose lease
// JetStream removed: unknown).
type NodeStatus struct {
	Name     string
	State    NodeState
	LeaseAge time.Duration
}

// PartitionStatus is one partition: its owner ("" while none holds its
// lease) and the owner's state, how long ago the owner renewed the
// partition's lease, and its stream's replication: the NATS server
// leading it ("" while one is elected, or when its info did not come in
// time), the replicas that are current (the leader included) and the
// commit lag, the most operations a replica is behind the leader (a
// replica catching up after its server restarted, or a slow disk).
type PartitionStatus struct {
	ID         int
	Owner      string
	OwnerState NodeState
	LeaseAge   time.Duration
	Leader     string
	Replicas   int
	Current    int
	Lag        uint64
}

// MarshalJSON writes s with durations in milliseconds (leaseTtlMs).
func (s Status) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Cluster    string            `json:"cluster"`
		Partitions int               `json:"partitions"`
		Forming    bool              `json:"forming,omitempty"`
		LeaseTTLMs int64             `json:"leaseTtlMs"`
		Nodes      []NodeStatus      `json:"nodes"`
		Owners     []PartitionStatus `json:"owners"`
	}{s.Cluster, s.Partitions, s.Forming, s.LeaseTTL.Milliseconds(), s.Nodes, s.Owners})
}

// MarshalJSON writes n with its lease age in milliseconds (leaseAgeMs).
func (n NodeStatus) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name       string    `json:"name"`
		State      NodeState `json:"state"`
		LeaseAgeMs int64     `json:"leaseAgeMs"`
	}{n.Name, n.State, n.LeaseAge.Milliseconds()})
}

// MarshalJSON writes p with its lease age in milliseconds (leaseAgeMs).
func (p PartitionStatus) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID         int       `json:"id"`
		Owner      string    `json:"owner"`
		OwnerState NodeState `json:"ownerState,omitempty"`
		LeaseAgeMs int64     `json:"leaseAgeMs"`
		Leader     string    `json:"leader"`
		Replicas   int       `json:"replicas"`
		Current    int       `json:"current"`
		Lag        uint64    `json:"lag"`
	}{p.ID, p.Owner, p.OwnerState, p.LeaseAge.Milliseconds(), p.Leader, p.Replicas, p.Current, p.Lag})
}

// ErrNoCluster is returned by ReadStatus for a cluster that was never
// created on the NATS system.
var ErrNoCluster = api.ErrNoCluster

// streamInfoWait bounds the info request of one partition's stream: a
// stream whose leader died answers nothing until one is elected, and the
// status says so rather than wait.
const streamInfoWait = time.Second

// statusTry bounds one try of each of ReadStatus's requests. A bucket
// whose stream leader was on a killed server answers nothing until a new
// one is elected, and a request that waited for it used up the whole
// status call (listing the lease keys took 20 s, the caller's deadline,
// after a kill); a try that ends is tried again (jswait) until ctx ends.
const statusTry = 2 * time.Second

// statusDo runs one of ReadStatus's requests through jswait.Do, each try
// bounded by statusTry.
func statusDo(ctx context.Context, fn func(ctx context.Context) error) error {
	return jswait.Do(ctx, func(ctx context.Context) error {
		tctx, cancel := context.WithTimeout(ctx, statusTry)
		defer cancel()
		return fn(tctx)
	})
}

// ReadStatus reads the status of cluster (members and their state,
// partition owners, lease ages, replication lag) from the NATS system nc
// connects to. It needs no node of the cluster to run. A cluster whose
// first node is creating it reads as Forming; JetStream's transient
// states are waited out until ctx ends.
func ReadStatus(ctx context.Context, nc *nats.Conn, cluster string) (*Status, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	var meta jetstream.KeyValue
	err = statusDo(ctx, func(ctx context.Context) (err error) {
		meta, err = js.KeyValue(ctx, metaBucket(cluster))
		return err
	})
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("cluster %s: %w", cluster, ErrNoCluster)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	st := &Status{Cluster: cluster, Nodes: []NodeStatus{}, Owners: []PartitionStatus{}}
	var e jetstream.KeyValueEntry
	err = statusDo(ctx, func(ctx context.Context) (err error) {
		e, err = meta.Get(ctx, "partitions")
		return err
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		st.Forming = true
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: partition count: %w", cluster, err)
	}
	if st.Partitions, err = strconv.Atoi(string(e.Value())); err != nil {
		return nil, fmt.Errorf("cluster %s: status: partition count %q: %w", cluster, e.Value(), err)
	}
	var leases jetstream.KeyValue
	err = statusDo(ctx, func(ctx context.Context) (err error) {
		leases, err = js.KeyValue(ctx, leaseBucket(cluster))
		return err
	})
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		st.Forming = true // the first node writes the count, then makes the lease bucket
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	var ls jetstream.KeyValueStatus
	err = statusDo(ctx, func(ctx context.Context) (err error) {
		ls, err = leases.Status(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	st.LeaseTTL = ls.TTL()
	var keys []string
	err = statusDo(ctx, func(ctx context.Context) (err error) {
		keys, err = leases.Keys(ctx)
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			err = nil
		}
		return err
	})
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	owners := map[int]jetstream.KeyValueEntry{}
	states := map[string]NodeState{}
	for _, k := range keys {
		var e jetstream.KeyValueEntry
		err := statusDo(ctx, func(ctx context.Context) (err error) {
			e, err = leases.Get(ctx, k)
			return err
		})
		if err != nil {
			continue // expired since listed
		}
		if name, ok := strings.CutPrefix(k, "node."); ok {
			age := time.Since(e.Created())
			ns := NodeStatus{Name: name, State: nodeState(age, st.LeaseTTL), LeaseAge: age}
			states[name] = ns.State
			st.Nodes = append(st.Nodes, ns)
		} else if p, ok := strings.CutPrefix(k, "partition."); ok {
			if id, err := strconv.Atoi(p); err == nil {
				owners[id] = e
			}
		}
	}
	// Members that joined and never left cleanly, without a lease now.
	var members []string
	err = statusDo(ctx, func(ctx context.Context) (err error) {
		members, err = meta.Keys(ctx)
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			err = nil
		}
		return err
	})
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, fmt.Errorf("cluster %s: status: members: %w", cluster, err)
	}
	for _, k := range members {
		if name, ok := strings.CutPrefix(k, memberPrefix); ok && states[name] == "" {
			states[name] = NodeDead
			st.Nodes = append(st.Nodes, NodeStatus{Name: name, State: NodeDead})
		}
	}
	slices.SortFunc(st.Nodes, func(a, b NodeStatus) int { return strings.Compare(a.Name, b.Name) })
	st.Owners = make([]PartitionStatus, st.Partitions)
	var wg sync.WaitGroup
	for i := range st.Owners {
		ps := &st.Owners[i]
		ps.ID = i + 1
		if e, ok := owners[ps.ID]; ok {
			ps.Owner, ps.LeaseAge = string(e.Value()), time.Since(e.Created())
			ps.OwnerState = states[ps.Owner]
			if ps.OwnerState == "" {
				ps.OwnerState = NodeDead // its membership expired first
			}
		}
		wg.Go(func() { readReplication(ctx, js, cluster, ps) })
	}
	wg.Wait()
	return st, nil
}

// nodeState is the state of a node whose lease entry is age old.
func nodeState(age, ttl time.Duration) NodeState {
	switch {
	case age < ttl/2:
		return NodeLive
	case age < ttl:
		return NodeLate
	}
	return NodeDead
}

// readReplication fills in the replication of partition ps's stream, as
// far as its leader answers within streamInfoWait.
func readReplication(ctx context.Context, js jetstream.JetStream, cluster string, ps *PartitionStatus) {
	ctx, cancel := context.WithTimeout(ctx, streamInfoWait)
	defer cancel()
	s, err := js.Stream(ctx, "FLOWTRACK_STORE_"+storeName(cluster, ps.ID))
	if err != nil {
		return
	}
	info := s.CachedInfo()
	ps.Replicas = info.Config.Replicas
	c := info.Cluster
	if c == nil {
		ps.Current = 1
		return
	}
	ps.Leader = c.Leader
	if c.Leader != "" {
		ps.Current = 1
	}
	for _, r := range c.Replicas {
		if r.Current {
			ps.Current++
		}
		ps.Lag = max(ps.Lag, r.Lag)
	}
}

// memberPrefix is the prefix of the settings bucket's member entries: a
// node writes member.<name> when it joins and deletes it when it leaves
// cleanly, so that a member that died stays listed, as dead, once its
// lease is gone.
const memberPrefix = "member."
