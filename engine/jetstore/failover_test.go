package jetstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/server"
)

// TestStore_CommitsThroughLeaderKills kills the stream's leader again and
// again while one writer commits in a loop, as an engine does: every
// Commit returns nil or its context's error (a leader election is waited
// out, never reported as a failure), a commit that returned the context's
// error is written again, as the engine writes it again, and afterwards
// the store holds exactly the commits made: every instance once, every
// deployment once and at its index, the last engine document.
func TestStore_CommitsThroughLeaderKills(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS servers")
	}
	c := startCluster(t, 3)
	nc := c.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(3*time.Minute))
	defer cancel()
	require.NoError(t, server.WaitForJetStream(ctx, nc))
	s, err := jetstore.Open(ctx, nc, &jetstore.Options{Name: "kills", Replicas: 3, Timeout: time.Second})
	require.NoError(t, err)
	js, err := jetstream.New(nc)
	require.NoError(t, err)

	const kills = 4
	var acked atomic.Int64 // commits acknowledged
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for k := int64(1); ; k++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			b := &engine.StoreBatch{Engine: []byte(fmt.Sprintf(`{"lastKey":%d}`, k)),
				Put: map[int64][]byte{k: []byte(fmt.Sprintf(`{"key":%d}`, k))}, Deployments: [][]byte{[]byte(fmt.Sprintf(`{"dep":%d}`, k))}}
			for {
				cctx, cancel := context.WithTimeout(ctx, testtime.Scale(10*time.Second))
				err := s.Commit(cctx, b)
				// An error is the context's only when the context ended:
				// a request that timed out on its own (its server died)
				// is a transient state to wait out, not an answer.
				ended := cctx.Err() != nil
				cancel()
				if err == nil {
					break
				}
				if !ended || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
					done <- fmt.Errorf("commit %d: %w", k, err)
					return
				}
				t.Logf("commit %d: %v; written again", k, err)
			}
			acked.Store(k)
		}
	}()
	// waitFor waits for cond, failing the test when the commit loop
	// failed or ctx ended.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case err := <-done:
				t.Fatalf("waiting for %s: the commit loop ended: %v", what, err)
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	streamInfo := func() *jetstream.StreamInfo {
		ictx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		st, err := js.Stream(ictx, "FLOWTRACK_STORE_kills")
		if err != nil {
			return nil
		}
		return st.CachedInfo()
	}
	for kill := 1; kill <= kills; kill++ {
		from := acked.Load()
		waitFor("commits before the kill", func() bool { return acked.Load() >= from+20 })
		var leader string
		waitFor("a stream leader", func() bool {
			info := streamInfo()
			if info != nil && info.Cluster != nil {
				leader = info.Cluster.Leader
			}
			return leader != ""
		})
		i := c.index(leader)
		at := acked.Load()
		c.stop(i)
		waitFor("commits after the kill", func() bool { return acked.Load() >= at+10 })
		t.Logf("kill %d: leader %s killed after commit %d; commits went on", kill, leader, at)
		require.NoError(t, c.start(i))
		// The next kill waits for every replica to be current again, so
		// that the stream keeps a majority.
		waitFor("every replica current", func() bool {
			info := streamInfo()
			if info == nil || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
				return false
			}
			for _, r := range info.Cluster.Replicas {
				if !r.Current || r.Offline {
					return false
				}
			}
			return true
		})
	}
	close(stop)
	require.NoError(t, <-done)
	n := acked.Load()

	st, err := s.Load(ctx)
	require.NoError(t, err)
	var doc struct{ LastKey int64 }
	require.NoError(t, json.Unmarshal(st.Engine, &doc))
	require.Equal(t, n, doc.LastKey)
	require.Len(t, st.Instances, int(n))
	for k := int64(1); k <= n; k++ {
		require.Contains(t, st.Instances, k)
		require.JSONEq(t, fmt.Sprintf(`{"key":%d}`, k), string(st.Instances[k].Doc))
	}
	require.Len(t, st.Deployments, int(n), "a deployment lost or written twice")
	for i, d := range st.Deployments {
		require.JSONEq(t, fmt.Sprintf(`{"dep":%d}`, i+1), string(d))
	}
	t.Logf("%d commits through %d leader kills", n, kills)
}

// TestStore_OpenWhileAPeerJoins opens a store of three replicas on a
// cluster whose third server starts a second later: Open waits for the
// peer (no suitable peers for placement meanwhile) and returns a store
// whose first commit succeeds.
func TestStore_OpenWhileAPeerJoins(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS servers")
	}
	c := newCluster(t, 3)
	require.NoError(t, c.start(0))
	require.NoError(t, c.start(1))
	nc := c.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(60*time.Second))
	defer cancel()
	require.NoError(t, server.WaitForJetStream(ctx, nc))
	joined := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		joined <- c.start(2)
	}()
	s, err := jetstore.Open(ctx, nc, &jetstore.Options{Name: "join", Replicas: 3})
	require.NoError(t, err)
	require.NoError(t, <-joined)
	require.NoError(t, s.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"lastKey":1}`)}))
	st, err := s.Load(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"lastKey":1}`, string(st.Engine))
}

// TestStore_OpenGivesUpSayingWhatIsMissing: a store of three replicas on
// a cluster of which only two servers run cannot be placed; once Open's
// context ends its error says so, and is the context's.
func TestStore_OpenGivesUpSayingWhatIsMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts NATS servers")
	}
	c := newCluster(t, 3)
	require.NoError(t, c.start(0))
	require.NoError(t, c.start(1))
	nc := c.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(60*time.Second))
	defer cancel()
	require.NoError(t, server.WaitForJetStream(ctx, nc))
	octx, ocancel := context.WithTimeout(ctx, testtime.Scale(2*time.Second))
	defer ocancel()
	_, err := jetstore.Open(octx, nc, &jetstore.Options{Name: "missing", Replicas: 3})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "3 replicas asked for")
	require.ErrorContains(t, err, "no suitable peers")
	require.ErrorContains(t, err, " s (")
	t.Log(err)
}
