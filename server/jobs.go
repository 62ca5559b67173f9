package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JobsConfig configures StartJobs. The zero value is valid.
type JobsConfig struct {
	// Worker names the queue in the jobs it activates (Job.Worker);
	// default "flowtrack-queue".
	Worker string
	// Replicas is the job stream's replication factor (default 1).
	Replicas int
	// Batch bounds how many jobs one activation call takes (default 256).
	Batch int
	// OnError is told what went wrong in the background (JetStream
	// unreachable, a publication refused). The jobs concerned are not
	// lost: their activation times out and they are published again. It
	// runs on the queue's goroutine. Default: ignored.
	OnError func(error)
	// Activated, when set, is told how many jobs of which type the queue
	// activated (the server's metrics). It runs on the queue's goroutine.
	Activated func(jobType string, n int)
}

// Defaults of JobsConfig.
const (
	DefaultQueueWorker = "flowtrack-queue"
	DefaultJobsBatch   = 256
)

// retryAfter is how long the queue waits before a pass that failed is
// tried again.
const retryAfter = time.Second

// MinJobTimeout is the shortest activation timeout the queue gives: a
// consumer's AckWait below it counts as it, so that a worker asking for
// a tiny timeout cannot make the server activate and publish in a loop.
const MinJobTimeout = 100 * time.Millisecond

// Jobs is the job queues of one engine: it activates the jobs of every
// type a worker serves and publishes each activation into the cluster's
// work-queue stream (wire.JobStream), on the subject of its type.
//
// A type is served once its durable consumer (wire.JobConsumer, filtered
// on wire.JobSubject) exists on the stream; a worker creates it, and its
// AckWait is the activation timeout of the type's jobs. Jobs of types no
// worker serves stay activatable in the engine, as in Zeebe.
//
// The engine stays the source of truth: a worker completes, fails or
// throws with the activation the message carries, through the ordinary
// operations, then acks. A job not finished within its activation timeout
// becomes activatable in the engine again and is published again with a
// new activation; the old activation's result is STALE_ACTIVATION. The
// queue wakes on the engine's job events, on consumer advisories and at
// the engine's next deadline, never polling.
//
// One Jobs runs per engine (per partition in a cluster); its methods are
// safe for concurrent use.
type Jobs struct {
	eng     *engine.Engine
	js      jetstream.JetStream
	stream  jetstream.Stream // nil until found or created (StartJobs, then the queue's goroutine)
	cluster string
	cfg     JobsConfig
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	unsub   func() error
	adv     *nats.Subscription

	mu      sync.Mutex
	refresh bool                     // the consumers changed: list them again
	served  map[string]time.Duration // job type -> activation timeout
	closed  bool
}

// StartJobs starts publishing eng's jobs into cluster's job stream on nc,
// at once for the jobs already activatable. It creates the stream if it
// does not exist; when JetStream cannot answer, the queue's goroutine
// tries again (telling OnError), so that the engine serves meanwhile: in a
// cluster whose NATS servers are recovering, a partition opens all the
// same. Close stops it; nc and eng stay the caller's.
//
// # Errors
//
// ErrBadCluster for a cluster name that cannot be a subject token; the
// error of a subscription that fails.
func StartJobs(ctx context.Context, eng *engine.Engine, nc *nats.Conn, cluster string, cfg JobsConfig) (*Jobs, error) {
	if !validCluster.MatchString(cluster) {
		return nil, fmt.Errorf("job queues: %w %q", ErrBadCluster, cluster)
	}
	if cfg.Worker == "" {
		cfg.Worker = DefaultQueueWorker
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultJobsBatch
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.OnError == nil {
		cfg.OnError = func(error) {}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("job queues: %w", err)
	}
	q := &Jobs{eng: eng, js: js, cluster: cluster, cfg: cfg,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), refresh: true}
	// Subscribed before the first listing, so no consumer is missed.
	q.adv, err = nc.Subscribe("$JS.EVENT.ADVISORY.CONSUMER.*."+wire.JobStream(cluster)+".*", func(*nats.Msg) {
		q.mu.Lock()
		q.refresh = true
		q.mu.Unlock()
		q.poke()
	})
	if err != nil {
		return nil, fmt.Errorf("job queues: consumer advisories: %w", err)
	}
	q.unsub = eng.Subscribe(func(ev engine.Event) {
		switch ev.Type {
		case engine.JobCreated, engine.JobFailed, engine.IncidentResolved:
			q.poke()
		}
	})
	// A first try here, so that a lone server's stream exists when it
	// answers; the queue's goroutine tries again if this one failed.
	if err := q.openStreamOnce(ctx); err != nil {
		cfg.OnError(fmt.Errorf("job queues of cluster %s: %w", cluster, err))
	}
	q.poke()
	go q.run()
	return q, nil
}

// poke wakes the queue's goroutine; wakes that come while it works are
// one more pass.
func (q *Jobs) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// idleRefresh bounds how long the queue goes without listing the job
// stream's consumers again.
const idleRefresh = 5 * time.Second

// run is the queue's goroutine: a pass at every wake and at the engine's
// next deadline.
func (q *Jobs) run() {
	defer close(q.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-q.stop
		cancel()
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// NextDeadline reports only times still ahead, so a deadline that
		// passes while the pass runs, after it looked at that job, is
		// read before the pass; the one after it adds the activations the
		// pass made.
		before, okBefore := q.eng.NextDeadline()
		wait := time.Hour
		if err := q.pass(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			q.cfg.OnError(fmt.Errorf("job queues of cluster %s: %w", q.cluster, err))
			wait = retryAfter
		} else {
			if okBefore {
				wait = time.Until(before)
			}
			if at, ok := q.eng.NextDeadline(); ok {
				wait = min(wait, time.Until(at))
			}
			// The consumers are listed again at least this often: a list
			// taken while a consumer's leader was being elected again
			// (its server killed) may miss it, and its type would wait
			// for an advisory that has already passed.
			wait = max(min(wait, idleRefresh), time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-q.stop:
			return
		case <-q.wake:
		case <-timer.C:
			q.mu.Lock()
			q.refresh = true // AckWait may have been changed on a consumer
			q.mu.Unlock()
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// openStream finds the job stream, or creates it: with work-queue
// retention, on file, with the configured replicas. A stream that exists
// is taken as it is, never updated, so that partitions opening at once
// do not contend over its configuration.
func (q *Jobs) openStream(ctx context.Context) error {
	ctx, cancel := jswait.Bound(ctx, jswait.DefaultWait)
	defer cancel()
	return jswait.Do(ctx, q.openStreamOnce)
}

func (q *Jobs) openStreamOnce(ctx context.Context) error {
	name := wire.JobStream(q.cluster)
	stream, err := q.js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		stream, err = q.js.CreateStream(ctx, JobStreamConfig(q.cluster, q.cfg.Replicas))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) { // created meanwhile, by another partition
			stream, err = q.js.Stream(ctx, name)
		}
	}
	if err != nil {
		return fmt.Errorf("stream %s: %w", name, err)
	}
	q.stream = stream
	return nil
}

// JobStreamConfig is the configuration of cluster's job stream: work-queue
// retention, on file, with replicas (a cluster creates it with its
// partitions' replicas before any partition opens).
func JobStreamConfig(cluster string, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        wire.JobStream(cluster),
		Description: "flowtrack job work queues of cluster " + cluster,
		Subjects:    []string{wire.JobSubjectPrefix(cluster) + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
	}
}

// pass activates and publishes every activatable job of the served
// types, in batches.
func (q *Jobs) pass(ctx context.Context) error {
	if q.stream == nil {
		if err := q.openStream(ctx); err != nil {
			return err
		}
	}
	served, err := q.types(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for typ, timeout := range served {
		for {
			jobs, err := q.eng.ActivateJobs(ctx, typ, q.cfg.Worker, timeout, q.cfg.Batch)
			if err == nil && q.cfg.Activated != nil {
				q.cfg.Activated(typ, len(jobs))
			}
			if err == nil {
				err = q.publish(ctx, jobs)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("job queue %s: %w", typ, err))
				break
			}
			if len(jobs) < q.cfg.Batch {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// types returns the served job types and their activation timeouts,
// listing the stream's consumers again after a change.
func (q *Jobs) types(ctx context.Context) (map[string]time.Duration, error) {
	q.mu.Lock()
	refresh, served := q.refresh, q.served
	q.refresh = false
	q.mu.Unlock()
	if !refresh {
		return served, nil
	}
	prefix := wire.JobSubjectPrefix(q.cluster)
	lctx, cancel := jswait.Bound(ctx, jswait.DefaultWait)
	defer cancel()
	err := jswait.Do(lctx, func(ctx context.Context) error {
		served = map[string]time.Duration{}
		list := q.stream.ListConsumers(ctx)
		for info := range list.Info() {
			token, ok := strings.CutPrefix(info.Config.FilterSubject, prefix)
			if !ok {
				continue
			}
			if typ, ok := wire.JobType(token); ok && info.Config.AckWait > 0 {
				served[typ] = max(info.Config.AckWait, MinJobTimeout)
			}
		}
		return list.Err()
	})
	if err != nil {
		q.mu.Lock()
		q.refresh = true
		q.mu.Unlock()
		return nil, fmt.Errorf("list the consumers of %s: %w", wire.JobStream(q.cluster), err)
	}
	q.mu.Lock()
	q.served = served
	q.mu.Unlock()
	return served, nil
}

// publish queues activated jobs and waits until JetStream holds them,
// waiting out JetStream's transient states (an election of the stream's
// leader, a reconnecting connection). A job published again carries the
// same message id (its key and activation), so JetStream holds it once.
func (q *Jobs) publish(ctx context.Context, jobs []engine.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	ctx, cancel := jswait.Bound(ctx, jswait.DefaultWait)
	defer cancel()
	return jswait.Do(ctx, func(ctx context.Context) error {
		actx, cancel := context.WithTimeout(ctx, publishAttempt)
		defer cancel()
		return q.publishOnce(actx, jobs)
	})
}

// publishAttempt bounds one try of publish: an acknowledgement that does
// not come (the stream's leader died with the publication) is not waited
// for longer, and the jobs are published again (the same message ids:
// JetStream holds each once). Waiting out jswait.DefaultWait instead
// stopped job delivery for 30 s after a kill of the job stream's leader
// (TestCluster_JobStreamLeaderKilled).
const publishAttempt = 3 * time.Second

func (q *Jobs) publishOnce(ctx context.Context, jobs []engine.Job) error {
	acks := make([]jetstream.PubAckFuture, 0, len(jobs))
	for _, j := range jobs {
		data, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("job %d: encode: %w", j.Key, err)
		}
		f, err := q.js.PublishMsgAsync(&nats.Msg{Subject: wire.JobSubject(q.cluster, j.Type), Data: data},
			jetstream.WithMsgID(wire.JobMsgID(j.Key, j.Activation)))
		if err != nil {
			return fmt.Errorf("job %d: publish: %w", j.Key, err)
		}
		acks = append(acks, f)
	}
	for i, f := range acks {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("job %d: publish: %w", jobs[i].Key, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close stops publishing. Jobs activated and not yet published are
// published again once their activation times out, by the next queue on
// the engine's state.
func (q *Jobs) Close() error {
	q.mu.Lock()
	closed := q.closed
	q.closed = true
	q.mu.Unlock()
	if closed {
		return nil
	}
	close(q.stop)
	<-q.done
	errs := []error{q.adv.Unsubscribe()}
	if err := q.unsub(); err != nil && !errors.Is(err, engine.ErrObserverDropped) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("job queues: close: %w", err)
	}
	return nil
}
