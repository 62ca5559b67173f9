package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/boltstore"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// Native drives the Go engine in this process, on a virtual clock.
//
// The native engine runs instances on their own goroutines, so a script
// must wait for what it reacts to: AwaitWaiting polls the instance's
// tokens and CompleteJob polls for the job. Polling yields the processor
// first and sleeps only after many fruitless yields.
type Native struct {
	E     *engine.Engine
	clock *clock.Virtual
	// store and dir are the embedded store and its directory, for a
	// target made by NewNativeStore.
	store *boltstore.Store
	dir   string
}

// NewNative returns a native target with a fresh engine on a virtual
// clock, configured further by opts.
func NewNative(opts ...engine.Option) (*Native, error) {
	v := clock.NewVirtual(clock.Epoch)
	e, err := engine.New(append([]engine.Option{engine.WithClock(v)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return &Native{E: e, clock: v}, nil
}

// NewNativeStore returns a native target whose engine keeps its state in
// the embedded store, a bbolt file in a directory of its own under
// os.TempDir(), synced on every commit unless noSync: every command the
// driver gives returns once it is durable.
func NewNativeStore(noSync bool) (*Native, error) {
	dir, err := os.MkdirTemp("", "flowbench-store")
	if err != nil {
		return nil, err
	}
	s, err := boltstore.Open(filepath.Join(dir, "flowtrack.db"), &boltstore.Options{NoSync: noSync})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	v := clock.NewVirtual(clock.Epoch)
	e, err := engine.New(engine.WithClock(v), engine.WithStore(s))
	if err != nil {
		_ = s.Close()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &Native{E: e, clock: v, store: s, dir: dir}, nil
}

// Deploy implements Target.
func (n *Native) Deploy(name string, xml []byte) error {
	_, err := n.E.Deploy(name, xml)
	return err
}

// Start implements Target.
func (n *Native) Start(_ int, process string, vars map[string]any) (Ref, error) {
	return n.E.Start(context.Background(), process, vars)
}

// Finish implements Target.
func (n *Native) Finish(ref Ref) error {
	inst := ref.(*engine.Instance)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := inst.Wait(ctx)
	if err != nil {
		return fmt.Errorf("instance %d: %w", inst.Key(), err)
	}
	if st != engine.Completed {
		return fmt.Errorf("instance %d ended %s (%s): %w", inst.Key(), st, inst.Message(), ErrNotCompleted)
	}
	return nil
}

// AwaitWaiting implements Session.
func (n *Native) AwaitWaiting(ref Ref, reason string) error {
	_, err := n.waiting(ref.(*engine.Instance), reason)
	return err
}

// waiting polls the instance's tokens (a question to its loop, which
// answers between two steps, so a token it reports waiting has its job or
// subscription in place) until one waits for reason, and returns it.
func (n *Native) waiting(inst *engine.Instance, reason string) (engine.Token, error) {
	var tok engine.Token
	err := poll(func() (bool, error) {
		toks, err := inst.Tokens(context.Background())
		if err != nil {
			return false, err
		}
		for _, t := range toks {
			if string(t.Waiting) == reason {
				tok = t
				return true, nil
			}
		}
		if len(toks) == 0 {
			return false, fmt.Errorf("instance %d ended (%s) before waiting for a %s", inst.Key(), inst.State(), reason)
		}
		return false, nil
	})
	return tok, err
}

// Publish implements Session.
func (n *Native) Publish(_ Ref, name, key string) error {
	return n.E.PublishMessage(context.Background(), engine.Message{Name: name, CorrelationKey: key})
}

// CompleteJob implements Session. It completes the job the instance's
// token waits on; the scripts know which job type comes next, so the type
// is not looked up (Engine.Jobs would scan every job under the engine's
// lock, which measures the driver more than the engine).
func (n *Native) CompleteJob(ref Ref, _ string) error {
	tok, err := n.waiting(ref.(*engine.Instance), "job")
	if err != nil {
		return err
	}
	return n.E.CompleteJob(context.Background(), tok.JobKey, nil)
}

// Advance implements Target.
func (n *Native) Advance(d time.Duration) error {
	return n.E.Advance(context.Background(), d)
}

// Close implements Target.
func (n *Native) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := n.E.Close(ctx)
	if n.store != nil {
		err = errors.Join(err, n.store.Close(), os.RemoveAll(n.dir))
	}
	return err
}

// poll calls cond until it is true and gives up after a minute. It yields
// the processor a few times first (sequentially the instance is usually a
// step or two away), then sleeps with a growing pause, so that a hundred
// waiting drivers do not take the processors the instances need.
func poll(cond func() (bool, error)) error {
	deadline := time.Now().Add(time.Minute)
	pause := 20 * time.Microsecond
	for spin := 0; ; spin++ {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		if spin < 3 {
			runtime.Gosched()
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up waiting after a minute")
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}
