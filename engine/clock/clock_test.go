package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
)

func TestVirtual_FiresInDueOrderWithTheClockAtEachDueTime(t *testing.T) {
	v := clock.NewVirtual(clock.Epoch)
	var got []string
	at := func(name string) func() {
		return func() { got = append(got, name+"@"+v.Now().Sub(clock.Epoch).String()) }
	}
	v.AfterFunc(2*time.Hour, at("c"))
	v.AfterFunc(time.Hour, at("a"))
	v.AfterFunc(time.Hour, at("b")) // same due time: registration order
	stopped := v.AfterFunc(90*time.Minute, at("never"))
	assert.True(t, stopped.Stop())
	assert.False(t, stopped.Stop(), "a second stop finds nothing")

	due, ok := v.NextDue()
	require.True(t, ok)
	assert.Equal(t, clock.Epoch.Add(time.Hour), due)

	v.Advance(90 * time.Minute)
	assert.Equal(t, []string{"a@1h0m0s", "b@1h0m0s"}, got)
	assert.Equal(t, clock.Epoch.Add(90*time.Minute), v.Now())
	v.AdvanceTo(clock.Epoch) // the past: nothing moves
	assert.Equal(t, clock.Epoch.Add(90*time.Minute), v.Now())
	v.Advance(time.Hour)
	assert.Equal(t, []string{"a@1h0m0s", "b@1h0m0s", "c@2h0m0s"}, got)
	_, ok = v.NextDue()
	assert.False(t, ok)
}

func TestVirtual_CallbackMaySchedule(t *testing.T) {
	v := clock.NewVirtual(clock.Epoch)
	n := 0
	var tick func()
	tick = func() {
		n++
		if n < 3 {
			v.AfterFunc(time.Minute, tick) // re-entrant: the lock is not held
		}
	}
	v.AfterFunc(time.Minute, tick)
	v.Advance(10 * time.Minute)
	assert.Equal(t, 3, n, "timers scheduled by a firing fire within the same advance")
}

func TestReal_AfterFuncFiresAndStops(t *testing.T) {
	var c clock.Clock = clock.Real{}
	done := make(chan struct{})
	c.AfterFunc(0, func() { close(done) })
	<-done // fires without anyone advancing time
	tm := c.AfterFunc(time.Hour, func() { t.Error("stopped timer fired") })
	assert.True(t, tm.Stop())
	assert.WithinDuration(t, time.Now(), c.Now(), time.Minute)
}
