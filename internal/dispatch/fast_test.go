package dispatch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// sameAsStrict checks, for each hot request type, that the fast path
// accepts data only when the strict decoder accepts it too, with the same
// request, and reports whether it accepted any.
func sameAsStrict(t *testing.T, data []byte) (accepted int) {
	t.Helper()
	check := func(op string, fast bool, got, want any) {
		t.Helper()
		if !fast {
			return
		}
		accepted++
		require.NoError(t, decode(op, data, want), "fast path accepted %q, strict decoding rejects it", data)
		// The strict decoder keeps numbers as their text and the engine
		// brings them to its value model: compare what the engine gets.
		normalized(t, got)
		normalized(t, want)
		assert.Equal(t, want, got, "%s %q", op, data)
	}
	var s, sw wire.StartRequest
	check("start", fastStart(data, &s), &s, &sw)
	var c, cw wire.CompleteJobRequest
	check("complete_job", fastCompleteJob(data, &c), &c, &cw)
	var m, mw wire.MessageRequest
	check("publish_message", fastMessage(data, &m), &m, &mw)
	var a, aw wire.AdvanceRequest
	check("advance", fastAdvance(data, &a), &a, &aw)
	var i, iw wire.InstanceRequest
	check("instance", fastInstance(data, &i), &i, &iw)
	return accepted
}

// normalized brings the variables of a decoded request to the engine's
// value model, as the engine does with what it is given.
func normalized(t *testing.T, req any) {
	t.Helper()
	var vars *map[string]any
	switch r := req.(type) {
	case *wire.StartRequest:
		vars = &r.Variables
	case *wire.CompleteJobRequest:
		vars = &r.Variables
	case *wire.MessageRequest:
		vars = &r.Variables
	default:
		return
	}
	if *vars == nil {
		return
	}
	norm, err := engine.NormalizeVariables(*vars)
	require.NoError(t, err)
	*vars = norm
}

// TestFastDecode holds the fast path to the strict decoder: plain requests
// decode alike, and every input strict decoding rejects, or that the fast
// path leaves to it, gives the strict decoder's error.
func TestFastDecode(t *testing.T) {
	plain := []string{
		``, ` `, `{}`, ` { } `,
		`{"processId":"order"}`,
		`{"processId":"order","variables":{"amount":250,"customer":{"name":"Ann","tags":["a","b",[]]},"ok":true,"no":false,"nil":null,"e":{}}}`,
		`{"processId":"\u00e9t\u00e9 \"q\" \\ \/ \b\f\n\r\t","variables":{"n":-0,"f":1.5e-7,"g":12E+2,"h":0.25}}`,
		`{"processId":"été 😀","variables":null}`,
		`{"jobKey":42,"variables":{"a":[1,{"b":null}]}}`,
		`{"jobKey":-9223372036854775808}`,
		`{"name":"paid","correlationKey":"k","ttlMs":1000.5,"messageId":"m1","variables":{"x":"y"}}`,
		`{"byMs":1000}`, `{"to":"2026-01-01T00:00:00Z"}`, `{"instanceKey":7}`,
	}
	for _, data := range plain {
		assert.Positive(t, sameAsStrict(t, []byte(data)), "fast path declines plain %q", data)
	}
	for _, data := range []string{
		`{"processId":"order","processId":"x"}`,
		`{"processId":"order","variables":{"a":1,"a":2}}`,
		`{"processId":"order","variables":{"a":{"b":1,"\u0062":2}}}`,
		`{"PROCESSID":"order"}`, `{"processid":"order"}`, `{"processId":"order","extra":1}`,
		`{"processId":1}`, `{"processId":null}`, `{"processId":"a` + "\xff" + `"}`,
		`{"processId":"a` + "\n" + `"}`, `{"processId":"\ud83d\ude00"}`, `{"processId":"\ud800"}`,
		`{"processId":"order","variables":[]}`, `{"processId":"order","variables":1}`,
		`{"processId":"order","variables":{"deep":` + deepArray(engine.MaxVariableDepth+1) + `}}`,
		`{"processId":"order","variables":{"n":1e400}}`, `{"processId":"order","variables":{"n":01}}`,
		`{"processId":"order","variables":{"n":1.}}`, `{"processId":"order","variables":{"n":.5}}`,
		`{"processId":"order","variables":{"n":+1}}`, `{"processId":"order","variables":{"n":-}}`,
		`{"jobKey":1.5}`, `{"jobKey":1e3}`, `{"jobKey":9223372036854775808}`, `{"jobKey":"1"}`,
		`{"byMs":"1"}`, `{"to":1}`, `{"instanceKey":null}`, `{"instanceKey":1,"instanceKey":2}`,
		`{"processId":"order"} x`, `{"processId":"order"}{}`, `[{"processId":"order"}]`, `{`, `{"processId"`,
		`{"processId":"order",}`, `{,}`, `{"a" 1}`, `nul`, `"x"`, `{"processId":"order","variables":{"a":tru}}`,
		`{"processId":"order","variables":{"a":[1,]}}`, `{"processId":"order","variables":{"a":[1 2]}}`,
	} {
		sameAsStrict(t, []byte(data))
		// What the fast path leaves, the strict decoder reports as before.
		var fast, strict wire.StartRequest
		fe, se := decodeStart([]byte(data), &fast), decode("start", []byte(data), &strict)
		assert.Equal(t, se, fe, "%q", data)
	}
}
