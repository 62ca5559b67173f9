package jetstore

import (
	"context"
	"fmt"

	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/nats-io/nats.go/jetstream"
)

// Deployments returns how many deployments the store holds, without
// loading them: a cluster partition (package cluster) compares it with
// the cluster's deployment log to deploy what it has not yet, in the
// log's order. It reads the stream only and may run beside Commit.
func (s *Store) Deployments(ctx context.Context) (int, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var info *jetstream.StreamInfo
	err := jswait.Do(ctx, func(ctx context.Context) error {
		ictx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		var err error
		info, err = s.stream.Info(ictx, jetstream.WithSubjectFilter(s.prefix+"dep.*"))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("jetstore: count the deployments: %w", err)
	}
	return len(info.State.Subjects), nil
}
