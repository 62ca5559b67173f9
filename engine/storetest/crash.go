package storetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// The crash test re-executes the test binary as a child that runs a
// workload on a store until the parent kills it with SIGKILL; the child
// prints each command after the engine acknowledged it. The variables
// below configure the child.
const (
	envCrashStore = "FLOWTRACK_CRASH_STORE"
	envCrashSeed  = "FLOWTRACK_CRASH_SEED"
)

// CrashOpener opens the store of a crash test at location (a file, a
// NATS URL: what the store's test gave Crash), for a child or for the
// parent's check; close lets it go.
type CrashOpener func(location string) (s engine.Store, close func() error, err error)

// CrashChild runs the crash workload and exits when this process is a
// child of Crash (its environment says so), and returns at once when it
// is not. Call it first in the store's TestMain.
func CrashChild(open CrashOpener) {
	location := os.Getenv(envCrashStore)
	if location == "" {
		return
	}
	seed, err := strconv.ParseInt(os.Getenv(envCrashSeed), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child: bad seed:", err)
		os.Exit(2)
	}
	crashChild(open, location, seed)
	os.Exit(0)
}

// crashWorkers is how many goroutines of the child give the engine
// commands at once, so that commits are shared; worker w owns the
// instances whose key modulo crashWorkers is w.
const crashWorkers = 4

// crashChild runs the workload until it is killed. It prints a line
// before a command that may start or end an instance, since a kill between
// the commit and the acknowledgement leaves it done but not acknowledged:
//
//	try start ORDER   an instance with orderId ORDER is being started
//	try ship KEY      the ship job of instance KEY is being completed
//	try cancel KEY    instance KEY is being cancelled
//
// and a line for each acknowledged command:
//
//	start KEY ORDER   an instance started with orderId ORDER
//	complete JOB TYPE KEY   job JOB of type TYPE of instance KEY completed
//	publish ORDER     the "paid" message for ORDER published (id pay-ORDER)
//	cancel KEY        instance KEY cancelled
//	advance           the virtual clock moved one minute
func crashChild(open CrashOpener, location string, seed int64) {
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "crash child %d: %s: %v\n", seed, what, err)
		os.Exit(2)
	}
	s, _, err := open(location)
	if err != nil {
		fail("open", err)
	}
	e, err := engine.New(engine.WithStore(s), engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		fail("new", err)
	}
	ctx := context.Background()
	if seed == 1 { // the first run; the later ones find the deployment in the store
		xml, err := models.ReadFile("testdata/mixed.bpmn")
		if err != nil {
			fail("read model", err)
		}
		if _, err := e.Deploy("mixed.bpmn", xml); err != nil {
			fail("deploy", err)
		}
	}
	var out sync.Mutex
	ack := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...) // one write: it reached the parent when the kill comes
	}
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed*crashWorkers + int64(w)))
			mine := func(key int64) bool { return key%crashWorkers == int64(w) }
			for i := 0; ; i++ {
				switch r := rng.Intn(21); {
				case r < 3:
					order := fmt.Sprintf("s%d-w%d-%d", seed, w, i)
					ack("try start %s", order)
					inst, err := e.Start(ctx, "mixed", map[string]any{"orderId": order})
					if err != nil {
						fail("start", err)
					}
					ack("start %d %s", inst.Key(), order)
				case r < 12:
					var jobs []engine.Job
					for _, j := range e.Jobs(engine.JobFilter{}) {
						if mine(j.InstanceKey) {
							jobs = append(jobs, j)
						}
					}
					if len(jobs) == 0 {
						continue
					}
					j := jobs[rng.Intn(len(jobs))]
					vars := map[string]any{"packed": true}
					if j.Type == "ship" {
						vars = map[string]any{"shipped": true}
						ack("try ship %d", j.InstanceKey)
					}
					if err := e.CompleteJob(ctx, j.Key, vars); err != nil {
						fail("complete", err)
					}
					ack("complete %d %s %d", j.Key, j.Type, j.InstanceKey)
				case r < 17:
					var insts []*engine.Instance
					for _, inst := range e.Instances() {
						if mine(inst.Key()) {
							insts = append(insts, inst)
						}
					}
					if len(insts) == 0 {
						continue
					}
					order, _ := insts[rng.Intn(len(insts))].Variables()["orderId"].(string)
					err := e.PublishMessage(ctx, engine.Message{Name: "paid", CorrelationKey: order, MessageID: "pay-" + order,
						TTL: time.Hour, Variables: map[string]any{"paid": order}})
					switch {
					case errors.Is(err, engine.ErrDuplicateMessage):
					case err != nil:
						fail("publish", err)
					default:
						ack("publish %s", order)
					}
				case r == 20: // now and then an instance is cancelled
					var insts []*engine.Instance
					for _, inst := range e.Instances() {
						if mine(inst.Key()) {
							insts = append(insts, inst)
						}
					}
					if len(insts) == 0 {
						continue
					}
					inst := insts[rng.Intn(len(insts))]
					ack("try cancel %d", inst.Key())
					if err := inst.Cancel(ctx); err != nil {
						fail("cancel", err)
					}
					ack("cancel %d", inst.Key())
				case w == 0:
					if err := e.Advance(ctx, time.Minute); err != nil {
						fail("advance", err)
					}
					ack("advance")
				}
			}
		}()
	}
	wg.Wait()
}

// acked is what the children acknowledged, over all their runs, and
// what they tried.
type acked struct {
	triedStart map[string]bool  // orderIds
	triedShip  map[int64]bool   // instance keys
	triedEnd   map[int64]bool   // instance keys being cancelled
	cancelled  map[int64]bool   // instance keys
	starts     map[int64]string // instance key: orderId
	completed  map[int64]string // job key: type
	shipped    map[int64]bool   // instance keys whose ship job completed
	published  map[string]bool  // orderIds
	commands   int
}

func (a *acked) read(t *testing.T, line string) {
	t.Helper()
	f := strings.Fields(line)
	num := func(i int) int64 {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			t.Fatalf("child printed %q: %v", line, err)
		}
		return n
	}
	switch {
	case len(f) == 3 && f[0] == "try" && f[1] == "start":
		a.triedStart[f[2]] = true
		return
	case len(f) == 3 && f[0] == "try" && f[1] == "ship":
		a.triedShip[num(2)] = true
		return
	case len(f) == 3 && f[0] == "try" && f[1] == "cancel":
		a.triedEnd[num(2)] = true
		return
	}
	a.commands++
	switch {
	case len(f) == 3 && f[0] == "start":
		a.starts[num(1)] = f[2]
	case len(f) == 4 && f[0] == "complete":
		a.completed[num(1)] = f[2]
		if f[2] == "ship" {
			a.shipped[num(3)] = true
		}
	case len(f) == 2 && f[0] == "publish":
		a.published[f[1]] = true
	case len(f) == 2 && f[0] == "cancel":
		a.cancelled[num(1)] = true
	case len(f) == 1 && f[0] == "advance":
	default:
		t.Fatalf("child printed %q", line)
	}
}

// Crash kills, kills times, a child running a mixed workload (starts,
// jobs, keyed messages with ids, timers, a parallel join, cancellations)
// on the store at location at random points, then reopens the store and
// checks that every acknowledged command is there, that no instance is
// lost or doubled, and that every instance completes with the variables
// its commands gave it. The child is the test binary run again: its
// TestMain must call CrashChild first.
func Crash(t *testing.T, location string, kills int, open CrashOpener) {
	rng := rand.New(rand.NewSource(1))
	a := &acked{triedStart: map[string]bool{}, triedShip: map[int64]bool{}, triedEnd: map[int64]bool{}, cancelled: map[int64]bool{}, starts: map[int64]string{}, completed: map[int64]string{}, shipped: map[int64]bool{}, published: map[string]bool{}}
	for kill := range kills {
		after := 1 + rng.Intn(170) // lines before the kill: now and then right after the open
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envCrashStore+"="+location, envCrashSeed+"="+strconv.Itoa(kill+1))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		n := 0
		for lines.Scan() {
			a.read(t, lines.Text())
			if n++; n == after {
				if err := cmd.Process.Kill(); err != nil { // SIGKILL
					t.Fatal(err)
				}
			}
		}
		// The lines read after the kill were written before it: those
		// commands were acknowledged too.
		err = cmd.Wait()
		if n < after {
			t.Fatalf("run %d: the child ended after %d commands (%v): %s", kill, n, err, stderr.String())
		}
		t.Logf("run %d: killed after %d acknowledged commands", kill, n)
	}
	t.Logf("%d kills survived, %d commands acknowledged, %d instances started", kills, a.commands, len(a.starts))
	verifyCrash(t, location, open, a)
}

// verifyCrash reopens the store after the last kill and checks it against
// what the children acknowledged, then drives every instance to its end.
func verifyCrash(t *testing.T, location string, open CrashOpener, a *acked) {
	ctx := context.Background()
	s, closeStore, err := open(location)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.WithStore(s), engine.WithRetainFinished(1<<16))
	if err != nil {
		_ = closeStore()
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(ctx); err != nil {
			t.Error(err)
		}
		if err := closeStore(); err != nil {
			t.Error(err)
		}
	}()

	live := map[int64]*engine.Instance{}
	orders := map[string]int64{}
	unacked := 0
	for _, inst := range e.Instances() {
		live[inst.Key()] = inst
		order, _ := inst.Variables()["orderId"].(string)
		if other, dup := orders[order]; dup {
			t.Errorf("instances %d and %d both run order %s", other, inst.Key(), order)
		}
		orders[order] = inst.Key()
		if _, ok := a.starts[inst.Key()]; !ok {
			if !a.triedStart[order] {
				t.Errorf("instance %d runs order %q, which no child started", inst.Key(), order)
			}
			unacked++ // started just before a kill: committed, not yet acknowledged
		}
	}
	finishedUnacked := 0
	for key, order := range a.starts {
		_, isLive := live[key]
		switch {
		case isLive && a.shipped[key]:
			t.Errorf("instance %d (%s) is live, but its ship job's completion was acknowledged", key, order)
		case isLive && a.cancelled[key]:
			t.Errorf("instance %d (%s) is live, but its cancellation was acknowledged", key, order)
		case !isLive && !a.shipped[key] && !a.cancelled[key] && !a.triedShip[key] && !a.triedEnd[key]:
			t.Errorf("instance %d (%s) was acknowledged started and is lost", key, order)
		case !isLive && !a.shipped[key] && !a.cancelled[key]:
			finishedUnacked++ // its ship job was being completed, or it was being cancelled, when the child was killed
		}
	}
	t.Logf("committed but not acknowledged when killed: %d starts, %d last job completions or cancellations", unacked, finishedUnacked)
	openJobs := map[int64]bool{}
	for _, j := range e.Jobs(engine.JobFilter{}) {
		openJobs[j.Key] = true
	}
	for job, typ := range a.completed {
		if openJobs[job] {
			t.Errorf("job %d (%s) is open again, but its completion was acknowledged", job, typ)
		}
		if err := e.CompleteJob(ctx, job, nil); !errors.Is(err, engine.ErrUnknownJob) {
			t.Errorf("completing job %d (%s) again: %v, want ErrUnknownJob", job, typ, err)
		}
	}
	for key, inst := range live {
		hist, err := inst.History(ctx)
		if err != nil {
			t.Fatal(err)
		}
		correlated := 0
		for _, ev := range hist {
			if ev.Type == engine.MessageCorrelated {
				correlated++
			}
		}
		order := inst.Variables()["orderId"].(string)
		if a.published[order] && correlated != 1 {
			t.Errorf("instance %d (%s): its message was acknowledged, correlated %d times", key, order, correlated)
		}
	}
	if t.Failed() {
		return
	}

	// Every instance goes on to its end.
	for round := 0; len(e.Instances()) > 0; round++ {
		if round == 10 {
			t.Fatalf("%d instances still live after %d rounds of input", len(e.Instances()), round)
		}
		for _, j := range e.Jobs(engine.JobFilter{}) {
			vars := map[string]any{"packed": true}
			if j.Type == "ship" {
				vars = map[string]any{"shipped": true}
			}
			if err := e.CompleteJob(ctx, j.Key, vars); err != nil {
				t.Fatal(err)
			}
		}
		for _, inst := range e.Instances() {
			order := inst.Variables()["orderId"].(string)
			err := e.PublishMessage(ctx, engine.Message{Name: "paid", CorrelationKey: order, MessageID: "pay-" + order,
				TTL: time.Hour, Variables: map[string]any{"paid": order}})
			if err != nil && !errors.Is(err, engine.ErrDuplicateMessage) {
				t.Fatal(err)
			}
		}
		if err := e.Advance(ctx, 5*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	for key := range live {
		inst, ok := e.Instance(key)
		if !ok {
			t.Fatalf("instance %d is gone", key)
		}
		if inst.State() != engine.Completed {
			t.Errorf("instance %d ended %s: %s", key, inst.State(), inst.Message())
			continue
		}
		vars := inst.Variables()
		order := vars["orderId"]
		for name, want := range map[string]any{"packed": true, "shipped": true, "paid": order} {
			if vars[name] != want {
				t.Errorf("instance %d: variable %s = %v, want %v", key, name, vars[name], want)
			}
		}
		hist, err := inst.History(ctx)
		if err != nil {
			t.Fatal(err)
		}
		count := map[engine.EventType]int{}
		for _, ev := range hist {
			count[ev.Type]++
		}
		for typ, want := range map[engine.EventType]int{engine.InstanceStarted: 1, engine.JobCompleted: 2, engine.MessageCorrelated: 1,
			engine.TimerFired: 1, engine.InstanceCompleted: 1} {
			if count[typ] != want {
				t.Errorf("instance %d: %d %s records, want %d", key, count[typ], typ, want)
			}
		}
	}
	t.Logf("%d instances live at the last reopen, all completed", len(live))
}
