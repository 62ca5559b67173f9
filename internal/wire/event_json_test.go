package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/api"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reflective has Event's fields and tags but not its methods, so
// encoding/json encodes it by reflection: the reference encoding.
type reflective api.Event

func appendOne(t testing.TB, ev api.Event) string {
	out, err := AppendEvent(nil, &ev)
	require.NoError(t, err)
	return string(out)
}

func TestAppendEvent_MatchesReflection(t *testing.T) {
	due := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, ev := range []api.Event{
		{},
		{Seq: 1, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Type: api.ElementEntered, InstanceKey: 7, ProcessID: "p", ElementID: "a", ElementType: "task", TokenID: 1},
		{Seq: 2, Type: api.FlowTaken, FlowID: "f", ElementID: "f", ElementType: "sequenceFlow"},
		{Seq: 3, Type: api.JobCreated, JobKey: 42, JobType: "pay <&> \"now\"", IncidentKey: 9, Name: "n\\m", CorrelationKey: "k\n\t\r\b\f\x01\x1f",
			Due: &due, Message: "bad \xff utf8 \u2028 \u2029 ünïcode 🙂", Variables: map[string]any{"a": 1.5, "b": []any{"x", true, nil}, "c": map[string]any{"d": "<e>"}}},
		{Time: time.Date(2026, 6, 1, 12, 30, 0, 123456789, time.FixedZone("x", 3600))},
	} {
		want, err := json.Marshal(reflective(ev))
		require.NoError(t, err)
		got := appendOne(t, ev)
		assert.Equal(t, string(want), got)
		var back api.Event
		require.NoError(t, json.Unmarshal([]byte(got), &back))
	}
}

func FuzzAppendEvent(f *testing.F) {
	f.Add("elementEntered", "a", "msg", int64(3))
	f.Add("x\"\\<", "\xff\xfe", "\u2028", int64(-1))
	f.Fuzz(func(t *testing.T, typ, id, msg string, key int64) {
		ev := api.Event{Type: api.EventType(typ), ElementID: id, Message: msg, JobKey: key, Name: id + msg}
		want, err := json.Marshal(reflective(ev))
		require.NoError(t, err)
		require.Equal(t, string(want), appendOne(t, ev))
	})
}

func benchEvents() []api.Event {
	evs := make([]api.Event, 37)
	for i := range evs {
		evs[i] = api.Event{Seq: uint64(i + 1), Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Type: api.ElementEntered,
			InstanceKey: 12345, ProcessID: "straight", ElementID: "task_7", ElementType: "task", TokenID: 1}
	}
	return evs
}

func BenchmarkEvents_MarshalReflective(b *testing.B) {
	evs := benchEvents()
	ref := make([]reflective, len(evs))
	for i, e := range evs {
		ref[i] = reflective(e)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(ref); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvents_AppendEvent(b *testing.B) {
	evs := benchEvents()
	buf := make([]byte, 0, 8192)
	b.ReportAllocs()
	for b.Loop() {
		buf = append(buf[:0], '[')
		for i := range evs {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = AppendEvent(buf, &evs[i]); err != nil {
				b.Fatal(err)
			}
		}
		buf = append(buf, ']')
	}
}
