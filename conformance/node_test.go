package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// onNode is the rotation's Node host: every restore there is a new SDK
// engine in the one process p.
func onNode(p *nodeProcess) target {
	return target{"node", func(ctx context.Context, doc []byte) (Runner, error) {
		var res struct {
			Engine int `json:"engine"`
		}
		if err := p.call(ctx, "restore", 0, struct {
			State []byte `json:"state"`
		}{doc}, &res); err != nil {
			return nil, err
		}
		return &Node{p: p, id: res.Engine}, nil
	}}
}

// Node is a Runner over one SDK engine in the node child.
type Node struct {
	p  *nodeProcess
	id int
}

func (n *Node) call(ctx context.Context, op string, req, out any) error {
	return n.p.call(ctx, op, n.id, req, out)
}

// ms is a duration in the protocol's unit.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Checkpoint writes the SDK engine's state document.
func (n *Node) Checkpoint(ctx context.Context) ([]byte, error) {
	var res struct {
		State []byte `json:"state"`
	}
	err := n.call(ctx, "checkpoint", nil, &res)
	return res.State, err
}

// Deploy implements Runner through the SDK.
func (n *Node) Deploy(ctx context.Context, name string, bpmn []byte) error {
	err := n.call(ctx, "deploy", struct {
		Name string `json:"name"`
		BPMN []byte `json:"bpmn"`
	}{name, bpmn}, nil)
	if de, ok := err.(*engine.DeployError); ok {
		de.File = name
	}
	return err
}

// Start implements Runner through the SDK.
func (n *Node) Start(ctx context.Context, processID string, vars map[string]any) (int64, error) {
	var res struct {
		InstanceKey int64 `json:"instanceKey"`
	}
	err := n.call(ctx, "start", struct {
		ProcessID string         `json:"processId"`
		Variables map[string]any `json:"variables,omitempty"`
	}{processID, vars}, &res)
	return res.InstanceKey, err
}

// PublishMessage implements Runner through the SDK.
func (n *Node) PublishMessage(ctx context.Context, m Message) error {
	return n.call(ctx, "publishMessage", struct {
		Name           string         `json:"name"`
		CorrelationKey string         `json:"correlationKey,omitempty"`
		Variables      map[string]any `json:"variables,omitempty"`
		TTLMs          float64        `json:"ttlMs,omitempty"`
		MessageID      string         `json:"messageId,omitempty"`
	}{m.Name, m.CorrelationKey, m.Variables, ms(m.TTL), m.MessageID}, nil)
}

// BroadcastSignal implements Runner through the SDK.
func (n *Node) BroadcastSignal(ctx context.Context, name string, vars map[string]any) error {
	return n.call(ctx, "broadcastSignal", struct {
		Name      string         `json:"name"`
		Variables map[string]any `json:"variables,omitempty"`
	}{name, vars}, nil)
}

// Advance implements Runner through the SDK.
func (n *Node) Advance(ctx context.Context, d time.Duration) error {
	return n.call(ctx, "advanceTime", struct {
		Ms float64 `json:"ms"`
	}{ms(d)}, nil)
}

// NextDeadline implements Runner through the SDK.
func (n *Node) NextDeadline(ctx context.Context) (time.Time, bool, error) {
	var res struct {
		Deadline *time.Time `json:"deadline"`
	}
	if err := n.call(ctx, "nextDeadline", nil, &res); err != nil || res.Deadline == nil {
		return time.Time{}, false, err
	}
	return *res.Deadline, true, nil
}

// Jobs implements Runner through the SDK.
func (n *Node) Jobs(ctx context.Context) ([]engine.Job, error) {
	var jobs []engine.Job
	if err := n.call(ctx, "jobs", nil, &jobs); err != nil {
		return nil, err
	}
	return jobs, exactJobs(jobs)
}

// CompleteJob implements Runner through the SDK.
func (n *Node) CompleteJob(ctx context.Context, key int64, vars map[string]any) error {
	return n.call(ctx, "completeJob", struct {
		JobKey    int64          `json:"jobKey"`
		Variables map[string]any `json:"variables,omitempty"`
	}{key, vars}, nil)
}

// FailJob implements Runner through the SDK.
func (n *Node) FailJob(ctx context.Context, key int64, retries int, message string, backoff time.Duration) error {
	return n.call(ctx, "failJob", struct {
		JobKey    int64   `json:"jobKey"`
		Retries   int     `json:"retries"`
		Message   string  `json:"message,omitempty"`
		BackoffMs float64 `json:"backoffMs,omitempty"`
	}{key, retries, message, ms(backoff)}, nil)
}

// ActivateJobs implements Runner through the SDK.
func (n *Node) ActivateJobs(ctx context.Context, jobType string, timeout time.Duration, maxJobs int) ([]engine.Job, error) {
	var jobs []engine.Job
	if err := n.call(ctx, "activateJobs", struct {
		Type      string  `json:"type"`
		TimeoutMs float64 `json:"timeoutMs"`
		MaxJobs   int     `json:"maxJobs"`
	}{jobType, ms(timeout), maxJobs}, &jobs); err != nil {
		return nil, err
	}
	return jobs, exactJobs(jobs)
}

// ThrowError implements Runner through the SDK.
func (n *Node) ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any) error {
	return n.call(ctx, "throwError", struct {
		JobKey    int64          `json:"jobKey"`
		Code      string         `json:"code"`
		Message   string         `json:"message,omitempty"`
		Variables map[string]any `json:"variables,omitempty"`
	}{key, code, message, vars}, nil)
}

// Incidents implements Runner through the SDK.
func (n *Node) Incidents(ctx context.Context) ([]engine.Incident, error) {
	var incs []engine.Incident
	err := n.call(ctx, "incidents", nil, &incs)
	return incs, err
}

// ResolveIncident implements Runner through the SDK.
func (n *Node) ResolveIncident(ctx context.Context, key int64) error {
	return n.call(ctx, "resolveIncident", struct {
		IncidentKey int64 `json:"incidentKey"`
	}{key}, nil)
}

// SetVariables implements Runner through the SDK.
func (n *Node) SetVariables(ctx context.Context, key int64, vars map[string]any, s engine.Scope) error {
	return n.call(ctx, "setVariables", struct {
		InstanceKey int64          `json:"instanceKey"`
		Variables   map[string]any `json:"variables,omitempty"`
		Scope       int            `json:"scope,omitempty"`
		Local       bool           `json:"local,omitempty"`
	}{key, vars, s.Token, s.Local}, nil)
}

// ModifyInstance implements Runner through the SDK.
func (n *Node) ModifyInstance(ctx context.Context, key int64, m engine.Modification) error {
	req := struct {
		InstanceKey int64                  `json:"instanceKey"`
		Activate    []wire.ActivateElement `json:"activate,omitempty"`
		Terminate   []int                  `json:"terminate,omitempty"`
	}{InstanceKey: key, Terminate: m.Terminate}
	for _, a := range m.Activate {
		req.Activate = append(req.Activate, wire.ActivateElement{ElementID: a.ElementID, Scope: a.Scope, Variables: a.Variables})
	}
	return n.call(ctx, "modifyInstance", req, nil)
}

// Cancel implements Runner through the SDK.
func (n *Node) Cancel(ctx context.Context, key int64) error {
	return n.call(ctx, "cancel", struct {
		InstanceKey int64 `json:"instanceKey"`
	}{key}, nil)
}

// ActivateAdHoc implements Runner through the SDK.
func (n *Node) ActivateAdHoc(ctx context.Context, key int64, adHoc string, elements []string) error {
	if elements == nil {
		elements = []string{}
	}
	return n.call(ctx, "activateAdHoc", struct {
		InstanceKey int64    `json:"instanceKey"`
		ElementID   string   `json:"elementId"`
		Elements    []string `json:"elements"`
	}{key, adHoc, elements}, nil)
}

// Settle implements Runner: every SDK call returns with the engine
// settled, so there is nothing to wait for.
func (n *Node) Settle(ctx context.Context) error { return ctx.Err() }

// Snapshot implements Runner through the SDK.
func (n *Node) Snapshot(ctx context.Context, key int64) (Snapshot, error) {
	var res struct {
		Instance struct {
			State     engine.State   `json:"state"`
			Variables map[string]any `json:"variables"`
		} `json:"instance"`
		History []engine.Event `json:"history"`
		Tokens  []engine.Token `json:"tokens"`
	}
	if err := n.call(ctx, "snapshot", struct {
		InstanceKey int64 `json:"instanceKey"`
	}{key}, &res); err != nil {
		return Snapshot{}, err
	}
	if err := exactNumbers(&res.Instance.Variables); err != nil {
		return Snapshot{}, err
	}
	for i := range res.History {
		if err := exactNumbers(&res.History[i].Variables); err != nil {
			return Snapshot{}, err
		}
	}
	return Snapshot{State: res.Instance.State, History: res.History, Tokens: res.Tokens, Variables: res.Instance.Variables}, nil
}

// Close implements Runner: the SDK engine is closed, the process stays.
func (n *Node) Close(ctx context.Context) error { return n.call(ctx, "close", nil, nil) }

// exactJobs brings the variables of jobs, decoded with UseNumber, to the
// engine's value model, as package host does.
func exactJobs(jobs []engine.Job) error {
	for i := range jobs {
		if err := exactNumbers(&jobs[i].Variables); err != nil {
			return err
		}
	}
	return nil
}

// exactNumbers replaces *vars, decoded with UseNumber, by its copy in the
// engine's value model.
func exactNumbers(vars *map[string]any) error {
	if *vars == nil {
		return nil
	}
	norm, err := engine.NormalizeVariables(*vars)
	if err != nil {
		return err
	}
	*vars = norm
	return nil
}

// TestNodeRotationDocument moves a document whose variables hold what
// JSON writers disagree on (keys that look like array indexes, numbers
// near the exponent thresholds and beyond a double, -0, characters Go
// escapes and JavaScript does not) from the native engine into the SDK
// in Node and back, and requires the very bytes at every hop.
func TestNodeRotationDocument(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("needs the SDK build (make sdk); make test runs it without -race, as restore-hosts")
	}
	p := nodeFor(t)
	ctx := ctxT(t)
	bpmn, err := os.ReadFile("scenarios/parallel_fork_without_join.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	vars, err := engine.NormalizeVariables(map[string]any{
		"10": 1, "2": 2, "b": true, "a": nil, "-1": "minus", "01": "zero one",
		"floats":  []any{1.5, 0.1, 1e21, 1e20, 1e-7, 1e-6, 123456789012345.6, math.Copysign(0, -1), 5e-324, 1.7976931348623157e308},
		"decimal": []any{json.Number("12345678901234567890"), json.Number("0.30000000000000000001"), json.Number("1E+400"), json.Number("1.50"), json.Number("100"), json.Number("1e2")},
		"text":    "<a & b>\u2028\u2029\x01\x1f\x7f\b\f\t\n\"\\/é😀\ufffd",
		"nested":  map[string]any{"3": []any{map[string]any{"1": "x", "z": "y"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	if _, err := e.Deploy("parallel_fork_without_join.bpmn", bpmn); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(ctx, "p", vars); err != nil {
		t.Fatal(err)
	}
	// A second deployment whose instance waits on timers: the SDK reports
	// the next deadline the document holds.
	timers, err := os.ReadFile("scenarios/timer_parallel_fire_in_due_order.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deploy("timer_parallel_fire_in_due_order.bpmn", timers); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(ctx, "p", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	due, ok := e.NextDeadline()
	if !ok {
		t.Fatal("the native engine has no next deadline")
	}
	doc, err := e.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := onNode(p).restore(ctx, doc)
	if err != nil {
		t.Fatalf("restore in Node: %v", err)
	}
	n := r.(*Node)
	defer n.Close(context.Background())
	again, err := n.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, doc) {
		t.Errorf("restored in Node, the SDK writes\n%s\nthe native engine wrote\n%s", again, doc)
	}
	if got, ok, err := n.NextDeadline(ctx); err != nil || !ok || !got.Equal(due) {
		t.Errorf("Node's next deadline: %v %v %v, want %v", got, ok, err, due)
	}
}
