package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
)

// TestCluster_JobQueues runs the mixed workload with its jobs worked
// through the job queues (client.HandleJobs) instead of polling: every
// partition's server queues its jobs on the one stream, completions go
// to the job's partition by key, and a member (node and NATS server)
// killed midway leaves its partitions' activations to time out and be
// queued again by the survivors. Each instance completes once, each job
// once (the workload's check).
func TestCluster_JobQueues(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server cluster: make race (part of make test) runs it")
	}
	runJobQueues(t, "jq", func(*testCluster) int { return 2 })
}

// TestCluster_JobStreamLeaderKilled is TestCluster_JobQueues with the
// member whose NATS server leads the job stream killed: the stream has
// the partitions' replicas, so another server leads it and jobs are
// delivered on (with one replica, delivery stopped for minutes).
func TestCluster_JobStreamLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server cluster: make race (part of make test) runs it")
	}
	runJobQueues(t, "jql", func(tc *testCluster) int {
		js, err := jetstream.New(tc.conns[0])
		require.NoError(t, err)
		ctx, cancel := reqCtx()
		defer cancel()
		s, err := js.Stream(ctx, "FLOWTRACK_JOBS_jql")
		require.NoError(t, err)
		info := s.CachedInfo()
		require.Equal(t, 3, info.Config.Replicas)
		require.NotNil(t, info.Cluster)
		for i, n := range tc.nats {
			if n.Name == info.Cluster.Leader {
				t.Logf("killing %s, the job stream's leader", n.Name)
				return i
			}
		}
		t.Fatalf("the job stream's leader %q is none of the members", info.Cluster.Leader)
		return 0
	})
}

// runJobQueues runs the job queue workload on a cluster named name,
// killing the member victim picks midway.
func runJobQueues(t *testing.T, name string, victim func(*testCluster) int) {
	tc := newTestCluster(t, 3, clusterConfig(name))
	cl := tc.client()
	ctx, cancel := reqCtx()
	_, err := cl.Deploy(ctx, "order.bpmn", orderBPMN)
	cancel()
	require.NoError(t, err)
	w := newWorkload(cl)
	wctx, stopWork := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	handlers := map[string]engine.JobHandler{
		"pay": func(_ context.Context, j engine.Job) (map[string]any, error) {
			return map[string]any{"paid": j.Variables["orderId"]}, nil
		},
		"pack": func(context.Context, engine.Job) (map[string]any, error) {
			return map[string]any{"packed": true}, nil
		},
	}
	for typ, h := range handlers {
		wg.Go(func() {
			err := cl.HandleJobs(wctx, typ, h, engine.WorkerOptions{Concurrency: 4, Timeout: 3 * time.Second})
			if err != nil {
				t.Errorf("worker of %s: %v", typ, err)
			}
		})
	}
	const orders = 24
	for i := range orders / 2 {
		w.start(i)
	}
	killed := time.Now()
	tc.kill(victim(tc))
	t.Logf("partitions served again %s after the kill", tc.waitServed(testtime.Scale(60*time.Second)).Round(time.Millisecond))
	for i := orders / 2; i < orders; i++ {
		w.start(i)
	}
	w.check(t, testtime.Scale(120*time.Second))
	t.Logf("every instance completed %s after the kill", time.Since(killed).Round(time.Millisecond))
	stopWork()
	wg.Wait()
	require.GreaterOrEqual(t, len(w.started), orders/2, "starts after the takeover are all acknowledged")
}
