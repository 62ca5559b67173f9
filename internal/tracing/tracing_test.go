package tracing_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/flowtrack/flowtrack/internal/tracing"
)

// TestFromEnv: tracing stays off without OTEL_* variables asking for an
// exporter, is on with an OTLP endpoint until the shutdown function, and
// an exporter other than otlp is refused.
func TestFromEnv(t *testing.T) {
	ctx := context.Background()
	for _, env := range [][2]string{{"OTEL_TRACES_EXPORTER", ""}, {"OTEL_TRACES_EXPORTER", "none"}} {
		t.Setenv(env[0], env[1])
		stop, err := tracing.FromEnv(ctx)
		if err != nil || tracing.Enabled() {
			t.Fatalf("%s=%q: err %v, enabled %v", env[0], env[1], err, tracing.Enabled())
		}
		_ = stop(ctx)
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	if _, err := tracing.FromEnv(ctx); err == nil {
		t.Fatal("OTEL_TRACES_EXPORTER=zipkin accepted")
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	stop, err := tracing.FromEnv(ctx)
	if err != nil || !tracing.Enabled() {
		t.Fatalf("with an endpoint: err %v, enabled %v", err, tracing.Enabled())
	}
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	if tracing.Enabled() {
		t.Fatal("still on after shutdown")
	}
}

// BenchmarkCommandSpan is what the server does per command for tracing:
// extract the trace context from the request's headers, start a span,
// end it. Off, it must cost nothing (no allocation); on, with an SDK
// provider that samples everything and exports nowhere, it shows the
// price of a span.
func BenchmarkCommandSpan(b *testing.B) {
	h := nats.Header{"traceparent": []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	run := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, span := tracing.Start(tracing.Extract(context.Background(), h), "flowtrack start", trace.SpanKindServer)
			_ = ctx
			span.End()
		}
	}
	b.Run("off", func(b *testing.B) {
		tracing.Enable(nil)
		run(b)
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
		tracing.Enable(tp)
		defer tracing.Enable(nil)
		run(b)
	})
}

// TestStart_OffAllocatesNothing: the off path allocates nothing.
func TestStart_OffAllocatesNothing(t *testing.T) {
	tracing.Enable(nil)
	h := nats.Header{"traceparent": []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	if n := testing.AllocsPerRun(100, func() {
		_, span := tracing.Start(tracing.Extract(context.Background(), h), "x", trace.SpanKindServer)
		span.End()
	}); n != 0 {
		t.Fatalf("%v allocations per command with tracing off", n)
	}
}
