package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/cluster"
)

// BenchmarkCluster_StartCancel starts and cancels instances through the
// cluster's routers, from 2×16 callers, on one NATS server (replicas 1)
// with 1 or 3 nodes sharing 6 partitions: the cost of routing (one more
// NATS hop) and of partitions committing to six streams in parallel,
// next to client's BenchmarkClient_StartCancel on one server.
func BenchmarkCluster_StartCancel(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			nc := singleNATS(b)
			names := make([]string, nodes)
			for i := range names {
				names[i] = fmt.Sprintf("n%d", i+1)
			}
			startNodes(b, nc, cluster.Config{Cluster: "bench", Partitions: 6, LeaseTTL: 6 * time.Second}, names...)
			c := client.New(nc, "bench")
			ctx := context.Background()
			if _, err := c.Deploy(ctx, "signal.bpmn", signalBPMN); err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key, err := c.Start(ctx, "waiter", nil)
					if err != nil {
						b.Error(err)
						return
					}
					if err := c.Cancel(ctx, key); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
