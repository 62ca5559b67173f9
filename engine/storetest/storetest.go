// Package storetest is the conformance suite of engine.Store: what every
// store must do, run by the tests of each store (engine/boltstore,
// engine/jetstore) on stores of their own. A store's tests call Run and
// keep beside it only what is the store's own (bbolt's file lock, a
// commit written again after a lost acknowledgement, jetstore's commit
// records and a crash before each of their steps).
//
// The suite checks the store through its interface (an empty store, the
// pieces of engine/STATE.md committed and read back across a reopen,
// refused commits that write nothing, documents larger than a message, a
// commit of thousands of instances) and through an engine on it (every
// kind of wait across reopens, timers that fell due while closed,
// concurrent commands sharing commits, Restore into a store). Crash is
// the crash test: children killed with SIGKILL in a workload, then
// every acknowledged command checked on the reopened store.
package storetest

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

//go:embed testdata/*.bpmn
var models embed.FS

// Model returns one of the suite's BPMN models by file name: mixed.bpmn
// (a job, a keyed message, a timer, a job), timers.bpmn (three timers in
// parallel), tick.bpmn (a timer start event's cycle of three), call.bpmn
// (process parent calling process child, which waits on a job).
func Model(t testing.TB, name string) []byte {
	t.Helper()
	xml, err := models.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatalf("storetest: model %s: %v", name, err)
	}
	return xml
}

// Opener opens one store, empty at first: each call opens it again, as a
// new process would, after closing the store the call before returned
// (a store that holds a lock must let it go); the store the last call
// returned is closed when the test ends. A store's test writes it.
type Opener func(t *testing.T) engine.Store

// Run runs the suite, each case as a subtest on a store of its own:
// fresh returns the Opener of a new, empty store.
func Run(t *testing.T, fresh func(t *testing.T) Opener) {
	cases := []struct {
		name string
		run  func(t *testing.T, open Opener)
	}{
		{"Empty", testEmpty},
		{"Pieces", testPieces},
		{"Refused", testRefused},
		{"LargeDocuments", testLargeDocuments},
		{"Instance", testInstance},
		{"InstanceDuringCommits", testInstanceDuringCommits},
		{"Reopen", testReopen},
		{"OverdueTimers", testOverdueTimers},
		{"TimerStart", testTimerStart},
		{"CallActivity", testCallActivity},
		{"Finished", testFinished},
		{"ConcurrentCommands", testConcurrentCommands},
		{"Restore", testRestore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, fresh(t)) })
	}
}

func load(t *testing.T, s engine.Store) *engine.StoreState {
	t.Helper()
	st, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func commit(t *testing.T, s engine.Store, b *engine.StoreBatch) {
	t.Helper()
	if err := s.Commit(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// testEmpty: a new store holds nothing and knows no instance.
func testEmpty(t *testing.T, open Opener) {
	s := open(t)
	st := load(t, s)
	if st.Engine != nil || st.Messages != nil || len(st.Deployments) != 0 || len(st.Instances) != 0 || len(st.Finished) != 0 {
		t.Fatalf("an empty store loads engine %q, messages %q, %d deployments, %d instances, %d finished",
			st.Engine, st.Messages, len(st.Deployments), len(st.Instances), len(st.Finished))
	}
	if _, err := s.Instance(context.Background(), 1); !errors.Is(err, engine.ErrUnknownInstance) {
		t.Fatalf("Instance(1) of an empty store: %v, want ErrUnknownInstance", err)
	}
}

// testPieces commits every piece of a StoreBatch and reads them back,
// before and after a reopen: the engine document and the message buffer
// replaced (a batch without a buffer keeps it), deployments appended in
// order, instance documents replaced, history chunks appended (one written
// again from the same record replaces it), deleted instances gone with
// their history, finished instances oldest first (one written again moves
// to the end once), evicted ones gone.
func testPieces(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	const far = int64(1) << 40
	commit(t, s, &engine.StoreBatch{Engine: []byte(`{"e":1}`), Messages: []byte(`["m1"]`),
		Deployments: [][]byte{[]byte(`"d1"`), []byte(`"d2"`)},
		Put:         map[int64][]byte{3: []byte(`"i3"`), 4: []byte(`"i4"`), far: []byte(`"far"`)},
		History:     map[int64]engine.HistoryChunk{3: {From: 0, Records: []byte(`[1]`)}, 4: {From: 0, Records: []byte(`[1,2]`)}},
		Finished:    []engine.FinishedInstance{{Key: 50, Doc: []byte(`"f50"`)}, {Key: 51, Doc: []byte(`"f51"`)}}})
	commit(t, s, &engine.StoreBatch{Engine: []byte(`{"e":2}`), Deployments: [][]byte{[]byte(`"d3"`)},
		Put:      map[int64][]byte{4: []byte(`"i4b"`)},
		History:  map[int64]engine.HistoryChunk{4: {From: 2, Records: []byte(`[3]`)}},
		Delete:   []int64{3},
		Finished: []engine.FinishedInstance{{Key: 52, Doc: []byte(`"f52"`)}}, Evict: []int64{50}})
	commit(t, s, &engine.StoreBatch{Engine: []byte(`{"e":3}`),
		History:  map[int64]engine.HistoryChunk{4: {From: 2, Records: []byte(`[3,4]`)}},
		Finished: []engine.FinishedInstance{{Key: 51, Doc: []byte(`"f51b"`)}}})

	want := &engine.StoreState{Engine: []byte(`{"e":3}`), Messages: []byte(`["m1"]`),
		Deployments: [][]byte{[]byte(`"d1"`), []byte(`"d2"`), []byte(`"d3"`)},
		Instances: map[int64]*engine.StoredInstance{
			4:   {Doc: []byte(`"i4b"`), History: []engine.HistoryChunk{{From: 0, Records: []byte(`[1,2]`)}, {From: 2, Records: []byte(`[3,4]`)}}},
			far: {Doc: []byte(`"far"`)},
		},
		Finished: [][]byte{[]byte(`"f52"`), []byte(`"f51b"`)}}
	for _, when := range []string{"committed", "reopened"} {
		if when == "reopened" {
			s = open(t)
		}
		if diff := Diff(load(t, s), want); diff != "" {
			t.Fatalf("%s: %s", when, diff)
		}
		if _, err := s.Instance(ctx, 3); !errors.Is(err, engine.ErrUnknownInstance) {
			t.Fatalf("%s: Instance of deleted instance 3: %v, want ErrUnknownInstance", when, err)
		}
		for _, key := range []int64{4, far} {
			si, err := s.Instance(ctx, key)
			if err != nil {
				t.Fatalf("%s: Instance(%d): %v", when, key, err)
			}
			if !sameInstance(si, want.Instances[key]) {
				t.Fatalf("%s: Instance(%d) = %s, want %s", when, key, show(si), show(want.Instances[key]))
			}
		}
	}
}

// testRefused: a commit without the engine document, and one whose
// context has ended, fail and write nothing.
func testRefused(t *testing.T, open Opener) {
	s := open(t)
	commit(t, s, &engine.StoreBatch{Engine: []byte(`{"e":1}`), Put: map[int64][]byte{1: []byte(`"i1"`)}})
	if err := s.Commit(context.Background(), &engine.StoreBatch{Put: map[int64][]byte{2: []byte(`"i2"`)}}); !errors.Is(err, engine.ErrNoEngineDocument) {
		t.Errorf("a commit without the engine document: %v, want ErrNoEngineDocument", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"e":2}`), Put: map[int64][]byte{3: []byte(`"i3"`)}, Delete: []int64{1}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a commit with its context cancelled: %v, want context.Canceled", err)
	}
	want := &engine.StoreState{Engine: []byte(`{"e":1}`), Instances: map[int64]*engine.StoredInstance{1: {Doc: []byte(`"i1"`)}}}
	if diff := Diff(load(t, s), want); diff != "" {
		t.Fatalf("after refused commits: %s", diff)
	}
	if diff := Diff(load(t, open(t)), want); diff != "" {
		t.Fatalf("after refused commits, reopened: %s", diff)
	}
}

// testLargeDocuments: documents of megabytes and a history chunk of 3,000
// records come back whole, from Load and from Instance, after a reopen. A
// store may cut a history chunk at record boundaries.
func testLargeDocuments(t *testing.T, open Opener) {
	s := open(t)
	big := func(c byte, size int) []byte {
		return []byte(`{"v":"` + strings.Repeat(string(c), size) + `"}`)
	}
	records := make([]string, 3000)
	for i := range records {
		records[i] = fmt.Sprintf(`{"seq":%d,"pad":"%s"}`, i+1, strings.Repeat("r", 1000))
	}
	b := &engine.StoreBatch{
		Engine:      big('e', 2_500_000),
		Messages:    big('m', 1_200_000),
		Deployments: [][]byte{big('d', 1_500_000), []byte(`{"small":true}`)},
		Put:         map[int64][]byte{1: big('i', 3_000_000)},
		History:     map[int64]engine.HistoryChunk{1: {From: 0, Records: []byte("[" + strings.Join(records, ",") + "]")}},
		Finished:    []engine.FinishedInstance{{Key: 2, Doc: big('f', 2_000_000)}},
	}
	commit(t, s, b)
	s = open(t)
	st := load(t, s)
	if !bytes.Equal(st.Engine, b.Engine) || !bytes.Equal(st.Messages, b.Messages) || !reflect.DeepEqual(st.Deployments, b.Deployments) ||
		len(st.Finished) != 1 || !bytes.Equal(st.Finished[0], b.Finished[0].Doc) {
		t.Fatal("Load returned other engine, message, deployment or finished documents than committed")
	}
	si, err := s.Instance(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, si := range map[string]*engine.StoredInstance{"Load": st.Instances[1], "Instance": si} {
		if si == nil || !bytes.Equal(si.Doc, b.Put[1]) {
			t.Fatalf("%s: instance 1's document is not the one committed", name)
		}
		got, err := Records(si)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(records) || string(got[0]) != records[0] || string(got[2999]) != records[2999] {
			t.Fatalf("%s: history of %d records, want the %d committed", name, len(got), len(records))
		}
	}
}

// Records is an instance's history, its chunks put together; an error
// names a chunk that does not start where the one before ended or is not
// a JSON array.
func Records(si *engine.StoredInstance) ([]json.RawMessage, error) {
	var all []json.RawMessage
	for _, c := range si.History {
		if c.From != len(all) {
			return nil, fmt.Errorf("a history chunk starts at record %d, after %d records", c.From, len(all))
		}
		var part []json.RawMessage
		if err := json.Unmarshal(c.Records, &part); err != nil {
			return nil, fmt.Errorf("history chunk from %d: %w", c.From, err)
		}
		all = append(all, part...)
	}
	return all, nil
}

// newEngine opens the store again and an engine on it, closed when the
// test ends unless shut before.
func newEngine(t *testing.T, open Opener, opts ...engine.Option) *engine.Engine {
	t.Helper()
	e, err := engine.New(append(opts, engine.WithStore(open(t)))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func shut(t *testing.T, e *engine.Engine) {
	t.Helper()
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func deploy(t *testing.T, e *engine.Engine, name string) {
	t.Helper()
	if _, err := e.Deploy(name, Model(t, name)); err != nil {
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

// testInstance reads one live instance, document and history, as the
// engine wrote it.
func testInstance(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEngine(t, open, engine.WithClock(clock.NewVirtual(clock.Epoch)))
	deploy(t, e, "mixed.bpmn")
	inst, err := e.Start(ctx, "mixed", map[string]any{"orderId": "o-2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CompleteJob(ctx, jobOf(t, e, "pack", inst.Key()).Key, nil); err != nil {
		t.Fatal(err)
	}
	want, err := inst.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shut(t, e)
	s := open(t)
	si, err := s.Instance(ctx, inst.Key())
	if err != nil {
		t.Fatal(err)
	}
	records, err := Records(si)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != len(want) {
		t.Errorf("stored history holds %d records, the engine %d", len(records), len(want))
	}
	if !strings.Contains(string(si.Doc), `"o-2"`) {
		t.Errorf("stored document %s lacks the instance's variable", si.Doc)
	}
	if _, err := s.Instance(ctx, inst.Key()+1000); !errors.Is(err, engine.ErrUnknownInstance) {
		t.Errorf("Instance of an unknown key: %v, want ErrUnknownInstance", err)
	}
}

// testInstanceDuringCommits reads one instance over and over while
// commits that rewrite, add and delete others run: every read returns
// what the commit that wrote it wrote.
func testInstanceDuringCommits(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	const key = 7
	want := &engine.StoredInstance{Doc: []byte(`{"i":7}`), History: []engine.HistoryChunk{{From: 0, Records: []byte(`[{"seq":1}]`)}}}
	commit(t, s, &engine.StoreBatch{Engine: []byte(`{"n":0}`), Put: map[int64][]byte{key: want.Doc},
		History: map[int64]engine.HistoryChunk{key: want.History[0]}})
	done := make(chan error, 1)
	go func() {
		for n := int64(1); n <= 30; n++ {
			b := &engine.StoreBatch{Engine: fmt.Appendf(nil, `{"n":%d}`, n),
				Put:     map[int64][]byte{100 + n: fmt.Appendf(nil, `{"i":%d}`, 100+n), 100: fmt.Appendf(nil, `{"v":%d}`, n)},
				History: map[int64]engine.HistoryChunk{100 + n: {From: 0, Records: []byte(`[{"seq":1}]`)}}}
			if n > 1 {
				b.Delete = []int64{99 + n}
			}
			if err := s.Commit(ctx, b); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for reading := true; reading; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			reading = false
		default:
		}
		si, err := s.Instance(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !sameInstance(si, want) {
			t.Fatalf("Instance(%d) during commits of others = %s, want %s", key, show(si), show(want))
		}
	}
	if st := load(t, s); len(st.Instances) != 3 || string(st.Engine) != `{"n":30}` {
		t.Fatalf("after the commits: engine %s and %d instances, want the last engine document and 3 instances", st.Engine, len(st.Instances))
	}
}

// testReopen runs an instance through a job, a message, a timer and a
// job, reopening the engine between commands, switching resumption mode
// at every reopen: each command's effect is there after the reopen,
// nothing happens twice, and the finished instance stays findable.
func testReopen(t *testing.T, open Opener) {
	ctx := context.Background()
	mode := engine.ResumeGoroutines
	other := func() engine.Option {
		if mode == engine.ResumeGoroutines {
			mode = engine.ResumeDirect
		} else {
			mode = engine.ResumeGoroutines
		}
		return engine.WithResumption(mode)
	}
	e := newEngine(t, open, engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(mode))
	deploy(t, e, "mixed.bpmn")
	inst, err := e.Start(ctx, "mixed", map[string]any{"orderId": "o-1"})
	if err != nil {
		t.Fatal(err)
	}
	key := inst.Key()
	shut(t, e)

	e = newEngine(t, open, other())
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

	e = newEngine(t, open, other())
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

	e = newEngine(t, open, engine.WithRetainFinished(8), other())
	ship := jobOf(t, e, "ship", key)
	if err := e.CompleteJob(ctx, ship.Key, map[string]any{"shipped": true}); err != nil {
		t.Fatal(err)
	}
	shut(t, e)

	e = newEngine(t, open, engine.WithRetainFinished(8), other())
	got, ok := e.Instance(key)
	if !ok {
		t.Fatalf("finished instance %d is not findable after a reopen", key)
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
	if st := load(t, open(t)); len(st.Instances) != 0 || len(st.Finished) != 1 {
		t.Errorf("the store holds %d live and %d finished instances, want 0 and 1", len(st.Instances), len(st.Finished))
	}
}

// wallClock stands for the real clock, reading a set time: it is not a
// *clock.Virtual, so a reopen fires overdue timers at once. It keeps the
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

// testOverdueTimers reopens a store after its timers fell due: on a clock
// that is not virtual they fire at once, in due order.
func testOverdueTimers(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEngine(t, open, engine.WithClock(clock.NewVirtual(clock.Epoch)))
	deploy(t, e, "timers.bpmn")
	inst, err := e.Start(ctx, "timers", nil)
	if err != nil {
		t.Fatal(err)
	}
	shut(t, e)

	wall := &wallClock{now: clock.Epoch.Add(time.Hour)}
	e = newEngine(t, open, engine.WithClock(wall))
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

// testTimerStart reopens the store between the firings of a timer start
// event's cycle: each reopen goes on with the firings left, none twice
// and none lost.
func testTimerStart(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEngine(t, open, engine.WithClock(clock.NewVirtual(clock.Epoch)))
	deploy(t, e, "tick.bpmn")
	shut(t, e)
	for want := 1; want <= 4; want++ {
		e = newEngine(t, open)
		if err := e.Advance(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		if got, started := len(e.Jobs(engine.JobFilter{Type: "tick"})), min(want, 3); got != started {
			t.Fatalf("after %d minutes, %d instances wait on their job, want %d (a cycle of three)", want, got, started)
		}
		shut(t, e)
	}
}

// testCallActivity reopens the store while a caller waits for the
// instance it called: both come back, and the called one's end moves the
// caller on.
func testCallActivity(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEngine(t, open, engine.WithClock(clock.NewVirtual(clock.Epoch)))
	deploy(t, e, "call.bpmn")
	parent, err := e.Start(ctx, "parent", map[string]any{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	shut(t, e)

	e = newEngine(t, open, engine.WithRetainFinished(8))
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

// testFinished: finished instances stay findable across a reopen, as many
// as WithRetainFinished keeps, the oldest leaving first.
func testFinished(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEngine(t, open, engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithRetainFinished(2))
	deploy(t, e, "call.bpmn")
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
	shut(t, e)

	e = newEngine(t, open, engine.WithRetainFinished(2))
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
	shut(t, e)
	if st := load(t, open(t)); len(st.Finished) != 2 || len(st.Instances) != 0 {
		t.Errorf("the store holds %d finished and %d live instances, want 2 and 0", len(st.Finished), len(st.Instances))
	}
}

// testConcurrentCommands gives an engine on the store commands from many
// goroutines at once, which share commits (group commit): every command
// acknowledged is in the store after a reopen.
func testConcurrentCommands(t *testing.T, open Opener) {
	ctx := context.Background()
	const workers, each = 8, 12
	s := open(t)
	e, err := engine.New(engine.WithStore(s), engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithRetainFinished(workers*each))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(ctx) })
	deploy(t, e, "call.bpmn")
	keys := make([][]int64, workers) // per worker: instances started; the even ones' jobs completed
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				inst, err := e.Start(ctx, "child", map[string]any{"w": w, "i": i})
				if err != nil {
					errs <- fmt.Errorf("worker %d start %d: %w", w, i, err)
					return
				}
				keys[w] = append(keys[w], inst.Key())
				if i%2 != 0 {
					continue
				}
				jobs := e.Jobs(engine.JobFilter{Type: "child-work", InstanceKey: inst.Key()})
				if len(jobs) != 1 {
					errs <- fmt.Errorf("worker %d: instance %d has %d jobs, want 1", w, inst.Key(), len(jobs))
					return
				}
				if err := e.CompleteJob(ctx, jobs[0].Key, map[string]any{"done": i}); err != nil {
					errs <- fmt.Errorf("worker %d complete %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// What a crash now would leave: the store, read beside the engine
	// before Close commits anything, holds every command acknowledged.
	st := load(t, s)
	if len(st.Instances) != workers*each/2 || len(st.Finished) != workers*each/2 {
		t.Fatalf("the store holds %d live and %d finished instances, want %d of each",
			len(st.Instances), len(st.Finished), workers*each/2)
	}
	for w, ks := range keys {
		for i := 1; i < len(ks); i += 2 {
			if st.Instances[ks[i]] == nil {
				t.Fatalf("instance %d (worker %d, start %d), acknowledged, is not in the store", ks[i], w, i)
			}
		}
	}
	shut(t, e)
	e = newEngine(t, open, engine.WithRetainFinished(workers*each))
	for w, ks := range keys {
		for i, key := range ks {
			inst, ok := e.Instance(key)
			if !ok {
				t.Fatalf("instance %d (worker %d, start %d) is gone after the reopen", key, w, i)
			}
			want := engine.Active
			if i%2 == 0 {
				want = engine.Completed
			}
			if inst.State() != want {
				t.Errorf("instance %d (worker %d, start %d) is %s, want %s", key, w, i, inst.State(), want)
			}
		}
	}
	if n := len(e.Jobs(engine.JobFilter{Type: "child-work"})); n != workers*each/2 {
		t.Errorf("%d jobs wait after the reopen, want %d", n, workers*each/2)
	}
}

// BigCommit is how many instances testRestore commits at once: more than
// a JetStream atomic batch holds (engine/jetstore stages such a commit).
const BigCommit = 5_000

// testRestore restores a checkpoint of BigCommit parked instances into
// the store, which commits them in one commit, and reopens it: every
// instance is there and goes on. A second Restore into the store, which
// holds state now, fails with ErrStoreNotEmpty and leaves it as it was.
func testRestore(t *testing.T, open Opener) {
	ctx := context.Background()
	src, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	deploy(t, src, "call.bpmn")
	for i := range BigCommit {
		if _, err := src.Start(ctx, "child", map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := src.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Restore(doc, engine.WithStore(open(t)))
	if err != nil {
		t.Fatalf("restoring %d instances into an empty store: %v", BigCommit, err)
	}
	shut(t, e)

	s := open(t)
	if _, err := engine.Restore(doc, engine.WithStore(s)); !errors.Is(err, engine.ErrStoreNotEmpty) {
		t.Fatalf("restoring into a store that holds state: %v, want ErrStoreNotEmpty", err)
	}
	if st := load(t, s); len(st.Instances) != BigCommit || len(st.Deployments) != 1 {
		t.Fatalf("the store holds %d instances and %d deployments, want %d and 1", len(st.Instances), len(st.Deployments), BigCommit)
	}
	e = newEngine(t, open, engine.WithRetainFinished(1))
	jobs := e.Jobs(engine.JobFilter{Type: "child-work"})
	if len(jobs) != BigCommit {
		t.Fatalf("%d jobs wait after the reopen, want %d", len(jobs), BigCommit)
	}
	if err := e.CompleteJob(ctx, jobs[BigCommit-1].Key, map[string]any{"done": true}); err != nil {
		t.Fatal(err)
	}
	shut(t, e)
	if st := load(t, open(t)); len(st.Instances) != BigCommit-1 || len(st.Finished) != 1 {
		t.Fatalf("after one job, the store holds %d live and %d finished instances, want %d and 1", len(st.Instances), len(st.Finished), BigCommit-1)
	}
}

// Diff says how a store's state differs from want, or "" when they hold
// the same pieces. Nil and empty compare equal.
func Diff(got, want *engine.StoreState) string {
	switch {
	case !bytes.Equal(got.Engine, want.Engine):
		return fmt.Sprintf("engine %.80s, want %.80s", got.Engine, want.Engine)
	case !bytes.Equal(got.Messages, want.Messages):
		return fmt.Sprintf("messages %.80s, want %.80s", got.Messages, want.Messages)
	case !equalDocs(got.Deployments, want.Deployments):
		return fmt.Sprintf("deployments %.200q, want %.200q", got.Deployments, want.Deployments)
	case !equalDocs(got.Finished, want.Finished):
		return fmt.Sprintf("finished %.200q, want %.200q", got.Finished, want.Finished)
	case len(got.Instances) != len(want.Instances):
		return fmt.Sprintf("%d instances, want %d", len(got.Instances), len(want.Instances))
	}
	for k, w := range want.Instances {
		if g := got.Instances[k]; g == nil || !sameInstance(g, w) {
			return fmt.Sprintf("instance %d: %s, want %s", k, show(g), show(w))
		}
	}
	return ""
}

func equalDocs(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, bytes.Equal)
}

func sameInstance(a, b *engine.StoredInstance) bool {
	return bytes.Equal(a.Doc, b.Doc) && slices.EqualFunc(a.History, b.History, func(x, y engine.HistoryChunk) bool {
		return x.From == y.From && bytes.Equal(x.Records, y.Records)
	})
}

func show(si *engine.StoredInstance) string {
	if si == nil {
		return "none"
	}
	s := fmt.Sprintf("%.80s", si.Doc)
	for _, c := range si.History {
		s += fmt.Sprintf(" [%d: %.80s]", c.From, c.Records)
	}
	return s
}
