package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// FromEnv turns tracing on with an OTLP exporter (HTTP/protobuf) when
// the standard OpenTelemetry environment asks for one:
// OTEL_TRACES_EXPORTER=otlp, or an OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT without OTEL_TRACES_EXPORTER=none,
// and OTEL_SDK_DISABLED not true. The exporter reads its endpoint,
// headers and TLS from the same variables; the service is named by
// OTEL_SERVICE_NAME (default "flowtrack") and OTEL_RESOURCE_ATTRIBUTES.
// Otherwise tracing stays off. The returned function flushes and stops
// the exporter; it is a no-op when tracing stayed off.
func FromEnv(ctx context.Context) (shutdown func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	exporter := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")))
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	switch {
	case strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true"):
		return none, nil
	case exporter == "otlp", exporter == "" && endpoint:
	case exporter == "", exporter == "none":
		return none, nil
	default:
		return nil, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%s: flowtrack exports traces by otlp only", exporter)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "flowtrack")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Enable(tp)
	SetGlobal()
	return func(ctx context.Context) error {
		Enable(nil)
		return tp.Shutdown(ctx)
	}, nil
}
