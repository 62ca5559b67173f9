package eventhub

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// inbox is a Receiver that records deliveries; gone makes it refuse them,
// like an instance that has ended.
type inbox struct {
	mu   sync.Mutex
	got  []Delivery
	gone bool
}

func (b *inbox) Deliver(d Delivery) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone {
		return false
	}
	b.got = append(b.got, d)
	return true
}

func (b *inbox) names() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, d := range b.got {
		out = append(out, d.Name+"/"+d.CorrelationKey)
	}
	return out
}

func TestHub_MessageCorrelatesByNameAndKeyOncePerDefinition(t *testing.T) {
	h := New(clock.NewVirtual(clock.Epoch))
	a1, a2, b := &inbox{}, &inbox{}, &inbox{}
	h.SubscribeMessage("go", "k", "procA", a1)
	h.SubscribeMessage("go", "k", "procA", a2)
	h.SubscribeMessage("go", "k", "procB", b)
	h.SubscribeMessage("go", "other", "procB", &inbox{})
	pub, err := h.PublishMessage("go", "k", nil, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"procA", "procB"}, pub.Served)
	assert.Equal(t, []Receiver{a1, b}, pub.Reached, "the receivers that took it, in order")
	assert.Equal(t, []string{"go/k"}, a1.names(), "the oldest subscription of a definition wins")
	assert.Empty(t, a2.names())
	assert.Equal(t, []string{"go/k"}, b.names(), "other definitions are served too")
	assert.Equal(t, 2, h.Open()[Message], "a2 and the other key still wait")
}

func TestHub_BufferedMessageTTLAndDedup(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch)
	h := New(clk)
	pub, err := h.PublishMessage("go", "k", map[string]any{"v": 1.0}, time.Minute, "id-1")
	require.NoError(t, err)
	assert.Empty(t, pub.Reached, "buffered, nobody reached yet")
	_, err = h.PublishMessage("go", "k", nil, time.Minute, "id-1")
	require.ErrorIs(t, err, ErrDuplicateMessage)

	early := &inbox{}
	h.SubscribeMessage("go", "k", "p", early)
	require.Len(t, early.got, 1, "a buffered message is delivered as the subscription opens")
	assert.Equal(t, map[string]any{"v": 1.0}, early.got[0].Variables)
	again := &inbox{}
	h.SubscribeMessage("go", "k", "p", again)
	assert.Empty(t, again.got, "not twice to the same definition")

	clk.Advance(2 * time.Minute)
	late := &inbox{}
	h.SubscribeMessage("go", "k", "q", late)
	assert.Empty(t, late.got, "expired messages are dropped")
	_, err = h.PublishMessage("go", "k", nil, time.Minute, "id-1")
	require.NoError(t, err, "the id is free again once its message expired")
}

func TestHub_RejectedMessageServesAnotherSubscription(t *testing.T) {
	h := New(clock.NewVirtual(clock.Epoch))
	gone, alive := &inbox{gone: true}, &inbox{}
	h.SubscribeMessage("go", "k", "p", gone)
	h.SubscribeMessage("go", "k", "p", alive)
	pub, err := h.PublishMessage("go", "k", nil, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"go/k"}, alive.names(), "a receiver that is gone hands the message on")
	assert.Equal(t, []Receiver{alive}, pub.Reached, "only the receiver that took it reached")
}

func TestHub_SignalNameIndex(t *testing.T) {
	h := New(clock.NewVirtual(clock.Epoch))
	a, b, c := &inbox{}, &inbox{}, &inbox{}
	h.SubscribeSignal("alarm", a)
	id := h.SubscribeSignal("alarm", b)
	h.SubscribeSignal("other", c)
	assert.Equal(t, 0, h.BroadcastSignal("nobody", nil), "a signal nobody catches reaches nobody")
	assert.Equal(t, 2, h.BroadcastSignal("alarm", nil))
	h.Unsubscribe(id)
	assert.Equal(t, 1, h.BroadcastSignal("alarm", nil))
	assert.Len(t, a.got, 2, "signal subscriptions stay open")
	assert.Len(t, b.got, 1)
	assert.Empty(t, c.got)
}

func TestHub_TimersFireInDueOrderAndReportDeadline(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch)
	h := New(clk)
	r := &inbox{}
	h.Schedule(clock.Epoch.Add(2*time.Hour), r)
	cancelled := h.Schedule(clock.Epoch.Add(30*time.Minute), r)
	h.Schedule(clock.Epoch.Add(time.Hour), r)
	h.Unsubscribe(cancelled)
	due, ok := h.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, clock.Epoch.Add(time.Hour), due, "cancelled timers do not count")
	clk.Advance(3 * time.Hour)
	require.Len(t, r.got, 2)
	assert.True(t, r.got[0].Due.Before(r.got[1].Due))
	_, ok = h.NextDeadline()
	assert.False(t, ok)
	assert.Empty(t, h.Open())
}

// TestHub_SignalSubscriptionOrder checks that a broadcast reaches many
// subscriptions of one name in the order they subscribed, whatever order
// the name index holds them in, and skips the ones that unsubscribed.
func TestHub_SignalSubscriptionOrder(t *testing.T) {
	h := New(clock.NewVirtual(clock.Epoch))
	var order []int64
	var mu sync.Mutex
	var want []int64
	for i := range 2000 {
		id := h.SubscribeSignal("alarm", receiverFunc(func(d Delivery) bool {
			mu.Lock()
			order = append(order, d.Sub)
			mu.Unlock()
			return true
		}))
		if i%7 == 3 {
			h.Unsubscribe(id)
			continue
		}
		want = append(want, id)
	}
	require.Equal(t, len(want), h.BroadcastSignal("alarm", nil))
	assert.Equal(t, want, order)
}

// receiverFunc is a Receiver made of a function.
type receiverFunc func(Delivery) bool

func (f receiverFunc) Deliver(d Delivery) bool { return f(d) }
