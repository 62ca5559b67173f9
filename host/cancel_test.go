package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero/api"

	"github.com/flowtrack/flowtrack/engine"
)

// blockingFn stands for a module call that runs until released.
type blockingFn struct {
	api.Function
	started, release chan struct{}
	ctxErr           error
}

func (f *blockingFn) Call(ctx context.Context, _ ...uint64) ([]uint64, error) {
	close(f.started)
	<-f.release
	f.ctxErr = ctx.Err()
	return []uint64{0}, nil
}

// TestEngine_CallHonoursItsContext checks that a call returns as soon as
// its context ends, even while the module is still working: the module is
// abandoned (ErrTrapped), finishes on its own and is closed; Close and
// every later call return at once; and a new Engine runs normally.
func TestEngine_CallHonoursItsContext(t *testing.T) {
	e, err := New(context.Background())
	require.NoError(t, err)
	fn := &blockingFn{started: make(chan struct{}), release: make(chan struct{})}
	e.fns["now"] = fn

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := e.Call(ctx, "now", nil)
		done <- err
	}()
	<-fn.started
	cancel()
	err = <-done
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, ErrTrapped)
	assert.ErrorIs(t, e.Trapped(), context.Canceled)
	_, err = e.Call(context.Background(), "jobs", nil)
	require.ErrorIs(t, err, ErrTrapped, "the abandoned module is never called again")
	require.NoError(t, e.Close(context.Background()))

	close(fn.release) // the abandoned call finishes on its own goroutine
	e2, err := New(context.Background())
	require.NoError(t, err)
	defer e2.Close(context.Background())
	_, err = e2.Call(context.Background(), "now", nil)
	require.NoError(t, err)
}

// TestEngine_CloseHonoursItsContext checks that Close returns when its
// context ends while a call holds the module, and that the call closes the
// module when it returns.
func TestEngine_CloseHonoursItsContext(t *testing.T) {
	e, err := New(context.Background())
	require.NoError(t, err)
	fn := &blockingFn{started: make(chan struct{}), release: make(chan struct{})}
	e.fns["now"] = fn
	done := make(chan error)
	go func() {
		_, err := e.Call(context.Background(), "now", nil)
		done <- err
	}()
	<-fn.started

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = e.Close(ctx)
	require.ErrorIs(t, err, context.Canceled, "Close does not wait for the running call")

	close(fn.release)
	<-done // the fake's empty response fails to decode; what matters is what follows
	_, err = e.Call(context.Background(), "jobs", nil)
	require.ErrorIs(t, err, engine.ErrClosed, "the call closed the module as it returned")
}
