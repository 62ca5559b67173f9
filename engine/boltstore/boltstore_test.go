package boltstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
func TestStore_Reopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "flowtrack.db")
	e, s := open(t, path, engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if _, err := e.Deploy("mixed.bpmn", mixedXML(t)); err != nil {
		t.Fatal(err)
	}
	inst, err := e.Start(ctx, "mixed", map[string]any{"orderId": "o-1"})
	if err != nil {
		t.Fatal(err)
	}
	key := inst.Key()
	shut(t, e, s)

	e, s = open(t, path)
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

	e, s = open(t, path)
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

	e, s = open(t, path, engine.WithRetainFinished(8))
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
