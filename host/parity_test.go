package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/host"
)

// driver is what the parity scenarios need from an engine: the native
// engine.Engine (settled after every call, as the module does) and
// host.Engine both implement it.
type driver interface {
	Deploy(name string, xml []byte) error
	Start(processID string, vars map[string]any) (int64, error)
	Jobs(f engine.JobFilter) ([]engine.Job, error)
	CompleteJob(key int64, vars map[string]any) error
	FailJob(key int64, retries int, msg string) error
	ThrowError(key int64, code, msg string, vars map[string]any) error
	Incidents() ([]engine.Incident, error)
	ResolveIncident(key int64) error
	PublishMessage(m engine.Message) error
	BroadcastSignal(name string, vars map[string]any) error
	Advance(d time.Duration) error
	Cancel(key int64) error
	Tokens(key int64) ([]engine.Token, error)
	History(key int64) ([]engine.Event, error)
	State(key int64) (engine.State, error)
	Variables(key int64) (map[string]any, error)
}

type nativeDriver struct {
	ctx context.Context
	e   *engine.Engine
}

func (d nativeDriver) settled(err error) error {
	if serr := d.e.Settle(d.ctx); err == nil {
		err = serr
	}
	return err
}
func (d nativeDriver) Deploy(name string, xml []byte) error {
	_, err := d.e.Deploy(name, xml)
	return err
}
func (d nativeDriver) Start(id string, vars map[string]any) (int64, error) {
	inst, err := d.e.Start(d.ctx, id, vars)
	if err != nil {
		return 0, err
	}
	return inst.Key(), d.settled(nil)
}
func (d nativeDriver) Jobs(f engine.JobFilter) ([]engine.Job, error) { return d.e.Jobs(f), nil }
func (d nativeDriver) CompleteJob(key int64, vars map[string]any) error {
	return d.settled(d.e.CompleteJob(d.ctx, key, vars))
}
func (d nativeDriver) FailJob(key int64, retries int, msg string) error {
	return d.settled(d.e.FailJob(d.ctx, key, retries, msg))
}
func (d nativeDriver) ThrowError(key int64, code, msg string, vars map[string]any) error {
	return d.settled(d.e.ThrowError(d.ctx, key, code, msg, vars))
}
func (d nativeDriver) Incidents() ([]engine.Incident, error) { return d.e.Incidents(d.ctx) }
func (d nativeDriver) ResolveIncident(key int64) error {
	return d.settled(d.e.ResolveIncident(d.ctx, key))
}
func (d nativeDriver) PublishMessage(m engine.Message) error {
	return d.settled(d.e.PublishMessage(d.ctx, m))
}
func (d nativeDriver) BroadcastSignal(name string, vars map[string]any) error {
	return d.settled(d.e.BroadcastSignal(d.ctx, name, vars))
}
func (d nativeDriver) Advance(dur time.Duration) error { return d.settled(d.e.Advance(d.ctx, dur)) }
func (d nativeDriver) instance(key int64) (*engine.Instance, error) {
	inst, ok := d.e.Instance(key)
	if !ok {
		return nil, fmt.Errorf("%w %d", host.ErrUnknownInstance, key)
	}
	return inst, nil
}
func (d nativeDriver) Cancel(key int64) error {
	inst, err := d.instance(key)
	if err != nil {
		return err
	}
	return d.settled(inst.Cancel(d.ctx))
}
func (d nativeDriver) Tokens(key int64) ([]engine.Token, error) {
	inst, err := d.instance(key)
	if err != nil {
		return nil, err
	}
	return inst.Tokens(d.ctx)
}
func (d nativeDriver) History(key int64) ([]engine.Event, error) {
	inst, err := d.instance(key)
	if err != nil {
		return nil, err
	}
	return inst.History(d.ctx)
}
func (d nativeDriver) State(key int64) (engine.State, error) {
	inst, err := d.instance(key)
	if err != nil {
		return "", err
	}
	return inst.State(), nil
}
func (d nativeDriver) Variables(key int64) (map[string]any, error) {
	inst, err := d.instance(key)
	if err != nil {
		return nil, err
	}
	return inst.Variables(), nil
}

type hostDriver struct {
	ctx context.Context
	e   *host.Engine
}

func (d hostDriver) Deploy(name string, xml []byte) error {
	_, err := d.e.Deploy(d.ctx, name, xml)
	return err
}
func (d hostDriver) Start(id string, vars map[string]any) (int64, error) {
	return d.e.Start(d.ctx, id, vars)
}
func (d hostDriver) Jobs(f engine.JobFilter) ([]engine.Job, error) { return d.e.Jobs(d.ctx, f) }
func (d hostDriver) CompleteJob(key int64, vars map[string]any) error {
	return d.e.CompleteJob(d.ctx, key, vars)
}
func (d hostDriver) FailJob(key int64, retries int, msg string) error {
	return d.e.FailJob(d.ctx, key, retries, msg)
}
func (d hostDriver) ThrowError(key int64, code, msg string, vars map[string]any) error {
	return d.e.ThrowError(d.ctx, key, code, msg, vars)
}
func (d hostDriver) Incidents() ([]engine.Incident, error)    { return d.e.Incidents(d.ctx) }
func (d hostDriver) ResolveIncident(key int64) error          { return d.e.ResolveIncident(d.ctx, key) }
func (d hostDriver) PublishMessage(m engine.Message) error    { return d.e.PublishMessage(d.ctx, m) }
func (d hostDriver) Advance(dur time.Duration) error          { return d.e.Advance(d.ctx, dur) }
func (d hostDriver) Cancel(key int64) error                   { return d.e.Cancel(d.ctx, key) }
func (d hostDriver) Tokens(key int64) ([]engine.Token, error) { return d.e.Tokens(d.ctx, key) }
func (d hostDriver) History(key int64) ([]engine.Event, error) {
	return d.e.History(d.ctx, key)
}
func (d hostDriver) State(key int64) (engine.State, error) { return d.e.State(d.ctx, key) }
func (d hostDriver) Variables(key int64) (map[string]any, error) {
	return d.e.Variables(d.ctx, key)
}
func (d hostDriver) BroadcastSignal(name string, vars map[string]any) error {
	return d.e.BroadcastSignal(d.ctx, name, vars)
}

// transcript records what a scenario observed, in a form both engines must
// produce identically.
type transcript struct {
	t     *testing.T
	d     driver
	steps []string
	keys  []int64
}

func (tr *transcript) note(format string, args ...any) {
	tr.steps = append(tr.steps, fmt.Sprintf(format, args...))
}

// check records an error (or its absence) as a step.
func (tr *transcript) check(what string, err error) {
	if err != nil {
		tr.note("%s: error %v", what, err)
		return
	}
	tr.note("%s: ok", what)
}

func (tr *transcript) deploy(name string) {
	tr.check("deploy "+name, tr.d.Deploy(name, readFile(tr.t, name)))
}

func (tr *transcript) start(id string, vars map[string]any) int64 {
	key, err := tr.d.Start(id, vars)
	tr.check("start "+id, err)
	if err == nil {
		tr.keys = append(tr.keys, key)
	}
	return key
}

// work completes every open job, answering each type with results[type].
func (tr *transcript) work(results map[string]map[string]any) {
	for range 100 {
		jobs, err := tr.d.Jobs(engine.JobFilter{})
		require.NoError(tr.t, err)
		if len(jobs) == 0 {
			return
		}
		sort.Slice(jobs, func(i, j int) bool { return jobs[i].ElementID < jobs[j].ElementID })
		for _, j := range jobs {
			tr.check("complete "+j.ElementID, tr.d.CompleteJob(j.Key, results[j.Type]))
		}
	}
	tr.t.Fatal("jobs never ran out")
}

func (tr *transcript) job(elementID string) engine.Job {
	jobs, err := tr.d.Jobs(engine.JobFilter{ElementID: elementID})
	require.NoError(tr.t, err)
	require.Len(tr.t, jobs, 1, "jobs at %s", elementID)
	return jobs[0]
}

// parityScenarios are the native engine's end-to-end scenarios.
var parityScenarios = []struct {
	name string
	run  func(tr *transcript)
}{
	{"decimals", func(tr *transcript) {
		xml, err := os.ReadFile("../engine/testdata/decimals.bpmn")
		require.NoError(tr.t, err)
		tr.check("deploy decimals", tr.d.Deploy("decimals.bpmn", xml))
		tr.start("decimals", map[string]any{"big": json.Number("12345678901234567890")})
		j := tr.job("work")
		tr.note("job variables %#v", j.Variables)
		tr.check("complete", tr.d.CompleteJob(j.Key, map[string]any{"paid": json.Number("98765432109876543210.5"), "n": uint64(1 << 63)}))
		tr.check("publish", tr.d.PublishMessage(engine.Message{Name: "paid", CorrelationKey: "12345678901234567891",
			Variables: map[string]any{"fee": json.Number("0.10000000000000000001")}}))
	}},
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
		tr.check("fail with retries", tr.d.FailJob(j.Key, 1, "flaky"))
		j = tr.job("Task_check")
		tr.note("retries %d message %q", j.Retries, j.ErrorMessage)
		tr.check("fail finally", tr.d.FailJob(j.Key, 0, "down"))
		incs, err := tr.d.Incidents()
		require.NoError(tr.t, err)
		require.Len(tr.t, incs, 1)
		tr.note("incident at %s: %s", incs[0].ElementID, incs[0].Message)
		tr.check("resolve", tr.d.ResolveIncident(incs[0].Key))
		tr.work(nil)
	}},
	{"uncaught BPMN error", func(tr *transcript) {
		tr.deploy("order.bpmn")
		tr.start("order", map[string]any{"amount": 40})
		tr.check("throw", tr.d.ThrowError(tr.job("Task_check").Key, "INVALID", "bad order", map[string]any{"why": "x"}))
		incs, err := tr.d.Incidents()
		require.NoError(tr.t, err)
		tr.note("incidents %d", len(incs))
	}},
	{"cancel", func(tr *transcript) {
		tr.deploy("order.bpmn")
		key := tr.start("order", map[string]any{"amount": 40})
		tr.check("cancel", tr.d.Cancel(key))
		tr.check("cancel again", tr.d.Cancel(key))
		tr.check("complete cancelled", tr.d.CompleteJob(999, nil))
	}},
	{"timer", func(tr *transcript) {
		tr.deploy("timer.bpmn")
		tr.start("timer", nil)
		tr.check("advance 500ms", tr.d.Advance(500*time.Millisecond))
		tr.check("advance 500ms", tr.d.Advance(500*time.Millisecond))
	}},
	{"message", func(tr *transcript) {
		tr.deploy("message.bpmn")
		tr.start("message", map[string]any{"key": "k1"})
		tr.start("message", map[string]any{"key": "k2"})
		tr.check("publish k2", tr.d.PublishMessage(engine.Message{Name: "go", CorrelationKey: "k2", Variables: map[string]any{"n": 2}}))
		tr.check("publish k3 buffered", tr.d.PublishMessage(engine.Message{Name: "go", CorrelationKey: "k3", TTL: time.Minute, MessageID: "m3"}))
		tr.check("publish k3 again", tr.d.PublishMessage(engine.Message{Name: "go", CorrelationKey: "k3", TTL: time.Minute, MessageID: "m3"}))
		tr.start("message", map[string]any{"key": "k3"})
		tr.check("publish k1", tr.d.PublishMessage(engine.Message{Name: "go", CorrelationKey: "k1"}))
	}},
	{"event gateway arms", func(tr *transcript) {
		tr.deploy("gateway.bpmn")
		tr.start("gateway", map[string]any{"key": "m"})
		tr.start("gateway", map[string]any{"key": "s"})
		tr.start("gateway", map[string]any{"key": "t"})
		tr.check("message", tr.d.PublishMessage(engine.Message{Name: "go", CorrelationKey: "m"}))
		tr.check("signal", tr.d.BroadcastSignal("stop", map[string]any{"by": "test"}))
		tr.check("advance", tr.d.Advance(2*time.Hour))
	}},
	{"invalid model", func(tr *transcript) {
		tr.check("deploy malformed", tr.d.Deploy("bad.bpmn", []byte(`<bpmn:definitions`)))
		tr.check("deploy dangling", tr.d.Deploy("dangling.bpmn", []byte(process(`<bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="nowhere"/>`))))
		_, err := tr.d.Start("p", nil)
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
		st, err := tr.d.State(key)
		require.NoError(tr.t, err)
		vars, err := tr.d.Variables(key)
		require.NoError(tr.t, err)
		toks, err := tr.d.Tokens(key)
		require.NoError(tr.t, err)
		if len(toks) == 0 {
			toks = nil // a finished instance has none, however encoded
		}
		hist, err := tr.d.History(key)
		require.NoError(tr.t, err)
		out[fmt.Sprint(key)] = map[string]any{"state": st, "variables": vars, "tokens": toks, "history": normalize(hist)}
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
			nat, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
			require.NoError(t, err)
			t.Cleanup(func() { _ = nat.Close(context.Background()) })
			ntr := &transcript{t: t, d: nativeDriver{ctx, nat}}
			sc.run(ntr)
			want := ntr.finish()

			htr := &transcript{t: t, d: hostDriver{ctx, newHost(t)}}
			sc.run(htr)
			got := htr.finish()
			assert.Equal(t, want, got)
			assert.NotEmpty(t, ntr.steps)
		})
	}
}
