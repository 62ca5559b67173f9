package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testcert"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cliEnv makes the test binary run the flowtrack command instead of the
// tests (TestMain), so that a test runs real flowtrack processes it can
// kill, without building the command first.
const cliEnv = "FLOWTRACK_TEST_RUN_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// secureNodes are the three nodes of docs/cluster.md's recipe, "Three
// machines with TLS and users", on three loopback addresses.
var secureNodes = []struct{ name, ip string }{{"a", "127.0.0.2"}, {"b", "127.0.0.3"}, {"c", "127.0.0.4"}}

// secureCommand is the command line of node name in docs/cluster.md's
// recipe, less the program name.
func secureCommand(name string) []string {
	return []string{"serve", "--config", name + ".json", "--node", name, "--partitions", "6", "--replicas", "3", "--data", "./ft-" + name}
}

// TestDocs_SecureRecipe: docs/cluster.md's three-machine recipe and
// docs/server.md's example are the files and commands
// TestServe_SecureCluster runs.
func TestDocs_SecureRecipe(t *testing.T) {
	conf, err := os.ReadFile(filepath.Join("testdata", "secure", "a.json"))
	require.NoError(t, err)
	for _, page := range []string{"cluster.md", "server.md"} {
		doc, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
		require.NoError(t, err)
		assert.Contains(t, string(doc), "```json\n"+string(conf)+"```", "docs/%s shows testdata/secure/a.json", page)
		if page == "cluster.md" {
			for _, n := range secureNodes {
				assert.Contains(t, string(doc), "\nflowtrack "+strings.Join(secureCommand(n.name), " ")+"\n")
			}
		}
	}
	// The files differ only in the node's addresses, certificate and routes.
	first, err := server.ReadNetConfig(filepath.Join("testdata", "secure", "a.json"))
	require.NoError(t, err)
	for _, n := range secureNodes {
		c, err := server.ReadNetConfig(filepath.Join("testdata", "secure", n.name+".json"))
		require.NoError(t, err)
		assert.Equal(t, n.ip+":4222", c.Listen)
		assert.Equal(t, n.ip+":6222", c.Cluster.Listen)
		assert.Equal(t, n.name+"-cert.pem", c.TLS.Cert)
		assert.Equal(t, *c.TLS, *c.Cluster.TLS)
		var routes []string
		for _, o := range secureNodes {
			if o != n {
				routes = append(routes, "nats-route://"+o.ip+":6222")
			}
		}
		assert.Equal(t, routes, c.Cluster.Routes)
		assert.Equal(t, first.Users, c.Users)
		require.NoError(t, c.CheckExposure(false), "secure by default")
	}
}

// proc is one flowtrack serve process and the lines it printed.
type proc struct {
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string
	ready  chan struct{}
	exited chan struct{} // closed once the process has ended
}

func (p *proc) printed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// TestServe_SecureCluster runs docs/cluster.md's three-machine recipe
// (the configuration files of testdata/secure, certificates made here)
// as three flowtrack processes on 127.0.0.2, .3 and .4: TLS and users on
// client connections and routes. A worker serves jobs and instances
// complete; then the process whose NATS server leads the job stream is
// killed (SIGKILL), and jobs are still delivered and instances complete.
// It logs the start-up and failover times.
func TestServe_SecureCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("three flowtrack processes and a kill: not in -short")
	}
	for _, n := range secureNodes {
		l, err := net.Listen("tcp", n.ip+":0")
		if err != nil {
			t.Skipf("this system cannot listen on %s (Linux routes 127.0.0.0/8 to loopback): %v", n.ip, err)
		}
		_ = l.Close()
	}
	dir := t.TempDir()
	ca, err := testcert.NewCA(dir)
	require.NoError(t, err)
	for _, n := range secureNodes {
		require.NoError(t, ca.Issue(dir, n.name, n.ip))
		conf, err := os.ReadFile(filepath.Join("testdata", "secure", n.name+".json"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, n.name+".json"), conf, 0o600))
	}
	begin := time.Now()
	procs := map[string]*proc{}
	for _, n := range secureNodes {
		// The command of docs/cluster.md, run in the directory of the files.
		p := &proc{name: n.name, ready: make(chan struct{}), exited: make(chan struct{}),
			cmd: exec.Command(os.Args[0], secureCommand(n.name)...)}
		p.cmd.Dir = dir
		p.cmd.Env = append(os.Environ(), cliEnv+"=1")
		p.cmd.Stderr = os.Stderr
		out, err := p.cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, p.cmd.Start())
		t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.exited })
		go func() {
			defer func() { _ = p.cmd.Wait(); close(p.exited) }()
			sc := bufio.NewScanner(out)
			once := sync.Once{}
			for sc.Scan() {
				p.mu.Lock()
				p.lines = append(p.lines, sc.Text())
				p.mu.Unlock()
				if strings.Contains(sc.Text(), "serving on") {
					once.Do(func() { close(p.ready) })
				}
			}
		}()
		procs[n.name] = p
	}
	bound := testtime.Scale(2 * time.Minute)
	for _, p := range procs {
		select {
		case <-p.ready:
		case <-p.exited:
			t.Fatalf("node %s ended before it served: %q", p.name, p.printed())
		case <-time.After(bound):
			t.Fatalf("node %s does not serve: %q", p.name, p.printed())
		}
	}
	serving := time.Since(begin)

	urls := "nats://127.0.0.2:4222,nats://127.0.0.3:4222,nats://127.0.0.4:4222"
	connect := func(user string) *nats.Conn {
		nc, err := nats.Connect(urls, nats.RootCAs(filepath.Join(dir, "ca.pem")), nats.UserInfo(user, user+"-secret"),
			nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		return nc
	}
	// Without TLS, or as nobody, no connection.
	_, err = nats.Connect(urls, nats.UserInfo("ops", "ops-secret"))
	require.Error(t, err)
	_, err = nats.Connect(urls, nats.RootCAs(filepath.Join(dir, "ca.pem")))
	require.Error(t, err)

	admin := client.New(connect("ops"), "default")
	reader := client.New(connect("look"), "default")
	ctx, cancel := context.WithTimeout(context.Background(), 2*bound)
	defer cancel()
	xml, err := os.ReadFile(filepath.Join("testdata", "secure", "charge.bpmn"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err = admin.Deploy(ctx, "charge.bpmn", xml)
		return err == nil
	}, bound, 100*time.Millisecond, "deploy: %v", err)
	// A start answered on every partition is the cluster serving.
	start := func(i int) int64 {
		var key int64
		var err error
		require.Eventually(t, func() bool {
			sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
			defer scancel()
			key, err = admin.Start(sctx, "charge", map[string]any{"n": i})
			return err == nil
		}, bound, 50*time.Millisecond, "start: %v", err)
		return key
	}
	var keys []int64
	for i := range 6 {
		keys = append(keys, start(i))
	}
	firstStarts := time.Since(begin)

	delivered := make(chan time.Time, 256)
	worker := client.New(connect("pay"), "default")
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	workerErr := make(chan error, 1)
	go func() {
		workerErr <- worker.HandleJobs(wctx, "charge", func(_ context.Context, j engine.Job) (map[string]any, error) {
			delivered <- time.Now()
			return map[string]any{"charged": true}, nil
		}, engine.WorkerOptions{Timeout: 2 * time.Second})
	}()
	completed := func(keys []int64) {
		t.Helper()
		for _, k := range keys {
			var state string
			var err error
			ok := assert.Eventually(t, func() bool {
				var in *wire.InstanceResult
				if in, err = reader.Instance(ctx, k); err == nil {
					state = string(in.State)
				}
				return err == nil && in.State == "completed"
			}, bound, 50*time.Millisecond, "instance %d completes", k)
			if !ok {
				jobs, jerr := admin.Jobs(ctx, engine.JobFilter{})
				t.Logf("instance %d: %s %v; jobs %+v (%v); delivered %d", k, state, err, jobs, jerr, len(delivered))
				select {
				case err := <-workerErr:
					t.Logf("the worker stopped: %v", err)
				default:
					t.Logf("the worker runs")
				}
				for _, p := range procs {
					t.Logf("node %s printed:\n%s", p.name, strings.Join(p.printed(), "\n"))
				}
				t.FailNow()
			}
		}
	}
	completed(keys)

	// Kill the node whose NATS server leads the job stream.
	leader := ""
	for _, p := range procs {
		for _, l := range p.printed() {
			if _, who, ok := strings.Cut(l, "job stream FLOWTRACK_JOBS_default leader: "); ok {
				leader = who
			}
		}
	}
	require.NotEmpty(t, leader, "a node reports the job stream's leader")
	require.Contains(t, procs, leader)
	before := map[string]int{}
	for name, p := range procs {
		before[name] = len(p.printed())
	}
	killed := time.Now()
	require.NoError(t, procs[leader].cmd.Process.Signal(syscall.SIGKILL))
	<-procs[leader].exited
	// Drain what was delivered before the kill.
	for len(delivered) > 0 {
		<-delivered
	}

	keys = keys[:0]
	var served time.Duration
	for i := range 6 {
		keys = append(keys, start(100+i))
		if i == 0 {
			served = time.Since(killed)
		}
	}
	var firstJob time.Duration
	select {
	case at := <-delivered:
		firstJob = at.Sub(killed)
	case <-time.After(bound):
		t.Fatal("no job is delivered after the kill")
	}
	completed(keys)
	allDone := time.Since(killed)
	// A survivor saw the job stream elect a new leader: the killed node led it.
	reelected := ""
	for name, p := range procs {
		if name == leader {
			continue
		}
		for _, l := range p.printed()[before[name]:] {
			if _, who, ok := strings.Cut(l, "job stream FLOWTRACK_JOBS_default leader: "); ok && who != leader {
				reelected = who
			}
		}
	}
	require.NotEmpty(t, reelected, "a survivor reports the job stream's new leader")
	t.Logf("three nodes: all serving %v after start, 6 instances started %v after start", serving.Round(time.Millisecond), firstStarts.Round(time.Millisecond))
	t.Logf("killed %s (job stream leader, now %s): first start answered %v after the kill, first job delivered %v, 6 instances completed %v",
		leader, reelected, served.Round(time.Millisecond), firstJob.Round(time.Millisecond), allDone.Round(time.Millisecond))
}

// TestServe_RefusesInsecure: serve with a configuration that listens
// beyond loopback without TLS and users does not start (and so listens
// nowhere); --config takes no address flags.
func TestServe_RefusesInsecure(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "open.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"listen":"192.0.2.10:4222"}`), 0o600))
	code, err := serveCmd(context.Background(), []string{"--config", file, "--data", filepath.Join(dir, "d")}, io.Discard)
	require.ErrorIs(t, err, server.ErrInsecure)
	assert.Equal(t, exitUsage, code)
	code, err = serveCmd(context.Background(), []string{"--node", "a", "--partitions", "2", "--routes", "nats-route://192.0.2.11:6222",
		"--data", filepath.Join(dir, "d")}, io.Discard)
	require.ErrorIs(t, err, server.ErrInsecure, "routes to another machine without TLS")
	assert.Equal(t, exitUsage, code)
	code, err = serveCmd(context.Background(), []string{"--config", file, "--port", "4333"}, io.Discard)
	var ue usageError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, exitUsage, code)
}
