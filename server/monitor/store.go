package monitor

import (
	"context"
	"time"

	"github.com/flowtrack/flowtrack/engine"
)

// Store wraps s so that every commit is measured: its duration
// (flowtrack_store_commit_duration_seconds), the bytes it writes
// (flowtrack_store_commit_bytes_total) and its failures. Every call
// passes on to s with its result.
func (m *Monitor) Store(s engine.Store) engine.Store { return &store{Store: s, m: m} }

type store struct {
	engine.Store
	m *Monitor
}

func (s *store) Commit(ctx context.Context, b *engine.StoreBatch) error {
	start := time.Now()
	err := s.Store.Commit(ctx, b)
	s.m.commitSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		s.m.commitErrors.Inc()
		return err
	}
	s.m.commitBytes.Add(float64(batchBytes(b)))
	return nil
}

// batchBytes is the size of the documents and history a batch writes.
func batchBytes(b *engine.StoreBatch) int {
	n := len(b.Engine) + len(b.Messages)
	for _, d := range b.Deployments {
		n += len(d)
	}
	for _, d := range b.Put {
		n += len(d)
	}
	for _, h := range b.History {
		n += len(h.Records)
	}
	for _, f := range b.Finished {
		n += len(f.Doc)
	}
	return n
}
