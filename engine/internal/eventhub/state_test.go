package eventhub

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
)

func TestHub_StateRestore(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch)
	h := New(clk)
	a, b := &inbox{}, &inbox{}
	h.SubscribeMessage("m", "k", "p", a)
	h.SubscribeSignal("s", a)
	h.Schedule(clock.Epoch.Add(time.Minute), b)
	h.Schedule(clock.Epoch.Add(time.Minute), a) // due at the same instant: fires second
	_, err := h.PublishMessage("late", "k", nil, time.Hour, "id-1")
	require.NoError(t, err)
	st := h.State()
	require.Len(t, st.Subs, 4)
	require.Len(t, st.Messages, 1)

	// A fresh hub on a fresh clock holds the same, in the same order.
	clk2 := clock.NewVirtual(clock.Epoch)
	h2 := New(clk2)
	a2, b2 := &inbox{}, &inbox{}
	for i := range st.Subs {
		if st.Subs[i].R == Receiver(a) {
			st.Subs[i].R = a2
		} else {
			st.Subs[i].R = b2
		}
	}
	require.NoError(t, h2.Restore(st))
	h2.Arm()
	_, err = h2.PublishMessage("late", "k", nil, time.Hour, "id-1")
	assert.ErrorIs(t, err, ErrDuplicateMessage, "the dedup window is restored")
	assert.Equal(t, int64(5), h2.SubscribeSignal("s", a2), "ids go on after the last")
	due, ok := h2.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, clock.Epoch.Add(time.Minute), due)
	require.NoError(t, clk2.Advance(time.Minute))
	assert.Len(t, b2.got, 1)
	assert.Len(t, a2.got, 1)
	h2.SubscribeMessage("late", "k", "p", a2)
	assert.Equal(t, []string{"/", "late/k"}, a2.names(), "a timer, then the buffered message")
}

func TestHub_RestoreRefuses(t *testing.T) {
	r := &inbox{}
	for _, tc := range []struct {
		name string
		st   State
	}{
		{"id beyond the last", State{LastID: 1, Subs: []Subscription{{ID: 2, Kind: Signal, R: r}}}},
		{"id twice", State{LastID: 2, Subs: []Subscription{{ID: 1, Kind: Signal, R: r}, {ID: 1, Kind: Signal, R: r}}}},
		{"no receiver", State{LastID: 1, Subs: []Subscription{{ID: 1, Kind: Signal}}}},
		{"conditional", State{LastID: 1, Subs: []Subscription{{ID: 1, Kind: Conditional, R: r}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Error(t, New(clock.NewVirtual(clock.Epoch)).Restore(tc.st))
		})
	}
	h := New(clock.NewVirtual(clock.Epoch))
	h.SubscribeSignal("s", r)
	assert.Error(t, h.Restore(State{LastID: 1}), "a hub in use is not restored into")
}

// TestHub_ReserveAdopt: a hub in use opens subscriptions a one-instance
// restore brings under ids it reserved, after its own; signals reach them
// in id order, their timers fire once armed, and a set that cannot be
// opened opens nothing.
func TestHub_ReserveAdopt(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch)
	h := New(clk)
	own, adopted := &inbox{}, &inbox{}
	h.SubscribeSignal("s", own)
	first := h.Reserve(2)
	assert.Equal(t, int64(2), first, "after the hub's own")
	assert.Error(t, h.Adopt([]Subscription{{ID: first, Kind: Signal, Name: "s", R: adopted}, {ID: first + 2, Kind: Signal, Name: "s", R: adopted}}),
		"an id not reserved")
	assert.Error(t, h.Adopt([]Subscription{{ID: first, Kind: Signal, Name: "s", R: adopted}, {ID: 1, Kind: Signal, Name: "s", R: adopted}}),
		"an id the hub holds")
	assert.Equal(t, 1, h.BroadcastSignal("s", nil), "nothing opened by a refused set")

	require.NoError(t, h.Adopt([]Subscription{{ID: first, Kind: Signal, Name: "s", R: adopted},
		{ID: first + 1, Kind: Timer, Due: clock.Epoch.Add(time.Minute), R: adopted}}))
	assert.Equal(t, 2, h.BroadcastSignal("s", nil))
	assert.Equal(t, int64(4), h.SubscribeSignal("t", own), "ids go on after the reserved")
	h.Arm()
	require.NoError(t, clk.Advance(time.Minute))
	adopted.mu.Lock()
	defer adopted.mu.Unlock()
	require.Len(t, adopted.got, 2)
	assert.Equal(t, Signal, adopted.got[0].Kind)
	assert.Equal(t, Timer, adopted.got[1].Kind)
	assert.Equal(t, first+1, adopted.got[1].Sub)
}
