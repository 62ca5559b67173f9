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
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("node %s: %w", op, err) // nothing sent: the process goes on
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

// TestNodeRotationStuck: a call the node child does not answer in time
// kills the child, and every later call says why instead of waiting.
func TestNodeRotationStuck(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("needs the SDK build (make sdk); make test runs it without -race, as restore-hosts")
	}
	p, err := startNode(time.Minute) // its own child: this test kills it
	if err != nil {
		t.Fatalf("node rotation: %v", err)
	}
	defer p.close()
	if err := p.call(ctxT(t), "jobs", 1, nil, nil); !errors.Is(err, errNodeProtocol) {
		t.Fatalf("jobs on no engine: %v, want a protocol error", err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := p.call(ctx, "jobs", 1, nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call to a stopped child: %v, want the deadline", err)
	}
	<-p.exited // killed, or this test times out
	if err := p.call(ctxT(t), "jobs", 1, nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("call after the child was killed: %v, want the first call's error", err)
	}
}
