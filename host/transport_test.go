package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// fakeTransport answers every operation with an empty success, except
// those in fail, which fail as a trapped module would.
type fakeTransport struct {
	calls  []string
	fail   map[string]bool
	closed int
}

func (f *fakeTransport) Call(_ context.Context, op string, _ []byte) ([]byte, error) {
	f.calls = append(f.calls, op)
	if f.fail[op] {
		return nil, errors.New("unreachable executed")
	}
	return []byte(`{"ok":true,"result":null,"events":[],"now":"2026-01-01T00:00:05Z","nextDeadline":null}`), nil
}

func (f *fakeTransport) Close(context.Context) error { f.closed++; return nil }

// TestTransport_Lifecycle: an Engine over a Transport configures the
// module first, keeps its clock from the responses, refuses unknown
// operations without sending them, and on a failed call closes the
// transport once and reports ErrTrapped from then on.
func TestTransport_Lifecycle(t *testing.T) {
	ctx := ctxT(t)
	f := &fakeTransport{fail: map[string]bool{"cancel": true}}
	e, err := host.NewWithTransport(ctx, f)
	require.NoError(t, err)
	assert.Equal(t, []string{"configure"}, f.calls)
	assert.Equal(t, "2026-01-01T00:00:05Z", e.Now().Format("2006-01-02T15:04:05Z"))

	_, err = e.Call(ctx, "nope", nil)
	require.ErrorIs(t, err, host.ErrBadRequest)
	assert.Equal(t, []string{"configure"}, f.calls, "an unknown operation is not sent")

	require.ErrorIs(t, e.Cancel(ctx, 1), host.ErrTrapped)
	assert.Equal(t, 1, f.closed)
	_, err = e.Jobs(ctx, engine.JobFilter{})
	require.ErrorIs(t, err, host.ErrTrapped)
	assert.Equal(t, []string{"configure", "cancel"}, f.calls, "nothing is sent after a trap")
	require.NoError(t, e.Close(ctx))
	assert.Equal(t, 1, f.closed)
}

// TestTransport_Close: Close closes the transport once; calls after it
// return engine.ErrClosed.
func TestTransport_Close(t *testing.T) {
	ctx := ctxT(t)
	f := &fakeTransport{}
	e, err := host.NewWithTransport(ctx, f)
	require.NoError(t, err)
	require.NoError(t, e.Close(ctx))
	require.NoError(t, e.Close(ctx))
	assert.Equal(t, 1, f.closed)
	_, err = e.Jobs(ctx, engine.JobFilter{})
	require.ErrorIs(t, err, engine.ErrClosed)
}
