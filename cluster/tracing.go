package cluster

import (
	"context"

	"github.com/flowtrack/flowtrack/internal/tracing"
	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// span starts the router's span for request m of operation op, the child
// of the trace context m carries (internal/tracing): the requests it
// sends to partitions carry it on. Off, it costs nothing.
func (r *router) span(m *nats.Msg, op string) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return tracing.Start(context.Background(), "", trace.SpanKindServer)
	}
	return tracing.Start(tracing.Extract(context.Background(), m.Header), "flowtrack route "+op, trace.SpanKindServer,
		attribute.String("flowtrack.operation", op), attribute.String("flowtrack.cluster", r.n.cfg.Cluster),
		attribute.String("flowtrack.node", r.n.cfg.Node))
}
