package cluster_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/internal/testtime"
)

// leaseLog is a test whose log also counts what the nodes say of their
// leases.
type leaseLog struct {
	*testing.T
	taken, released atomic.Int64
}

func (l *leaseLog) Logf(format string, args ...any) {
	l.T.Helper()
	l.T.Logf(format, args...)
	switch msg := format; {
	case strings.HasSuffix(msg, ": lease taken"):
		l.taken.Add(1)
	case strings.Contains(msg, ": released for rebalance"):
		l.released.Add(1)
	}
}

// TestCluster_StartTogether: nodes started one after another within a
// lease round take the partitions of a new cluster each its share,
// without the first taking them all and handing them over again
// as the others join (the settle window of the lease loop). The TTL is
// long enough that the three starts fit in the window on a loaded
// machine.
func TestCluster_StartTogether(t *testing.T) {
	l := &leaseLog{T: t}
	c := newTestCluster(l, 3, cluster.Config{Cluster: "together", Partitions: 6, Replicas: 3, LeaseTTL: testtime.Scale(20 * time.Second)})
	if got := l.released.Load(); got != 0 {
		t.Errorf("%d partitions released for rebalance while the cluster started, want none: %s", got, c.owners())
	}
	t.Logf("6 partitions taken %d times while the cluster started", l.taken.Load())
}
