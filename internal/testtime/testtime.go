// Package testtime is the one setting that stretches the waits of the
// store, server and cluster tests on a slow or busy machine: every
// bound those tests put on waiting for a state (a leader elected, a
// partition served again, an instance correlated) is Scale of what a
// quiet machine needs. The tests wait for states, never for a fixed time;
// the bounds only decide when a wait gives up and the test fails.
//
// The factor is read from the environment variable FLOWTRACK_TEST_SLOW (a
// number, 1 by default; make flake sets it, since it loads every core
// beside the tests).
package testtime

import (
	"os"
	"strconv"
	"time"
)

// EnvVar names the environment variable holding the factor.
const EnvVar = "FLOWTRACK_TEST_SLOW"

var factor = func() float64 {
	f, err := strconv.ParseFloat(os.Getenv(EnvVar), 64)
	if err != nil || f < 1 {
		return 1
	}
	return f
}()

// Factor returns the factor waits are stretched by (at least 1).
func Factor() float64 { return factor }

// Scale returns d stretched by the factor.
func Scale(d time.Duration) time.Duration { return time.Duration(float64(d) * factor) }
