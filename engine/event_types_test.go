package engine

import (
	"slices"
	"testing"

	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// TestEventTypes_AreTheRuntimes checks that EventTypes lists every type
// the runtime declares, except variablesUpdated, which the runtime
// declares but never writes (it is not part of the contract: wasm/ABI.md,
// internal/wire).
func TestEventTypes_AreTheRuntimes(t *testing.T) {
	var want []EventType
	for _, typ := range runtime.EventTypes() {
		if typ != runtime.VariablesUpdated {
			want = append(want, typ)
		}
	}
	got := EventTypes()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("EventTypes() = %v, the runtime writes %v", got, want)
	}
}
