package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	cluster = "jq"
	jobType = "work.item" // a "." to write as %2E in subjects
)

// bound bounds a wait that only a hang would exceed: not a timing
// assertion.
var bound = testtime.Scale(30 * time.Second)

// queued is an embedded NATS server, a connection, a flowtrack server on
// it and a client with the test process deployed.
type queued struct {
	t   testing.TB
	nc  *nats.Conn
	srv *server.Server
	c   *client.Client
	js  jetstream.JetStream
}

func newQueued(t testing.TB) *queued {
	t.Helper()
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	q := &queued{t: t, nc: nc, c: client.New(nc, cluster), js: js}
	q.start()
	t.Cleanup(q.stop)
	xml, err := os.ReadFile(filepath.Join("testdata", "work.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.c.Deploy(context.Background(), "work.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	return q
}

func (q *queued) start() {
	q.t.Helper()
	srv, err := server.New(context.Background(), q.nc, server.Config{Cluster: cluster,
		Jobs: server.JobsConfig{OnError: func(err error) { q.t.Errorf("job queue: %v", err) }}})
	if err != nil {
		q.t.Fatal(err)
	}
	q.srv = srv
}

func (q *queued) stop() {
	q.t.Helper()
	if q.srv == nil {
		return
	}
	if err := q.srv.Close(context.Background()); err != nil {
		q.t.Fatal(err)
	}
	q.srv = nil
}

// startN starts n instances and returns their keys.
func (q *queued) startN(n int) []int64 {
	q.t.Helper()
	keys := make([]int64, n)
	for i := range keys {
		k, err := q.c.Start(context.Background(), "work", map[string]any{"i": i})
		if err != nil {
			q.t.Fatal(err)
		}
		keys[i] = k
	}
	return keys
}

// consumer creates the job type's consumer as any worker would, with
// ackWait as the activation timeout.
func (q *queued) consumer(ackWait time.Duration) jetstream.Consumer {
	q.t.Helper()
	cons, err := q.js.CreateOrUpdateConsumer(context.Background(), wire.JobStream(cluster), jetstream.ConsumerConfig{
		Durable: wire.JobConsumer(jobType), FilterSubject: wire.JobSubject(cluster, jobType),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait,
	})
	if err != nil {
		q.t.Fatal(err)
	}
	return cons
}

// next pulls the next queued job.
func next(t testing.TB, cons jetstream.Consumer) (engine.Job, jetstream.Msg) {
	t.Helper()
	m, err := cons.Next(jetstream.FetchMaxWait(bound))
	if err != nil {
		t.Fatalf("next job: %v", err)
	}
	var j engine.Job
	if err := json.Unmarshal(m.Data(), &j); err != nil {
		t.Fatalf("job message %q: %v", m.Data(), err)
	}
	if want := wire.JobMsgID(j.Key, j.Activation); m.Headers().Get(jetstream.MsgIDHeader) != want {
		t.Errorf("job %d: message id %q, want %q", j.Key, m.Headers().Get(jetstream.MsgIDHeader), want)
	}
	return j, m
}

// completions counts the completed instances among keys, from the events.
func (q *queued) completions() (wait func(keys []int64)) {
	q.t.Helper()
	var mu sync.Mutex
	done := map[int64]bool{}
	changed := make(chan struct{}, 1)
	unsub, err := q.c.Subscribe(func(ev engine.Event) {
		if ev.Type != engine.InstanceCompleted {
			return
		}
		mu.Lock()
		done[ev.InstanceKey] = true
		mu.Unlock()
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		q.t.Fatal(err)
	}
	q.t.Cleanup(func() { _ = unsub() })
	return func(keys []int64) {
		q.t.Helper()
		timeout := time.After(bound)
		for {
			mu.Lock()
			var missing []int64
			for _, k := range keys {
				if !done[k] {
					missing = append(missing, k)
				}
			}
			mu.Unlock()
			if len(missing) == 0 {
				return
			}
			select {
			case <-changed:
			case <-timeout:
				jobs, err := q.c.Jobs(context.Background(), engine.JobFilter{InstanceKey: missing[0]})
				q.t.Fatalf("%d of %d instances did not complete; instance %d has jobs %+v (%v)", len(missing), len(keys), missing[0], jobs, err)
			}
		}
	}
}

// TestJobs_Redelivery: a job whose activation times out is queued again
// with a new activation; a result for the old one is STALE_ACTIVATION and
// the new one completes the instance with its variables.
func TestJobs_Redelivery(t *testing.T) {
	ctx := context.Background()
	q := newQueued(t)
	wait := q.completions()
	cons := q.consumer(300 * time.Millisecond)
	keys := q.startN(1)
	first, m := next(t, cons)
	if first.InstanceKey != keys[0] || first.Type != jobType || first.Worker != server.DefaultQueueWorker || first.Activation == 0 || first.Deadline == nil {
		t.Fatalf("queued job %+v: want instance %d's %s job, activated by %s with a deadline", first, keys[0], jobType, server.DefaultQueueWorker)
	}
	if err := m.Ack(); err != nil { // a worker that took it and died
		t.Fatal(err)
	}
	// The next activation completes the job, unless it too timed out
	// first (a slow machine): then the one after it does.
	var again engine.Job
	for again.Key == 0 {
		j, m := next(t, cons)
		if j.Key != first.Key || j.Activation == first.Activation {
			t.Fatalf("after the timeout: job %d activation %d, want job %d with a new activation (not %d)", j.Key, j.Activation, first.Key, first.Activation)
		}
		err := q.c.CompleteJob(ctx, first.Key, map[string]any{"late": true}, engine.JobActivation(first.Activation))
		if !errors.Is(err, engine.ErrStaleActivation) {
			t.Fatalf("completing the timed-out activation: %v, want ErrStaleActivation", err)
		}
		err = q.c.CompleteJob(ctx, j.Key, map[string]any{"result": "ok"}, engine.JobActivation(j.Activation))
		switch {
		case err == nil:
			again = j
		case !errors.Is(err, engine.ErrStaleActivation):
			t.Fatalf("completing activation %d: %v", j.Activation, err)
		}
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.c.CompleteJob(ctx, again.Key, nil, engine.JobActivation(again.Activation)); !errors.Is(err, engine.ErrUnknownJob) {
		t.Fatalf("completing job %d twice: %v, want ErrUnknownJob", again.Key, err)
	}
	wait(keys)
	inst, err := q.c.Instance(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	if inst.Variables["result"] != "ok" || inst.Variables["late"] != nil {
		t.Errorf("variables %v: want result ok and nothing from the stale activation", inst.Variables)
	}
}

// TestJobs_MinTimeout: a consumer asking for a tiny AckWait gets
// activations of MinJobTimeout, not a server activating in a loop.
func TestJobs_MinTimeout(t *testing.T) {
	q := newQueued(t)
	cons := q.consumer(time.Millisecond)
	q.startN(1)
	j, m := next(t, cons)
	if held := j.Deadline.Sub(j.Created); held < server.MinJobTimeout {
		t.Errorf("activation held %s after the job was created, want at least %s", held, server.MinJobTimeout)
	}
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
}

// TestJobs_ExactlyOnce: workers on connections of their own share one
// queue; every job is handled once and every instance completes.
func TestJobs_ExactlyOnce(t *testing.T) {
	const workers, perWorker = 8, 10
	q := newQueued(t)
	wait := q.completions()
	var mu sync.Mutex
	handled := map[int64]int{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range workers {
		nc, err := nats.Connect(q.nc.ConnectedUrl())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		c := client.New(nc, cluster)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.HandleJobs(ctx, jobType, func(_ context.Context, j engine.Job) (map[string]any, error) {
				mu.Lock()
				handled[j.Key]++
				mu.Unlock()
				return map[string]any{"by": w, "twice": j.Variables["i"].(float64) * 2}, nil
			}, engine.WorkerOptions{Concurrency: 2, Timeout: time.Minute})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	keys := q.startN(workers * perWorker)
	wait(keys)
	cancel()
	wg.Wait()
	if len(handled) != len(keys) {
		t.Errorf("%d jobs handled, want %d", len(handled), len(keys))
	}
	for k, n := range handled {
		if n != 1 {
			t.Errorf("job %d handled %d times", k, n)
		}
	}
	for i, k := range keys[:5] {
		inst, err := q.c.Instance(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		if inst.Variables["twice"] != float64(2*i) {
			t.Errorf("instance %d: variables %v, want twice %d", k, inst.Variables, 2*i)
		}
	}
}

// TestJobs_Restart: jobs activated and queued before a server restart
// whose workers never finish them are queued again by their timeouts
// once the next server runs; none is lost.
func TestJobs_Restart(t *testing.T) {
	const n = 10
	q := newQueued(t)
	cons := q.consumer(500 * time.Millisecond)
	keys := q.startN(n)
	taken := map[int64]int64{}
	for range n / 2 {
		j, m := next(t, cons)
		taken[j.Key] = j.Activation
		if err := m.Ack(); err != nil { // taken by a worker that dies
			t.Fatal(err)
		}
	}
	q.stop()
	q.start()
	wait := q.completions()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var redone atomic.Int32
	// The live worker's activations outlast a slow machine's round trips
	// (bound): with half a second, at load 40 each activation timed out
	// before its completion landed, and the jobs were activated again and
	// again (make flake).
	go func() {
		done <- q.c.HandleJobs(ctx, jobType, func(_ context.Context, j engine.Job) (map[string]any, error) {
			if old, ok := taken[j.Key]; ok {
				if old == j.Activation {
					return nil, fmt.Errorf("job %d: activation %d again after it timed out", j.Key, old)
				}
				redone.Add(1)
			}
			return map[string]any{"done": true}, nil
		}, engine.WorkerOptions{Timeout: bound})
	}()
	wait(keys)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if int(redone.Load()) != len(taken) {
		t.Errorf("%d of the %d jobs taken before the restart were done again", redone.Load(), len(taken))
	}
}

// TestJobs_RestartUnderWorkers: the server restarts while workers hold
// jobs; their results reach the next server (the activation is in the
// engine's state) or are refused as stale after a timeout, and every job
// is completed exactly once.
func TestJobs_RestartUnderWorkers(t *testing.T) {
	const n, held = 12, 3
	q := newQueued(t)
	var mu sync.Mutex
	completed := map[int64]int{}
	unsub, err := q.c.Subscribe(func(ev engine.Event) {
		if ev.Type == engine.JobCompleted {
			mu.Lock()
			completed[ev.JobKey]++
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unsub() }()
	wait := q.completions()
	got := make(chan struct{}, held)
	restarted := make(chan struct{})
	var calls atomic.Int32
	// Activations outlast a slow machine's round trips (bound; see
	// TestJobs_Restart): the held jobs' results reach the next server.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.c.HandleJobs(ctx, jobType, func(context.Context, engine.Job) (map[string]any, error) {
			if calls.Add(1) <= held {
				got <- struct{}{}
				<-restarted // hold the job across the restart
			}
			return map[string]any{"done": true}, nil
		}, engine.WorkerOptions{Concurrency: held, Timeout: bound})
	}()
	keys := q.startN(n)
	for range held {
		<-got
	}
	q.stop()
	q.start()
	close(restarted)
	wait(keys)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(completed) != n {
		t.Errorf("%d jobs completed, want %d", len(completed), n)
	}
	for k, c := range completed {
		if c != 1 {
			t.Errorf("job %d completed %d times", k, c)
		}
	}
}

// TestJobs_FailedJobRequeued: a job whose handler fails goes back to the
// engine with one retry fewer and is queued again after its back-off.
func TestJobs_FailedJobRequeued(t *testing.T) {
	q := newQueued(t)
	wait := q.completions()
	var mu sync.Mutex
	var retries []int
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.c.HandleJobs(ctx, jobType, func(_ context.Context, j engine.Job) (map[string]any, error) {
			mu.Lock()
			defer mu.Unlock()
			retries = append(retries, j.Retries)
			if len(retries) == 1 {
				return nil, errors.New("flaky downstream")
			}
			return map[string]any{"attempts": len(retries)}, nil
		}, engine.WorkerOptions{Timeout: time.Minute, RetryBackoff: 50 * time.Millisecond})
	}()
	keys := q.startN(1)
	wait(keys)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(retries) != 2 || retries[0] != 3 || retries[1] != 2 {
		t.Errorf("attempts saw retries %v, want [3 2]", retries)
	}
}

// BenchmarkJobs_Queue measures jobs/s through the queue: b.N instances
// of one service task, started first, then worked by 1 and 8 workers, each
// on a connection of its own with 1 or 4 jobs in hand.
func BenchmarkJobs_Queue(b *testing.B) {
	for _, run := range []struct{ workers, inHand int }{{1, 1}, {1, 4}, {8, 4}} {
		workers, inHand := run.workers, run.inHand
		b.Run(fmt.Sprintf("workers=%d/inhand=%d", workers, inHand), func(b *testing.B) {
			q := newQueued(b)
			wait := q.completions()
			keys := q.startN(b.N)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range workers {
				nc, err := nats.Connect(q.nc.ConnectedUrl())
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(nc.Close)
				c := client.New(nc, cluster)
				wg.Add(1)
				go func() {
					defer wg.Done()
					_ = c.HandleJobs(ctx, jobType, func(context.Context, engine.Job) (map[string]any, error) {
						return map[string]any{"ok": true}, nil
					}, engine.WorkerOptions{Concurrency: inHand, Timeout: time.Minute})
				}()
			}
			wait(keys)
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
			b.StopTimer()
			cancel()
			wg.Wait()
		})
	}
}
