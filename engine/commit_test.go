package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// TestWithStore_GroupCommit holds one commit while eight commands arrive:
// they all wait for, and share, the one next commit.
func TestWithStore_GroupCommit(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close(ctx)) }()
	_, err = e.Deploy("p.bpmn", []byte(jobXML))
	require.NoError(t, err)

	m.mu.Lock()
	m.hold, m.held, m.release = true, make(chan struct{}), make(chan struct{})
	m.mu.Unlock()
	before := m.count()
	errs := make(chan error, 9)
	go func() { _, err := e.Start(ctx, "p", nil); errs <- err }()
	<-m.held // the first command's commit is under way
	for range 8 {
		go func() { _, err := e.Start(ctx, "p", nil); errs <- err }()
	}
	for pending := 0; pending < 8; goruntime.Gosched() {
		e.dur.mu.Lock()
		pending = len(e.dur.pending)
		e.dur.mu.Unlock()
	}
	close(m.release)
	for range 9 {
		require.NoError(t, <-errs)
	}
	require.Equal(t, before+2, m.count(), "nine commands, the last eight arriving during the first one's commit")
	st, err := m.Load(ctx)
	require.NoError(t, err)
	require.Len(t, st.Instances, 9)
}

// TestWithStore_CommitError: a command whose commit fails took effect
// but is not acknowledged: Start returns the instance beside an error
// wrapping ErrNotAcknowledged and the store's, the engine goes on from
// it, and the next commit writes it, once.
func TestWithStore_CommitError(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close(ctx)) }()
	_, err = e.Deploy("p.bpmn", []byte(jobXML))
	require.NoError(t, err)

	errDisk := errors.New("disk full")
	m.mu.Lock()
	m.fail = errDisk
	m.mu.Unlock()
	first, err := e.Start(ctx, "p", nil)
	require.ErrorIs(t, err, errDisk)
	require.ErrorIs(t, err, ErrNotAcknowledged)
	require.NotNil(t, first, "the instance the unacknowledged Start started")
	jobs := e.Jobs(JobFilter{InstanceKey: first.Key()})
	require.Len(t, jobs, 1, "the engine goes on from the command")
	err = e.CompleteJob(ctx, jobs[0].Key, map[string]any{"x": 1})
	require.ErrorIs(t, err, ErrNotAcknowledged)
	require.ErrorIs(t, e.CompleteJob(ctx, jobs[0].Key, nil), ErrUnknownJob, "given again, the command finds no job")

	m.mu.Lock()
	m.fail = nil
	m.mu.Unlock()
	second, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	st, err := m.Load(ctx)
	require.NoError(t, err)
	require.Len(t, st.Instances, 1, "the first instance's completion is written by the next commit")
	require.Contains(t, st.Instances, second.Key())

	r, err := New(WithStore(m))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	require.Len(t, r.Instances(), 1)
	require.Len(t, r.Jobs(JobFilter{Type: "work"}), 1)
	done, ok := r.Instance(first.Key())
	require.True(t, ok, "the first instance is findable, finished")
	require.Equal(t, Completed, done.State())
	require.InDelta(t, 1, done.Variables()["x"], 0)
}

// TestWithStore_ContextEndsDuringCommit: a command whose context ends
// while its commit is under way returns ErrNotAcknowledged with the
// context's error; the commit goes on and holds the command, once.
func TestWithStore_ContextEndsDuringCommit(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e := jobEngine(t, m)

	m.mu.Lock()
	m.hold, m.held, m.release = true, make(chan struct{}), make(chan struct{})
	m.mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	type result struct {
		inst *Instance
		err  error
	}
	res := make(chan result, 1)
	go func() { inst, err := e.Start(cctx, "p", nil); res <- result{inst, err} }()
	<-m.held // the Start's commit is under way
	cancel()
	r := <-res
	require.ErrorIs(t, r.err, ErrNotAcknowledged)
	require.ErrorIs(t, r.err, context.Canceled)
	require.NotNil(t, r.inst)
	close(m.release)
	require.NoError(t, e.Close(ctx))

	st, err := m.Load(ctx)
	require.NoError(t, err)
	require.Len(t, st.Instances, 1)
	require.Contains(t, st.Instances, r.inst.Key())
	again, err := New(WithStore(m))
	require.NoError(t, err)
	defer func() { require.NoError(t, again.Close(ctx)) }()
	require.Len(t, again.Jobs(JobFilter{Type: "work"}), 1)
}

// TestWithStore_CloseDuringCommands closes the engine, twice at once,
// while commands keep coming: every command returns, durable or refused
// with ErrClosed, and what returned without error is in the store.
func TestWithStore_CloseDuringCommands(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e := jobEngine(t, m)

	started := make(chan int64, 1024)
	done := make(chan error, 8)
	for range 8 {
		go func() {
			for {
				inst, err := e.Start(ctx, "p", nil)
				if err != nil {
					done <- err
					return
				}
				started <- inst.Key()
			}
		}()
	}
	<-started // commands are flowing
	closed := make(chan error, 2)
	for range 2 {
		go func() { closed <- e.Close(ctx) }()
	}
	for range 2 {
		require.NoError(t, <-closed)
	}
	for range 8 {
		require.ErrorIs(t, <-done, ErrClosed)
	}
	close(started)
	st, err := m.Load(ctx)
	require.NoError(t, err)
	for key := range started {
		require.Contains(t, st.Instances, key, "instance %d was started without error", key)
	}
}

// TestWithStore_OpenError: a store that cannot take the new engine's
// state fails New, which returns no engine.
func TestWithStore_OpenError(t *testing.T) {
	m := newMemStore()
	errDisk := errors.New("disk full")
	m.fail = errDisk
	e, err := New(WithStore(m))
	require.ErrorIs(t, err, errDisk)
	require.Nil(t, e)
}

// TestWithStore_ObserverCallsBackIntoTheEngine: with a store, an observer
// completes each job from inside its callback, in both resumption modes.
// The commit settles the engine without waiting for observers, so the
// observer's command is acknowledged as it is without a store.
func TestWithStore_ObserverCallsBackIntoTheEngine(t *testing.T) {
	for name, mode := range map[string]Resumption{"goroutines": ResumeGoroutines, "direct": ResumeDirect} {
		t.Run(name, func(t *testing.T) {
			// The deadline only turns a hang into a failure.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			m := newMemStore()
			e, err := New(WithStore(m), WithResumption(mode), WithClock(clock.NewVirtual(clock.Epoch)))
			require.NoError(t, err)
			_, err = e.Deploy("p.bpmn", []byte(jobXML))
			require.NoError(t, err)
			completed := make(chan error, 64)
			unsubscribe := e.Subscribe(func(ev Event) {
				if ev.Type == JobCreated {
					completed <- e.CompleteJob(ctx, ev.JobKey, map[string]any{"done": true})
				}
			})
			var insts []*Instance
			for range 20 {
				inst, err := e.Start(ctx, "p", nil)
				require.NoError(t, err)
				insts = append(insts, inst)
			}
			for range insts {
				require.NoError(t, <-completed, "the observer's command was acknowledged")
			}
			for _, inst := range insts {
				st, err := inst.Wait(ctx)
				require.NoError(t, err)
				require.Equal(t, Completed, st)
			}
			require.NoError(t, unsubscribe())
			require.NoError(t, e.Close(ctx))
			st, err := m.Load(ctx)
			require.NoError(t, err)
			require.Empty(t, st.Instances, "every completion is in the store")
		})
	}
}

// timerJobXML waits an hour, then on a job of type "work".
const timerJobXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="tp" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>
    <bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="work"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="done"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="work"/>
    <bpmn:sequenceFlow id="f3" sourceRef="work" targetRef="done"/>
  </bpmn:process>
</bpmn:definitions>`

// handClock stands for the real clock at a set time: it is not a
// *clock.Virtual. It keeps the callbacks due now for the test to run from
// a goroutine of its own, as the real clock would; later ones never run.
type handClock struct {
	now time.Time
	mu  sync.Mutex
	due []func()
}

func (c *handClock) Now() time.Time { return c.now }

func (c *handClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	if d <= 0 {
		c.mu.Lock()
		c.due = append(c.due, f)
		c.mu.Unlock()
	}
	return stoppedTimer{}
}

// fire runs the callbacks due on a goroutine, and returns how many.
func (c *handClock) fire() int {
	c.mu.Lock()
	due := c.due
	c.due = nil
	c.mu.Unlock()
	go func() {
		for _, f := range due {
			f()
		}
	}()
	return len(due)
}

type stoppedTimer struct{}

func (stoppedTimer) Stop() bool { return true }

// TestWithStore_TimerFiringIsCommitted: a timer that fires on a clock
// other than the virtual one, with no command after it, is committed on
// its own: a crash after that commit finds the timer fired and the job it
// led to, and does not fire it again.
func TestWithStore_TimerFiringIsCommitted(t *testing.T) {
	// The deadline only turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := newMemStore()
	e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	_, err = e.Deploy("tp.bpmn", []byte(timerJobXML))
	require.NoError(t, err)
	inst, err := e.Start(ctx, "tp", nil)
	require.NoError(t, err)
	require.NoError(t, e.Close(ctx))

	wall := &handClock{now: clock.Epoch.Add(2 * time.Hour)}
	m.mu.Lock()
	m.committed = make(chan struct{}, 1)
	m.mu.Unlock()
	e, err = New(WithStore(m), WithClock(wall))
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close(ctx)) }()
	require.Equal(t, 1, wall.fire(), "the overdue timer")
	var crashed *memStore
	for crashed == nil {
		select {
		case <-m.committed:
		case <-ctx.Done():
			t.Fatal("the timer's firing was never committed")
		}
		c := m.crashCopy()
		if si := c.st.Instances[inst.Key()]; si != nil && strings.Contains(string(si.Doc), `"work"`) {
			crashed = c
		}
	}

	r, err := New(WithStore(crashed), WithClock(clock.NewVirtual(clock.Epoch.Add(3*time.Hour))))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	require.NoError(t, r.Settle(ctx))
	require.Len(t, r.Jobs(JobFilter{InstanceKey: inst.Key(), Type: "work"}), 1)
	got, ok := r.Instance(inst.Key())
	require.True(t, ok)
	hist, err := got.History(ctx)
	require.NoError(t, err)
	fired := 0
	for _, ev := range hist {
		if ev.Type == TimerFired {
			fired++
		}
	}
	require.Equal(t, 1, fired, "the timer fired once")
}

// TestWithStore_TimerCommitError: the failed commit of a timer's firing
// goes to the error handler, and the next commit (here Close's) writes it.
func TestWithStore_TimerCommitError(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	_, err = e.Deploy("tp.bpmn", []byte(timerJobXML))
	require.NoError(t, err)
	inst, err := e.Start(ctx, "tp", nil)
	require.NoError(t, err)
	require.NoError(t, e.Close(ctx))

	errDisk := errors.New("disk full")
	reported := make(chan error, 1)
	wall := &handClock{now: clock.Epoch.Add(2 * time.Hour)}
	e, err = New(WithStore(m), WithClock(wall), WithErrorHandler(func(err error) {
		select {
		case reported <- err:
		default: // the test looks at the first only
		}
	}))
	require.NoError(t, err)
	m.mu.Lock()
	m.fail = errDisk
	m.mu.Unlock()
	require.Equal(t, 1, wall.fire())
	require.ErrorIs(t, <-reported, errDisk)
	m.mu.Lock()
	m.fail = nil
	m.mu.Unlock()
	require.NoError(t, e.Close(ctx))

	r, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch.Add(3*time.Hour))))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	require.Len(t, r.Jobs(JobFilter{InstanceKey: inst.Key(), Type: "work"}), 1, "Close wrote the timer's firing")
}

// recordingStore is a memStore that keeps the batches it committed.
type recordingStore struct {
	*memStore
	batches []*StoreBatch
}

func (r *recordingStore) Commit(ctx context.Context, b *StoreBatch) error {
	r.batches = append(r.batches, b) // the engine commits from one goroutine
	return r.memStore.Commit(ctx, b)
}

// TestWithStore_MessageBufferPiece: the message buffer is a piece of its
// own, written by the commits that change it only; a reopen puts it back
// (a message id still deduplicates, a buffered message still correlates).
func TestWithStore_MessageBufferPiece(t *testing.T) {
	ctx := context.Background()
	rs := &recordingStore{memStore: newMemStore()}
	e, err := New(WithStore(rs), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	_, err = e.Deploy("p.bpmn", []byte(jobXML))
	require.NoError(t, err)
	msg := Message{Name: "paid", CorrelationKey: "o-1", MessageID: "pay-1", TTL: time.Hour}
	require.NoError(t, e.PublishMessage(ctx, msg))
	last := rs.batches[len(rs.batches)-1]
	require.Contains(t, string(last.Messages), `"pay-1"`, "a publication writes the buffer")
	require.NotContains(t, string(last.Engine), `"pay-1"`, "the engine document leaves the buffer to its piece")
	_, err = e.Start(ctx, "p", nil)
	require.NoError(t, err)
	require.Nil(t, rs.batches[len(rs.batches)-1].Messages, "a start leaves the buffer alone")
	require.NoError(t, e.Close(ctx))

	r, err := New(WithStore(rs.memStore))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	require.ErrorIs(t, r.PublishMessage(ctx, msg), ErrDuplicateMessage, "the buffer came back from its piece")
}

// TestWithStore_KeysNotCommittedAreNotReused: keys an engine handed out
// but never committed (a job a query showed while its commits failed)
// are not handed out again by the next engine on the store, even when
// that one too dies before its first command is committed: a worker that
// completes the job it saw must not complete another.
func TestWithStore_KeysNotCommittedAreNotReused(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e := jobEngine(t, m)
	errDisk := errors.New("disk gone")
	m.mu.Lock()
	m.fail = errDisk
	m.mu.Unlock()
	_, err := e.Start(ctx, "p", nil)
	require.ErrorIs(t, err, ErrNotAcknowledged)
	seen := e.Jobs(JobFilter{Type: "work"})
	require.Len(t, seen, 1, "a query shows the job no commit holds")

	crashed := m.crashCopy()            // the process dies here
	defer func() { _ = e.Close(ctx) }() // (its goroutines end with the test)
	next, err := New(WithStore(crashed), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	// The next one dies too after handing out keys it did not commit.
	crashed.mu.Lock()
	crashed.fail = errDisk
	crashed.mu.Unlock()
	_, err = next.Start(ctx, "p", nil)
	require.ErrorIs(t, err, ErrNotAcknowledged)
	seen = append(seen, next.Jobs(JobFilter{Type: "work"})...)
	image := crashed.crashCopy() // and dies here
	defer func() { _ = next.Close(ctx) }()

	last, err := New(WithStore(image), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer func() { require.NoError(t, last.Close(ctx)) }()
	inst, err := last.Start(ctx, "p", nil)
	require.NoError(t, err)
	jobs := last.Jobs(JobFilter{Type: "work"})
	require.Len(t, jobs, 1)
	for _, s := range seen {
		require.NotEqual(t, s.Key, inst.Key(), "an instance key handed out before is handed out again")
		require.NotEqual(t, s.InstanceKey, inst.Key(), "an instance key handed out before is handed out again")
		require.NotEqual(t, s.Key, jobs[0].Key, "a job key handed out before is handed out again")
		require.ErrorIs(t, last.CompleteJob(ctx, s.Key, nil), ErrUnknownJob, "the job seen before is not this engine's")
	}
}

// TestWithStore_StoreLost: once a commit fails with ErrStoreLost (the
// store is another engine's now), the engine takes no command: each is
// refused with ErrClosed, not taken, so that its caller may give it to
// the store's next owner.
func TestWithStore_StoreLost(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer func() { _ = e.Close(ctx) }()
	_, err = e.Deploy("p.bpmn", []byte(jobXML))
	require.NoError(t, err)
	m.mu.Lock()
	m.fail = fmt.Errorf("lease gone: %w", ErrStoreLost)
	m.mu.Unlock()
	_, err = e.Start(ctx, "p", nil)
	require.ErrorIs(t, err, ErrNotAcknowledged, "the command under way when the store was lost was taken")
	require.ErrorIs(t, err, ErrStoreLost)
	before := len(e.Instances())

	_, err = e.Start(ctx, "p", nil)
	require.ErrorIs(t, err, ErrClosed, "a command after the store was lost is not taken")
	require.ErrorIs(t, err, ErrStoreLost)
	require.NotErrorIs(t, err, ErrNotAcknowledged)
	require.Len(t, e.Instances(), before, "the refused start started nothing")
	require.ErrorIs(t, e.PublishMessage(ctx, Message{Name: "m", CorrelationKey: "k"}), ErrClosed)
}

// TestWithStore_ClosedCleanlyKeepsKeys: after a clean Close every key the
// engine handed out is in the store, so the next engine goes on from the
// stored counter without a gap (a store reopened after every step plays
// as one engine); its first commit unmarks the store, so that a crash of
// that engine is followed by a gap again.
func TestWithStore_ClosedCleanlyKeepsKeys(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e := jobEngine(t, m)
	first, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	require.NoError(t, e.Close(ctx))
	require.True(t, closedCleanly(m.engineDoc()), "Close's commit marks the store")

	next, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	require.False(t, closedCleanly(m.engineDoc()), "the next engine unmarks the store before it takes a command")
	second, err := next.Start(ctx, "p", nil)
	require.NoError(t, err)
	require.Less(t, second.Key(), first.Key()+storeKeyGap, "keys go on from the stored counter")
	image := m.crashCopy() // the next engine dies
	require.NoError(t, next.Close(ctx))

	last, err := New(WithStore(image), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer func() { require.NoError(t, last.Close(ctx)) }()
	third, err := last.Start(ctx, "p", nil)
	require.NoError(t, err)
	require.Greater(t, third.Key(), second.Key()+storeKeyGap, "after a crash, keys skip the gap")
}

// jobEngine opens an engine on m, on a virtual clock, with jobXML deployed.
func jobEngine(t *testing.T, m *memStore) *Engine {
	t.Helper()
	e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	_, err = e.Deploy("p.bpmn", []byte(jobXML))
	require.NoError(t, err)
	return e
}

// TestWithStore_ObserverCommandDuringAdvance: with a store, an observer
// that completes each job as it is created, while AdvanceTo fires the
// timers that create them, has its commands acknowledged, and AdvanceTo
// returns, in both resumption modes. The observer's command lands before
// the next timer fires inside the same AdvanceTo: the second timer, which
// only the first job's completion schedules, fires in it too. What the
// advance did is in the store when it returns.
func TestWithStore_ObserverCommandDuringAdvance(t *testing.T) {
	for name, mode := range map[string]Resumption{"goroutines": ResumeGoroutines, "direct": ResumeDirect} {
		t.Run(name, func(t *testing.T) {
			// The deadline only turns a hang into a failure.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			m := newMemStore()
			e, err := New(WithStore(m), WithResumption(mode), WithClock(clock.NewVirtual(clock.Epoch)))
			require.NoError(t, err)
			xml, err := os.ReadFile("testdata/two_timers.bpmn") // waits an hour, job "work", an hour, job "last"
			require.NoError(t, err)
			_, err = e.Deploy("two_timers.bpmn", xml)
			require.NoError(t, err)
			var mu sync.Mutex
			var completedAt []time.Time
			completed := make(chan error, 64)
			unsubscribe := e.Subscribe(func(ev Event) {
				if ev.Type == JobCreated {
					err := e.CompleteJob(ctx, ev.JobKey, nil)
					mu.Lock()
					completedAt = append(completedAt, e.Now())
					mu.Unlock()
					completed <- err
				}
			})
			var insts []*Instance
			for range 5 {
				inst, err := e.Start(ctx, "tt", nil)
				require.NoError(t, err)
				insts = append(insts, inst)
			}
			require.NoError(t, e.AdvanceTo(ctx, clock.Epoch.Add(3*time.Hour)), "AdvanceTo returns")
			for range 2 * len(insts) {
				require.NoError(t, <-completed, "the observer's command was acknowledged")
			}
			for _, inst := range insts {
				require.Equal(t, Completed, inst.State(), "both timers fired in the one AdvanceTo")
			}
			mu.Lock()
			for i, at := range completedAt {
				want := clock.Epoch.Add(time.Hour)
				if i >= len(insts) {
					want = clock.Epoch.Add(2 * time.Hour)
				}
				require.Equal(t, want, at, "job %d completed at its timer's due time, before the next timer fired", i)
			}
			mu.Unlock()
			st, err := m.Load(ctx)
			require.NoError(t, err)
			require.Empty(t, st.Instances, "what the advance did is in the store")
			require.NoError(t, unsubscribe())
			require.NoError(t, e.Close(ctx))
		})
	}
}
