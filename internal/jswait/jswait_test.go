package jswait_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/internal/jswait"
)

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{nats.ErrNoResponders, true},
		{fmt.Errorf("commit: %w", nats.ErrNoResponders), true},
		{nats.ErrTimeout, true},
		{nats.ErrReconnectBufExceeded, true},
		{context.DeadlineExceeded, true},
		{&jetstream.APIError{Code: 400, ErrorCode: 10005, Description: "no suitable peers for placement"}, true},
		{&jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}, true},
		{&jetstream.APIError{Code: 500, ErrorCode: 10118, Description: "stream is offline"}, true},
		{jswait.Again(errors.New("no stream leader")), true},
		{context.Canceled, false},
		{nats.ErrPermissionViolation, false},
		{nats.ErrConnectionClosed, false},
		{&jetstream.APIError{Code: 400, ErrorCode: 10058, Description: "stream name already in use with a different configuration"}, false},
		{&jetstream.APIError{Code: 400, ErrorCode: 10071, Description: "wrong last sequence"}, false},
		{jetstream.ErrKeyExists, false},
		{errors.New("bad data"), false},
	} {
		require.Equal(t, c.want, jswait.Transient(c.err), "%v", c.err)
	}
}

func TestDo_WaitsOutTransientErrors(t *testing.T) {
	tries := 0
	err := jswait.Do(context.Background(), func(context.Context) error {
		tries++
		if tries < 4 {
			return fmt.Errorf("publish: %w", nats.ErrNoResponders)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 4, tries)
}

func TestDo_ReturnsOtherErrorsAtOnce(t *testing.T) {
	tries := 0
	bad := errors.New("permissions violation")
	err := jswait.Do(context.Background(), func(context.Context) error { tries++; return bad })
	require.Same(t, bad, err)
	require.Equal(t, 1, tries)
}

func TestDo_SaysWhatWasMissingWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := jswait.Do(ctx, func(context.Context) error { return jswait.Again(errors.New("no stream leader")) })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var werr *jswait.Error
	require.ErrorAs(t, err, &werr)
	require.Greater(t, werr.Tries, 1)
	require.ErrorContains(t, err, "no stream leader, for 0.")
}

// A try cut short by the context's end reports the try before it, which
// says what was missing, not only that the context ended.
func TestDo_ReportsTheTryBeforeTheContextEnded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	tries := 0
	err := jswait.Do(ctx, func(ctx context.Context) error {
		tries++
		if tries == 1 {
			return jswait.Again(errors.New("3 replicas asked for, 2 placed"))
		}
		<-ctx.Done()
		return fmt.Errorf("create the stream: %w", ctx.Err())
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "3 replicas asked for, 2 placed")
}
