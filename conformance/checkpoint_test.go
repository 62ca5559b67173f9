package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// restoring is the native runner with a checkpoint after every step: each
// time the engine settles, its state is written, restored into a fresh
// engine running its tokens the other way (goroutines, then direct
// resumption, then goroutines...), and the run goes on there, the old
// engine closed. Each restored engine must also write back the very
// document it was restored from.
type restoring struct {
	*Native
	mode        engine.Resumption
	checkpoints int
}

func newRestoring(mode engine.Resumption) (*restoring, error) {
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(mode))
	if err != nil {
		return nil, err
	}
	return &restoring{Native: &Native{e: e, insts: map[int64]*engine.Instance{}}, mode: mode}, nil
}

// Settle settles, then moves the run into an engine restored from a
// checkpoint.
func (r *restoring) Settle(ctx context.Context) error {
	doc, err := r.e.Checkpoint(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	mode := engine.ResumeDirect
	if r.mode == engine.ResumeDirect {
		mode = engine.ResumeGoroutines
	}
	next, err := engine.Restore(doc, engine.WithResumption(mode))
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	again, err := next.Checkpoint(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint of the restored engine: %w", err)
	}
	if !bytes.Equal(doc, again) {
		return fmt.Errorf("the restored engine writes another document:\n%s\nthan the one it was restored from:\n%s", again, doc)
	}
	if err := r.e.Close(ctx); err != nil {
		return fmt.Errorf("close the checkpointed engine: %w", err)
	}
	r.e, r.insts, r.mode = next, map[int64]*engine.Instance{}, mode
	r.checkpoints++
	return nil
}

// TestScenariosRestored plays every scenario with a checkpoint and restore
// after every step, starting in either resumption mode and switching mode
// at every restore, and requires the very observations of the
// uninterrupted run in that mode: histories in full order, tokens,
// variables, jobs and incidents.
func TestScenariosRestored(t *testing.T) {
	scenarios, err := Load("scenarios")
	if err != nil {
		t.Fatal(err)
	}
	modes := []struct {
		name string
		r    engine.Resumption
	}{{"goroutines", engine.ResumeGoroutines}, {"direct", engine.ResumeDirect}}
	for _, s := range scenarios {
		if _, ok := s.Skip["native"]; ok {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			for _, m := range modes {
				plain, err := func() (*Result, error) {
					e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(m.r))
					if err != nil {
						return nil, err
					}
					n := &Native{e: e, insts: map[int64]*engine.Instance{}}
					defer n.Close(context.Background())
					return Run(ctxT(t), n, s)
				}()
				if err != nil {
					t.Fatalf("%s: uninterrupted: %v", m.name, err)
				}
				r, err := newRestoring(m.r)
				if err != nil {
					t.Fatal(err)
				}
				res, err := Run(ctxT(t), r, s)
				if cerr := r.Close(context.Background()); cerr != nil {
					t.Errorf("%s: close: %v", m.name, cerr)
				}
				if err != nil {
					t.Fatalf("%s: restored after every step: %v", m.name, err)
				}
				want, _ := json.Marshal(plain.Observations)
				got, _ := json.Marshal(res.Observations)
				if !bytes.Equal(got, want) {
					t.Errorf("%s: restored after every step (%d restores) observed\n%s\nuninterrupted\n%s", m.name, r.checkpoints, got, want)
				}
			}
		})
	}
}
