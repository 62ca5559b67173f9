package cluster_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
)

// TestCluster_LargeJobs: a jobs answer over NATS' max payload, merged by
// a router from its partitions' answers (each over a message itself),
// reaches the client whole, and a page of it is the cluster's first jobs
// by key.
func TestCluster_LargeJobs(t *testing.T) {
	c := newTestCluster(t, 3, cluster.Config{Cluster: "large", Partitions: 2, LeaseTTL: testtime.Scale(4 * time.Second)})
	cl := c.client()
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(2*time.Minute))
	defer cancel()
	_, err := cl.Deploy(ctx, "order.bpmn", orderBPMN)
	require.NoError(t, err)
	blob := strings.Repeat("y", 100_000)
	const instances = 24 // round robin: 12 a partition, 1.2 MB each
	for i := range instances {
		_, err := cl.Start(ctx, "order", map[string]any{"blob": blob, "orderId": i})
		require.NoError(t, err)
	}
	jobs, err := cl.Jobs(ctx, engine.JobFilter{})
	require.NoError(t, err)
	require.Len(t, jobs, instances)
	size, _ := json.Marshal(jobs)
	t.Logf("jobs answer %d bytes through the router, max payload %d", len(size), c.conns[0].MaxPayload())
	require.Greater(t, len(size), 2*int(c.conns[0].MaxPayload()))
	for i := 1; i < len(jobs); i++ {
		require.Less(t, jobs[i-1].Key, jobs[i].Key, "ordered by key")
	}
	page, err := cl.JobsPage(ctx, engine.JobFilter{}, jobs[4].Key, 7)
	require.NoError(t, err)
	require.Equal(t, jobs[5:12], page, "the page after the fifth job")
}
