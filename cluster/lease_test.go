package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
)

// countingStore counts the commits that reach it.
type countingStore struct {
	engine.Store
	commits int
}

func (s *countingStore) Commit(context.Context, *engine.StoreBatch) error { s.commits++; return nil }

// A fence is open until half a TTL after the renewal it was last extended
// by, refuses commits from then on, and never reopens: a late renewal
// does not make the refused commands' effects committable.
func TestFence(t *testing.T) {
	epoch := time.Now()
	ttl := time.Hour
	f := newFence(epoch, time.Now(), ttl)
	inner := &countingStore{}
	st := fencedStore{Store: inner, fence: f}
	if err := st.Commit(context.Background(), &engine.StoreBatch{}); err != nil || inner.commits != 1 {
		t.Fatalf("open fence: commit %v, %d commits", err, inner.commits)
	}
	if !f.extend(time.Now(), ttl) {
		t.Fatal("extending an open fence closed it")
	}

	late := newFence(epoch, time.Now().Add(-ttl), ttl) // last renewal sent a TTL ago
	if late.open() {
		t.Fatal("a fence half a TTL past its last renewal is open")
	}
	if late.extend(time.Now(), ttl) {
		t.Fatal("a closed fence reopened on a late renewal")
	}
	st = fencedStore{Store: inner, fence: late}
	if err := st.Commit(context.Background(), &engine.StoreBatch{}); !errors.Is(err, ErrFenced) || inner.commits != 1 {
		t.Fatalf("closed fence: commit %v, %d commits; want ErrFenced and none", err, inner.commits)
	}

	f.trip()
	if f.open() || f.extend(time.Now(), ttl) {
		t.Fatal("a tripped fence is open")
	}
}

// Keys of the workload spread over partitions by FNV-1a, 1 to P.
func TestMessagePartition(t *testing.T) {
	seen := map[int]bool{}
	for _, k := range []string{"order-0", "order-1", "order-2", "order-3", "order-4", "order-5", "order-6", "order-7", ""} {
		p := MessagePartition(k, 4)
		if p < 1 || p > 4 {
			t.Fatalf("MessagePartition(%q, 4) = %d", k, p)
		}
		if MessagePartition(k, 4) != p {
			t.Fatalf("MessagePartition(%q) is not stable", k)
		}
		seen[p] = true
	}
	if len(seen) < 3 {
		t.Errorf("nine keys reached only partitions %v of 4", seen)
	}
}
