package conformance

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// The Node host of the rotation: the SDK (sdk-js/dist, built by make sdk)
// in one long-lived node process running sdk-js/conformance/rotation.mjs,
// whose header documents the line protocol. The Go side sends one JSON
// request per line and reads one reply per line, in order.
const (
	nodeScript = "../sdk-js/conformance/rotation.mjs"
	nodeSDK    = "../sdk-js/dist/index.js"
	nodeModule = "../sdk-js/dist/flowtrack.wasm"
	hostModule = "../host/flowtrack.wasm.gz"
)

// errNodeProtocol is a reply saying the Node side could not act on a
// request line (code PROTOCOL): a bug on this side, never an engine error.
var errNodeProtocol = errors.New("node rotation protocol")

// nodeProcess is the node child. Calls are one at a time.
type nodeProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte   // reply lines, closed when stdout ends
	exited chan struct{} // closed once the process is reaped
	stderr lockedBuffer
	cancel context.CancelFunc

	mu   sync.Mutex
	id   int64
	dead error // set once a call gave up on the process
}

// lockedBuffer keeps the last 64 KB the process wrote to stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - 64<<10; over > 0 {
		b.buf = b.buf[over:]
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// The node child is started once per test binary, by the first test that
// needs it (nodeFor), and stopped by TestMain (stopNode).
var (
	nodeOnce    sync.Once
	nodeShared  *nodeProcess
	nodeFailure error
)

// nodeFor returns the test binary's node child, starting it on first use,
// or fails t saying what to install or build: node missing, the SDK not
// built, or the SDK's module not the one package host embeds (a stale
// build would make every comparison wrong). The process lives at most as
// long as the first test that asked for it may (its deadline, or an hour).
func nodeFor(t *testing.T) *nodeProcess {
	t.Helper()
	nodeOnce.Do(func() {
		lifetime := time.Hour
		if d, ok := t.Deadline(); ok {
			lifetime = time.Until(d)
		}
		nodeShared, nodeFailure = startNode(lifetime)
	})
	if nodeFailure != nil {
		t.Fatalf("node rotation: %v", nodeFailure)
	}
	return nodeShared
}

// stopNode stops the node child, if one was started.
func stopNode() {
	if nodeShared != nil {
		nodeShared.close()
	}
}

// startNode starts the node child, killed after lifetime.
func startNode(lifetime time.Duration) (*nodeProcess, error) {
	bin, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("no node on PATH (Node >= 20 is needed): %w", err)
	}
	if _, err := os.Stat(nodeSDK); err != nil {
		return nil, fmt.Errorf("the SDK is not built (%w): run make sdk", err)
	}
	if err := sameModule(nodeModule, hostModule); err != nil {
		return nil, fmt.Errorf("%w: run make sdk", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lifetime)
	cmd := exec.CommandContext(ctx, bin, filepath.Base(nodeScript))
	cmd.Dir = filepath.Dir(nodeScript)
	p := &nodeProcess{cmd: cmd, lines: make(chan []byte), exited: make(chan struct{}), cancel: cancel}
	cmd.Stderr = &p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		cancel()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start %s: %w", nodeScript, err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
		for sc.Scan() {
			p.lines <- bytes.Clone(sc.Bytes())
		}
		// Drain what is left so that the process never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		// Reply lines nobody waits for any more (after a timed-out call)
		// are dropped here once the process is gone, so the reader ends.
		<-p.exited
		for range p.lines {
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// sameModule checks that the SDK's module, when the build has one at
// sdkPath, is the gzipped one host embeds.
func sameModule(sdkPath, hostPath string) error {
	sdk, err := os.ReadFile(sdkPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the SDK finds its module elsewhere: nothing to compare
	}
	if err != nil {
		return err
	}
	f, err := os.Open(hostPath)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", hostPath, err)
	}
	want, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("%s: %w", hostPath, err)
	}
	if !bytes.Equal(sdk, want) {
		return fmt.Errorf("%s is not the module %s holds (the SDK build is stale)", sdkPath, hostPath)
	}
	return nil
}

// close ends the process: stdin closed, it closes its engines and exits;
// killed if it has not within five seconds.
func (p *nodeProcess) close() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.cancel()
}

// nodeReply is one reply line.
type nodeReply struct {
	ID     *int64          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *wire.Error     `json:"error"`
}

// call sends one request (op, and the fields of req, a struct or nil) and
// decodes the result into out (if not nil), numbers read exactly. An
// engine error comes back as the host's errors do (*wire.Error, a
// *engine.DeployError for DEPLOY_FAILED).
func (p *nodeProcess) call(ctx context.Context, op string, engineID int, req any, out any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.id++
	line, err := encodeNodeRequest(p.id, op, engineID, req)
	if err != nil {
		return fmt.Errorf("node %s: encode request: %w", op, err)
	}
	rep, err := p.roundTrip(ctx, op, line)
	switch {
	case err != nil:
		return err
	case rep.Error != nil && rep.Error.Code == "PROTOCOL":
		return fmt.Errorf("node %s: %w: %s", op, errNodeProtocol, rep.Error.Message)
	case rep.Error != nil:
		return rep.Error.Native()
	case rep.ID == nil:
		p.dead = fmt.Errorf("node %s: reply without an id to a well-formed request", op)
		return p.dead
	case out == nil:
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(rep.Result))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("node %s: decode result %s: %w", op, rep.Result, err)
	}
	return nil
}

// roundTrip writes one line (request p.id, the caller holding p.mu) and
// reads its reply. Replies come in order: one without an id answers a
// line the script could not read as a request, this one. A call that
// outlives ctx kills the process: its reply could not be told from the
// next one's.
func (p *nodeProcess) roundTrip(ctx context.Context, op string, line []byte) (*nodeReply, error) {
	if p.dead != nil {
		return nil, p.dead
	}
	if _, err := p.stdin.Write(line); err != nil {
		p.dead = fmt.Errorf("node %s: write request: %w; stderr:\n%s", op, err, p.stderr.String())
		return nil, p.dead
	}
	var data []byte
	select {
	case l, ok := <-p.lines:
		if !ok {
			<-p.exited
			p.dead = fmt.Errorf("node %s: the process ended (%v); stderr:\n%s", op, p.cmd.ProcessState, p.stderr.String())
			return nil, p.dead
		}
		data = l
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		p.dead = fmt.Errorf("node %s: no reply: %w", op, ctx.Err())
		return nil, p.dead
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var rep nodeReply
	if err := dec.Decode(&rep); err != nil {
		p.dead = fmt.Errorf("node %s: reply %q: %w", op, data, err)
		return nil, p.dead
	}
	if rep.ID != nil && *rep.ID != p.id {
		p.dead = fmt.Errorf("node %s: reply %q does not answer request %d", op, data, p.id)
		return nil, p.dead
	}
	return &rep, nil
}

// encodeNodeRequest writes {"id", "op", "engine", ...req} as one line.
func encodeNodeRequest(id int64, op string, engineID int, req any) ([]byte, error) {
	head, err := json.Marshal(struct {
		ID     int64  `json:"id"`
		Op     string `json:"op"`
		Engine int    `json:"engine,omitempty"`
	}{id, op, engineID})
	if err != nil {
		return nil, err
	}
	if req == nil {
		return append(head, '\n'), nil
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if len(body) <= 2 { // {}
		return append(head, '\n'), nil
	}
	line := append(head[:len(head)-1], ',')
	line = append(line, body[1:]...)
	return append(line, '\n'), nil
}

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

// TestNodeRotationProtocol holds the Node side of the rotation to its
// protocol: a line it cannot act on gets an error reply naming what was
// wrong, and the process goes on answering; an engine's error comes back
// as the host's does.
func TestNodeRotationProtocol(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("needs the SDK build (make sdk); make test runs it without -race, as restore-hosts")
	}
	p := nodeFor(t)
	ctx := ctxT(t)

	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	doc, err := e.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := onNode(p).restore(ctx, doc)
	if err != nil {
		t.Fatalf("restore a fresh engine's document: %v", err)
	}
	n := r.(*Node)
	defer n.Close(context.Background())

	// ID in a line is the request's id.
	for _, c := range []struct{ line, want string }{
		{`not json`, `not JSON`},
		{`{"op":"jobs","engine":1}`, `no numeric "id"`},
		{`{"id":ID,"op":"fly"}`, `unknown op "fly"`},
		{`{"id":ID,"op":"toString"}`, `unknown op "toString"`},
		{`{"id":ID,"op":"jobs","engine":99}`, `jobs: no engine 99`},
		{`{"id":ID,"op":"restore"}`, `restore: field "state" is missing`},
		{fmt.Sprintf(`{"id":ID,"op":"start","engine":%d,"processId":7}`, n.id), `start: field "processId" is not a string`},
		{`{"id":ID,"op":"jobs","engine":1} trailing`, `text after the value`},
	} {
		p.mu.Lock()
		p.id++
		line := strings.ReplaceAll(c.line, "ID", strconv.FormatInt(p.id, 10)) + "\n"
		rep, err := p.roundTrip(ctx, "raw", []byte(line))
		p.mu.Unlock()
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if rep.Error == nil || rep.Error.Code != "PROTOCOL" || !strings.Contains(rep.Error.Message, c.want) {
			t.Errorf("%s: reply %+v, want a PROTOCOL error containing %q", c.line, rep.Error, c.want)
		}
	}

	// Still answering, with the engine's own errors.
	if _, err := n.Start(ctx, "nope", nil); !errors.Is(err, engine.ErrUnknownProcess) {
		t.Errorf("start of an unknown process: %v, want ErrUnknownProcess", err)
	}
	err = n.Deploy(ctx, "bad.bpmn", []byte("<definitions/>"))
	var de *engine.DeployError
	if !errors.As(err, &de) || de.File != "bad.bpmn" {
		t.Errorf("deploy of a bad document: %v, want a *engine.DeployError for bad.bpmn", err)
	}
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
