package engine

import (
	"context"
	"errors"
	goruntime "runtime"
	"testing"

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

// TestWithStore_CommitError: a command whose commit fails returns the
// store's error, and the next commit writes what the failed one did not.
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
	inst, err := e.Start(ctx, "p", nil)
	require.ErrorIs(t, err, errDisk)
	require.Nil(t, inst)

	m.mu.Lock()
	m.fail = nil
	m.mu.Unlock()
	_, err = e.Start(ctx, "p", nil)
	require.NoError(t, err)
	st, err := m.Load(ctx)
	require.NoError(t, err)
	require.Len(t, st.Instances, 2, "the instance of the failed commit is written by the next one")

	r, err := New(WithStore(m))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	require.Len(t, r.Instances(), 2)
	require.Len(t, r.Jobs(JobFilter{Type: "work"}), 2)
}

// TestWithStore_CloseDuringCommands closes the engine, twice at once,
// while commands keep coming: every command returns, durable or refused
// with ErrClosed, and what returned without error is in the store.
func TestWithStore_CloseDuringCommands(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	_, err = e.Deploy("p.bpmn", []byte(jobXML))
	require.NoError(t, err)

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
