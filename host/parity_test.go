package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/conformance"
	"github.com/flowtrack/flowtrack/engine"
)

// transcript records what a scenario observed, in a form both engines must
// produce identically.
// It drives the engine through a conformance.Runner, the one adapter that
// addresses native instances by key, and settles after every operation as
// the module does inside each call.
type transcript struct {
	t     *testing.T
	ctx   context.Context
	r     conformance.Runner
	steps []string
	keys  []int64
}

func (tr *transcript) note(format string, args ...any) {
	tr.steps = append(tr.steps, fmt.Sprintf(format, args...))
}

// check records an error (or its absence) as a step, once the engine has
// settled.
func (tr *transcript) check(what string, err error) {
	require.NoError(tr.t, tr.r.Settle(tr.ctx))
	if err != nil {
		tr.note("%s: error %v", what, err)
		return
	}
	tr.note("%s: ok", what)
}

func (tr *transcript) deploy(name string) {
	tr.check("deploy "+name, tr.r.Deploy(tr.ctx, name, readFile(tr.t, name)))
}

func (tr *transcript) start(id string, vars map[string]any) int64 {
	key, err := tr.r.Start(tr.ctx, id, vars)
	tr.check("start "+id, err)
	if err == nil {
		tr.keys = append(tr.keys, key)
	}
	return key
}

// work completes every open job, answering each type with results[type].
func (tr *transcript) work(results map[string]map[string]any) {
	for range 100 {
		jobs, err := tr.r.Jobs(tr.ctx)
		require.NoError(tr.t, err)
		if len(jobs) == 0 {
			return
		}
		sort.Slice(jobs, func(i, j int) bool { return jobs[i].ElementID < jobs[j].ElementID })
		for _, j := range jobs {
			tr.check("complete "+j.ElementID, tr.r.CompleteJob(tr.ctx, j.Key, results[j.Type]))
		}
	}
	tr.t.Fatal("jobs never ran out")
}

func (tr *transcript) job(elementID string) engine.Job {
	all, err := tr.r.Jobs(tr.ctx)
	require.NoError(tr.t, err)
	var jobs []engine.Job
	for _, j := range all {
		if j.ElementID == elementID {
			jobs = append(jobs, j)
		}
	}
	require.Len(tr.t, jobs, 1, "jobs at %s", elementID)
	return jobs[0]
}

// parityScenarios are the native engine's end-to-end scenarios.
var parityScenarios = []struct {
	name string
	run  func(tr *transcript)
}{
	{"order small", func(tr *transcript) {
		tr.deploy("order.bpmn")
		tr.start("order", map[string]any{"amount": 40})
		tr.work(map[string]map[string]any{"check-order": {"valid": true}, "charge-payment": {"paid": true}})
	}},
	{"order large with approval", func(tr *transcript) {
		tr.deploy("order.bpmn")
		tr.start("order", map[string]any{"amount": 400, "customer": map[string]any{"name": "ana", "tags": []any{"vip", 1}}})
		tr.work(map[string]map[string]any{"check-order": {"valid": true}, "userTask": {"approvedBy": "ana"}})
	}},
	{"failed job retries then incident resolved", func(tr *transcript) {
		tr.deploy("order.bpmn")
		tr.start("order", map[string]any{"amount": 40})
		j := tr.job("Task_check")
		tr.check("fail with retries", tr.r.FailJob(tr.ctx, j.Key, 1, "flaky"))
		j = tr.job("Task_check")
		tr.note("retries %d message %q", j.Retries, j.ErrorMessage)
		tr.check("fail finally", tr.r.FailJob(tr.ctx, j.Key, 0, "down"))
		incs, err := tr.r.Incidents(tr.ctx)
		require.NoError(tr.t, err)
		require.Len(tr.t, incs, 1)
		tr.note("incident at %s: %s", incs[0].ElementID, incs[0].Message)
		tr.check("resolve", tr.r.ResolveIncident(tr.ctx, incs[0].Key))
		tr.work(nil)
	}},
	{"uncaught BPMN error", func(tr *transcript) {
		tr.deploy("order.bpmn")
		tr.start("order", map[string]any{"amount": 40})
		tr.check("throw", tr.r.ThrowError(tr.ctx, tr.job("Task_check").Key, "INVALID", "bad order", map[string]any{"why": "x"}))
		incs, err := tr.r.Incidents(tr.ctx)
		require.NoError(tr.t, err)
		tr.note("incidents %d", len(incs))
	}},
	{"cancel", func(tr *transcript) {
		tr.deploy("order.bpmn")
		key := tr.start("order", map[string]any{"amount": 40})
		tr.check("cancel", tr.r.Cancel(tr.ctx, key))
		tr.check("cancel again", tr.r.Cancel(tr.ctx, key))
		tr.check("complete cancelled", tr.r.CompleteJob(tr.ctx, 999, nil))
	}},
	{"timer", func(tr *transcript) {
		tr.deploy("timer.bpmn")
		tr.start("timer", nil)
		tr.check("advance 500ms", tr.r.Advance(tr.ctx, 500*time.Millisecond))
		tr.check("advance 500ms", tr.r.Advance(tr.ctx, 500*time.Millisecond))
	}},
	{"message", func(tr *transcript) {
		tr.deploy("message.bpmn")
		tr.start("message", map[string]any{"key": "k1"})
		tr.start("message", map[string]any{"key": "k2"})
		tr.check("publish k2", tr.r.PublishMessage(tr.ctx, conformance.Message{Name: "go", CorrelationKey: "k2", Variables: map[string]any{"n": 2}}))
		tr.check("publish k3 buffered", tr.r.PublishMessage(tr.ctx, conformance.Message{Name: "go", CorrelationKey: "k3", TTL: time.Minute, MessageID: "m3"}))
		tr.check("publish k3 again", tr.r.PublishMessage(tr.ctx, conformance.Message{Name: "go", CorrelationKey: "k3", TTL: time.Minute, MessageID: "m3"}))
		tr.start("message", map[string]any{"key": "k3"})
		tr.check("publish k1", tr.r.PublishMessage(tr.ctx, conformance.Message{Name: "go", CorrelationKey: "k1"}))
	}},
	{"event gateway arms", func(tr *transcript) {
		tr.deploy("gateway.bpmn")
		tr.start("gateway", map[string]any{"key": "m"})
		tr.start("gateway", map[string]any{"key": "s"})
		tr.start("gateway", map[string]any{"key": "t"})
		tr.check("message", tr.r.PublishMessage(tr.ctx, conformance.Message{Name: "go", CorrelationKey: "m"}))
		tr.check("signal", tr.r.BroadcastSignal(tr.ctx, "stop", map[string]any{"by": "test"}))
		tr.check("advance", tr.r.Advance(tr.ctx, 2*time.Hour))
	}},
	{"invalid model", func(tr *transcript) {
		tr.check("deploy malformed", tr.r.Deploy(tr.ctx, "bad.bpmn", []byte(`<bpmn:definitions`)))
		tr.check("deploy dangling", tr.r.Deploy(tr.ctx, "dangling.bpmn", []byte(process(`<bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="nowhere"/>`))))
		_, err := tr.r.Start(tr.ctx, "p", nil)
		tr.check("start rejected", err)
	}},
}

// normalize makes an instance's events comparable across engines.
// Everything stays, time included (both clocks are virtual from
// clock.Epoch), except two things the native engine's goroutines decide:
// the interleaving of parallel tokens' records (records are grouped by
// token, keeping each token's order), and so the order in which parallel
// branches draw job and incident keys (a key becomes the element and the
// occurrence that created it, e.g. "Task_charge#1").
func normalize(evs []engine.Event) []string {
	labels := map[string]string{}
	seen := map[string]int{}
	label := func(kind string, key int64, elementID string) any {
		if key == 0 {
			return nil
		}
		id := fmt.Sprint(kind, key)
		if l, ok := labels[id]; ok {
			return l
		}
		seen[kind+elementID]++
		labels[id] = fmt.Sprintf("%s#%d", elementID, seen[kind+elementID])
		return labels[id]
	}
	byToken := map[int][]string{}
	var ids []int
	for _, ev := range evs {
		ev.Seq = 0
		data, _ := json.Marshal(ev)
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		if l := label("job", ev.JobKey, ev.ElementID); l != nil {
			m["jobKey"] = l
		}
		if l := label("incident", ev.IncidentKey, ev.ElementID); l != nil {
			m["incidentKey"] = l
		}
		data, _ = json.Marshal(m) // map keys sorted
		if _, ok := byToken[ev.TokenID]; !ok {
			ids = append(ids, ev.TokenID)
		}
		byToken[ev.TokenID] = append(byToken[ev.TokenID], string(data))
	}
	sort.Ints(ids)
	var out []string
	for _, id := range ids {
		out = append(out, byToken[id]...)
	}
	return out
}

func (tr *transcript) finish() map[string]any {
	out := map[string]any{"steps": tr.steps}
	for _, key := range tr.keys {
		snap, err := tr.r.Snapshot(tr.ctx, key)
		require.NoError(tr.t, err)
		toks := snap.Tokens
		if len(toks) == 0 {
			toks = nil // a finished instance has none, however encoded
		}
		out[fmt.Sprint(key)] = map[string]any{"state": snap.State, "variables": snap.Variables, "tokens": toks, "history": normalize(snap.History)}
	}
	return out
}

// TestParity runs every scenario through the native engine and through the
// wasm module in wazero, and requires identical transcripts: steps, errors,
// keys, states, variables, tokens and event histories.
func TestParity(t *testing.T) {
	for _, sc := range parityScenarios {
		t.Run(sc.name, func(t *testing.T) {
			ctx := ctxT(t)
			nat, err := conformance.NewNative()
			require.NoError(t, err)
			t.Cleanup(func() { _ = nat.Close(context.Background()) })
			ntr := &transcript{t: t, ctx: ctx, r: nat}
			sc.run(ntr)
			want := ntr.finish()

			h, err := conformance.NewHost()
			require.NoError(t, err)
			t.Cleanup(func() { _ = h.Close(context.Background()) })
			htr := &transcript{t: t, ctx: ctx, r: h}
			sc.run(htr)
			got := htr.finish()
			assert.Equal(t, want, got)
			assert.NotEmpty(t, ntr.steps)
		})
	}
}
