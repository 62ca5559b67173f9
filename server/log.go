package server

import (
	"context"
	"log/slog"

	"github.com/flowtrack/flowtrack/engine"
)

// logEvent logs one record of the event stream: incidents and failed
// instances at level Warn, always; every record at level Debug when the
// logger has it on. Each line carries the record's process, instance key
// and, where they apply, element, job key and incident key (the server's
// logger adds the cluster and partition).
func (s *Server) logEvent(ev engine.Event) {
	level := slog.LevelDebug
	msg := "event"
	switch ev.Type {
	case engine.IncidentCreated:
		level, msg = slog.LevelWarn, "incident created"
	case engine.InstanceFailed:
		level, msg = slog.LevelWarn, "instance failed"
	default:
		if !s.debug {
			return
		}
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs, slog.String("type", string(ev.Type)), slog.String("process", ev.ProcessID), slog.Int64("instance", ev.InstanceKey))
	if ev.ElementID != "" {
		attrs = append(attrs, slog.String("element", ev.ElementID))
	}
	if ev.JobKey != 0 {
		attrs = append(attrs, slog.Int64("job", ev.JobKey))
	}
	if ev.JobType != "" {
		attrs = append(attrs, slog.String("jobType", ev.JobType))
	}
	if ev.IncidentKey != 0 {
		attrs = append(attrs, slog.Int64("incident", ev.IncidentKey))
	}
	if ev.Message != "" {
		attrs = append(attrs, slog.String("message", ev.Message))
	}
	s.log.LogAttrs(context.Background(), level, msg, attrs...)
}

// serverLogger is cfg's logger with the cluster and, for a partition,
// the partition as attributes; nil without one.
func serverLogger(cfg Config) *slog.Logger {
	if cfg.Logger == nil {
		return nil
	}
	l := cfg.Logger.With("cluster", cfg.Cluster)
	if cfg.Partition > 0 {
		l = l.With("partition", cfg.Partition)
	}
	return l
}
