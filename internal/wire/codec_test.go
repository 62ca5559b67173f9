package wire

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// marshalsAlike checks that an appender writes exactly what encoding/json
// writes for v.
func marshalsAlike(t *testing.T, v any, got []byte, err error) {
	t.Helper()
	want, werr := json.Marshal(v)
	require.NoError(t, werr)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

func TestAppenders_MatchEncodingJSON(t *testing.T) {
	vars := map[string]any{
		"s": "a\"b\\c\n\t<>&\u2028\u2029\x01é😀\xff", "n": 3.0, "neg": -0.5, "big": 1e21, "small": 1e-7, "tiny": -2.5e-300,
		"i": 7, "i64": int64(-9), "b": true, "nil": nil, "arr": []any{1.0, "x", []any{}, map[string]any{}},
		"obj": map[string]any{"z": 1.0, "a": map[string]any{"k": false}}, "other": []string{"kept", "by", "encoding/json"},
		"whole": 123456789.0, "frac": 0.1, "max": math.MaxFloat64,
	}
	for _, r := range []StartRequest{{ProcessID: "p<1>"}, {ProcessID: "p", Variables: vars}} {
		got, err := AppendStartRequest(nil, r)
		marshalsAlike(t, r, got, err)
	}
	key := int64(-12)
	for _, r := range []CompleteJobRequest{{JobKey: &key}, {JobKey: &key, Variables: vars}, {}} {
		got, err := AppendCompleteJobRequest(nil, r)
		marshalsAlike(t, r, got, err)
	}
	for _, r := range []MessageRequest{{Name: "m"}, {Name: "m", CorrelationKey: "k", TTLMs: 1.5, MessageID: "id", Variables: vars}} {
		got, err := AppendMessageRequest(nil, r)
		marshalsAlike(t, r, got, err)
	}
	for _, r := range []any{nil, StartResult{InstanceKey: 5, State: engine.Completed}, NowResult{Now: "2026-01-01T00:00:00Z"},
		DeployResult{Name: "x"}} {
		got, err := AppendResult(nil, r)
		marshalsAlike(t, r, got, err)
	}
	ts := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	marshalsAlike(t, ts, AppendTime(nil, ts), nil)

	_, err := AppendStartRequest(nil, StartRequest{ProcessID: "p", Variables: map[string]any{"nan": math.NaN()}})
	assert.Error(t, err, "NaN has no JSON")
}

// TestDecodeResponse_MatchesEncodingJSON decodes envelopes both ways.
func TestDecodeResponse_MatchesEncodingJSON(t *testing.T) {
	for _, data := range []string{
		`{"ok":true,"result":{"instanceKey":1,"state":"completed"},"events":[],"now":"2026-01-01T00:00:00Z","nextDeadline":null}`,
		`{"ok":true,"result":null,"events":[],"now":"2026-01-01T00:00:00.5Z","nextDeadline":"2026-01-01T01:00:00Z"}`,
		`{"ok":false,"result":null,"error":{"code":"BAD_REQUEST","message":"start: \"x\""},"events":[],"now":"2026-01-01T00:00:00Z","nextDeadline":null}`,
		`{"ok":true,"result":[{"a":[1,2,{"b":"\u00e9"}]}],"events":[{"seq":1,"time":"2026-01-01T00:00:00Z","type":"instance-started","instanceKey":1,"processId":"p"}],"now":"2026-01-01T00:00:00Z","nextDeadline":null}`,
		`{"ok":true}`, `{}`, ``, `{"ok":true,"ok":false}`, `{"ok":1}`, `{"now":"yesterday"}`, `[]`, `{"ok":true} {}`,
	} {
		var fast, slow Response[json.RawMessage]
		ferr, serr := DecodeResponse([]byte(data), &fast), json.Unmarshal([]byte(data), &slow)
		assert.Equal(t, serr == nil, ferr == nil, "%q: %v / %v", data, ferr, serr)
		if serr == nil {
			assert.Equal(t, slow, fast, "%q", data)
		}
	}
	for _, data := range []string{`{"instanceKey":12,"state":"active"}`, `{"instanceKey":1.5}`, `{"state":"other"}`, `{}`} {
		var fast, slow StartResult
		ferr, serr := DecodeStartResult([]byte(data), &fast), json.Unmarshal([]byte(data), &slow)
		assert.Equal(t, serr == nil, ferr == nil, "%q", data)
		assert.Equal(t, slow, fast, "%q", data)
	}
}

// FuzzDecodeResponse holds the envelope's fast path to encoding/json on
// arbitrary bytes: whatever the fast path accepts, encoding/json accepts
// with the same envelope.
func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"ok":true,"result":{"instanceKey":1,"state":"completed"},"events":[],"now":"2026-01-01T00:00:00Z","nextDeadline":null}`))
	f.Add([]byte(`{"ok":false,"result":[1,"\n",{"a":null}],"error":{"code":"X","message":"m"},"events":[],"now":"2026-01-01T00:00:00.123Z","nextDeadline":"2027-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, slow Response[json.RawMessage]
		if !decodeResponse(data, &fast) {
			return
		}
		require.NoError(t, json.Unmarshal(data, &slow), "fast path accepted %q", data)
		// encoding/json keeps a raw result byte for byte; so does the fast path.
		assert.Equal(t, slow, fast, "%q", data)
	})
}
