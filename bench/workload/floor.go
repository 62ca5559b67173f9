package workload

import (
	"errors"
	"time"
)

// FloorSteps is how many channel round trips the goroutine floor makes per
// instance: one per task of straight-10.
const FloorSteps = 10

// Floor is the goroutine floor (issue #21): no engine, just what running
// an instance on goroutines costs at the least. An instance is a goroutine
// that makes FloorSteps round trips over unbuffered channels with a
// goroutine of its own that answers (the shape of a flowtrack instance, a
// loop and a token's track) and then ends. Native straight-10 and
// exclusive one at a time are measured against it in the same run; the
// engine batches steps, so it can beat the floor.
type Floor struct{}

// floorRun is one floor instance: done closes when its last round trip is
// back.
type floorRun struct{ done chan struct{} }

// Deploy implements Target; the floor has nothing to deploy.
func (Floor) Deploy(string, []byte) error { return nil }

// Start implements Target: it starts the instance's two goroutines.
func (Floor) Start(int, string, map[string]any) (Ref, error) {
	r := &floorRun{done: make(chan struct{})}
	ask, answer := make(chan int), make(chan int)
	go func() { // the answering side: one reply per request
		for step := range ask {
			answer <- step + 1
		}
	}()
	go func() { // the instance
		step := 0
		for range FloorSteps {
			ask <- step
			step = <-answer
		}
		close(ask)
		close(r.done)
	}()
	return r, nil
}

// Finish implements Target: it waits for the instance's round trips,
// which always end.
func (Floor) Finish(ref Ref) error {
	<-ref.(*floorRun).done
	return nil
}

// errNoFloorScript is what the floor answers to a workload script: it
// plays straight-like instances only.
var errNoFloorScript = errors.New("the goroutine floor plays no script")

// AwaitWaiting implements Session.
func (Floor) AwaitWaiting(Ref, string) error { return errNoFloorScript }

// Publish implements Session.
func (Floor) Publish(Ref, string, string) error { return errNoFloorScript }

// CompleteJob implements Session.
func (Floor) CompleteJob(Ref, string) error { return errNoFloorScript }

// Advance implements Target.
func (Floor) Advance(time.Duration) error { return errNoFloorScript }

// Close implements Target.
func (Floor) Close() error { return nil }

// FloorWorkload is the workload the floor plays: an instance that runs
// to its end on its own, as straight-10 does.
var FloorWorkload = Workload{Name: "floor", Process: "floor"}
