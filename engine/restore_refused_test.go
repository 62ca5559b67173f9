package engine_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// docMap is a state document as JSON values, to edit by hand.
type docMap map[string]any

func parseDoc(t *testing.T, doc []byte) docMap {
	t.Helper()
	var d docMap
	require.NoError(t, json.Unmarshal(doc, &d))
	return d
}

func (d docMap) insts() []any { return d["instances"].([]any) }

func (d docMap) inst(i int) map[string]any { return d.insts()[i].(map[string]any) }

func (d docMap) bytes(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(d)
	require.NoError(t, err)
	return b
}

// TestEngine_RestoreInstance_RefusedHostile: the hand-edited documents
// of issue #33 are refused with ErrBadState before anything changes: no
// instance or job added, and the key counter where it was (the next
// instance gets the same key as on a twin engine that saw no restore).
func TestEngine_RestoreInstance_RefusedHostile(t *testing.T) {
	ctx := ctxT(t)
	src := newEngine(t)
	deploy(t, src, callXML)
	for range 6 { // the source's keys run ahead of the destinations'
		start(t, src, nil)
	}
	parent := start(t, src, nil)
	callDoc, err := src.CheckpointInstance(ctx, parent.Key())
	require.NoError(t, err)

	timers := newEngine(t)
	deploy(t, timers, twoStepsXML)
	waiting := start(t, timers, map[string]any{"key": "k"})
	completeJobOf(t, timers, waiting.Key(), "a", nil)
	timerDoc, err := timers.CheckpointInstance(ctx, waiting.Key())
	require.NoError(t, err)

	edit := func(doc []byte, f func(d docMap)) []byte {
		d := parseDoc(t, doc)
		f(d)
		return d.bytes(t)
	}
	token := func(inst map[string]any) map[string]any { return inst["tokens"].([]any)[0].(map[string]any) }
	cases := []struct {
		name, want string
		doc        []byte
	}{
		{name: "lastKey below the document's keys", want: "lastKey 3 is below key",
			doc: edit(callDoc, func(d docMap) { d["lastKey"] = 3 })},
		{name: "lastKey past 2^53-1", want: "lastKey 9007199254740993 is outside",
			doc: edit(callDoc, func(d docMap) { d["lastKey"] = json.Number("9007199254740993") })},
		{name: "lastKey MaxInt64", want: "is outside",
			doc: edit(callDoc, func(d docMap) { d["lastKey"] = json.Number(fmt.Sprint(int64(math.MaxInt64))) })},
		{name: "lastKey at the end of the key space", want: "leaves fewer than",
			doc: edit(callDoc, func(d docMap) { d["lastKey"] = json.Number(fmt.Sprint(int64(1<<43 - 1))) })},
		{name: "an instance key past 2^53-1", want: "is outside",
			doc: edit(callDoc, func(d docMap) {
				d["lastKey"] = json.Number("9007199254740995")
				d.inst(1)["key"] = json.Number("9007199254740994")
			})},
		{name: "instances calling each other", want: "cycle",
			doc: edit(callDoc, func(d docMap) {
				p, c := d.inst(0), d.inst(1)
				p["parent"], p["parentToken"] = c["key"], 1
				token(c)["child"] = p["key"]
			})},
		{name: "a caller whose token waits for another instance", want: "no token 1 waiting for it",
			doc: edit(callDoc, func(d docMap) { token(d.inst(0))["child"] = 99 })},
		{name: "one job key in two instances", want: "is also",
			doc: edit(callDoc, func(d docMap) {
				p, c := d.inst(0), d.inst(1)
				job := c["jobs"].([]any)[0].(map[string]any)
				dup := map[string]any{"job": job["job"], "token": 1}
				p["jobs"] = []any{dup}
			})},
		{name: "a job key equal to an instance key", want: "is also",
			doc: edit(callDoc, func(d docMap) {
				c := d.inst(1)
				c["jobs"].([]any)[0].(map[string]any)["job"].(map[string]any)["key"] = d.inst(0)["key"]
				token(c)["job"] = d.inst(0)["key"]
			})},
		{name: "a token parked on an end event", want: "end event",
			doc: edit(callDoc, func(d docMap) {
				tk := token(d.inst(1))
				tk["element"], tk["wait"] = "ce", "event"
				delete(tk, "job")
				d.inst(1)["jobs"] = []any{}
			})},
		{name: "a token waiting for a job it lacks", want: "waits for job",
			doc: edit(callDoc, func(d docMap) { d.inst(1)["jobs"] = []any{} })},
		{name: "a token at a join it never arrived at", want: "join",
			doc: edit(callDoc, func(d docMap) { token(d.inst(1))["wait"] = "join" })},
		{name: "a token waiting for a gateway choice at an end event", want: "only an exclusive or inclusive gateway",
			doc: edit(callDoc, func(d docMap) {
				tk := token(d.inst(1))
				tk["element"], tk["wait"] = "ce", "choice"
				delete(tk, "job")
				d.inst(1)["jobs"] = []any{}
			})},
		{name: "an unknown wait reason", want: "unknown",
			doc: edit(callDoc, func(d docMap) { token(d.inst(1))["wait"] = "nap" })},
		{name: "20000 tokens", want: "above the engine's limit",
			doc: edit(callDoc, func(d docMap) {
				c := d.inst(1)
				tk := token(c)
				tokens := make([]any, 20000)
				for i := range tokens {
					cp := map[string]any{}
					for k, v := range tk {
						cp[k] = v
					}
					cp["id"] = i + 1
					tokens[i] = cp
				}
				c["tokens"], c["nextToken"] = tokens, 20000
			})},
		{name: "a timer past the clock's range", want: "timer due",
			doc: edit(timerDoc, func(d docMap) {
				d.inst(0)["subscriptions"].([]any)[0].(map[string]any)["due"] = "2300-01-01T00:00:00Z"
			})},
		{name: "a timer cycle running past the clock's range", want: "repetitions",
			doc: edit(timerDoc, func(d docMap) {
				sub := d.inst(0)["subscriptions"].([]any)[0].(map[string]any)
				sub["period"], sub["left"] = "2000000h", 1000
			})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst, twin := newEngine(t), newEngine(t)
			for _, e := range []*engine.Engine{dst, twin} {
				deploy(t, e, callXML)
				deploy(t, e, twoStepsXML)
				start(t, e, nil)
			}
			before := dst.Stats()
			_, err := dst.RestoreInstance(ctx, tc.doc)
			require.ErrorIs(t, err, engine.ErrBadState)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, dst.Stats(), "nothing added")
			assert.Equal(t, start(t, twin, nil).Key(), start(t, dst, nil).Key(), "the key counter did not move")

			// The engine goes on and still takes the sound document.
			moved, err := dst.RestoreInstance(ctx, callDoc)
			require.NoError(t, err)
			assert.Equal(t, parent.Key(), moved.Key())
			_, err = dst.CheckpointInstance(ctx, moved.Key())
			require.NoError(t, err)
		})
	}
}

// TestEngine_RestoreRefusedHostile: a whole engine's document with a
// lastKey past 2^53-1 or instances calling each other is refused by
// Restore.
func TestEngine_RestoreRefusedHostile(t *testing.T) {
	ctx := ctxT(t)
	src := newEngine(t)
	deploy(t, src, callXML)
	start(t, src, nil)
	state, err := src.Checkpoint(ctx)
	require.NoError(t, err)
	for name, f := range map[string]func(d docMap){
		"lastKey past 2^53-1": func(d docMap) { d["lastKey"] = json.Number("9007199254740993") },
		"instances calling each other": func(d docMap) {
			p, c := d.inst(0), d.inst(1)
			p["parent"], p["parentToken"] = c["key"], 1
			c["tokens"].([]any)[0].(map[string]any)["child"] = p["key"]
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := parseDoc(t, state)
			f(d)
			e, err := engine.Restore(d.bytes(t))
			if e != nil {
				_ = e.Close(ctx)
			}
			require.ErrorIs(t, err, engine.ErrBadState)
		})
	}
	e, err := engine.Restore(state)
	require.NoError(t, err, "the sound document")
	require.NoError(t, e.Close(ctx))
}
