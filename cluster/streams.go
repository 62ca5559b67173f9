package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/nats-io/nats.go/jetstream"
)

// Creating the cluster's streams and buckets when nodes start together.
//
// NATS servers answer a stream create whose twin (the same stream, the
// same configuration) from another node is still being placed by
// proposing it again, and the second proposal's requester is often never
// answered: it waits out its whole request timeout. CreateOrUpdateStream
// (an update first) is answered no better. Nodes started together create
// the same streams at the same moment, so with setup's 10 s attempts
// three nodes served after 12.5 s (measured with the CLI, three serve
// commands started at once) and printed "setup: ... context deadline
// exceeded; waiting".
//
// So a node first looks the stream up (answered at once, found or not),
// creates it only when it is missing, and gives a create createTimeout:
// one that got no answer is not an error but a look-up again, which
// finds the stream a twin created. Nothing is created twice: a create
// of a stream that exists with the same configuration is a no-op.
//
// The one change made to a stream that exists is raising its replicas to
// the configured count (a cluster created with fewer, or a job stream
// created with one by an earlier version): every stream and bucket of a
// cluster has Config.Replicas.

// createTimeout bounds one create of a stream or bucket. A create is
// answered in well under a second when answered at all (50 to 300 ms for
// three replicas on a loaded 2-core machine).
const createTimeout = 2 * time.Second

// ensureStream creates the stream of cfg, or opens it when it exists,
// raising its replicas to cfg's. It waits out JetStream's transient
// states, and an unanswered create, until ctx ends.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	var s jetstream.Stream
	err := jswait.Do(ctx, func(ctx context.Context) error {
		var err error
		s, err = lookUpOrCreate(ctx, js, cfg.Name, func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, cfg)
			return err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	if err := raiseReplicas(ctx, js, s, cfg.Replicas); err != nil {
		return nil, err
	}
	return s, nil
}

// ensureKeyValue creates the bucket of cfg, or opens it when it exists,
// raising its stream's replicas to cfg's. A bucket that exists keeps its
// settings otherwise (the lease bucket's TTL is the first node's).
func ensureKeyValue(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	var s jetstream.Stream
	err := jswait.Do(ctx, func(ctx context.Context) error {
		var err error
		s, err = lookUpOrCreate(ctx, js, kvStream(cfg.Bucket), func(ctx context.Context) error {
			_, err := js.CreateKeyValue(ctx, cfg)
			return err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", cfg.Bucket, err)
	}
	if err := raiseReplicas(ctx, js, s, cfg.Replicas); err != nil {
		return nil, err
	}
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// lookUpOrCreate returns stream name, creating it with create when it
// is missing; a create that got no answer in time, or whose stream
// cannot be looked up yet, is a transient state (jswait.Again).
func lookUpOrCreate(ctx context.Context, js jetstream.JetStream, name string, create func(context.Context) error) (jetstream.Stream, error) {
	lctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	s, err := js.Stream(lctx, name)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, err
	}
	cctx, ccancel := context.WithTimeout(ctx, createTimeout)
	defer ccancel()
	err = create(cctx)
	switch {
	case err == nil, errors.Is(err, jetstream.ErrStreamNameAlreadyInUse), errors.Is(err, jetstream.ErrBucketExists):
		// Created, by this node or a twin: look it up.
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		err = jswait.Again(fmt.Errorf("its create was not answered within %s (another node may be creating it)", createTimeout))
		return nil, err
	default:
		return nil, err
	}
	actx, acancel := context.WithTimeout(ctx, createTimeout)
	defer acancel()
	s, err = js.Stream(actx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, jswait.Again(fmt.Errorf("created, and not found yet: %w", err))
	}
	return s, err
}

// raiseReplicas updates stream s to want replicas when it has fewer.
func raiseReplicas(ctx context.Context, js jetstream.JetStream, s jetstream.Stream, want int) error {
	cfg := s.CachedInfo().Config
	if cfg.Replicas >= want {
		return nil
	}
	have := cfg.Replicas
	cfg.Replicas = want
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("stream %s: raise its replicas from %d to %d: %w", cfg.Name, have, want, err)
	}
	return nil
}

// kvStream is the stream behind bucket.
func kvStream(bucket string) string { return "KV_" + bucket }
