package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
)

// served is an embedded NATS server on loopback, a connection to it and a
// flowtrack server on it.
type served struct {
	t   *testing.T
	nc  *nats.Conn
	srv *server.Server
}

func serve(t *testing.T) *served {
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
	s := &served{t: t, nc: nc}
	s.start()
	t.Cleanup(func() { s.stop() })
	return s
}

func (s *served) start() {
	s.t.Helper()
	srv, err := server.New(context.Background(), s.nc, server.Config{Cluster: "test"})
	if err != nil {
		s.t.Fatal(err)
	}
	s.srv = srv
}

func (s *served) stop() {
	s.t.Helper()
	if s.srv == nil {
		return
	}
	if err := s.srv.Close(context.Background()); err != nil {
		s.t.Fatal(err)
	}
	s.srv = nil
}

// events subscribes to the cluster's events and returns them on a
// channel large enough for the test.
func events(t *testing.T, c *client.Client) <-chan engine.Event {
	t.Helper()
	ch := make(chan engine.Event, 256)
	unsub, err := c.Subscribe(func(ev engine.Event) { ch <- ev })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unsub() })
	return ch
}

// await returns the first event of type typ (at elementID, if given) of
// instance key; the test's deadline bounds the wait.
func await(t *testing.T, ch <-chan engine.Event, key int64, typ engine.EventType, elementID string) engine.Event {
	t.Helper()
	timeout := time.After(testtime.Scale(20 * time.Second)) // a bound on a hang, not a timing assertion
	for {
		select {
		case ev := <-ch:
			if ev.InstanceKey == key && ev.Type == typ && (elementID == "" || ev.ElementID == elementID) {
				return ev
			}
		case <-timeout:
			t.Fatalf("instance %d: no %s event at %q", key, typ, elementID)
		}
	}
}

// TestClient_EndToEnd runs an order through a served engine from a
// client: a job, a message, a timer on the real clock and a job, with the
// server restarted in between (its state comes back from JetStream), the
// events arriving on their subjects and errors matching the engine's
// sentinels.
func TestClient_EndToEnd(t *testing.T) {
	ctx := context.Background()
	s := serve(t)
	c := client.New(s.nc, "test")
	evs := events(t, c)
	xml, err := os.ReadFile(filepath.Join("testdata", "order.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, "order.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	key, err := c.Start(ctx, "served", map[string]any{"orderId": "o-1"})
	if err != nil {
		t.Fatal(err)
	}
	pack := await(t, evs, key, engine.JobCreated, "pack")
	if err := c.CompleteJob(ctx, pack.JobKey, map[string]any{"packed": true}); err != nil {
		t.Fatal(err)
	}
	if err := c.CompleteJob(ctx, pack.JobKey, nil); !errors.Is(err, engine.ErrUnknownJob) {
		t.Fatalf("completing job %d twice: %v, want ErrUnknownJob", pack.JobKey, err)
	}

	s.stop()
	if err := c.PublishMessage(ctx, engine.Message{Name: "paid", CorrelationKey: "o-1"}); !errors.Is(err, client.ErrNoServer) {
		t.Fatalf("publishing with no server: %v, want ErrNoServer", err)
	}
	s.start()

	reached, err := c.PublishMessageReached(ctx, engine.Message{Name: "paid", CorrelationKey: "o-1", Variables: map[string]any{"paid": 40}})
	if err != nil {
		t.Fatal(err)
	}
	if len(reached) != 1 || reached[0].InstanceKey != key || reached[0].State != engine.Active {
		t.Fatalf("the message reached %+v, want instance %d, active (its timer or ship job ahead)", reached, key)
	}
	await(t, evs, key, engine.TimerFired, "cooling")
	ship := await(t, evs, key, engine.JobCreated, "ship")
	if err := c.CompleteJob(ctx, ship.JobKey, map[string]any{"shipped": true}); err != nil {
		t.Fatal(err)
	}
	await(t, evs, key, engine.InstanceCompleted, "")

	info, err := c.Instance(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != engine.Completed {
		t.Errorf("instance %d is %s, want completed", key, info.State)
	}
	for name, want := range map[string]any{"orderId": "o-1", "packed": true, "paid": 40.0, "shipped": true} {
		if info.Variables[name] != want {
			t.Errorf("variable %s = %v, want %v", name, info.Variables[name], want)
		}
	}
	hist, err := c.History(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	count := map[engine.EventType]int{}
	for _, ev := range hist {
		count[ev.Type]++
	}
	for typ, want := range map[engine.EventType]int{engine.InstanceStarted: 1, engine.JobCreated: 2, engine.JobCompleted: 2,
		engine.MessageCorrelated: 1, engine.TimerFired: 1, engine.InstanceCompleted: 1} {
		if count[typ] != want {
			t.Errorf("%d %s records, want %d (nothing twice across the restart)", count[typ], typ, want)
		}
	}
}

// TestClient_Errors: the server's error responses reach the client as the
// native engine's errors.
func TestClient_Errors(t *testing.T) {
	ctx := context.Background()
	s := serve(t)
	c := client.New(s.nc, "test")
	if _, err := c.Start(ctx, "nope", nil); !errors.Is(err, engine.ErrUnknownProcess) {
		t.Errorf("Start of an unknown process: %v, want ErrUnknownProcess", err)
	}
	_, err := c.Deploy(ctx, "bad.bpmn", []byte("<definitions"))
	var de *engine.DeployError
	if !errors.As(err, &de) || de.File != "bad.bpmn" {
		t.Errorf("Deploy of a broken document: %v, want a *engine.DeployError for bad.bpmn", err)
	}
	if _, err := c.Instance(ctx, 12345); !errors.Is(err, engine.ErrUnknownInstance) {
		t.Errorf("Instance of an unknown key: %v, want ErrUnknownInstance", err)
	}
	if _, err := c.Call(ctx, "restore", []byte(`{"state":{}}`)); !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("restore on a server: %v, want ErrUnsupported", err)
	}
	if _, err := c.Call(ctx, "advance", []byte(`{"byMs":1}`)); !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("advance on a server's real clock: %v, want ErrUnsupported", err)
	}
	var we *client.Error
	if _, err := c.Call(ctx, "no_such_op", nil); !errors.As(err, &we) || we.Code != "UNKNOWN_OPERATION" {
		t.Errorf("an unknown operation: %v, want UNKNOWN_OPERATION", err)
	}
	if _, err := client.New(s.nc, "other").Now(ctx); !errors.Is(err, client.ErrNoServer) {
		t.Errorf("a cluster no server serves: %v, want ErrNoServer", err)
	}
}

// BenchmarkClient_StartCancel measures two served commands, each a NATS
// round trip and a synced JetStream commit: start an order (it waits at
// its first job) and cancel it, from GOMAXPROCS client goroutines
// (callersx1) and 16 times as many (callersx16), whose commands share
// commits.
func BenchmarkClient_StartCancel(b *testing.B) {
	b.Run("callersx1", func(b *testing.B) { benchStartCancel(b, 1) })
	b.Run("callersx16", func(b *testing.B) { benchStartCancel(b, 16) })
}

func benchStartCancel(b *testing.B, callers int) {
	ctx := context.Background()
	ns, err := server.StartNATS(b.TempDir(), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	srv, err := server.New(ctx, nc, server.Config{Cluster: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = srv.Close(ctx) }()
	c := client.New(nc, "bench")
	xml, err := os.ReadFile(filepath.Join("testdata", "order.bpmn"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Deploy(ctx, "order.bpmn", xml); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(callers) // GOMAXPROCS × callers goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			key, err := c.Start(ctx, "served", map[string]any{"orderId": "o"})
			if err != nil {
				b.Error(err)
				return
			}
			if err := c.Cancel(ctx, key); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestServer_OneServerPerCluster: a second server for a cluster that is
// served is refused, and one for another cluster on the same NATS is not.
func TestServer_OneServerPerCluster(t *testing.T) {
	ctx := context.Background()
	s := serve(t)
	if _, err := server.New(ctx, s.nc, server.Config{Cluster: "test"}); !errors.Is(err, server.ErrClusterServed) {
		t.Fatalf("a second server for cluster test: %v, want ErrClusterServed", err)
	}
	other, err := server.New(ctx, s.nc, server.Config{Cluster: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(ctx, s.nc, server.Config{Cluster: "a.b"}); !errors.Is(err, server.ErrBadCluster) {
		t.Errorf("cluster a.b: %v, want ErrBadCluster", err)
	}
}

// TestServer_Concurrent: commands from many clients at once are each
// applied once, and the server closes cleanly after them.
func TestServer_Concurrent(t *testing.T) {
	ctx := context.Background()
	s := serve(t)
	c := client.New(s.nc, "test")
	xml, err := os.ReadFile(filepath.Join("testdata", "order.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deploy(ctx, "order.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	const n = 24
	keys := make(chan int64, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			key, err := c.Start(ctx, "served", map[string]any{"orderId": fmt.Sprint(i)})
			if err == nil {
				var jobs []engine.Job
				if jobs, err = c.Jobs(ctx, engine.JobFilter{InstanceKey: key}); err == nil && len(jobs) == 1 {
					err = c.CompleteJob(ctx, jobs[0].Key, nil)
				} else if err == nil {
					err = fmt.Errorf("instance %d has %d jobs, want 1", key, len(jobs))
				}
			}
			keys <- key
			errs <- err
		}()
	}
	seen := map[int64]bool{}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		key := <-keys
		if seen[key] {
			t.Fatalf("instance key %d given twice", key)
		}
		seen[key] = true
	}
	s.stop()
	s.start()
	for key := range seen {
		toks, err := c.Tokens(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(toks) != 1 || toks[0].ElementID != "paid" {
			t.Errorf("instance %d after the restart: tokens %+v, want one waiting at paid", key, toks)
		}
	}
}

// TestClient_DeadServer: a request to a server whose NATS server died
// (the connection reconnecting) fails with ErrNoServer once the
// connection has been down for ReconnectGrace, not after its timeout.
func TestClient_DeadServer(t *testing.T) {
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(ns.ClientURL(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	srv, err := server.New(ctx, nc, server.Config{Cluster: "dying"})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(nc, "dying")
	if _, err := c.Now(ctx); err != nil {
		t.Fatal(err)
	}
	// The flowtrack server closes first (its store needs NATS to close);
	// then NATS dies, and the connection reconnects in vain.
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	_, err = c.Now(ctx)
	if !errors.Is(err, client.ErrNoServer) || !strings.Contains(err.Error(), "connection has been down") || ctx.Err() != nil {
		t.Fatalf("a request once the server died: %v (context %v), want ErrNoServer", err, ctx.Err())
	}
}
