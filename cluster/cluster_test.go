package cluster_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/wire"
)

//go:embed testdata/order.bpmn
var orderBPMN []byte

func clusterConfig(name string) cluster.Config {
	return cluster.Config{Cluster: name, Partitions: 6, Replicas: 3, LeaseTTL: testtime.Scale(2 * time.Second), BusinessKey: "orderId"}
}

// workload runs the mixed workload of the cluster tests against a
// cluster: starts by business key, a worker completing the jobs of both
// job types, a keyed message per order, and records what was
// acknowledged.
type workload struct {
	cl *client.Client
	// started maps an acknowledged start's instance key to its order id.
	mu      sync.Mutex
	started map[int64]string
	// completed counts the acknowledged completions of each job key.
	completed map[int64]int
	failures  atomic.Int64 // commands not acknowledged (outcome unknown)
	errors    []string     // what they were and why, for a failing test to tell
}

func newWorkload(cl *client.Client) *workload {
	return &workload{cl: cl, started: map[int64]string{}, completed: map[int64]int{}}
}

func reqCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), testtime.Scale(20*time.Second))
}

// start starts order i and publishes its confirmation, buffered until
// the instance waits for it. A confirmation not acknowledged is sent
// again with the same message id, as a client that wants it delivered
// does (a duplicate is refused as such), for up to a minute.
func (w *workload) start(i int) {
	id := fmt.Sprintf("order-%d", i)
	ctx, cancel := reqCtx()
	key, err := w.cl.Start(ctx, "order", map[string]any{"orderId": id})
	cancel()
	if err != nil {
		w.failed("start "+id, err)
		return
	}
	w.mu.Lock()
	w.started[key] = id
	w.mu.Unlock()
	for limit := time.Now().Add(testtime.Scale(time.Minute)); ; {
		ctx, cancel := reqCtx()
		err = w.cl.PublishMessage(ctx, engine.Message{Name: "confirm", CorrelationKey: id, MessageID: id, TTL: time.Hour,
			Variables: map[string]any{"confirmed": true}})
		cancel()
		if err == nil || errors.Is(err, engine.ErrDuplicateMessage) {
			return
		}
		w.failed("confirm "+id, err)
		if time.Now().After(limit) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// failed records a command not acknowledged (its outcome is unknown).
func (w *workload) failed(what string, err error) {
	w.failures.Add(1)
	w.mu.Lock()
	w.errors = append(w.errors, what+": "+err.Error())
	w.mu.Unlock()
}

// work completes every job it finds until ctx ends: "pay" with the
// order id it paid, "pack" with packed.
func (w *workload) work(ctx context.Context) {
	tick := time.NewTicker(20 * time.Millisecond) // a worker's poll interval
	defer tick.Stop()
	for ctx.Err() == nil {
		rctx, cancel := reqCtx()
		jobs, _ := w.cl.Jobs(rctx, engine.JobFilter{}) // after an error (a partition moving), the next poll
		cancel()
		for _, j := range jobs {
			vars := map[string]any{"packed": true}
			if j.Type == "pay" {
				vars = map[string]any{"paid": j.Variables["orderId"]}
			}
			rctx, cancel := reqCtx()
			err := w.cl.CompleteJob(rctx, j.Key, vars)
			cancel()
			if err == nil {
				w.mu.Lock()
				w.completed[j.Key]++
				w.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// check waits until every acknowledged instance has completed, then
// checks each once: completed once, with the expected variables, each
// job completed once.
func (w *workload) check(t *testing.T, limit time.Duration) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			w.mu.Lock()
			t.Logf("commands not acknowledged:\n%s", strings.Join(w.errors, "\n"))
			w.mu.Unlock()
		}
	})
	w.mu.Lock()
	started := make(map[int64]string, len(w.started))
	for k, v := range w.started {
		started[k] = v
	}
	w.mu.Unlock()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for key, id := range started {
		var inst *wire.InstanceResult
		for {
			ctx, cancel := reqCtx()
			res, err := w.cl.Instance(ctx, key)
			cancel()
			if err == nil && res.State != engine.Active {
				inst = res
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("instance %d (%s) not finished within %s: %+v, %v", key, id, limit, res, err)
			}
			<-tick.C
		}
		require.Equal(t, engine.Completed, inst.State, "instance %d (%s): %s", key, id, inst.Message)
		assert.Equal(t, id, inst.Variables["orderId"])
		assert.Equal(t, id, inst.Variables["paid"], "instance %d", key)
		assert.Equal(t, true, inst.Variables["packed"], "instance %d", key)
		assert.Equal(t, true, inst.Variables["confirmed"], "instance %d", key)
		ctx, cancel := reqCtx()
		hist, err := w.cl.History(ctx, key)
		cancel()
		require.NoError(t, err)
		counts := map[string]int{}
		for _, ev := range hist {
			switch {
			case ev.Type == engine.InstanceCompleted:
				counts["completed"]++
			case ev.Type == engine.ElementLeft && (ev.ElementID == "pay" || ev.ElementID == "ship" || ev.ElementID == "confirmed"):
				counts[ev.ElementID]++
			}
		}
		assert.Equal(t, map[string]int{"completed": 1, "pay": 1, "ship": 1, "confirmed": 1}, counts, "instance %d (%s)", key, id)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, n := range w.completed {
		assert.Equal(t, 1, n, "job %d completed %d times", k, n)
	}
}

// TestCluster_FailoverUnderLoad runs the mixed workload on three nodes
// over three NATS servers (replicas 3), kills one member (its node and its
// NATS server) midway, and checks that the survivors own its partitions
// again and that every acknowledged command took effect exactly once.
func TestCluster_FailoverUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server cluster: make race (part of make test) runs it")
	}
	tc := newTestCluster(t, 3, clusterConfig("fo"))
	cl := tc.client()
	ctx, cancel := reqCtx()
	d, err := cl.Deploy(ctx, "order.bpmn", orderBPMN)
	cancel()
	require.NoError(t, err)
	require.Len(t, d.Processes, 2)

	w := newWorkload(cl)
	wctx, stopWork := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.work(wctx) })
	const orders = 40
	for i := range orders / 2 {
		w.start(i)
	}
	// The victim's partitions hold instances under way (their timers
	// run for two seconds), which the survivors must finish.
	active := 0
	for _, id := range tc.nodes[1].Owned() {
		if p := tc.nodes[1].Partition(id); p != nil {
			active += p.Engine().Stats().Instances
		}
	}
	require.Positive(t, active, "instances under way on the victim's partitions")
	killed := time.Now()
	tc.kill(1)
	// Read at once, while the streams the killed server led elect new
	// leaders, the status answers: a stream with a leader shows its
	// replicas, one still electing shows no leader (ReadStatus does not
	// wait for it, so that status never hangs during a failover).
	st, err := cluster.ReadStatus(context.Background(), tc.conns[0], tc.cfg.Cluster)
	require.NoError(t, err, "status during the failover")
	for _, o := range st.Owners {
		if o.Leader != "" {
			assert.Equal(t, 3, o.Replicas, "partition %d's replicas, read during the failover", o.ID)
		}
	}
	takeover := tc.waitServed(testtime.Scale(60 * time.Second))
	t.Logf("partitions of the killed node (%d instances under way) served again %s after the kill (lease TTL %s): %s",
		active, takeover.Round(time.Millisecond), tc.cfg.LeaseTTL, tc.owners())
	st, err = cluster.ReadStatus(context.Background(), tc.conns[0], tc.cfg.Cluster)
	require.NoError(t, err)
	require.Len(t, st.Owners, tc.cfg.Partitions)
	for _, o := range st.Owners {
		assert.Contains(t, []string{"n1", "n3"}, o.Owner, "partition %d", o.ID)
		assert.Equal(t, 3, o.Replicas, "partition %d", o.ID)
	}
	for i := orders / 2; i < orders; i++ {
		w.start(i)
	}
	w.check(t, testtime.Scale(90*time.Second))
	stopWork()
	wg.Wait()
	t.Logf("%d of %d starts acknowledged, %d commands not acknowledged; %d jobs completed; run took %s since the kill",
		len(w.started), orders, w.failures.Load(), len(w.completed), time.Since(killed).Round(time.Millisecond))
	require.GreaterOrEqual(t, len(w.started), orders/2, "starts after the takeover are all acknowledged")

	// Queries merge over the partitions.
	ctx, cancel = reqCtx()
	defer cancel()
	var m engine.Metrics
	raw, err := cl.Call(ctx, "metrics", nil)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &m))
	var order engine.ProcessMetrics
	for _, p := range m.Processes {
		if p.ProcessID == "order" {
			order = p
		}
	}
	assert.GreaterOrEqual(t, order.Completed, len(w.started))
	defs, err := cl.Call(ctx, "definitions", nil)
	require.NoError(t, err)
	assert.Contains(t, string(defs), `"version":1`)
	assert.NotContains(t, string(defs), `"version":2`, "every partition holds the deployment once")
}

var clusterKills = flag.Int("cluster.kills", 2, "how many times TestCluster_KillRestart kills and restarts a random member (make stress raises it)")

// TestCluster_KillRestart kills a random member (node and NATS server),
// or every other time cuts its node off (its server only), under load,
// waits for the takeover, restarts it, waits for the rebalance,
// cluster.kills times; then checks the workload's invariants.
func TestCluster_KillRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server cluster: make race (part of make test) runs it")
	}
	tc := newTestCluster(t, 3, clusterConfig("kr"))
	cl := tc.client()
	ctx, cancel := reqCtx()
	_, err := cl.Deploy(ctx, "order.bpmn", orderBPMN)
	cancel()
	require.NoError(t, err)
	w := newWorkload(cl)
	wctx, stopWork := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.work(wctx) })
	next := 0
	batch := func(n int) {
		for range n {
			w.start(next)
			next++
		}
	}
	var takeovers []time.Duration
	cuts := 0
	for round := range *clusterKills {
		batch(8)
		victim := rand.IntN(3)
		if round%2 == 1 {
			// Every other round cuts the node off instead: its server
			// goes, the node stays and must fence itself.
			cuts++
			start := time.Now()
			tc.cutOff(victim)
			requireEventually(t, func() bool { return tc.survivorsServe(victim) }, testtime.Scale(60*time.Second), 10*time.Millisecond)
			takeovers = append(takeovers, time.Since(start))
			batch(4)
			tc.startNATS(victim)
		} else {
			tc.kill(victim)
			takeovers = append(takeovers, tc.waitServed(testtime.Scale(60*time.Second)))
			batch(4)
			tc.restart(victim)
		}
		tc.waitBalanced(testtime.Scale(60 * time.Second))
	}
	batch(8)
	w.check(t, testtime.Scale(120*time.Second))
	stopWork()
	wg.Wait()
	t.Logf("%d kills (%d of them cutting a node off); takeovers after %v (lease TTL %s); %d of %d starts acknowledged, %d commands not acknowledged",
		*clusterKills, cuts, takeovers, tc.cfg.LeaseTTL, len(w.started), next, w.failures.Load())
}

// TestCluster_CutOff cuts a node off (its NATS server goes, the node
// stays): it fences itself off its partitions and stops serving them, the
// others take them over; when its server comes back the node rejoins and
// takes its share again, and the workload's invariants hold.
func TestCluster_CutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server cluster: make race (part of make test) runs it")
	}
	tc := newTestCluster(t, 3, clusterConfig("co"))
	cl := tc.client()
	ctx, cancel := reqCtx()
	_, err := cl.Deploy(ctx, "order.bpmn", orderBPMN)
	cancel()
	require.NoError(t, err)
	w := newWorkload(cl)
	wctx, stopWork := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.work(wctx) })
	for i := range 12 {
		w.start(i)
	}
	victim := tc.nodes[2]
	cut := time.Now()
	tc.cutOff(2)
	requireEventually(t, func() bool { return len(victim.Owned()) == 0 }, testtime.Scale(30*time.Second), 10*time.Millisecond,
		"a node cut off from NATS stops serving its partitions")
	fenced := time.Since(cut)
	requireEventually(t, func() bool { return tc.survivorsServe(2) }, testtime.Scale(60*time.Second), 10*time.Millisecond)
	t.Logf("cut-off node fenced off its partitions after %s, the others served them after %s (lease TTL %s)",
		fenced.Round(time.Millisecond), time.Since(cut).Round(time.Millisecond), tc.cfg.LeaseTTL)
	for i := 12; i < 20; i++ {
		w.start(i)
	}
	tc.startNATS(2) // the node reconnects by itself
	tc.waitBalanced(testtime.Scale(60 * time.Second))
	assert.NotEmpty(t, victim.Owned(), "the node rejoined and took its share")
	for i := 20; i < 28; i++ {
		w.start(i)
	}
	w.check(t, testtime.Scale(90*time.Second))
	stopWork()
	wg.Wait()
}
