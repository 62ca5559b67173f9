package host_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// TestEngine_RejectsTimesOutOfRange is the host side of the engine test of
// the same name: the same sentinel, the limit in the message, and every
// later call still decodes its response.
func TestEngine_RejectsTimesOutOfRange(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	limit := clock.Max.Format(time.RFC3339Nano)
	for name, call := range map[string]func() error{
		"AdvanceTo year 10000": func() error { return e.AdvanceTo(ctx, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) },
		"AdvanceTo 2263":       func() error { return e.AdvanceTo(ctx, time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC)) },
		"Advance 285 years":    func() error { return e.Advance(ctx, 285*365*24*time.Hour) },
		"PublishMessage TTL": func() error {
			return e.PublishMessage(ctx, engine.Message{Name: "m", TTL: 285 * 365 * 24 * time.Hour})
		},
	} {
		err := call()
		require.ErrorIs(t, err, engine.ErrTimeOutOfRange, name)
		assert.Contains(t, err.Error(), limit, name)
	}
	_, err := e.Deploy(ctx, "timer.bpmn", readFile(t, "timer.bpmn"))
	require.NoError(t, err)
	assert.Equal(t, clock.Epoch, e.Now(), "nothing moved")
	require.NoError(t, e.AdvanceTo(ctx, clock.Max))
	assert.Equal(t, clock.Max, e.Now())
	_, err = e.Jobs(ctx, engine.JobFilter{})
	require.NoError(t, err, "responses still decode at the limit")
}
