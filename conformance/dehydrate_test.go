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

// dehydrating plays a scenario dehydrating every live instance each time
// the engine settles, so that every step after the first reaches
// dehydrated instances: deliveries, commands and reads must rehydrate
// them transparently.
type dehydrating struct {
	*Native
	dried int
}

// Settle settles, then dehydrates every live instance and checks that
// each one is, and that a checkpoint reads the same state from the dry
// instances, leaving them dry, as from the awake ones.
func (r *dehydrating) Settle(ctx context.Context) error {
	if err := r.Native.Settle(ctx); err != nil {
		return err
	}
	awake, err := r.e.Checkpoint(ctx)
	if err != nil {
		return err
	}
	n, err := r.e.Dehydrate(ctx)
	if err != nil {
		return err
	}
	r.dried += n
	dry, err := r.e.Checkpoint(ctx)
	if err != nil {
		return err
	}
	if !bytes.Equal(awake, dry) {
		return fmt.Errorf("dehydrated, the engine writes another document:\n%s\nthan awake:\n%s", dry, awake)
	}
	for _, inst := range r.e.Instances() {
		if !inst.Dehydrated() {
			return fmt.Errorf("instance %d is live and idle but not dehydrated (or a checkpoint woke it)", inst.Key())
		}
	}
	return nil
}

// Snapshot reads the variables of the dehydrated instance from its
// state, then takes the snapshot (which rehydrates it), and requires the
// same variables.
func (r *dehydrating) Snapshot(ctx context.Context, key int64) (Snapshot, error) {
	inst, err := r.instance(key)
	if err != nil {
		return Snapshot{}, err
	}
	dry := inst.Dehydrated()
	vars := inst.Variables()
	s, err := r.Native.Snapshot(ctx, key)
	if err != nil {
		return s, err
	}
	got, _ := json.Marshal(vars)
	want, _ := json.Marshal(s.Variables)
	if !bytes.Equal(got, want) {
		return s, fmt.Errorf("instance %d (dehydrated %v): variables read dry %s, awake %s", key, dry, got, want)
	}
	return s, nil
}

// TestScenariosDehydrated plays every scenario in both resumption modes
// twice: dehydrating every instance after every step (Engine.Dehydrate),
// and with WithDehydration(0), which dehydrates each instance whenever it
// is idle; both must make the very observations of the plain run.
func TestScenariosDehydrated(t *testing.T) {
	scenarios, err := Load("scenarios")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range scenarios {
		if _, ok := s.Skip["native"]; ok {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			for _, mode := range []engine.Resumption{engine.ResumeGoroutines, engine.ResumeDirect} {
				plain, err := playNative(t, s, mode)
				if err != nil {
					t.Fatalf("mode %d: plain: %v", mode, err)
				}
				want, _ := json.Marshal(plain.Observations)

				e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(mode))
				if err != nil {
					t.Fatal(err)
				}
				r := &dehydrating{Native: &Native{e: e, insts: map[int64]*engine.Instance{}}}
				res, err := Run(ctxT(t), r, s)
				if cerr := r.Close(context.Background()); cerr != nil && err == nil {
					err = cerr
				}
				if err != nil {
					t.Fatalf("mode %d: dehydrated after every step: %v", mode, err)
				}
				if got, _ := json.Marshal(res.Observations); !bytes.Equal(got, want) {
					t.Errorf("mode %d: dehydrated after every step (%d times) observed\n%s\nplain\n%s", mode, r.dried, got, want)
				}
				total += r.dried

				eager, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(mode), engine.WithDehydration(0))
				if err != nil {
					t.Fatal(err)
				}
				n := &Native{e: eager, insts: map[int64]*engine.Instance{}}
				res, err = Run(ctxT(t), n, s)
				if cerr := n.Close(context.Background()); cerr != nil && err == nil {
					err = cerr
				}
				if err != nil {
					t.Fatalf("mode %d: WithDehydration(0): %v", mode, err)
				}
				if got, _ := json.Marshal(res.Observations); !bytes.Equal(got, want) {
					t.Errorf("mode %d: WithDehydration(0) observed\n%s\nplain\n%s", mode, got, want)
				}
			}
		})
	}
	if total == 0 {
		t.Error("no scenario left an instance to dehydrate")
	}
	t.Logf("%d dehydrations", total)
}
