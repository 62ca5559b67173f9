package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// statusTry bounds one request of ReadStatus, so that a request lost to a
// leader election leaves time to send it again.
const statusTry = 2 * time.Second

// Status is what an operator reads of a cluster (ReadStatus, flowtrack
// cluster status).
type Status struct {
	Cluster    string            `json:"cluster"`
	Partitions int               `json:"partitions"`
	LeaseTTL   time.Duration     `json:"leaseTtl"`
	Nodes      []NodeStatus      `json:"nodes"`
	Owners     []PartitionStatus `json:"owners"`
}

// NodeStatus is one live node: its name and how long ago it last renewed
// its membership.
type NodeStatus struct {
	Name     string        `json:"name"`
	LeaseAge time.Duration `json:"leaseAge"`
}

// PartitionStatus is one partition: its owner ("" while none holds its
// lease) and how long ago the owner renewed it, and its stream's
// replication: the NATS server leading it, the replicas that are
// current, and the commit lag, the most operations a replica is behind
// the leader.
type PartitionStatus struct {
	ID       int           `json:"id"`
	Owner    string        `json:"owner"`
	LeaseAge time.Duration `json:"leaseAge"`
	Leader   string        `json:"leader"`
	Replicas int           `json:"replicas"`
	Current  int           `json:"current"`
	Lag      uint64        `json:"lag"`
}

// ErrNoCluster is returned by ReadStatus for a cluster that was never
// created on the NATS system.
var ErrNoCluster = errors.New("cluster: no such cluster")

// ReadStatus reads the status of cluster (nodes, partition owners, lease
// ages, replication lag) from the NATS system nc connects to. It needs no
// node of the cluster to run.
//
// It waits out JetStream's transient states (package jswait): read
// during a failover, while a bucket or a partition's stream elects a
// leader, it answers once the leader is elected rather than report a
// stream without replicas. ctx bounds the wait (jswait.DefaultWait when
// it has no deadline).
func ReadStatus(ctx context.Context, nc *nats.Conn, cluster string) (*Status, error) {
	ctx, cancel := jswait.Bound(ctx, jswait.DefaultWait)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	bucket := func(name string) (kv jetstream.KeyValue, err error) {
		err = statusDo(ctx, func(ctx context.Context) error { kv, err = js.KeyValue(ctx, name); return err })
		if err != nil {
			return nil, err
		}
		return jswait.KeyValue(kv), nil
	}
	meta, err := bucket("flowtrack_" + cluster)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("cluster %s: %w", cluster, ErrNoCluster)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	e, err := meta.Get(ctx, "partitions")
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: partition count: %w", cluster, err)
	}
	st := &Status{Cluster: cluster, Nodes: []NodeStatus{}, Owners: []PartitionStatus{}}
	if st.Partitions, err = strconv.Atoi(string(e.Value())); err != nil {
		return nil, fmt.Errorf("cluster %s: status: partition count %q: %w", cluster, e.Value(), err)
	}
	leases, err := bucket(leaseBucket(cluster))
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	ls, err := leases.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	st.LeaseTTL = ls.TTL()
	keys, err := leases.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, fmt.Errorf("cluster %s: status: %w", cluster, err)
	}
	owners := map[int]jetstream.KeyValueEntry{}
	for _, k := range keys {
		e, err := leases.Get(ctx, k)
		if err != nil {
			continue // expired since listed
		}
		if name, ok := strings.CutPrefix(k, "node."); ok {
			st.Nodes = append(st.Nodes, NodeStatus{Name: name, LeaseAge: time.Since(e.Created())})
		} else if p, ok := strings.CutPrefix(k, "partition."); ok {
			if id, err := strconv.Atoi(p); err == nil {
				owners[id] = e
			}
		}
	}
	for id := 1; id <= st.Partitions; id++ {
		ps := PartitionStatus{ID: id}
		if e, ok := owners[id]; ok {
			ps.Owner, ps.LeaseAge = string(e.Value()), time.Since(e.Created())
		}
		var info *jetstream.StreamInfo
		err := statusDo(ctx, func(ctx context.Context) error {
			s, err := js.Stream(ctx, "FLOWTRACK_STORE_"+storeName(cluster, id))
			if err == nil {
				info, err = s.Info(ctx)
			}
			return err
		})
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("cluster %s: status: partition %d's stream: %w", cluster, id, err)
		}
		if info != nil {
			ps.Replicas = info.Config.Replicas
			if c := info.Cluster; c != nil {
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
			} else {
				ps.Current = 1
			}
		}
		st.Owners = append(st.Owners, ps)
	}
	return st, nil
}

// statusDo runs one of ReadStatus's requests through jswait.Do, each try
// bounded by statusTry.
func statusDo(ctx context.Context, fn func(ctx context.Context) error) error {
	return jswait.Do(ctx, func(ctx context.Context) error {
		tctx, cancel := context.WithTimeout(ctx, statusTry)
		defer cancel()
		return fn(tctx)
	})
}
