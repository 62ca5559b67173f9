package cluster_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/internal/testtime"
)

// slowDisk delays the commits of the stores it wraps while it is on, as a
// slow disk would: 40% of them by 50 to 800 ms, 5% by more than half the
// lease TTL (long enough for a fence to close while the commit is under
// way). The delay comes before the commit reaches the store, beneath the
// partition's fence (cluster.Config.WrapStore). Safe for concurrent use.
type slowDisk struct {
	on       atomic.Bool
	long     time.Duration // the least long delay: half the lease TTL
	mu       sync.Mutex
	rng      *rand.Rand
	errs     map[string]int // errors of delayed commits, by kind
	commits  atomic.Int64
	delayed  atomic.Int64
	longs    atomic.Int64
	inflight atomic.Int64 // delayed commits under way
}

func newSlowDisk(ttl time.Duration) *slowDisk {
	return &slowDisk{long: ttl / 2, rng: rand.New(rand.NewPCG(rand.Uint64(), 19)), errs: map[string]int{}}
}

func (d *slowDisk) wrap(_ int, s engine.Store) engine.Store { return slowStore{Store: s, d: d} }

// delay draws a commit's delay.
func (d *slowDisk) delay() time.Duration {
	if !d.on.Load() {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch r := d.rng.Float64(); {
	case r < 0.05:
		d.longs.Add(1)
		return d.long + 100*time.Millisecond + time.Duration(d.rng.Int64N(int64(400*time.Millisecond)))
	case r < 0.45:
		return 50*time.Millisecond + time.Duration(d.rng.Int64N(int64(750*time.Millisecond)))
	}
	return 0
}

func (d *slowDisk) failed(err error) {
	kind := "other (" + err.Error() + ")"
	switch {
	case errors.Is(err, jetstore.ErrSuperseded):
		kind = "superseded"
	case errors.Is(err, cluster.ErrFenced):
		kind = "fenced"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		kind = "context"
	case errors.Is(err, nats.ErrReconnectBufExceeded):
		kind = "connection down"
	}
	d.mu.Lock()
	d.errs[kind]++
	d.mu.Unlock()
}

func (d *slowDisk) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	kinds := make([]string, 0, len(d.errs))
	for k, n := range d.errs {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("%d commits, %d delayed (%d by more than %s), delayed commits failing: [%s]",
		d.commits.Load(), d.delayed.Load(), d.longs.Load(), d.long, strings.Join(kinds, ", "))
}

// slowStore is a partition's store on a slow disk.
type slowStore struct {
	engine.Store
	d *slowDisk
}

func (s slowStore) Commit(ctx context.Context, b *engine.StoreBatch) error {
	s.d.commits.Add(1)
	wait := s.d.delay()
	if wait == 0 {
		return s.Store.Commit(ctx, b)
	}
	s.d.delayed.Add(1)
	s.d.inflight.Add(1)
	defer s.d.inflight.Add(-1)
	t := time.NewTimer(wait) // the fault itself, not a wait for sync
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	err := s.Store.Commit(ctx, b) // with an ended context, refused unwritten
	if err != nil {
		s.d.failed(err)
	}
	return err
}

var clusterSlowRounds = flag.Int("cluster.slowrounds", 2, "how many fault rounds TestCluster_SlowDisk runs with one node's disk slow (make stress runs 8)")

// TestCluster_SlowDisk gives one member's node a slow disk (its
// partitions' commits delayed, some by more than half the lease TTL) and
// runs the mixed workload through cluster.slowrounds fault rounds: every
// other round cuts the slow node off while a delayed commit is under way
// (its fences close during the commit), the others kill and restart
// another member (the slow node takes partitions over). The workload's
// invariants hold: every acknowledged start completes exactly once with
// the expected variables, no job is completed twice.
func TestCluster_SlowDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server cluster: make race (part of make test) runs it")
	}
	cfg := clusterConfig("sd")
	disk := newSlowDisk(cfg.LeaseTTL)
	const slow = 0 // the member whose disk is slow
	tc := newTestClusterWith(t, 3, cfg, func(i int, cfg *cluster.Config) {
		if i == slow {
			cfg.WrapStore = disk.wrap
		}
	})
	slowName := tc.nats[slow].Name
	cl := tc.client()
	ctx, cancel := reqCtx()
	_, err := cl.Deploy(ctx, "order.bpmn", orderBPMN)
	cancel()
	require.NoError(t, err)
	disk.on.Store(true)
	w := newWorkload(cl)
	wctx, stopWork := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.work(wctx) })
	var next atomic.Int64 // starts tried; safe for the starter of the cut-off rounds
	batch := func(n int) {
		for range n {
			w.start(int(next.Add(1)))
		}
	}
	var takeovers []time.Duration
	cuts, cutsMidCommit := 0, 0
	for round := range *clusterSlowRounds {
		batch(8)
		if round%2 == 0 {
			// Cut the slow node off, at a moment a delayed commit is
			// under way if one comes within 5 s; a starter keeps
			// commands coming meanwhile and through the cut.
			cuts++
			stopStarts := make(chan struct{})
			var starter sync.WaitGroup
			starter.Go(func() {
				for {
					select {
					case <-stopStarts:
						return
					default:
						batch(1)
					}
				}
			})
			tick := time.NewTicker(time.Millisecond)
			for limit := time.Now().Add(testtime.Scale(5 * time.Second)); disk.inflight.Load() == 0 && time.Now().Before(limit); {
				<-tick.C
			}
			tick.Stop()
			if disk.inflight.Load() > 0 {
				cutsMidCommit++
			}
			start := time.Now()
			tc.cutOff(slow)
			close(stopStarts)
			requireEventually(t, func() bool { return tc.survivorsServe(slow) }, testtime.Scale(60*time.Second), 10*time.Millisecond)
			takeovers = append(takeovers, time.Since(start))
			starter.Wait() // its last start may wait out its deadline
			batch(4)
			tc.startNATS(slow)
		} else {
			victim := 1 + rand.IntN(2)
			// Timed from before the kill: stopping a NATS server can
			// take longer than the lease TTL, and the takeover runs
			// meanwhile.
			start := time.Now()
			tc.kill(victim)
			tc.waitServed(testtime.Scale(60 * time.Second))
			takeovers = append(takeovers, time.Since(start))
			batch(4)
			tc.restart(victim)
		}
		tc.waitBalanced(testtime.Scale(60 * time.Second))
	}
	batch(8)
	w.check(t, testtime.Scale(120*time.Second))
	stopWork()
	wg.Wait()
	disk.on.Store(false)
	t.Logf("slow disk on %s: %s", slowName, disk)
	t.Logf("%d rounds (%d cutting the slow node off, %d of them with a delayed commit under way); takeovers after %v (lease TTL %s)",
		*clusterSlowRounds, cuts, cutsMidCommit, takeovers, cfg.LeaseTTL)
	t.Logf("fences: %d (%d on %s), renewals after a fence closed: %d; leases taken: %d; released for rebalance: %d",
		tc.counted(": fenced"), tc.counted(": fenced@"+slowName), slowName, tc.counted("lease renewed after its fence closed"),
		tc.counted("lease taken"), tc.counted("released for rebalance"))
	t.Logf("%d of %d starts acknowledged, %d commands not acknowledged", len(w.started), next.Load(), w.failures.Load())
}
