package cluster_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/tracing"
	"github.com/flowtrack/flowtrack/server"
)

// attr returns a recorded span's attribute.
func attr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestCluster_TraceAcrossNodes: a start sent by the Go client under a
// span of the caller's is one trace, recorded by an in-memory exporter:
// the caller's span, the router's span on the node that took the request
// and the command's span on the partition that ran it, each the child of
// the one before; among the starts, one whose router and partition are
// on two different nodes.
func TestCluster_TraceAcrossNodes(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tracing.Enable(tp)
	t.Cleanup(func() { tracing.Enable(nil); _ = tp.Shutdown(context.Background()) })

	ctx := context.Background()
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	connect := func() *nats.Conn {
		nc, err := nats.Connect(ns.ClientURL(), nats.ReconnectBufSize(-1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	nodes := map[string]*cluster.Node{}
	for _, name := range []string{"a", "b"} {
		n, err := cluster.Start(ctx, connect(), cluster.Config{Cluster: "traced", Node: name, Partitions: 2, LeaseTTL: testtime.Scale(2 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Close(ctx) })
		nodes[name] = n
	}
	owner := func(p int) string {
		for name, n := range nodes {
			if slices.Contains(n.Owned(), p) {
				return name
			}
		}
		return ""
	}
	for deadline := time.Now().Add(testtime.Scale(30 * time.Second)); len(nodes["a"].Owned()) != 1 || len(nodes["b"].Owned()) != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("the partitions were not shared: a %v, b %v", nodes["a"].Owned(), nodes["b"].Owned())
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := client.New(connect(), "traced")
	xml, err := os.ReadFile("../engine/tally/testdata/shop.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, "shop.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	caller := tp.Tracer("test")
	across := false
	for i := 0; i < 40 && !across; i++ {
		exp.Reset()
		sctx, root := caller.Start(ctx, "caller")
		if _, err := c.Start(sctx, "shop", map[string]any{"orderId": "o"}); err != nil {
			t.Fatal(err)
		}
		root.End()
		var route, cmd sdktrace.ReadOnlySpan
		for _, s := range exp.GetSpans().Snapshots() {
			if s.SpanContext().TraceID() != root.SpanContext().TraceID() {
				continue
			}
			switch s.Name() {
			case "flowtrack route start":
				route = s
			case "flowtrack start":
				cmd = s
			}
		}
		if route == nil || cmd == nil {
			t.Fatalf("start %d: the trace lacks the router's or the command's span: %v", i, exp.GetSpans())
		}
		if route.Parent().SpanID() != root.SpanContext().SpanID() || cmd.Parent().SpanID() != route.SpanContext().SpanID() {
			t.Fatalf("start %d: spans not chained caller > route > command", i)
		}
		if got := attr(cmd, "flowtrack.process_id").AsString(); got != "shop" {
			t.Fatalf("the command's span names process %q", got)
		}
		p := int(attr(cmd, "flowtrack.partition").AsInt64())
		across = attr(route, "flowtrack.node").AsString() != owner(p)
	}
	if !across {
		t.Fatal("no start was routed by one node to a partition of the other in 40 tries")
	}
}
