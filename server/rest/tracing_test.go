package rest_test

import (
	"context"
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flowtrack/flowtrack/internal/tracing"
)

// TestREST_Traceparent: a request's W3C traceparent header is the parent
// of the REST request's span, and through the NATS headers of the
// operation it requests, of the command's span on the server: one trace.
func TestREST_Traceparent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tracing.Enable(tp)
	t.Cleanup(func() { tracing.Enable(nil); _ = tp.Shutdown(context.Background()) })
	base, _ := served(t, nil)
	const trace, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	code, body := do(t, http.MethodPost, base+"/v2/incidents/search", map[string]any{}, nil,
		"traceparent", "00-"+trace+"-"+parent+"-01")
	if code != http.StatusOK {
		t.Fatalf("search: %d %s", code, body)
	}
	var rest, cmd sdktrace.ReadOnlySpan
	for _, s := range exp.GetSpans().Snapshots() {
		switch s.Name() {
		case "flowtrack REST POST /v2/incidents/search":
			rest = s
		case "flowtrack incidents":
			cmd = s
		}
	}
	if rest == nil || cmd == nil {
		t.Fatalf("spans recorded: %v", exp.GetSpans())
	}
	if rest.SpanContext().TraceID().String() != trace || rest.Parent().SpanID().String() != parent {
		t.Errorf("the REST span is not the traceparent's child: trace %s parent %s", rest.SpanContext().TraceID(), rest.Parent().SpanID())
	}
	if cmd.SpanContext().TraceID().String() != trace || cmd.Parent().SpanID() != rest.SpanContext().SpanID() {
		t.Errorf("the command's span is not the REST span's child: trace %s parent %s", cmd.SpanContext().TraceID(), cmd.Parent().SpanID())
	}
}
