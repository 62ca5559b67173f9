package api

import (
	"fmt"
	"math"
	"time"
)

// MinTime and MaxTime are the earliest and latest instants the engine represents.
// Event records and timer due times are kept as int64 nanoseconds since the
// Unix epoch (as time.Time.UnixNano returns them), so an instant outside
// [MinTime, MaxTime] (before 1677-09-21 or after 2262-04-11) would wrap around, and
// beyond year 9999 it has no RFC 3339 form for the wasm ABI either.
// The engine rejects such instants wherever they enter: the clock, Advance,
// timer dates, durations and cycles, message TTLs.
var (
	MinTime = time.Unix(0, math.MinInt64).UTC()
	MaxTime = time.Unix(0, math.MaxInt64).UTC()
)

// CheckTimeRange returns nil when t lies in [MinTime, MaxTime], and
// otherwise an error wrapping ErrTimeOutOfRange that names t and the
// limit it passes: what every surface checks an instant it is given with.
func CheckTimeRange(t time.Time) error {
	switch {
	case t.After(MaxTime):
		return fmt.Errorf("%w: %s is after %s", ErrTimeOutOfRange, t.UTC().Format(time.RFC3339Nano), MaxTime.Format(time.RFC3339Nano))
	case t.Before(MinTime):
		return fmt.Errorf("%w: %s is before %s", ErrTimeOutOfRange, t.UTC().Format(time.RFC3339Nano), MinTime.Format(time.RFC3339Nano))
	}
	return nil
}
