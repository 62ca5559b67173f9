package jetstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/server"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// The models are boltstore's: both stores must keep the same engines.
func model(t testing.TB, name string) []byte {
	t.Helper()
	xml, err := os.ReadFile(filepath.Join("..", "boltstore", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return xml
}

// natsDir is a NATS server with JetStream in dir, on loopback, and a
// connection to it; restart shuts both down and starts them again on the
// same directory, as a server restart does.
type natsDir struct {
	t   *testing.T
	dir string
	ns  *natsserver.Server
	nc  *nats.Conn
}

func startNATS(t *testing.T) *natsDir {
	n := &natsDir{t: t, dir: t.TempDir()}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsDir) start() {
	n.t.Helper()
	ns, err := server.StartNATS(n.dir, 0)
	if err != nil {
		n.t.Fatal(err)
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		ns.Shutdown()
		n.t.Fatal(err)
	}
	n.ns, n.nc = ns, nc
}

func (n *natsDir) stop() {
	if n.ns == nil {
		return
	}
	n.nc.Close()
	n.ns.Shutdown()
	n.ns.WaitForShutdown()
	n.ns = nil
}

func (n *natsDir) restart() {
	n.stop()
	n.start()
}

// open opens the store on n and an engine on it.
func (n *natsDir) open(opts ...engine.Option) *engine.Engine {
	n.t.Helper()
	s, err := jetstore.Open(context.Background(), n.nc, nil)
	if err != nil {
		n.t.Fatal(err)
	}
	e, err := engine.New(append(opts, engine.WithStore(s))...)
	if err != nil {
		n.t.Fatal(err)
	}
	return e
}

func shut(t *testing.T, e *engine.Engine) {
	t.Helper()
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func jobOf(t *testing.T, e *engine.Engine, typ string, inst int64) engine.Job {
	t.Helper()
	jobs := e.Jobs(engine.JobFilter{Type: typ, InstanceKey: inst})
	if len(jobs) != 1 {
		t.Fatalf("instance %d: %d jobs of type %s, want 1", inst, len(jobs), typ)
	}
	return jobs[0]
}

// TestStore_Reopen runs an instance through a job, a message, a timer and
// a job, reopening the engine on the stream between commands, twice with
// the NATS server itself restarted: each command's effect is there after
// the reopen, nothing happens twice, and the finished instance stays
// findable (WithRetainFinished) while the live one is gone.
func TestStore_Reopen(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	e := n.open(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if _, err := e.Deploy("mixed.bpmn", model(t, "mixed.bpmn")); err != nil {
		t.Fatal(err)
	}
	inst, err := e.Start(ctx, "mixed", map[string]any{"orderId": "o-1"})
	if err != nil {
		t.Fatal(err)
	}
	key := inst.Key()
	shut(t, e)
	n.restart()

	e = n.open()
	if got := e.Now(); !got.Equal(clock.Epoch) {
		t.Fatalf("reopened clock reads %s, want the virtual clock's %s", got, clock.Epoch)
	}
	pack := jobOf(t, e, "pack", key)
	if err := e.CompleteJob(ctx, pack.Key, map[string]any{"packed": true}); err != nil {
		t.Fatal(err)
	}
	msg := engine.Message{Name: "paid", CorrelationKey: "o-1", MessageID: "pay-o-1", TTL: time.Hour, Variables: map[string]any{"paid": 40}}
	if err := e.PublishMessage(ctx, msg); err != nil {
		t.Fatal(err)
	}
	shut(t, e)

	e = n.open()
	if err := e.CompleteJob(ctx, pack.Key, nil); !errors.Is(err, engine.ErrUnknownJob) {
		t.Fatalf("completing job %d again after a reopen: %v, want ErrUnknownJob", pack.Key, err)
	}
	if err := e.PublishMessage(ctx, msg); !errors.Is(err, engine.ErrDuplicateMessage) {
		t.Fatalf("publishing message id %s again after a reopen: %v, want ErrDuplicateMessage", msg.MessageID, err)
	}
	if err := e.Advance(ctx, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	shut(t, e)
	n.restart()

	e = n.open(engine.WithRetainFinished(8))
	ship := jobOf(t, e, "ship", key)
	if err := e.CompleteJob(ctx, ship.Key, map[string]any{"shipped": true}); err != nil {
		t.Fatal(err)
	}
	shut(t, e)

	s, err := jetstore.Open(ctx, n.nc, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Instances) != 0 || len(st.Finished) != 1 || len(st.Deployments) != 1 {
		t.Fatalf("store holds %d live, %d finished instances and %d deployments, want 0, 1 and 1",
			len(st.Instances), len(st.Finished), len(st.Deployments))
	}
	if _, err := s.Instance(ctx, key); !errors.Is(err, engine.ErrUnknownInstance) {
		t.Fatalf("Instance(%d) of a finished instance: %v, want ErrUnknownInstance", key, err)
	}
	e, err = engine.New(engine.WithStore(s), engine.WithRetainFinished(8))
	if err != nil {
		t.Fatal(err)
	}
	defer shut(t, e)
	got, ok := e.Instance(key)
	if !ok {
		t.Fatalf("finished instance %d is not findable", key)
	}
	if got.State() != engine.Completed {
		t.Fatalf("instance %d is %s, want completed", key, got.State())
	}
	vars := got.Variables()
	for name, want := range map[string]any{"orderId": "o-1", "packed": true, "paid": 40.0, "shipped": true} {
		if vars[name] != want {
			t.Errorf("variable %s = %v, want %v", name, vars[name], want)
		}
	}
	hist, err := got.History(ctx)
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
			t.Errorf("%d %s records, want %d", count[typ], typ, want)
		}
	}
}

// TestStore_Instance reads one live instance, document and history, as
// the engine wrote it.
func TestStore_Instance(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	e := n.open(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	defer shut(t, e)
	if _, err := e.Deploy("mixed.bpmn", model(t, "mixed.bpmn")); err != nil {
		t.Fatal(err)
	}
	inst, err := e.Start(ctx, "mixed", map[string]any{"orderId": "o-2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CompleteJob(ctx, jobOf(t, e, "pack", inst.Key()).Key, nil); err != nil {
		t.Fatal(err)
	}
	s, err := jetstore.Open(ctx, n.nc, nil)
	if err != nil {
		t.Fatal(err)
	}
	si, err := s.Instance(ctx, inst.Key())
	if err != nil {
		t.Fatal(err)
	}
	want, err := inst.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	records := 0
	for i, c := range si.History {
		if c.From != records {
			t.Fatalf("history chunk %d starts at record %d, want %d", i, c.From, records)
		}
		records += strings.Count(string(c.Records), `"type":`)
	}
	if records != len(want) {
		t.Errorf("stored history holds %d records, the engine %d", records, len(want))
	}
	if !strings.Contains(string(si.Doc), `"o-2"`) {
		t.Errorf("stored document %s lacks the instance's variable", si.Doc)
	}
	if _, err := s.Instance(ctx, inst.Key()+1000); !errors.Is(err, engine.ErrUnknownInstance) {
		t.Errorf("Instance of an unknown key: %v, want ErrUnknownInstance", err)
	}
}

// wallClock stands for the real clock, reading a set time, and keeps the
// callbacks due now for the test to run (as boltstore's test does).
type wallClock struct {
	now time.Time
	mu  sync.Mutex
	due []func()
}

func (c *wallClock) Now() time.Time { return c.now }

func (c *wallClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	if d <= 0 {
		c.mu.Lock()
		c.due = append(c.due, f)
		c.mu.Unlock()
	}
	return neverTimer{}
}

func (c *wallClock) run() {
	c.mu.Lock()
	due := c.due
	c.due = nil
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

type neverTimer struct{}

func (neverTimer) Stop() bool { return true }

// TestStore_OverdueTimers restarts the server after an instance's timers
// fell due: on a clock that is not virtual they fire at once, in due
// order.
func TestStore_OverdueTimers(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	e := n.open(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if _, err := e.Deploy("timers.bpmn", model(t, "timers.bpmn")); err != nil {
		t.Fatal(err)
	}
	inst, err := e.Start(ctx, "timers", nil)
	if err != nil {
		t.Fatal(err)
	}
	shut(t, e)
	n.restart()

	wall := &wallClock{now: clock.Epoch.Add(time.Hour)}
	e = n.open(engine.WithClock(wall))
	defer shut(t, e)
	wall.run()
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := e.Instance(inst.Key())
	hist, err := got.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var fired []string
	for _, ev := range hist {
		if ev.Type == engine.TimerFired {
			fired = append(fired, ev.ElementID)
		}
	}
	if want := []string{"t5", "t7", "t10"}; !slices.Equal(fired, want) {
		t.Errorf("timers fired %v, want %v (due order)", fired, want)
	}
}

// TestStore_Errors: bad names and batches are refused with errors that
// say why, and a refused commit writes nothing.
func TestStore_Errors(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	if _, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "a.b"}); err == nil || !strings.Contains(err.Error(), `"a.b"`) {
		t.Errorf("Open with name a.b: %v, want an error naming it", err)
	}
	s, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "errors"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, &engine.StoreBatch{}); !errors.Is(err, jetstore.ErrNoEngineDocument) {
		t.Errorf("Commit without the engine document: %v, want ErrNoEngineDocument", err)
	}
	if err := s.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"a":1}`), Put: map[int64][]byte{7: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(st.Engine) != `{"a":1}` || len(st.Instances) != 1 || st.Instances[7] == nil {
		t.Errorf("store holds engine %s and %d instances, want only the good commit", st.Engine, len(st.Instances))
	}
}

// TestStore_LargeDocuments: documents and history chunks larger than a
// NATS message travel in parts and come back whole, from Load and from
// Instance.
func TestStore_LargeDocuments(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	s, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "large"})
	if err != nil {
		t.Fatal(err)
	}
	big := func(c byte, size int) []byte {
		return []byte(`{"v":"` + strings.Repeat(string(c), size) + `"}`)
	}
	var records []string
	for i := range 3000 {
		records = append(records, fmt.Sprintf(`{"seq":%d,"pad":"%s"}`, i+1, strings.Repeat("r", 1000)))
	}
	hist := []byte("[" + strings.Join(records, ",") + "]")
	b := &engine.StoreBatch{
		Engine:      big('e', 2_500_000),
		Deployments: [][]byte{big('d', 1_500_000), []byte(`{"small":true}`)},
		Put:         map[int64][]byte{1: big('i', 3_000_000)},
		History:     map[int64]engine.HistoryChunk{1: {From: 0, Records: hist}},
		Finished:    []engine.FinishedInstance{{Key: 2, Doc: big('f', 2_000_000)}},
	}
	if err := s.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(st.Engine, b.Engine) || len(st.Deployments) != 2 || !bytes.Equal(st.Deployments[0], b.Deployments[0]) ||
		!bytes.Equal(st.Deployments[1], b.Deployments[1]) || len(st.Finished) != 1 || !bytes.Equal(st.Finished[0], b.Finished[0].Doc) {
		t.Fatal("Load returned other engine, deployment or finished documents than committed")
	}
	for name, si := range map[string]*engine.StoredInstance{"Load": st.Instances[1], "Instance": mustInstance(t, s, 1)} {
		if si == nil || !bytes.Equal(si.Doc, b.Put[1]) {
			t.Fatalf("%s: instance 1's document is not the one committed", name)
		}
		var got []json.RawMessage
		next := 0
		for _, c := range si.History {
			if c.From != next {
				t.Fatalf("%s: a history chunk starts at %d, want %d", name, c.From, next)
			}
			var part []json.RawMessage
			if err := json.Unmarshal(c.Records, &part); err != nil {
				t.Fatalf("%s: history chunk from %d: %v", name, c.From, err)
			}
			got, next = append(got, part...), next+len(part)
		}
		if len(si.History) < 2 || len(got) != len(records) || string(got[2999]) != records[2999] {
			t.Fatalf("%s: history of %d records in %d chunks, want %d records in several", name, len(got), len(si.History), len(records))
		}
	}
}

func mustInstance(t *testing.T, s *jetstore.Store, key int64) *engine.StoredInstance {
	t.Helper()
	si, err := s.Instance(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return si
}

// TestStore_CommitAgain: a commit written again, as the engine does after
// a commit whose outcome it does not know (an acknowledgement lost), with
// more history since, leaves what one commit of the later batch leaves:
// no deployment and no history chunk twice.
func TestStore_CommitAgain(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	s, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "again"})
	if err != nil {
		t.Fatal(err)
	}
	first := &engine.StoreBatch{Engine: []byte(`{"n":1}`), Messages: []byte(`[{"m":1}]`), Deployments: [][]byte{[]byte(`{"d":0}`)},
		Put:     map[int64][]byte{1: []byte(`{"i":1}`)},
		History: map[int64]engine.HistoryChunk{1: {From: 0, Records: []byte(`[{"seq":1}]`)}}}
	again := &engine.StoreBatch{Engine: []byte(`{"n":2}`), Deployments: first.Deployments,
		Put:     map[int64][]byte{1: []byte(`{"i":2}`)},
		History: map[int64]engine.HistoryChunk{1: {From: 0, Records: []byte(`[{"seq":1},{"seq":2}]`)}}}
	// The lost acknowledgement: a store that saw the stream before the
	// first commit landed writes the batch again, as the engine's store
	// does when it did not learn that its commit landed.
	retrying, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "again"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := retrying.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := retrying.Commit(ctx, again); err != nil {
		t.Fatal(err)
	}
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	si := st.Instances[1]
	if string(st.Messages) != `[{"m":1}]` {
		t.Errorf("message buffer %s, want the one committed (a later batch without one keeps it)", st.Messages)
	}
	if string(st.Engine) != `{"n":2}` || len(st.Deployments) != 1 || si == nil || string(si.Doc) != `{"i":2}` ||
		len(si.History) != 1 || string(si.History[0].Records) != `[{"seq":1},{"seq":2}]` {
		t.Fatalf("after a commit written twice: engine %s, %d deployments, instance %+v", st.Engine, len(st.Deployments), si)
	}
	if err := s.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"n":3}`), Deployments: [][]byte{[]byte(`{"d":1}`)}}); err != nil {
		t.Fatal(err)
	}
	if st, err = s.Load(ctx); err != nil || len(st.Deployments) != 2 || string(st.Deployments[1]) != `{"d":1}` {
		t.Fatalf("a later deployment: %v, %d deployments", err, len(st.Deployments))
	}
}
