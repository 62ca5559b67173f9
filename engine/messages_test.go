package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestErrors_NoStackedPrefixes checks that error messages name the file,
// the call and the package once each.
func TestErrors_NoStackedPrefixes(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	for _, doc := range []string{"<x/>", "<bpmn:definitions", ""} {
		_, err := e.Deploy("x.bpmn", []byte(doc))
		require.Error(t, err)
		assert.Equal(t, 1, strings.Count(err.Error(), "x.bpmn"), "%q", err)
	}
	errs := []error{
		e.PublishMessage(ctx, engine.Message{Name: "m", TTL: 290 * 365 * 24 * time.Hour}),
		e.AdvanceTo(ctx, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)),
		e.PublishMessage(ctx, engine.Message{Name: "m", Variables: map[string]any{"x": func() {}}}),
		e.CompleteJob(ctx, 99, nil),
	}
	_, err := engine.New(engine.WithMaxTokens(-1))
	errs = append(errs, err)
	for _, err := range errs {
		require.Error(t, err)
		assert.LessOrEqual(t, strings.Count(err.Error(), "flowtrack:"), 1, "%q", err)
		assert.NotContains(t, err.Error(), "ends at flowtrack", "%q", err)
	}
}
