package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// twoStepsXML waits on a job "a", then on a job "b" guarded by a ten-minute
// interrupting timer, then on a message.
const twoStepsXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:message id="Msg" name="go"><bpmn:extensionElements><zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:serviceTask id="a"><bpmn:extensionElements><zeebe:taskDefinition type="a"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:serviceTask id="b"><bpmn:extensionElements><zeebe:taskDefinition type="b"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:boundaryEvent id="timeout" attachedToRef="b" cancelActivity="true"><bpmn:timerEventDefinition><bpmn:timeDuration>PT10M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:boundaryEvent>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="Msg"/></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="done"/>
    <bpmn:endEvent id="late"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="a"/>
    <bpmn:sequenceFlow id="f2" sourceRef="a" targetRef="b"/>
    <bpmn:sequenceFlow id="f3" sourceRef="b" targetRef="wait"/>
    <bpmn:sequenceFlow id="f4" sourceRef="wait" targetRef="done"/>
    <bpmn:sequenceFlow id="f5" sourceRef="timeout" targetRef="late"/>
  </bpmn:process>
</bpmn:definitions>`

// restored checkpoints e and returns an engine restored from the document,
// closed when the test ends.
func restored(t *testing.T, e *engine.Engine, opts ...engine.Option) (*engine.Engine, []byte) {
	t.Helper()
	doc, err := e.Checkpoint(ctxT(t))
	require.NoError(t, err)
	r, err := engine.Restore(doc, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close(context.Background())) })
	return r, doc
}

func oneJob(t *testing.T, e *engine.Engine, typ string) engine.Job {
	t.Helper()
	jobs := e.Jobs(engine.JobFilter{Type: typ})
	require.Len(t, jobs, 1)
	return jobs[0]
}

func TestRestore_NothingHappensTwice(t *testing.T) {
	for _, mode := range []engine.Resumption{engine.ResumeGoroutines, engine.ResumeDirect} {
		ctx := ctxT(t)
		e := newEngine(t, engine.WithResumption(mode))
		_, err := e.Deploy("p.bpmn", []byte(twoStepsXML))
		require.NoError(t, err)
		inst, err := e.Start(ctx, "p", map[string]any{"key": "k1"})
		require.NoError(t, err)
		require.NoError(t, e.Settle(ctx))
		a := oneJob(t, e, "a")
		require.NoError(t, e.CompleteJob(ctx, a.Key, map[string]any{"x": 1}))
		require.NoError(t, e.Settle(ctx))
		b := oneJob(t, e, "b")

		r, _ := restored(t, e)
		got, ok := r.Instance(inst.Key())
		require.True(t, ok)
		assert.Equal(t, history(inst), history(got), "the history is restored, not replayed")
		assert.Equal(t, []engine.Job{b}, r.Jobs(engine.JobFilter{}), "the completed job is not created again")
		assert.ErrorIs(t, r.CompleteJob(ctx, a.Key, nil), engine.ErrUnknownJob)

		// The boundary timer was scheduled before the checkpoint: it fires
		// once, at its due time, and the job it interrupts is gone.
		require.NoError(t, r.Advance(ctx, 9*time.Minute))
		assert.Len(t, r.Jobs(engine.JobFilter{}), 1)
		require.NoError(t, r.Advance(ctx, 2*time.Minute))
		st, err := got.Wait(ctx)
		require.NoError(t, err)
		assert.Equal(t, engine.Completed, st)
		fired := 0
		for _, ev := range history(got) {
			if ev.Type == engine.TimerFired {
				fired++
			}
		}
		assert.Equal(t, 1, fired)
		assert.Empty(t, r.Jobs(engine.JobFilter{}))
		assert.Equal(t, map[string]any{"key": "k1", "x": float64(1)}, got.Variables())
	}
}

func TestRestore_MessageBufferAndDedupWindow(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t)
	_, err := e.Deploy("p.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	require.NoError(t, e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: "k1", TTL: time.Hour, MessageID: "m1", Variables: map[string]any{"paid": true}}))

	r, _ := restored(t, e)
	err = r.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: "k1", TTL: time.Hour, MessageID: "m1"})
	assert.ErrorIs(t, err, engine.ErrDuplicateMessage, "the dedup window survives the restore")

	inst, err := r.Start(ctx, "p", map[string]any{"key": "k1"})
	require.NoError(t, err)
	require.NoError(t, r.Settle(ctx))
	for _, typ := range []string{"a", "b"} {
		require.NoError(t, r.CompleteJob(ctx, oneJob(t, r, typ).Key, nil))
		require.NoError(t, r.Settle(ctx))
	}
	st, err := inst.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st, "the buffered message correlates after the restore")
	assert.Equal(t, true, inst.Variables()["paid"])
}

func TestRestore_KeepsClockAndKeys(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t)
	_, err := e.Deploy("p.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	require.NoError(t, e.Advance(ctx, 90*time.Minute))
	first, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)

	r, _ := restored(t, e)
	assert.Equal(t, e.Now(), r.Now())
	second, err := r.Start(ctx, "p", nil)
	require.NoError(t, err)
	require.NoError(t, r.Settle(ctx))
	assert.Greater(t, second.Key(), first.Key())
	for _, j := range r.Jobs(engine.JobFilter{}) {
		assert.Greater(t, j.Key, first.Key(), "keys go on after the document's last key")
	}
}

// TestRestore_NegativeZeroIsZero: a Go -0 given as a variable is held as
// 0, as FEEL's decimals have no negative zero and a document's "-0" is read
// as 0; held as -0 it was written "-0" and read back 0, so the restored
// engine wrote another document than the one it came from.
func TestRestore_NegativeZeroIsZero(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t)
	_, err := e.Deploy("p.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	inst, err := e.Start(ctx, "p", map[string]any{"z": math.Copysign(0, -1), "list": []any{math.Copysign(0, -1)}})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctx))
	z, ok := inst.Variables()["z"].(float64)
	require.True(t, ok, "z is %T", inst.Variables()["z"])
	assert.False(t, math.Signbit(z), "-0 is held as 0")
	assert.False(t, math.Signbit(inst.Variables()["list"].([]any)[0].(float64)), "nested too")

	r, doc := restored(t, e)
	again, err := r.Checkpoint(ctx)
	require.NoError(t, err)
	assert.Equal(t, string(doc), string(again), "the restored engine writes the document it came from")
}

func TestRestore_RefusesBadDocuments(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t)
	_, err := e.Deploy("p.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	_, err = e.Start(ctx, "p", map[string]any{"key": "k1"})
	require.NoError(t, err)
	doc, err := e.Checkpoint(ctx)
	require.NoError(t, err)

	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(doc, &m))
		f(m)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		return out
	}
	token := func(m map[string]any) map[string]any {
		return m["instances"].([]any)[0].(map[string]any)["tokens"].([]any)[0].(map[string]any)
	}
	for _, tc := range []struct {
		name, want string
		doc        []byte
	}{
		{"not JSON", "invalid character", []byte("{nope")},
		{"truncated", "unexpected end", doc[:len(doc)/2]},
		{"another format", `format "bpmn-engine"`, edit(func(m map[string]any) { m["format"] = "bpmn-engine" })},
		{"newer version", "version 4 is newer than this engine reads (3)", edit(func(m map[string]any) { m["version"] = 4 })},
		{"unknown field", `unknown field "extra"`, edit(func(m map[string]any) { m["extra"] = 1 })},
		{"token at an unknown element", `no element "nowhere"`, edit(func(m map[string]any) { token(m)["element"] = "nowhere" })},
		{"token in an unknown scope", "no scope 7", edit(func(m map[string]any) { token(m)["scope"] = 7 })},
		{"unknown wait point", `wait point "flying"`, edit(func(m map[string]any) { token(m)["track"].(map[string]any)["at"] = "flying" })},
		{"changed source", "the source has 0 executable processes", edit(func(m map[string]any) {
			d := m["deployments"].([]any)[0].(map[string]any)
			d["bpmn"] = strings.Replace(d["bpmn"].(string), `isExecutable="true"`, `isExecutable="false"`, 1)
		})},
		{"key counter behind", "lastKey 1 is below", edit(func(m map[string]any) { m["lastKey"] = 1 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := engine.Restore(tc.doc)
			require.Error(t, err)
			assert.Nil(t, r)
			assert.True(t, errors.Is(err, engine.ErrBadState), "%v does not wrap ErrBadState", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// FuzzRestore feeds Restore documents mutated from a real one: it must
// refuse what it cannot read with ErrBadState, never panic, and leave no
// goroutine behind (TestMain checks).
func FuzzRestore(f *testing.F) {
	ctx := context.Background()
	e, err := engine.New()
	if err != nil {
		f.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := e.Deploy("p.bpmn", []byte(twoStepsXML)); err != nil {
		f.Fatal(err)
	}
	if _, err := e.Start(ctx, "p", map[string]any{"key": "k1"}); err != nil {
		f.Fatal(err)
	}
	doc, err := e.Checkpoint(ctx)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	f.Add([]byte(`{"format":"flowtrack-state","version":1}`))
	f.Add([]byte(strings.Replace(string(doc), `"at":"waitState"`, `"at":"join"`, 1)))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, err := engine.Restore(doc, engine.WithResumption(engine.ResumeDirect))
		if err != nil {
			if !errors.Is(err, engine.ErrBadState) {
				t.Fatalf("error does not wrap ErrBadState: %v", err)
			}
			return
		}
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkCheckpoint measures a checkpoint of an engine holding 10,000
// instances parked on a job, and its restore, per instance.
func BenchmarkCheckpoint(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	for _, mode := range []engine.Resumption{engine.ResumeGoroutines, engine.ResumeDirect} {
		e, err := engine.New(engine.WithResumption(mode))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Deploy("p.bpmn", []byte(twoStepsXML)); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if _, err := e.Start(ctx, "p", map[string]any{"key": fmt.Sprint(i)}); err != nil {
				b.Fatal(err)
			}
		}
		var doc []byte
		b.Run(fmt.Sprintf("checkpoint/%d", mode), func(b *testing.B) {
			for b.Loop() {
				if doc, err = e.Checkpoint(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/instance")
			b.ReportMetric(float64(len(doc))/n, "bytes/instance")
		})
		b.Run(fmt.Sprintf("restore/%d", mode), func(b *testing.B) {
			for b.Loop() {
				r, err := engine.Restore(doc, engine.WithResumption(mode))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := r.Close(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/instance")
		})
		if err := e.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRestore_RealClockFiresOverdueTimers restores onto the real clock a
// state whose boundary timer fell due long ago: it fires at once.
func TestRestore_RealClockFiresOverdueTimers(t *testing.T) {
	ctx := ctxT(t)
	e, err := engine.New(engine.WithClock(clock.NewVirtual(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Close(context.Background())) })
	_, err = e.Deploy("p.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	inst, err := e.Start(ctx, "p", map[string]any{"key": "k1"})
	require.NoError(t, err)
	require.NoError(t, e.Settle(ctx))
	require.NoError(t, e.CompleteJob(ctx, oneJob(t, e, "a").Key, nil))
	doc, err := e.Checkpoint(ctx)
	require.NoError(t, err)
	doc = []byte(strings.Replace(string(doc), `"virtual":true`, `"virtual":false`, 1))

	r, err := engine.Restore(doc)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close(context.Background())) })
	got, ok := r.Instance(inst.Key())
	require.True(t, ok)
	st, err := got.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st)
	assert.Contains(t, completed(got), "late", "the overdue boundary timer fired")
}

func TestEngine_CheckpointInstance(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t)
	_, err := e.Deploy("p.bpmn", []byte(twoStepsXML))
	require.NoError(t, err)
	first, err := e.Start(ctx, "p", map[string]any{"key": "k1"})
	require.NoError(t, err)
	second, err := e.Start(ctx, "p", map[string]any{"key": "k2"})
	require.NoError(t, err)
	require.NoError(t, e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: "k2", TTL: time.Hour}))
	require.NoError(t, e.Settle(ctx))

	doc, err := e.CheckpointInstance(ctx, second.Key())
	require.NoError(t, err)
	r, err := engine.Restore(doc)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close(context.Background())) })
	_, ok := r.Instance(first.Key())
	assert.False(t, ok, "only the instance asked for moves")
	got, ok := r.Instance(second.Key())
	require.True(t, ok)
	assert.Equal(t, history(second), history(got))
	jobs := r.Jobs(engine.JobFilter{})
	require.Len(t, jobs, 1)
	assert.Equal(t, second.Key(), jobs[0].InstanceKey)
	for _, typ := range []string{"a", "b"} {
		require.NoError(t, r.CompleteJob(ctx, oneJob(t, r, typ).Key, nil))
		require.NoError(t, r.Settle(ctx))
	}
	toks, err := got.Tokens(ctx)
	require.NoError(t, err)
	assert.Equal(t, []engine.Token{{ID: 1, ElementID: "wait", Waiting: engine.WaitReason("message")}}, toks,
		"the buffered message stays with the engine it was published to")

	_, err = e.CheckpointInstance(ctx, 12345)
	assert.ErrorIs(t, err, engine.ErrUnknownInstance)
}

func TestEngine_CheckpointInstanceMovesTheCallTree(t *testing.T) {
	ctx := ctxT(t)
	e := newEngine(t)
	deploy(t, e, callDefs(``, ``))
	parent := start(t, e, map[string]any{"target": "child", "order": "o-1"})
	child := jobOf(t, e, "c").InstanceKey

	doc, err := e.CheckpointInstance(ctx, child) // the called instance brings its caller
	require.NoError(t, err)
	r, err := engine.Restore(doc)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close(context.Background())) })
	require.NoError(t, r.CompleteJob(ctx, oneJob(t, r, "c").Key, map[string]any{"result": 42}))
	got, ok := r.Instance(parent.Key())
	require.True(t, ok)
	st, err := got.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st)
	assert.Equal(t, 42.0, got.Variables()["result"])
}
