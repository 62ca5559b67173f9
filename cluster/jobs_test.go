package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

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
	tc := newTestCluster(t, 3, clusterConfig("jq"))
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
	tc.kill(2)
	t.Logf("partitions served again %s after the kill", tc.waitServed(testtime.Scale(60*time.Second)).Round(time.Millisecond))
	for i := orders / 2; i < orders; i++ {
		w.start(i)
	}
	w.check(t, testtime.Scale(120*time.Second))
	stopWork()
	wg.Wait()
	require.GreaterOrEqual(t, len(w.started), orders/2, "starts after the takeover are all acknowledged")
}
