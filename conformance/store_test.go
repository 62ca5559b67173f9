package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/boltstore"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// storing plays a scenario on an engine with an embedded store, closing
// the engine and opening a new one on the same file after every step, in
// the other resumption mode each time. Each reopened engine must write
// the very checkpoint the closed one wrote.
type storing struct {
	*Native
	// openStore opens the store anew; closeStore closes it.
	openStore  func() (engine.Store, error)
	closeStore func() error
	mode       engine.Resumption
	reopens    int
}

// boltStoring is a storing on a boltstore file at path.
func boltStoring(path string, mode engine.Resumption) *storing {
	r := &storing{mode: mode}
	r.openStore = func() (engine.Store, error) {
		s, err := boltstore.Open(path, &boltstore.Options{NoSync: true})
		if err != nil {
			return nil, err
		}
		r.closeStore = s.Close
		return s, nil
	}
	return r
}

func (r *storing) open() error {
	s, err := r.openStore()
	if err != nil {
		return err
	}
	e, err := engine.New(engine.WithStore(s), engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(r.mode))
	if err != nil {
		_ = r.closeStore()
		return err
	}
	r.Native = &Native{e: e, insts: map[int64]*engine.Instance{}}
	return nil
}

// Settle settles, then closes the engine and reopens the store.
func (r *storing) Settle(ctx context.Context) error {
	if err := r.Native.Settle(ctx); err != nil {
		return err
	}
	doc, err := r.e.Checkpoint(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := r.Close(ctx); err != nil {
		return err
	}
	if r.mode == engine.ResumeGoroutines {
		r.mode = engine.ResumeDirect
	} else {
		r.mode = engine.ResumeGoroutines
	}
	if err := r.open(); err != nil {
		return fmt.Errorf("reopen the store: %w", err)
	}
	again, err := r.e.Checkpoint(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint after reopening: %w", err)
	}
	if !bytes.Equal(doc, again) {
		return fmt.Errorf("reopened, the engine writes another document:\n%s\nthan the closed one:\n%s", again, doc)
	}
	r.reopens++
	return nil
}

// Close closes the engine, then its store.
func (r *storing) Close(ctx context.Context) error {
	err := r.Native.Close(ctx)
	if cerr := r.closeStore(); err == nil {
		err = cerr
	}
	return err
}

// TestScenariosStored plays every scenario on an engine with the embedded
// store, closed and reopened after every step (switching resumption mode
// each time), and requires the observations of the uninterrupted run:
// what a store holds is all an engine needs to go on.
func TestScenariosStored(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a store file per scenario and mode, reopened after every step: too long for -short, over two minutes under -race on two cores (make restore-hosts, part of make test, runs it)")
	}
	scenarios, err := Load("scenarios")
	if err != nil {
		t.Fatal(err)
	}
	reopens := 0
	defer func() {
		if !t.Failed() && reopens == 0 {
			t.Error("no scenario reopened the store")
		}
		t.Logf("%d scenarios, %d reopens", len(scenarios), reopens)
	}()
	for _, s := range scenarios {
		if _, ok := s.Skip["native"]; ok {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			for _, mode := range []engine.Resumption{engine.ResumeGoroutines, engine.ResumeDirect} {
				plain, err := playNative(t, s, mode)
				if err != nil {
					t.Fatalf("mode %d: uninterrupted: %v", mode, err)
				}
				r := boltStoring(filepath.Join(t.TempDir(), "flowtrack.db"), mode)
				if err := r.open(); err != nil {
					t.Fatal(err)
				}
				res, err := Run(ctxT(t), r, s)
				if cerr := r.Close(context.Background()); cerr != nil && err == nil {
					err = cerr
				}
				if err != nil {
					t.Fatalf("mode %d: reopened after every step: %v", mode, err)
				}
				reopens += r.reopens
				want, _ := json.Marshal(plain.Observations)
				got, _ := json.Marshal(res.Observations)
				if !bytes.Equal(got, want) {
					t.Errorf("mode %d: reopened after every step (%d reopens) observed\n%s\nuninterrupted\n%s", mode, r.reopens, got, want)
				}
			}
		})
	}
}
