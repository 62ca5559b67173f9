package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// fuzzCallXML: process "top" waits on a job "a" beside a call of "sub",
// which waits on a message in parallel with a timer-guarded job "b".
const fuzzCallXML = `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
	`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">` +
	`<bpmn:message id="M" name="go"><bpmn:extensionElements><zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>` +
	`<bpmn:process id="top" isExecutable="true"><bpmn:startEvent id="s"/><bpmn:parallelGateway id="fork"/>` +
	`<bpmn:serviceTask id="a"><bpmn:extensionElements><zeebe:taskDefinition type="a"/></bpmn:extensionElements></bpmn:serviceTask>` +
	`<bpmn:callActivity id="call"><bpmn:extensionElements><zeebe:calledElement processId="sub"/></bpmn:extensionElements></bpmn:callActivity>` +
	`<bpmn:parallelGateway id="join"/><bpmn:endEvent id="e"/>` +
	`<bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="fork"/><bpmn:sequenceFlow id="f2" sourceRef="fork" targetRef="a"/>` +
	`<bpmn:sequenceFlow id="f3" sourceRef="fork" targetRef="call"/><bpmn:sequenceFlow id="f4" sourceRef="a" targetRef="join"/>` +
	`<bpmn:sequenceFlow id="f5" sourceRef="call" targetRef="join"/><bpmn:sequenceFlow id="f6" sourceRef="join" targetRef="e"/></bpmn:process>` +
	`<bpmn:process id="sub" isExecutable="true"><bpmn:startEvent id="cs"/><bpmn:parallelGateway id="cfork"/>` +
	`<bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>` +
	`<bpmn:serviceTask id="b"><bpmn:extensionElements><zeebe:taskDefinition type="b"/></bpmn:extensionElements></bpmn:serviceTask>` +
	`<bpmn:boundaryEvent id="late" attachedToRef="b"><bpmn:timerEventDefinition><bpmn:timeCycle>R5/PT1H</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:boundaryEvent>` +
	`<bpmn:endEvent id="ce"/><bpmn:endEvent id="ce2"/><bpmn:endEvent id="ce3"/>` +
	`<bpmn:sequenceFlow id="g1" sourceRef="cs" targetRef="cfork"/><bpmn:sequenceFlow id="g2" sourceRef="cfork" targetRef="wait"/>` +
	`<bpmn:sequenceFlow id="g3" sourceRef="cfork" targetRef="b"/><bpmn:sequenceFlow id="g4" sourceRef="wait" targetRef="ce"/>` +
	`<bpmn:sequenceFlow id="g5" sourceRef="b" targetRef="ce2"/><bpmn:sequenceFlow id="g6" sourceRef="late" targetRef="ce3"/></bpmn:process></bpmn:definitions>`

// fuzzValues are the values the mutations of FuzzRestoreInstanceDoc
// write: keys around the document's and the bounds, wait reasons,
// elements, times.
var fuzzValues = []any{
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1, 20, 1 << 43, 1<<53 - 1, json.Number("9007199254740992"),
	json.Number("9223372036854775807"), "job", "message", "timer", "join", "call", "event", "scope", "incident", "nap",
	"s", "fork", "a", "call", "join", "e", "cs", "cfork", "wait", "b", "late", "ce", "2300-01-01T00:00:00Z",
	"1600-01-01T00:00:00Z", "2026-01-01T01:00:00Z", "1000000h", "1h", true, false, nil,
}

// fuzzFields are the fields a mutation sets, on the document, an
// instance, its first token, its first job or its first subscription.
var fuzzFields = []string{"lastKey", "key", "parent", "parentToken", "depth", "nextToken", "tokens.child", "tokens.wait",
	"tokens.element", "tokens.job", "tokens.id", "tokens.atJoin", "tokens.raising", "jobs.job.key", "jobs.token",
	"subscriptions.due", "subscriptions.period", "subscriptions.left", "subscriptions.token", "tokens+", "jobs+", "tokens*"}

// mutateDoc applies the mutations ops spells, three bytes each (field,
// instance, value), to the document d.
func mutateDoc(d map[string]any, ops []byte) {
	insts, _ := d["instances"].([]any)
	for len(ops) >= 3 && len(insts) > 0 {
		field, which, val := fuzzFields[int(ops[0])%len(fuzzFields)], int(ops[1])%len(insts), fuzzValues[int(ops[2])%len(fuzzValues)]
		ops = ops[3:]
		inst, _ := insts[which].(map[string]any)
		first := func(name string) map[string]any {
			l, _ := inst[name].([]any)
			if len(l) == 0 {
				return nil
			}
			m, _ := l[0].(map[string]any)
			return m
		}
		switch field {
		case "lastKey":
			d["lastKey"] = val
		case "key", "parent", "parentToken", "depth", "nextToken":
			inst[field] = val
		case "tokens+", "jobs+": // a copy of the first, in another instance
			name := field[:len(field)-1]
			if m := first(name); m != nil {
				other, _ := insts[(which+1)%len(insts)].(map[string]any)
				l, _ := other[name].([]any)
				other[name] = append(l, m)
			}
		case "tokens*": // many copies of the first token
			if m := first("tokens"); m != nil {
				l := make([]any, 10001)
				for i := range l {
					c := map[string]any{}
					for k, v := range m {
						c[k] = v
					}
					c["id"] = i + 1
					l[i] = c
				}
				inst["tokens"], inst["nextToken"] = l, len(l)
			}
		default:
			name, key, _ := strings.Cut(field, ".")
			m := first(name)
			if m == nil {
				continue
			}
			if key == "job.key" {
				if job, ok := m["job"].(map[string]any); ok {
					job["key"] = val
				}
				continue
			}
			m[key] = val
		}
	}
}

// FuzzRestoreInstanceDoc mutates valid one-instance documents (a call
// tree with jobs, a message, a join and timers) field by field: keys,
// callers, tokens, jobs, timers. RestoreInstance must refuse the
// document, leaving the engine as it was, or restore it consistently:
// the tree checkpoints again (no loop), the whole engine checkpoints and
// restores, keys stay below 2^53 and the engine reopens from its store.
// Either way the engine and its store reopen.
func FuzzRestoreInstanceDoc(f *testing.F) {
	ctx := context.Background()
	src, err := New(WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		f.Fatal(err)
	}
	defer src.Close(ctx)
	if _, err := src.Deploy("call.bpmn", []byte(fuzzCallXML)); err != nil {
		f.Fatal(err)
	}
	for range 2 {
		if _, err := src.Start(ctx, "top", map[string]any{"key": "k"}); err != nil {
			f.Fatal(err)
		}
	}
	inst, err := src.Start(ctx, "top", map[string]any{"key": "k2"})
	if err != nil {
		f.Fatal(err)
	}
	if err := src.Settle(ctx); err != nil {
		f.Fatal(err)
	}
	seed, err := src.CheckpointInstance(ctx, inst.Key())
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0})          // lastKey 0
	f.Add([]byte{0, 0, 16})         // lastKey 2^53-1
	f.Add([]byte{2, 0, 4, 6, 1, 3}) // a caller cycle
	f.Add([]byte{19, 0, 0})         // a token copied into the other instance
	f.Add([]byte{20, 1, 0})         // a job copied into the other instance
	f.Add([]byte{15, 1, 42})        // a timer past the range
	f.Add([]byte{8, 1, 40})         // a token moved to an end event
	f.Add([]byte{21, 1, 0})         // 10001 tokens
	f.Fuzz(func(t *testing.T, ops []byte) {
		var d map[string]any
		require.NoError(t, json.Unmarshal(seed, &d))
		mutateDoc(d, ops)
		doc, err := json.Marshal(d)
		require.NoError(t, err)

		m := newMemStore()
		e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)), WithResumption(ResumeDirect))
		require.NoError(t, err)
		defer func() { _ = e.Close(ctx) }()
		_, err = e.Deploy("call.bpmn", []byte(fuzzCallXML))
		require.NoError(t, err)
		mine, err := e.Start(ctx, "top", map[string]any{"key": "mine"})
		require.NoError(t, err)
		before := e.Stats()
		moved, err := e.RestoreInstance(ctx, doc)
		if err != nil {
			var de *DeployError
			if !errors.Is(err, ErrBadState) && !errors.Is(err, ErrKeyInUse) && !errors.As(err, &de) {
				t.Fatalf("unexpected error: %v", err)
			}
			require.Equal(t, before, e.Stats(), "refused: nothing added")
		} else {
			consistent(t, e, moved.Key())
		}
		require.Equal(t, Active, mine.State())
		require.NoError(t, e.Close(ctx))
		again, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)), WithResumption(ResumeDirect))
		require.NoError(t, err, "the engine reopens from its store")
		require.NoError(t, again.Close(ctx))
	})
}

// consistent checks an engine that took a restored tree whose top is
// key: it settles, the tree checkpoints again and the whole engine
// checkpoints and restores, within a bound (a loop fails the test), and
// no key of the engine passes 2^53 - 1.
func consistent(t *testing.T, e *Engine, key int64) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		ctx := context.Background()
		if err := e.Settle(ctx); err != nil {
			done <- fmt.Errorf("settle: %w", err)
			return
		}
		if _, err := e.CheckpointInstance(ctx, key); err != nil {
			done <- fmt.Errorf("checkpoint instance: %w", err)
			return
		}
		state, err := e.Checkpoint(ctx)
		if err != nil {
			done <- fmt.Errorf("checkpoint: %w", err)
			return
		}
		r, err := Restore(state, WithClock(clock.NewVirtual(clock.Epoch)))
		if err != nil {
			done <- fmt.Errorf("restore the engine's checkpoint: %w", err)
			return
		}
		done <- r.Close(ctx)
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the restored tree does not checkpoint: a loop")
	}
	next, err := e.Start(context.Background(), "top", map[string]any{"key": "after"})
	require.NoError(t, err)
	require.LessOrEqual(t, next.Key(), int64(1<<53-1), "keys stay below 2^53")
}
