package extism_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/extism/go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
	"github.com/flowtrack/flowtrack/host/extism"
)

// pluginFile is where make wasm (go generate ./host) writes the plug-in.
const pluginFile = "../flowtrack.extism.wasm"

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var pluginWasm = sync.OnceValues(func() ([]byte, error) {
	b, err := os.ReadFile(pluginFile)
	if err != nil {
		return nil, errors.New("the Extism plug-in is not built: run `make wasm` (or `go generate ./host`): " + err.Error())
	}
	return b, nil
})

// compiled is the plug-in compiled once for the test binary.
var compiled = sync.OnceValues(func() (*extism.Plugin, error) {
	b, err := pluginWasm()
	if err != nil {
		return nil, err
	}
	return extism.Compile(context.Background(), b)
})

func newExtism(t testing.TB, opts ...host.Option) *host.Engine {
	t.Helper()
	p, err := compiled()
	require.NoError(t, err)
	e, err := p.New(ctxT(t), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func newHost(t testing.TB) *host.Engine {
	t.Helper()
	e, err := host.New(ctxT(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/" + name)
	require.NoError(t, err)
	return b
}

// TestExtism_OrderProcess runs the order process through the plug-in in
// the Extism Go SDK with events on: jobs, tokens, the final state and the
// event stream are what the module of ABI.md gives in wazero.
func TestExtism_OrderProcess(t *testing.T) {
	ctx := ctxT(t)
	var streams [2][]engine.Event
	var states [2]*host.InstanceInfo
	for i, e := range []*host.Engine{newExtism(t), newHost(t)} {
		e.Subscribe(func(ev engine.Event) { streams[i] = append(streams[i], ev) })
		_, err := e.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
		require.NoError(t, err)
		key, err := e.Start(ctx, "order", map[string]any{"amount": 250})
		require.NoError(t, err)
		toks, err := e.Tokens(ctx, key)
		require.NoError(t, err)
		require.Len(t, toks, 1)
		assert.Equal(t, engine.WaitReason("job"), toks[0].Waiting)
		for range 10 {
			jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: key})
			require.NoError(t, err)
			if len(jobs) == 0 {
				break
			}
			for _, j := range jobs {
				require.NoError(t, e.CompleteJob(ctx, j.Key, map[string]any{"done": j.Type}))
			}
		}
		states[i], err = e.Instance(ctx, key)
		require.NoError(t, err)
	}
	assert.Equal(t, engine.Completed, states[0].State)
	assert.Equal(t, states[1], states[0])
	require.NotEmpty(t, streams[0])
	assert.Equal(t, streams[1], streams[0])
}

// TestExtism_ErrorCodes sends bad and failing requests to every kind of
// operation through both builds: each gets the same error code and
// message, and the plug-in keeps working.
func TestExtism_ErrorCodes(t *testing.T) {
	ctx := ctxT(t)
	cases := []struct{ op, req, code string }{
		{"start", `{"processId":`, "BAD_REQUEST"},
		{"start", `{"PROCESSID":"order"}`, "BAD_REQUEST"},
		{"start", `{"processId":"order","variables":{"a":1,"a":2}}`, "BAD_REQUEST"},
		{"start", `{"processId":"order","variables":{"deep":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`, "BAD_VARIABLES"},
		{"start", `[]`, "BAD_REQUEST"},
		{"start", `{"processId":"nope"}`, "UNKNOWN_PROCESS"},
		{"deploy", `{"name":"bad.bpmn","xml":"<definitions/>"}`, "DEPLOY_FAILED"},
		{"deploy", `{"xml":"x","xmlBase64":"eA=="}`, "BAD_REQUEST"},
		{"complete_job", `{"jobKey":999}`, "UNKNOWN_JOB"},
		{"fail_job", `{"jobKey":999,"retries":0}`, "UNKNOWN_JOB"},
		{"resolve_incident", `{"incidentKey":999}`, "UNKNOWN_INCIDENT"},
		{"instance", `{"instanceKey":999}`, "UNKNOWN_INSTANCE"},
		{"cancel", `{"instanceKey":999}`, "UNKNOWN_INSTANCE"},
		{"advance", `{"byMs":-1}`, "BAD_REQUEST"},
		{"advance", `{"to":"2262-04-12T00:00:00Z"}`, "TIME_OUT_OF_RANGE"},
		{"publish_message", `{"name":"m","messageId":"x","ttlMs":1000}`, ""},
		{"publish_message", `{"name":"m","messageId":"x","ttlMs":1000}`, "DUPLICATE_MESSAGE"},
		{"call", `{"op":"nope"}`, "UNKNOWN_OPERATION"},
		{"restore", `{"state":{"format":"other","version":1}}`, "BAD_STATE"},
		{"checkpoint", `{}`, ""},
		{"configure", `{"limits":{"maxSteps":-1}}`, "BAD_REQUEST"},
	}
	engines := []*host.Engine{newExtism(t), newHost(t)}
	var got [2][]string
	for i, e := range engines {
		for _, c := range cases {
			_, err := e.Call(ctx, c.op, []byte(c.req))
			var he *host.Error
			var de *engine.DeployError
			switch {
			case c.code == "":
				require.NoError(t, err, "%s %s", c.op, c.req)
				got[i] = append(got[i], "ok")
				continue
			case errors.As(err, &de):
				assert.Equal(t, "DEPLOY_FAILED", c.code, "%s %s: %v", c.op, c.req, err)
			case errors.As(err, &he):
				assert.Equal(t, c.code, he.Code, "%s %s: %v", c.op, c.req, err)
			default:
				t.Fatalf("%s %s: want an error response with code %s, got %v", c.op, c.req, c.code, err)
			}
			got[i] = append(got[i], err.Error())
		}
		require.NoError(t, e.Trapped())
	}
	assert.Equal(t, got[1], got[0], "the same messages through both builds")

	// An over-limit request is refused by its size alone.
	_, err := engines[0].Call(ctx, "start", make([]byte, host.MaxRequest+1))
	require.ErrorIs(t, err, host.ErrBadRequest)
	assert.Contains(t, err.Error(), "exceeds the limit")

	// Still usable afterwards.
	_, err = engines[0].Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
	_, err = engines[0].Start(ctx, "order", map[string]any{"amount": 1})
	require.NoError(t, err)
}

// TestExtism_ClockAndSettle checks the clock rules of ABI.md through the
// plug-in: time is virtual, moves only through advance, and every
// response says when the next timer is due.
func TestExtism_ClockAndSettle(t *testing.T) {
	ctx := ctxT(t)
	e := newExtism(t)
	_, err := e.Deploy(ctx, "order-payment.bpmn", readFile(t, "order-payment.bpmn"))
	require.NoError(t, err)
	key, err := e.Start(ctx, "payment", map[string]any{"orderId": "A-1", "amount": 10})
	require.NoError(t, err)
	jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: key})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.NoError(t, e.CompleteJob(ctx, jobs[0].Key, nil))
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, epoch, e.Now())
	due, ok := e.NextDeadline()
	require.True(t, ok, "the 24-hour timer is pending")
	assert.Equal(t, epoch.Add(24*time.Hour), due)
	require.NoError(t, e.Advance(ctx, 24*time.Hour))
	toks, err := e.Tokens(ctx, key)
	require.NoError(t, err)
	require.Len(t, toks, 1)
	assert.Equal(t, "Task_call", toks[0].ElementID, "the timer fired and the engine settled within the call")
	_, ok = e.NextDeadline()
	assert.False(t, ok)
}

// TestExtism_Trap: a plug-in that traps is discarded, never called again.
func TestExtism_Trap(t *testing.T) {
	ctx := ctxT(t)
	e := newExtism(t)
	require.ErrorIs(t, e.DebugTrap(ctx), host.ErrTrapped)
	_, err := e.Start(ctx, "order", nil)
	require.ErrorIs(t, err, host.ErrTrapped)
	// A fresh Engine from the same compiled plug-in works.
	e2 := newExtism(t)
	_, err = e2.Deploy(ctx, "order.bpmn", readFile(t, "order.bpmn"))
	require.NoError(t, err)
}

// TestExtism_RawSDK calls the plug-in the way every Extism host does, with
// no flowtrack code on the host side: the JSON request in, the envelope
// out, exit code 0 for error responses too.
func TestExtism_RawSDK(t *testing.T) {
	ctx := ctxT(t)
	wasm, err := pluginWasm()
	require.NoError(t, err)
	// The disk cache Compile uses: compiling the plug-in anew takes
	// minutes under -race.
	dir, err := os.UserCacheDir()
	require.NoError(t, err)
	cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "flowtrack", "wazero"))
	require.NoError(t, err)
	config := sdk.PluginConfig{EnableWasi: true, RuntimeConfig: wazero.NewRuntimeConfigCompiler().WithCompilationCache(cache)}
	p, err := sdk.NewPlugin(ctx, sdk.Manifest{Wasm: []sdk.Wasm{sdk.WasmData{Data: wasm}}}, config, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	req, err := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(readFile(t, "order.bpmn"))})
	require.NoError(t, err)
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *host.Error     `json:"error"`
		Events []engine.Event  `json:"events"`
		Now    string          `json:"now"`
	}
	rc, out, err := p.Call("deploy", req)
	require.NoError(t, err)
	require.Zero(t, rc)
	require.NoError(t, json.Unmarshal(out, &env))
	assert.True(t, env.OK)
	assert.JSONEq(t, `{"name":"order.bpmn","processes":[{"id":"order","name":"Order","key":1,"version":1}]}`, string(env.Result))

	rc, out, err = p.Call("start", nil) // no input is {}: processId is missing
	require.NoError(t, err)
	require.Zero(t, rc)
	require.NoError(t, json.Unmarshal(out, &env))
	assert.False(t, env.OK)
	require.NotNil(t, env.Error)
	assert.Equal(t, "BAD_REQUEST", env.Error.Code)
	assert.Equal(t, "2026-01-01T00:00:00Z", env.Now)

	rc, out, err = p.Call("start", []byte(`{"processId":"order","variables":{"amount":5}}`))
	require.NoError(t, err)
	require.Zero(t, rc)
	env.Error = nil
	require.NoError(t, json.Unmarshal(out, &env))
	assert.True(t, env.OK)
	assert.JSONEq(t, `{"instanceKey":2,"state":"active","jobs":[{"key":3,"type":"check-order","processId":"order","elementId":"Task_check",`+
		`"instanceKey":2,"retries":2,"headers":{"team":"orders"},"variables":{"amount":5},"created":"2026-01-01T00:00:00Z"}]}`, string(env.Result))
	require.NotEmpty(t, env.Events, "events are on by default")
	assert.Equal(t, engine.InstanceStarted, env.Events[0].Type)
}

// TestExtism_Limits: host.WithLimits reaches the plug-in's engine, which
// refuses a negative limit as the module of ABI.md does.
func TestExtism_Limits(t *testing.T) {
	p, err := compiled()
	require.NoError(t, err)
	_, err = p.New(ctxT(t), host.WithLimits(engine.Limits{MaxSteps: -1}))
	require.ErrorIs(t, err, host.ErrBadRequest)
	assert.Contains(t, err.Error(), "limits.maxSteps (-1): must not be negative")
}
