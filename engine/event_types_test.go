package engine

import (
	"slices"
	"testing"

	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// TestEventTypes_AreTheRuntimes checks that EventTypes lists every type
// the runtime declares.
func TestEventTypes_AreTheRuntimes(t *testing.T) {
	want := runtime.EventTypes()
	got := EventTypes()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("EventTypes() = %v, the runtime writes %v", got, want)
	}
}
