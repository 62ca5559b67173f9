package rest

import (
	"sync"
	"testing"
	"time"
)

func TestClock_PinFiresDueTimersInOrder(t *testing.T) {
	c := NewClock()
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c.Pin(start)
	var mu sync.Mutex
	var fired []string
	add := func(name string, d time.Duration) {
		c.AfterFunc(d, func() { mu.Lock(); fired = append(fired, name); mu.Unlock() })
	}
	add("late", time.Hour)
	add("early", time.Minute)
	stopped := c.AfterFunc(2*time.Minute, func() { t.Error("a stopped timer fired") })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer returned false")
	}
	c.Pin(start.Add(30 * time.Second))
	if len(fired) != 0 {
		t.Fatalf("fired %v before their time", fired)
	}
	if got := c.Now(); !got.Equal(start.Add(30 * time.Second)) {
		t.Fatalf("Now = %v while pinned", got)
	}
	c.Pin(start.Add(2 * time.Hour))
	if len(fired) != 2 || fired[0] != "early" || fired[1] != "late" {
		t.Fatalf("fired %v, want [early late]", fired)
	}
}

func TestClock_ResetReturnsToRealTime(t *testing.T) {
	c := NewClock()
	c.Pin(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	c.Reset()
	<-done // the timer fires on real time once the clock is reset
	if _, pinned := c.Pinned(); pinned {
		t.Fatal("still pinned after Reset")
	}
	if time.Since(c.Now()) > time.Minute {
		t.Fatalf("Now = %v after Reset, want real time", c.Now())
	}
}
