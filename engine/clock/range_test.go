package clock_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
)

func TestCheckRange(t *testing.T) {
	for _, tc := range []struct {
		t  time.Time
		ok bool
	}{
		{clock.Epoch, true},
		{clock.Max, true},
		{clock.Min, true},
		{clock.Max.Add(time.Nanosecond), false},
		{clock.Min.Add(-time.Nanosecond), false},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC), false},
	} {
		err := clock.CheckRange(tc.t)
		if tc.ok {
			assert.NoError(t, err, tc.t)
			continue
		}
		require.ErrorIs(t, err, clock.ErrOutOfRange, tc.t)
		assert.Contains(t, err.Error(), tc.t.UTC().Format(time.RFC3339Nano), "names the value")
		limit := clock.Max
		if tc.t.Before(clock.Min) {
			limit = clock.Min
		}
		assert.Contains(t, err.Error(), limit.Format(time.RFC3339Nano), "names the limit")
	}
	// Every time in range survives the nanosecond representation the
	// engine's records use.
	assert.Equal(t, clock.Max, time.Unix(0, clock.Max.UnixNano()).UTC())
	assert.Equal(t, clock.Min, time.Unix(0, clock.Min.UnixNano()).UTC())
}

func TestVirtual_RefusesTimesOutOfRange(t *testing.T) {
	v := clock.NewVirtual(clock.Epoch)
	fired := 0
	v.AfterFunc(time.Hour, func() { fired++ })
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	require.ErrorIs(t, v.AdvanceTo(far), clock.ErrOutOfRange)
	require.ErrorIs(t, v.Advance(math.MaxInt64), clock.ErrOutOfRange)
	require.ErrorIs(t, v.Set(far), clock.ErrOutOfRange)
	assert.Equal(t, clock.Epoch, v.Now(), "a refused move leaves the clock where it was")
	assert.Zero(t, fired, "and fires nothing")
	require.NoError(t, v.AdvanceTo(clock.Max))
	assert.Equal(t, 1, fired)
	assert.Equal(t, clock.Max, v.Now())
}
