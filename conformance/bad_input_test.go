package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

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
	if strings.Count(err.Error(), "flowtrack:") > 1 {
		t.Errorf("stacked prefixes: %q", err)
	}
}
