package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/host"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// badInput is one case of testdata/bad-input.json, which the SDK's tests
// read too (sdk-js/test/bad-input.test.mjs).
type badInput struct {
	Name string          `json:"name"`
	Call string          `json:"call"`
	Args json.RawMessage `json:"args"`
	Raw  *struct {
		Op      string          `json:"op"`
		Request json.RawMessage `json:"request"`
	} `json:"raw"`
	Code wire.Code         `json:"code"`
	Skip map[string]string `json:"skip"`
}

// badArgs are the arguments of the calls the cases make.
type badArgs struct {
	Name      string         `json:"name"`
	XML       string         `json:"xml"`
	ProcessID string         `json:"processId"`
	JobKey    int64          `json:"jobKey"`
	Retries   int            `json:"retries"`
	ErrorCode string         `json:"errorCode"`
	Ms        float64        `json:"ms"`
	Variables map[string]any `json:"variables"`
	Message   struct {
		Name      string         `json:"name"`
		TTL       float64        `json:"ttl"`
		Variables map[string]any `json:"variables"`
	} `json:"message"`
}

// surface is what both Go engines offer for the cases.
type surface interface {
	Deploy(ctx context.Context, name string, bpmn []byte) error
	Start(ctx context.Context, processID string, vars map[string]any) error
	PublishMessage(ctx context.Context, m engine.Message) error
	BroadcastSignal(ctx context.Context, name string, vars map[string]any) error
	CompleteJob(ctx context.Context, key int64, vars map[string]any) error
	FailJob(ctx context.Context, key int64, retries int, message string) error
	ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any) error
	Advance(ctx context.Context, d time.Duration) error
}

type nativeSurface struct{ *engine.Engine }

func (n nativeSurface) Deploy(_ context.Context, name string, bpmn []byte) error {
	_, err := n.Engine.Deploy(name, bpmn)
	return err
}

func (n nativeSurface) Start(ctx context.Context, processID string, vars map[string]any) error {
	_, err := n.Engine.Start(ctx, processID, vars)
	return err
}

type hostSurface struct{ *host.Engine }

func (h hostSurface) Deploy(ctx context.Context, name string, bpmn []byte) error {
	_, err := h.Engine.Deploy(ctx, name, bpmn)
	return err
}

func (h hostSurface) Start(ctx context.Context, processID string, vars map[string]any) error {
	_, err := h.Engine.Start(ctx, processID, vars)
	return err
}

// TestBadInput_OneCodeEverywhere sends each bad input of
// testdata/bad-input.json through the native engine and the Go host and
// checks that both fail with the case's code: the host's *host.Error
// carries it, and both errors match the code's sentinel (wire.Codes).
func TestBadInput_OneCodeEverywhere(t *testing.T) {
	data, err := os.ReadFile("testdata/bad-input.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []badInput `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	native, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		t.Fatal(err)
	}
	defer native.Close(context.Background())
	h, err := host.New(context.Background()) // compiling may outlast a call's timeout under -race
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	surfaces := map[string]surface{"native": nativeSurface{native}, "host": hostSurface{h}}
	for _, c := range file.Cases {
		for _, name := range []string{"native", "host"} {
			t.Run(c.Name+"/"+name, func(t *testing.T) {
				if why, ok := c.Skip[name]; ok {
					t.Skip(why)
				}
				var err error
				if c.Raw != nil && name == "host" {
					_, err = h.Call(ctx, c.Raw.Op, c.Raw.Request)
				} else {
					err = badCall(ctx, surfaces[name], c)
				}
				checkCode(t, err, c.Code)
			})
		}
	}
}

func badCall(ctx context.Context, s surface, c badInput) error {
	var a badArgs
	if err := json.Unmarshal(c.Args, &a); err != nil {
		return err
	}
	vars := badValues(a.Variables)
	switch c.Call {
	case "deploy":
		return s.Deploy(ctx, "bad.bpmn", []byte(a.XML))
	case "start":
		return s.Start(ctx, a.ProcessID, vars)
	case "publishMessage":
		return s.PublishMessage(ctx, engine.Message{Name: a.Message.Name, Variables: badValues(a.Message.Variables),
			TTL: time.Duration(a.Message.TTL * float64(time.Millisecond))})
	case "broadcastSignal":
		return s.BroadcastSignal(ctx, a.Name, vars)
	case "completeJob":
		return s.CompleteJob(ctx, a.JobKey, vars)
	case "failJob":
		return s.FailJob(ctx, a.JobKey, a.Retries, "")
	case "throwError":
		return s.ThrowError(ctx, a.JobKey, a.ErrorCode, "", vars)
	case "advanceTime":
		return s.Advance(ctx, time.Duration(a.Ms*float64(time.Millisecond)))
	}
	return errors.New("unknown call " + c.Call)
}

// badValues replaces each {"$value": name} in vars by the Go value it
// names.
func badValues(vars map[string]any) map[string]any {
	for k, v := range vars {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		switch m["$value"] {
		case "nan":
			vars[k] = math.NaN()
		case "infinity":
			vars[k] = math.Inf(1)
		case "cycle":
			cycle := map[string]any{}
			cycle["self"] = cycle
			vars[k] = cycle
		case "function":
			vars[k] = func() {}
		case "deep":
			var deep any = 1.0
			for range engine.MaxVariableDepth + 1 {
				deep = []any{deep}
			}
			vars[k] = deep
		}
	}
	return vars
}

// checkCode checks that err reports code: as a *host.Error's code, and as
// the sentinel wire.Codes gives the code (a deploy error unwraps to its
// problems instead).
func checkCode(t *testing.T, err error, code wire.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	var he *host.Error
	if errors.As(err, &he) && wire.Code(he.Code) != code {
		t.Errorf("code %s, want %s: %v", he.Code, code, err)
	}
	if got := wire.CodeOf(err); got != code {
		t.Errorf("error %q is %s, want %s", err, got, code)
	}
	var problem *engine.Problem
	if code == wire.CodeDeployFailed && !errors.As(err, &problem) {
		t.Errorf("deploy error %q does not unwrap to its problems", err)
	}
	if s := wire.Sentinel(code); s != nil && !errors.Is(err, s) {
		t.Errorf("error %q does not match %s's sentinel %v", err, code, wire.Sentinel(code))
	}
	if why := stacked(err.Error()); why != "" {
		t.Errorf("error %q: %s", err, why)
	}
}

// stacked says what is stacked in an error message, or "" when it reads
// as a plain sentence: a package prefix ("flowtrack: ", "flowtrack host: ")
// may only open it, and no part may repeat the part before it
// ("deploy x.bpmn: x.bpmn: ...") or name the same line twice.
func stacked(msg string) string {
	if at := prefix.FindAllStringIndex(msg, -1); len(at) > 1 || len(at) == 1 && at[0][0] != 0 {
		return "the package prefix is not (only) at the start"
	}
	parts := strings.Split(msg, ": ")
	for i := 1; i < len(parts); i++ {
		if parts[i] == parts[i-1] || strings.HasSuffix(parts[i-1], " "+parts[i]) {
			return fmt.Sprintf("%q is repeated", parts[i])
		}
	}
	seen := map[string]bool{}
	for _, l := range lineRef.FindAllString(msg, -1) {
		if seen[l] {
			return fmt.Sprintf("%q is named twice", l)
		}
		seen[l] = true
	}
	return ""
}

var (
	prefix  = regexp.MustCompile(`flowtrack(?: [a-z]+)?: `)
	lineRef = regexp.MustCompile(`line \d+`)
)

// TestStacked checks the checker on messages it must refuse and accept.
func TestStacked(t *testing.T) {
	for msg, bad := range map[string]bool{
		"job 9: flowtrack: unknown job":                   true,
		"flowtrack: start: flowtrack: unknown process":    true,
		"deploy x.bpmn: x.bpmn: element a: rule":          true,
		"malformed XML at line 1: syntax error on line 1": true,
		"job 9: job 9: unknown job":                       true,
		"flowtrack host: start: module trapped":           false,
		"bad state document: format \"flowtrack-state\"":  false,
		"complete job 1: unknown job":                     false,
		"deploy x.bpmn: element a: rule":                  false,
	} {
		assert.Equal(t, bad, stacked(msg) != "", msg)
	}
}

// TestErrorMessages_PlainSentences makes each kind of failing call on the
// native engine and the Go host (besides the bad inputs above, which
// checkCode checks too) and refuses stacked prefixes in its message.
func TestErrorMessages_PlainSentences(t *testing.T) {
	ctx := ctxT(t)
	order, err := os.ReadFile("../host/testdata/order.bpmn")
	require.NoError(t, err)
	invalid := []byte(`<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">` +
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/><bpmn:receiveTask id="r"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="r"/></bpmn:process></bpmn:definitions>`)
	native, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer native.Close(context.Background())
	h, err := host.New(context.Background())
	require.NoError(t, err)
	defer h.Close(context.Background())
	_, err = native.Deploy("order.bpmn", order)
	require.NoError(t, err)
	_, err = h.Deploy(ctx, "order.bpmn", order)
	require.NoError(t, err)
	realClock, err := engine.New()
	require.NoError(t, err)
	require.NoError(t, realClock.Close(ctx))

	type call struct {
		name   string
		native func() error
		host   func() error
	}
	deploy := func(name string, data []byte) call {
		return call{"deploy " + name,
			func() error { _, err := native.Deploy(name, data); return err },
			func() error { _, err := h.Deploy(ctx, name, data); return err }}
	}
	calls := []call{
		deploy("malformed.bpmn", []byte("<bpmn:definitions")),
		deploy("invalid.bpmn", invalid),
		{"start unknown process",
			func() error { _, err := native.Start(ctx, "nope", nil); return err },
			func() error { _, err := h.Start(ctx, "nope", nil); return err }},
		{"complete unknown job", func() error { return native.CompleteJob(ctx, 999, nil) }, func() error { return h.CompleteJob(ctx, 999, nil) }},
		{"fail unknown job", func() error { return native.FailJob(ctx, 999, 1, "x") }, func() error { return h.FailJob(ctx, 999, 1, "x") }},
		{"throw unknown job", func() error { return native.ThrowError(ctx, 999, "E", "x", nil) }, func() error { return h.ThrowError(ctx, 999, "E", "x", nil) }},
		{"resolve unknown incident", func() error { return native.ResolveIncident(ctx, 999) }, func() error { return h.ResolveIncident(ctx, 999) }},
		{"cancel unknown instance",
			func() error { r := &Native{e: native, insts: map[int64]*engine.Instance{}}; return r.Cancel(ctx, 999) },
			func() error { return h.Cancel(ctx, 999) }},
		{"bad state document",
			func() error { _, err := engine.Restore([]byte(`{"format":"x"}`)); return err },
			func() error { return h.Restore(ctx, []byte(`{"format":"x"}`)) }},
		{"variables", func() error { return native.CompleteJob(ctx, 1, map[string]any{"x": math.NaN()}) },
			func() error { return h.CompleteJob(ctx, 1, map[string]any{"x": math.NaN()}) }},
		{"closed engine", func() error { return realClock.CompleteJob(ctx, 1, nil) }, nil},
		{"advance a real clock", func() error { e, _ := engine.New(); defer e.Close(ctx); return e.Advance(ctx, time.Second) }, nil},
	}
	for _, c := range calls {
		for name, fn := range map[string]func() error{"native": c.native, "host": c.host} {
			if fn == nil {
				continue
			}
			t.Run(c.name+"/"+name, func(t *testing.T) {
				err := fn()
				require.Error(t, err)
				assert.Empty(t, stacked(err.Error()), "%q", err)
			})
		}
	}
}
