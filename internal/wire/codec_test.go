package wire

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/api"
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
	jobs := []api.Job{
		{Key: 3, Type: "t<1>", ProcessID: "p", ElementID: "e", InstanceKey: 2, Retries: 3, Created: time.Date(2026, 1, 1, 0, 0, 0, 5, time.UTC)},
		{Key: 4, Type: "t", Headers: map[string]string{"z": "1", "a": "é"}, Variables: vars, ErrorMessage: "failed\n",
			Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))},
	}
	for _, r := range []any{nil, StartResult{InstanceKey: 5, State: api.Completed}, NowResult{Now: "2026-01-01T00:00:00Z"},
		StartResult{InstanceKey: 5, State: api.Active, Jobs: jobs}, CompleteJobResult{InstanceKey: 2},
		CompleteJobResult{InstanceKey: 2, State: api.Active, Jobs: jobs}, DeployResult{Name: "x"},
		InstanceResult{Key: 1, ProcessID: "p", State: api.Terminated, Message: "why<>", Variables: vars, Incidents: []api.Incident{}},
		InstanceResult{Key: 1, Incidents: []api.Incident{{Key: 3, InstanceKey: 1, ElementID: "e", JobKey: 2, Message: "m"}}},
		InstanceResult{Variables: map[string]any{}}, MessageResult{}, MessageResult{Instances: []CompleteJobResult{}},
		MessageResult{Instances: []CompleteJobResult{{InstanceKey: 2, State: api.Active, Jobs: jobs}, {InstanceKey: 9, State: api.Completed}, {InstanceKey: 10}}}} {
		got, err := AppendResult(nil, r)
		marshalsAlike(t, r, got, err)
	}
	for _, r := range []InstanceRequest{{InstanceKey: &key}, {}} {
		marshalsAlike(t, r, AppendInstanceRequest(nil, r), nil)
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
	for _, data := range []string{`{"instanceKey":12,"state":"active"}`, `{"instanceKey":1.5}`, `{"state":"other"}`, `{}`,
		`{"instanceKey":2,"state":"active","jobs":[{"key":3,"type":"t","processId":"p","elementId":"e","instanceKey":2,"retries":3,"created":"2026-01-01T00:00:00.000000005Z"},` +
			`{"key":4,"type":"\u00e9","headers":{"a":"b"},"variables":{"x":[1,{"y":null}]},"errorMessage":"m","created":"2026-01-01T01:00:00+01:00"}]}`,
		`{"instanceKey":2,"jobs":[]}`, `{"instanceKey":2,"jobs":null}`, `{"jobs":[{"key":1,"key":2}]}`, `{"jobs":[{"retries":1e2}]}`,
		`{"jobs":[{"headers":{"a":1}}]}`, `{"jobs":[{"created":"never"}]}`, `{"jobs":[{"other":1}]}`,
	} {
		var fast, slow StartResult
		ferr, serr := DecodeStartResult([]byte(data), &fast), json.Unmarshal([]byte(data), &slow)
		assert.Equal(t, serr == nil, ferr == nil, "%q", data)
		assert.Equal(t, slow, fast, "%q", data)
		var cfast, cslow CompleteJobResult
		ferr, serr = DecodeCompleteJobResult([]byte(data), &cfast), json.Unmarshal([]byte(data), &cslow)
		assert.Equal(t, serr == nil, ferr == nil, "%q", data)
		assert.Equal(t, cslow, cfast, "%q", data)
	}
	for _, data := range []string{`{}`, `{"instances":[]}`, `{"instances":null}`, `{"instances":[{}]}`,
		`{"instances":[{"instanceKey":2,"state":"active","jobs":[{"key":3,"type":"t","processId":"p","elementId":"e","instanceKey":2,"retries":3,"created":"2026-01-01T00:00:00Z"}]},{"instanceKey":9,"state":"completed"},{"instanceKey":10}]}`,
		`{"instances":[{"instanceKey":1,"instanceKey":2}]}`, `{"instances":[{"state":"other"}]}`, `{"instances":[{"other":1}]}`,
		`{"instances":[{"instanceKey":1}],"instances":[]}`, `{"instances":{}}`, `{"instances":[1]}`, `{"other":[]}`, ``, `[]`,
	} {
		var fast, slow MessageResult
		ferr, serr := DecodeMessageResult([]byte(data), &fast), json.Unmarshal([]byte(data), &slow)
		assert.Equal(t, serr == nil, ferr == nil, "%q: %v / %v", data, ferr, serr)
		assert.Equal(t, slow, fast, "%q", data)
	}
	for _, data := range []string{
		`{"key":1,"processId":"p","state":"completed","message":"","variables":{"a":[1,"\u00e9",{"b":null}]},"incidents":[]}`,
		`{"key":1,"processId":"p","state":"active","message":"m","variables":{},"incidents":[{"key":3,"instanceKey":1,"elementId":"e","jobKey":2,"message":"m"}]}`,
		`{"key":1,"variables":null,"incidents":null}`, `{"key":1,"key":1}`, `{"incidents":[{"key":"x"}]}`, `{"variables":{"a":1,"a":2}}`,
	} {
		var fast, slow InstanceResult
		ferr, serr := DecodeInstanceResult([]byte(data), &fast), json.Unmarshal([]byte(data), &slow)
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

// FuzzDecodeStartResult holds start's, complete_job's, publish_message's and instance's result decoders
// to encoding/json on arbitrary bytes.
func FuzzDecodeStartResult(f *testing.F) {
	f.Add([]byte(`{"instanceKey":2,"state":"active","jobs":[{"key":3,"type":"t","processId":"p","elementId":"e","instanceKey":2,"retries":3,"headers":{"h":"v"},"variables":{"a":[1.5,"x",true,null,{}]},"errorMessage":"m","created":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"instances":[{"instanceKey":2,"state":"active","jobs":[]},{"instanceKey":3}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, slow StartResult
		if err := DecodeStartResult(data, &fast); err == nil {
			require.NoError(t, json.Unmarshal(data, &slow), "fast path accepted %q", data)
			assert.Equal(t, slow, fast, "%q", data)
		}
		var cfast, cslow CompleteJobResult
		if err := DecodeCompleteJobResult(data, &cfast); err == nil {
			require.NoError(t, json.Unmarshal(data, &cslow), "fast path accepted %q", data)
			assert.Equal(t, cslow, cfast, "%q", data)
		}
		var mfast, mslow MessageResult
		if err := DecodeMessageResult(data, &mfast); err == nil {
			require.NoError(t, json.Unmarshal(data, &mslow), "fast path accepted %q", data)
			assert.Equal(t, mslow, mfast, "%q", data)
		}
		var ifast, islow InstanceResult
		if err := DecodeInstanceResult(data, &ifast); err == nil {
			require.NoError(t, json.Unmarshal(data, &islow), "fast path accepted %q", data)
			assert.Equal(t, islow, ifast, "%q", data)
		}
	})
}
