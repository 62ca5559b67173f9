package jetstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
)

// TestStore_TakeOver: a store that opened the stream with TakeOver
// commits until another store takes the stream over; a commit of the old
// store that reaches the stream after that (a node that lost its
// partition, its commit accepted late) is refused with ErrSuperseded and
// leaves nothing: the new owner, and any store opened later, see only
// what the old store committed before the new one opened and what the
// new one committed.
func TestStore_TakeOver(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	open := func() *jetstore.Store {
		t.Helper()
		s, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "owned", TakeOver: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	old := open()
	if _, err := old.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := old.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"n":1}`), Put: map[int64][]byte{1: []byte(`{"i":1}`)}}); err != nil {
		t.Fatalf("commit before any take-over: %v", err)
	}

	owner := open()
	st, err := owner.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(st.Engine) != `{"n":1}` || st.Instances[1] == nil {
		t.Fatalf("the new owner loads engine %s, instances %v: want the old store's commit", st.Engine, st.Instances)
	}

	// The old store's commit after the new owner opened, before it wrote
	// anything: refused.
	late := &engine.StoreBatch{Engine: []byte(`{"n":2}`), Put: map[int64][]byte{2: []byte(`{"i":2}`)},
		History: map[int64]engine.HistoryChunk{2: {From: 0, Records: []byte(`[{"seq":1}]`)}}}
	if err := old.Commit(ctx, late); !errors.Is(err, jetstore.ErrSuperseded) {
		t.Fatalf("old store's commit after the take-over: %v, want ErrSuperseded", err)
	}
	if err := owner.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"n":3}`), Put: map[int64][]byte{3: []byte(`{"i":3}`)}}); err != nil {
		t.Fatalf("the new owner's commit: %v", err)
	}
	// And after the new owner wrote: still refused.
	if err := old.Commit(ctx, late); !errors.Is(err, jetstore.ErrSuperseded) {
		t.Fatalf("old store's commit after the new owner's: %v, want ErrSuperseded", err)
	}

	n.restart()
	reader, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "owned"})
	if err != nil {
		t.Fatal(err)
	}
	st, err = reader.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(st.Engine) != `{"n":3}` || st.Instances[1] == nil || st.Instances[3] == nil || st.Instances[2] != nil {
		t.Fatalf("after a restart: engine %s, instances %v: want the owners' commits and nothing of the refused one", st.Engine, keys(st.Instances))
	}
	if _, err := reader.Instance(ctx, 2); !errors.Is(err, engine.ErrUnknownInstance) {
		t.Fatalf("instance of the refused commit: %v, want ErrUnknownInstance", err)
	}
}

func keys(m map[int64]*engine.StoredInstance) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestStore_TakeOverPaths: the take-over refuses a superseded store on
// every path a commit takes: an atomic batch (more than a record holds),
// and the messages a record names when the new owner opened between the
// record and their writing (it rolled the record forward itself, so the
// commit is in the stream once, and the old store's late writes are
// refused).
func TestStore_TakeOverPaths(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	opts := func(name string) *jetstore.Options { return &jetstore.Options{Name: name, TakeOver: true} }

	t.Run("batch", func(t *testing.T) {
		old, err := jetstore.Open(ctx, n.nc, opts("batch"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jetstore.Open(ctx, n.nc, opts("batch")); err != nil {
			t.Fatal(err)
		}
		big := &engine.StoreBatch{Engine: []byte(`{"n":1}`), Put: map[int64][]byte{}}
		for k := int64(1); k <= 20; k++ {
			big.Put[k] = []byte(`{"i":1}`)
		}
		if err := old.Commit(ctx, big); !errors.Is(err, jetstore.ErrSuperseded) {
			t.Fatalf("a batch of 21 messages after the take-over: %v, want ErrSuperseded", err)
		}
		reader, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "batch"})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := reader.Load(ctx); err != nil || st.Engine != nil || len(st.Instances) != 0 {
			t.Fatalf("after the refused batch: %v, engine %s, %d instances; want nothing", err, st.Engine, len(st.Instances))
		}
	})

	t.Run("record", func(t *testing.T) {
		var owner *jetstore.Store
		old, err := jetstore.OpenFaulty(ctx, n.nc, opts("record"), func(step string) error {
			if step == "apply 1" && owner == nil {
				// The record is written: another store takes the stream
				// over before the old one writes what it names.
				var err error
				owner, err = jetstore.Open(ctx, n.nc, opts("record"))
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = old.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"n":1}`), Put: map[int64][]byte{1: []byte(`{"i":1}`)}})
		if !errors.Is(err, jetstore.ErrSuperseded) {
			t.Fatalf("writing a record's messages after the take-over: %v, want ErrSuperseded", err)
		}
		st, err := owner.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(st.Engine) != `{"n":1}` || st.Instances[1] == nil {
			t.Fatalf("the new owner loads engine %s, instances %v: want the commit its open rolled forward", st.Engine, keys(st.Instances))
		}
		if err := owner.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"n":2}`)}); err != nil {
			t.Fatalf("the new owner's commit: %v", err)
		}
	})
}
