// Package tracing is flowtrack's OpenTelemetry tracing: a span per
// command, with the W3C trace context carried through NATS message
// headers (traceparent, tracestate) from a client, the REST API or a
// cluster node's router to the partition that runs the command.
//
// It is off until Enable (or FromEnv, when the standard OTEL_*
// environment variables ask for an exporter): off, Start returns its
// context and a span that does nothing, without allocating, and requests
// carry no header, so tracing costs nothing on the hot path.
package tracing

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope names flowtrack's tracer.
const Scope = "github.com/flowtrack/flowtrack"

var (
	on     atomic.Bool
	tracer atomic.Pointer[trace.Tracer]
	prop              = propagation.TraceContext{}
	off    trace.Span = noop.Span{} // one value: a conversion per call would allocate
)

// Enable turns tracing on with tp as the provider of flowtrack's spans
// (nil turns it off again).
func Enable(tp trace.TracerProvider) {
	if tp == nil {
		on.Store(false)
		return
	}
	t := tp.Tracer(Scope)
	tracer.Store(&t)
	on.Store(true)
}

// Enabled reports whether tracing is on.
func Enabled() bool { return on.Load() }

// Start starts a span named name, the child of the span in ctx (or of
// none), when tracing is on; off, it returns ctx and a span that does
// nothing.
func Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !on.Load() {
		return ctx, off
	}
	return (*tracer.Load()).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// Extract returns ctx with the remote span context that h carries (W3C
// trace context), if tracing is on and h carries one.
func Extract(ctx context.Context, h nats.Header) context.Context {
	if !on.Load() || h == nil {
		return ctx
	}
	return prop.Extract(ctx, headerCarrier(h))
}

// Request sends data to subject on nc and waits for the reply, as
// nc.RequestWithContext does, with the span context of ctx in the
// message's headers when there is one.
func Request(ctx context.Context, nc *nats.Conn, subject string, data []byte) (*nats.Msg, error) {
	if !on.Load() || !trace.SpanContextFromContext(ctx).IsValid() {
		return nc.RequestWithContext(ctx, subject, data)
	}
	m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	prop.Inject(ctx, headerCarrier(m.Header))
	return nc.RequestMsgWithContext(ctx, m)
}

// Header returns h with the W3C trace context of ctx's span added, for
// a request sent otherwise than by Request; h itself is not changed. With
// tracing off or no span in ctx it returns h as it is.
func Header(ctx context.Context, h nats.Header) nats.Header {
	if !on.Load() || !trace.SpanContextFromContext(ctx).IsValid() {
		return h
	}
	out := make(nats.Header, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	prop.Inject(ctx, headerCarrier(out))
	return out
}

// SetGlobal makes flowtrack's propagator (W3C trace context) the global
// one too, for the HTTP instrumentation of a host next to it.
func SetGlobal() { otel.SetTextMapPropagator(prop) }

// headerCarrier adapts NATS headers to OpenTelemetry's propagation.
type headerCarrier nats.Header

func (h headerCarrier) Get(key string) string { return nats.Header(h).Get(key) }
func (h headerCarrier) Set(key, value string) { nats.Header(h).Set(key, value) }
func (h headerCarrier) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return keys
}

// ExtractHTTP returns ctx with the remote span context of an HTTP
// request's traceparent header, if tracing is on and it has one.
func ExtractHTTP(ctx context.Context, h http.Header) context.Context {
	if !on.Load() {
		return ctx
	}
	return prop.Extract(ctx, propagation.HeaderCarrier(h))
}
