package boltstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/boltstore"
	"github.com/flowtrack/flowtrack/engine/clock"
)

func mixedXML(t testing.TB) []byte {
	t.Helper()
	xml, err := os.ReadFile(filepath.Join("testdata", "mixed.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	return xml
}

// open opens the store at path and an engine on it; both close with the
// test unless closed before.
func open(t *testing.T, path string, opts ...engine.Option) (*engine.Engine, *boltstore.Store) {
	t.Helper()
	s, err := boltstore.Open(path, &boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(append(opts, engine.WithStore(s))...)
	if err != nil {
		_ = s.Close()
		t.Fatal(err)
	}
	return e, s
}

func shut(t *testing.T, e *engine.Engine, s *boltstore.Store) {
	t.Helper()
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
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

// TestStore_Reopen runs an instance through every kind of wait, closing
// and reopening the engine on the file between any two commands: each
// command's effect is there after the reopen, and nothing happens twice.
// The engine switches resumption mode at every reopen.
func TestStore_Reopen(t *testing.T) {
	t.Run("goroutines first", func(t *testing.T) { testReopen(t, engine.ResumeGoroutines) })
	t.Run("direct first", func(t *testing.T) { testReopen(t, engine.ResumeDirect) })
}

func testReopen(t *testing.T, mode engine.Resumption) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "flowtrack.db")
	other := func() engine.Option {
		if mode == engine.ResumeGoroutines {
			mode = engine.ResumeDirect
		} else {
			mode = engine.ResumeGoroutines
		}
		return engine.WithResumption(mode)
	}
	e, s := open(t, path, engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(mode))
	if _, err := e.Deploy("mixed.bpmn", mixedXML(t)); err != nil {
		t.Fatal(err)
	}
	inst, err := e.Start(ctx, "mixed", map[string]any{"orderId": "o-1"})
	if err != nil {
		t.Fatal(err)
	}
	key := inst.Key()
	shut(t, e, s)

	e, s = open(t, path, other())
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
	shut(t, e, s)

	e, s = open(t, path, other())
	if err := e.CompleteJob(ctx, pack.Key, nil); !errors.Is(err, engine.ErrUnknownJob) {
		t.Fatalf("completing job %d again after a reopen: %v, want ErrUnknownJob", pack.Key, err)
	}
	if err := e.PublishMessage(ctx, msg); !errors.Is(err, engine.ErrDuplicateMessage) {
		t.Fatalf("publishing message id %s again after a reopen: %v, want ErrDuplicateMessage", msg.MessageID, err)
	}
	if err := e.Advance(ctx, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	shut(t, e, s)

	e, s = open(t, path, engine.WithRetainFinished(8), other())
	defer shut(t, e, s)
	ship := jobOf(t, e, "ship", key)
	if err := e.CompleteJob(ctx, ship.Key, map[string]any{"shipped": true}); err != nil {
		t.Fatal(err)
	}
	got, ok := e.Instance(key)
	if !ok {
		t.Fatalf("instance %d is gone", key)
	}
	if st, err := got.Wait(ctx); err != nil || st != engine.Completed {
		t.Fatalf("instance %d ended %s (%v), want completed", key, st, err)
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

// wallClock stands for the real clock, reading a set time: it is not a
// *clock.Virtual, so a restore fires overdue timers at once. It keeps the
// callbacks due now for the test to run (the real clock runs them on
// goroutines of their own); later ones never run.
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

// run runs the callbacks due, in the order they were given.
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

// TestStore_OverdueTimers reopens a store after its timers fell due: on a
// clock that is not virtual they fire at once, in due order.
func TestStore_OverdueTimers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "flowtrack.db")
	e, s := open(t, path, engine.WithClock(clock.NewVirtual(clock.Epoch)))
	xml, err := os.ReadFile(filepath.Join("testdata", "timers.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deploy("timers.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	inst, err := e.Start(ctx, "timers", nil)
	if err != nil {
		t.Fatal(err)
	}
	shut(t, e, s)

	wall := &wallClock{now: clock.Epoch.Add(time.Hour)}
	e, s = open(t, path, engine.WithClock(wall))
	defer shut(t, e, s)
	wall.run()
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := e.Instance(inst.Key())
	hist, err := got.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var fired, jobs []string
	for _, ev := range hist {
		switch ev.Type {
		case engine.TimerFired:
			fired = append(fired, ev.ElementID)
		case engine.JobCreated:
			jobs = append(jobs, ev.ElementID)
		}
	}
	if want := []string{"t5", "t7", "t10"}; !slices.Equal(fired, want) {
		t.Errorf("timers fired %v, want %v (due order)", fired, want)
	}
	if want := []string{"after5", "after7", "after10"}; !slices.Equal(jobs, want) {
		t.Errorf("jobs created at %v, want %v", jobs, want)
	}
}

func TestOpen_Errors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := boltstore.Open(garbage, nil); err == nil || !strings.Contains(err.Error(), garbage) {
		if s != nil {
			_ = s.Close()
		}
		t.Fatalf("opening a file that is no database: %v, want an error naming it", err)
	}

	held := filepath.Join(dir, "held.db")
	s, err := boltstore.Open(held, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s2, err := boltstore.Open(held, &boltstore.Options{LockTimeout: 10 * time.Millisecond}); err == nil {
		_ = s2.Close()
		t.Fatal("a second Open of a file in use succeeded")
	}
}

func TestStore_InstanceAndCommit(t *testing.T) {
	ctx := context.Background()
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"), &boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Commit(ctx, &engine.StoreBatch{}); !errors.Is(err, boltstore.ErrNoEngineDocument) {
		t.Fatalf("a commit without the engine document: %v, want ErrNoEngineDocument", err)
	}
	st, err := s.Load(ctx)
	if err != nil || st.Engine != nil || len(st.Instances) != 0 {
		t.Fatalf("an empty store loads %+v, %v", st, err)
	}
	batch := &engine.StoreBatch{Engine: []byte(`{"e":1}`), Deployments: [][]byte{[]byte(`"d1"`), []byte(`"d2"`)},
		Put:     map[int64][]byte{3: []byte(`"i3"`), 4: []byte(`"i4"`), 1 << 40: []byte(`"big"`)},
		History: map[int64]engine.HistoryChunk{3: {From: 0, Records: []byte(`[1]`)}, 4: {From: 0, Records: []byte(`[1,2]`)}}}
	if err := s.Commit(ctx, batch); err != nil {
		t.Fatal(err)
	}
	batch = &engine.StoreBatch{Engine: []byte(`{"e":2}`), Deployments: [][]byte{[]byte(`"d3"`)}, Delete: []int64{3},
		History: map[int64]engine.HistoryChunk{4: {From: 2, Records: []byte(`[3]`)}}}
	if err := s.Commit(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Instance(ctx, 3); !errors.Is(err, engine.ErrUnknownInstance) {
		t.Fatalf("a deleted instance: %v, want ErrUnknownInstance", err)
	}
	si, err := s.Instance(ctx, 1<<40)
	if err != nil || string(si.Doc) != `"big"` || len(si.History) != 0 {
		t.Fatalf("instance 1<<40: %+v, %v", si, err)
	}
	si, err = s.Instance(ctx, 4)
	if err != nil || string(si.Doc) != `"i4"` || len(si.History) != 2 || si.History[1].From != 2 || string(si.History[1].Records) != `[3]` {
		t.Fatalf("instance 4: %+v, %v", si, err)
	}
	st, err = s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var deps []string
	for _, d := range st.Deployments {
		deps = append(deps, string(d))
	}
	if string(st.Engine) != `{"e":2}` || !slices.Equal(deps, []string{`"d1"`, `"d2"`, `"d3"`}) || len(st.Instances) != 2 || len(st.Instances[4].History) != 2 {
		t.Fatalf("loaded engine %s, deployments %v, %d instances", st.Engine, deps, len(st.Instances))
	}
}

// TestStore_TimerStart reopens the store between the firings of a timer
// start event's cycle: each reopen goes on with the firings left, none
// twice and none lost.
func TestStore_TimerStart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "flowtrack.db")
	e, s := open(t, path, engine.WithClock(clock.NewVirtual(clock.Epoch)))
	xml, err := os.ReadFile(filepath.Join("testdata", "tick.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deploy("tick.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	shut(t, e, s)
	for want := 1; want <= 4; want++ {
		e, s = open(t, path)
		if err := e.Advance(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		if got, started := len(e.Jobs(engine.JobFilter{Type: "tick"})), min(want, 3); got != started {
			t.Fatalf("after %d minutes, %d instances wait on their job, want %d (a cycle of three)", want, got, started)
		}
		shut(t, e, s)
	}
}

// TestStore_CallActivity reopens the store while a caller waits for the
// instance it called: both come back, and the called one's end moves the
// caller on.
func TestStore_CallActivity(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "flowtrack.db")
	e, s := open(t, path, engine.WithClock(clock.NewVirtual(clock.Epoch)))
	xml, err := os.ReadFile(filepath.Join("testdata", "call.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deploy("call.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	parent, err := e.Start(ctx, "parent", map[string]any{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	shut(t, e, s)

	e, s = open(t, path, engine.WithRetainFinished(8))
	defer shut(t, e, s)
	if n := len(e.Instances()); n != 2 {
		t.Fatalf("%d live instances after the reopen, want the caller and the called", n)
	}
	job := jobOf(t, e, "child-work", 0)
	if err := e.CompleteJob(ctx, job.Key, map[string]any{"done": true}); err != nil {
		t.Fatal(err)
	}
	got, ok := e.Instance(parent.Key())
	if !ok {
		t.Fatalf("caller %d is gone", parent.Key())
	}
	if st, err := got.Wait(ctx); err != nil || st != engine.Completed {
		t.Fatalf("caller ended %s (%v), want completed", st, err)
	}
	if v := got.Variables()["done"]; v != true {
		t.Fatalf("the caller's variable done = %v, want the called instance's true", v)
	}
}

// TestStore_Finished: finished instances stay findable across a reopen, as
// many as WithRetainFinished keeps, the oldest leaving first.
func TestStore_Finished(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "flowtrack.db")
	e, s := open(t, path, engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithRetainFinished(2))
	xml, err := os.ReadFile(filepath.Join("testdata", "call.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deploy("call.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for i := range 3 {
		inst, err := e.Start(ctx, "child", map[string]any{"i": i})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, inst.Key())
		if err := e.CompleteJob(ctx, jobOf(t, e, "child-work", inst.Key()).Key, map[string]any{"done": i}); err != nil {
			t.Fatal(err)
		}
	}
	shut(t, e, s)

	e, s = open(t, path, engine.WithRetainFinished(2))
	defer shut(t, e, s)
	if _, ok := e.Instance(keys[0]); ok {
		t.Errorf("instance %d, the oldest of three finished with two retained, is findable", keys[0])
	}
	for i, key := range keys[1:] {
		inst, ok := e.Instance(key)
		if !ok {
			t.Fatalf("finished instance %d is not findable after the reopen", key)
		}
		if inst.State() != engine.Completed || inst.Variables()["done"] != float64(i+1) {
			t.Errorf("finished instance %d: %s with %v", key, inst.State(), inst.Variables())
		}
	}
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Finished) != 2 || len(st.Instances) != 0 {
		t.Errorf("the store holds %d finished and %d live instances, want 2 and 0", len(st.Finished), len(st.Instances))
	}
}
