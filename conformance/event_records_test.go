package conformance

import (
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// written records which event types the native plays of this test binary
// have written, for TestScenarios' check that every declared type is.
var written = struct {
	sync.Mutex
	types map[engine.EventType]bool
}{types: map[engine.EventType]bool{}}

// checkRecords checks every record the native engine writes until the
// returned function is called against wire.Events: its type is declared,
// it carries every field its type always carries and no field its type
// does not declare. playOn calls it for every native play.
func checkRecords(t *testing.T, n *Native) (stop func()) {
	records := map[engine.EventType]wire.EventRecord{}
	for _, r := range wire.Events {
		records[r.Type] = r
	}
	var mu sync.Mutex
	problems := map[string]bool{}
	checked := map[engine.EventType]int{}
	unsubscribe := n.e.Subscribe(func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		// The first records of each type are checked: a model that
		// writes a hundred thousand of one kind adds nothing after them
		// but time.
		if checked[ev.Type]++; checked[ev.Type] > 256 {
			return
		}
		fields := fieldsOf(ev)
		written.Lock()
		written.types[ev.Type] = true
		written.Unlock()
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
	})
	return func() {
		// A scenario that writes records faster than the checker reads
		// them (a budget's hundred thousand) drops it: the records it
		// read were checked.
		if err := unsubscribe(); err != nil && !errors.Is(err, engine.ErrObserverDropped) {
			t.Error(err)
		}
		var list []string
		for p := range problems {
			list = append(list, p)
		}
		sort.Strings(list)
		for _, p := range list {
			t.Errorf("event record against internal/wire.Events: %s", p)
		}
	}
}

// fieldsOf returns the JSON names of ev's fields that are set: those its
// JSON form carries (all but the omitempty ones at their zero value).
func fieldsOf(ev engine.Event) map[string]bool {
	v := reflect.ValueOf(ev)
	fields := make(map[string]bool, v.NumField())
	for i := range v.NumField() {
		name, opts, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		f := v.Field(i)
		empty := f.IsZero() || (f.Kind() == reflect.Map && f.Len() == 0)
		if opts != "omitempty" || !empty {
			fields[name] = true
		}
	}
	return fields
}

// checkAllTypesWritten fails for a declared event type no play wrote,
// except instanceFailed, which only a defect of flowtrack writes, and
// flowsChosen, which only a host that turned gateway choices on writes
// (a person's choice, not a scenario's: engine/choice_test.go, the host's
// and the SDK's choice tests and the simulator's page test write it):
// the contract declares no type the engine never emits.
func checkAllTypesWritten(t *testing.T) {
	written.Lock()
	defer written.Unlock()
	for _, r := range wire.Events {
		if !written.types[r.Type] && r.Type != engine.InstanceFailed && r.Type != engine.FlowsChosen {
			t.Errorf("no scenario writes a %s record (internal/wire.Events declares it)", r.Type)
		}
	}
}
