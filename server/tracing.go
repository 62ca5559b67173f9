package server

import (
	"context"
	"encoding/json"

	"github.com/flowtrack/flowtrack/internal/tracing"
	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// keyFields are the request fields a command's span records: what it
// concerns, never its variables.
type keyFields struct {
	ProcessID   string `json:"processId"`
	InstanceKey int64  `json:"instanceKey"`
	JobKey      int64  `json:"jobKey"`
	IncidentKey int64  `json:"incidentKey"`
	Name        string `json:"name"`
	Type        string `json:"type"`
}

// startSpan starts the span of one command, the child of the trace
// context m carries, with the operation, the cluster, the partition and
// the process, keys and names the request names; nil while tracing is
// off.
func (s *Server) startSpan(m *nats.Msg, op string) trace.Span {
	if !tracing.Enabled() {
		return nil
	}
	attrs := []attribute.KeyValue{attribute.String("flowtrack.operation", op), attribute.String("flowtrack.cluster", s.cluster),
		attribute.Int("flowtrack.partition", max(s.partition, 1))}
	var k keyFields
	if json.Unmarshal(m.Data, &k) == nil {
		for _, a := range []struct {
			key string
			v   string
		}{{"flowtrack.process_id", k.ProcessID}, {"flowtrack.message_name", k.Name}, {"flowtrack.job_type", k.Type}} {
			if a.v != "" {
				attrs = append(attrs, attribute.String(a.key, a.v))
			}
		}
		for _, a := range []struct {
			key string
			v   int64
		}{{"flowtrack.instance_key", k.InstanceKey}, {"flowtrack.job_key", k.JobKey}, {"flowtrack.incident_key", k.IncidentKey}} {
			if a.v != 0 {
				attrs = append(attrs, attribute.Int64(a.key, a.v))
			}
		}
	}
	_, span := tracing.Start(tracing.Extract(context.Background(), m.Header), "flowtrack "+op, trace.SpanKindServer, attrs...)
	return span
}

// endSpan ends a command's span, marking an error answer.
func endSpan(span trace.Span, out []byte) {
	if span == nil {
		return
	}
	if len(out) < len(okPrefix) || string(out[:len(okPrefix)]) != string(okPrefix) {
		var resp struct {
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(out, &resp) == nil && resp.Error != nil {
			span.SetAttributes(attribute.String("flowtrack.error_code", resp.Error.Code))
			span.SetStatus(codes.Error, resp.Error.Message)
		}
	}
	span.End()
}
