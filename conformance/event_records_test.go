package conformance

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// TestEventRecords_MatchContract plays every scenario on the native engine
// and checks each record it writes against wire.Events: its type is
// declared, it carries every field its type always carries and no field
// its type does not declare. Every declared type must be written by some
// scenario, except instanceFailed, which only a defect of flowtrack
// writes, so that no type is declared that the engine never emits.
func TestEventRecords_MatchContract(t *testing.T) {
	scenarios, err := Load("scenarios")
	if err != nil {
		t.Fatal(err)
	}
	records := map[engine.EventType]wire.EventRecord{}
	for _, r := range wire.Events {
		records[r.Type] = r
	}
	var mu sync.Mutex
	seen := map[engine.EventType]bool{}
	problems := map[string]bool{}
	check := func(ev engine.Event) {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Error(err)
			return
		}
		var fields map[string]any
		if err := json.Unmarshal(b, &fields); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		seen[ev.Type] = true
		r, ok := records[ev.Type]
		if !ok {
			problems["undeclared event type "+string(ev.Type)] = true
			return
		}
		for _, f := range slices.Concat(wire.CommonFields, r.Fields) {
			if _, ok := fields[f]; !ok {
				problems[string(ev.Type)+" lacks "+f] = true
			}
		}
		for f := range fields {
			if !slices.Contains(wire.CommonFields, f) && !slices.Contains(r.Fields, f) && !slices.Contains(r.Optional, f) {
				problems[string(ev.Type)+" carries undeclared field "+f] = true
			}
		}
	}
	for _, s := range scenarios {
		ctx, cancel := context.WithTimeout(context.Background(), ctxTimeout)
		r, err := NewNative()
		if err != nil {
			t.Fatal(err)
		}
		n := r.(*Native)
		unsubscribe := n.e.Subscribe(check)
		if _, err := Run(ctx, r, s); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if err := n.e.Settle(ctx); err != nil {
			t.Error(err)
		}
		_ = unsubscribe()
		_ = r.Close(context.Background())
		cancel()
	}
	var list []string
	for p := range problems {
		list = append(list, p)
	}
	sort.Strings(list)
	for _, p := range list {
		t.Error(p)
	}
	for _, r := range wire.Events {
		if !seen[r.Type] && r.Type != engine.InstanceFailed {
			t.Errorf("no scenario writes a %s record", r.Type)
		}
	}
}
