package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/host"
)

// rotating plays a scenario with a checkpoint after every step: each
// time the engine settles, its state is written, restored into a fresh
// engine on the next host of a rotation, and the run goes on there, the
// old engine closed. Each restored engine must also write back the very
// document it was restored from.
type rotating struct {
	Runner
	rotation []target
	next     int
	restores map[string]restoreCount // by target name
}

// restoreCount is how many restores a target made and how long they took
// (restoring, and writing the document again).
type restoreCount struct {
	n    int
	took time.Duration
}

func (c restoreCount) add(o restoreCount) restoreCount {
	return restoreCount{c.n + o.n, c.took + o.took}
}

func (c restoreCount) String() string {
	if c.n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%v, %v each)", c.n, c.took.Round(time.Millisecond), (c.took / time.Duration(c.n)).Round(10*time.Microsecond))
}

// target is a host a rotation restores onto.
type target struct {
	name    string
	restore func(ctx context.Context, doc []byte) (Runner, error)
}

func onNative(mode engine.Resumption) target {
	return target{fmt.Sprintf("native-%d", mode), func(_ context.Context, doc []byte) (Runner, error) {
		e, err := engine.Restore(doc, engine.WithResumption(mode))
		if err != nil {
			return nil, err
		}
		return &Native{e: e, insts: map[int64]*engine.Instance{}}, nil
	}}
}

var onHost = target{"host", func(ctx context.Context, doc []byte) (Runner, error) {
	e, err := host.New(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.Restore(ctx, doc); err != nil {
		_ = e.Close(ctx)
		return nil, err
	}
	return &Host{e: e}, nil
}}

// checkpoint writes the state of the engine behind r.
func checkpoint(ctx context.Context, r Runner) ([]byte, error) {
	switch r := r.(type) {
	case *Native:
		return r.e.Checkpoint(ctx)
	case *Host:
		return r.e.Checkpoint(ctx)
	case *Node:
		return r.Checkpoint(ctx)
	}
	return nil, fmt.Errorf("conformance: runner %T cannot checkpoint", r)
}

// Settle settles, then moves the run onto the next host of the rotation.
func (r *rotating) Settle(ctx context.Context) error {
	if err := r.Runner.Settle(ctx); err != nil {
		return err
	}
	doc, err := checkpoint(ctx, r.Runner)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	to := r.rotation[r.next%len(r.rotation)]
	began := time.Now()
	next, err := to.restore(ctx, doc)
	if err != nil {
		return fmt.Errorf("restore on %s: %w", to.name, err)
	}
	again, err := checkpoint(ctx, next)
	if err != nil {
		_ = next.Close(ctx)
		return fmt.Errorf("checkpoint on %s after restoring: %w", to.name, err)
	}
	if !bytes.Equal(doc, again) {
		_ = next.Close(ctx)
		return fmt.Errorf("restored on %s, the engine writes another document:\n%s\nthan the one it was restored from:\n%s", to.name, again, doc)
	}
	if err := r.Runner.Close(ctx); err != nil {
		return fmt.Errorf("close the checkpointed engine: %w", err)
	}
	r.Runner = next
	r.next++
	r.restores[to.name] = r.restores[to.name].add(restoreCount{1, time.Since(began)})
	return nil
}

// playRotating plays s from a fresh native engine in mode, restoring after
// every step onto the hosts of rotation in turn, and counts the restores
// by target name.
func playRotating(t *testing.T, s *Scenario, mode engine.Resumption, rotation ...target) (*Result, map[string]restoreCount, error) {
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(mode))
	if err != nil {
		return nil, nil, err
	}
	r := &rotating{Runner: &Native{e: e, insts: map[int64]*engine.Instance{}}, rotation: rotation, restores: map[string]restoreCount{}}
	res, err := Run(ctxT(t), r, s)
	if cerr := r.Close(context.Background()); cerr != nil && err == nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	return res, r.restores, err
}

// playNative plays s on a fresh native engine in mode, uninterrupted.
func playNative(t *testing.T, s *Scenario, mode engine.Resumption) (*Result, error) {
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(mode))
	if err != nil {
		return nil, err
	}
	n := &Native{e: e, insts: map[int64]*engine.Instance{}}
	defer n.Close(context.Background())
	return Run(ctxT(t), n, s)
}

// TestScenariosRestored plays every scenario with a checkpoint and restore
// after every step, starting in either resumption mode and switching mode
// at every restore, and requires the very observations of the
// uninterrupted run in that mode: histories in full order, tokens,
// variables, jobs and incidents.
func TestScenariosRestored(t *testing.T) {
	compareRotations(t, func(mode engine.Resumption) []target {
		other := engine.ResumeDirect
		if mode == engine.ResumeDirect {
			other = engine.ResumeGoroutines
		}
		return []target{onNative(other), onNative(mode)}
	})
}

// TestScenariosAcrossHosts plays every scenario moving, after every step,
// round the hosts: native → wazero → Node (the SDK, in one node process
// for the test binary, nodeFor) → native in the other resumption mode →
// wazero → ..., and requires the observations of the uninterrupted native
// run. The run starting in goroutine mode goes to wazero first, the one
// in direct mode to Node first, so the first step of every scenario is
// taken over by each. It fails, saying what to build, without node or the
// SDK build (make sdk).
func TestScenariosAcrossHosts(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a wazero module per step: too long for -short and -race (make test runs it without, as restore-hosts)")
	}
	node := onNode(nodeFor(t))
	restores := compareRotations(t, func(mode engine.Resumption) []target {
		if mode == engine.ResumeDirect {
			return []target{node, onNative(engine.ResumeGoroutines), onHost, node, onNative(engine.ResumeDirect), onHost}
		}
		return []target{onHost, node, onNative(engine.ResumeDirect), onHost, node, onNative(engine.ResumeGoroutines)}
	})
	var all restoreCount
	for _, c := range restores {
		all = all.add(c)
	}
	t.Logf("%v restores: %v", all, restores)
}

// compareRotations plays every scenario in both resumption modes, once
// uninterrupted and once in the rotation for that mode, requires the same
// observations, and returns how many restores each target made.
func compareRotations(t *testing.T, rotation func(engine.Resumption) []target) map[string]restoreCount {
	scenarios, err := Load("scenarios")
	if err != nil {
		t.Fatal(err)
	}
	total := map[string]restoreCount{}
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
				res, restores, err := playRotating(t, s, mode, rotation(mode)...)
				if err != nil {
					t.Fatalf("mode %d: restored after every step: %v", mode, err)
				}
				n := 0
				for name, c := range restores {
					total[name] = total[name].add(c)
					n += c.n
				}
				want, _ := json.Marshal(plain.Observations)
				got, _ := json.Marshal(res.Observations)
				if !bytes.Equal(got, want) {
					t.Errorf("mode %d: restored after every step (%d restores) observed\n%s\nuninterrupted\n%s", mode, n, got, want)
				}
			}
		})
	}
	return total
}
