// Package workload defines the processes flowtrack's benchmarks run, the
// script a driver plays for each instance of them, and the measurement
// loop shared by every Go host (native engine, wasm module in wazero).
//
// The reference workloads (straight, parallel, exclusive, message, timer)
// are read from the shared workloads directory, the same graphs peer
// engines were measured on; the others are this project's, in
// bench/workloads. The Node driver (bench/node/bench.mjs) plays the same
// scripts through the JS SDK.
package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Workload is one benchmark process and how a driver plays an instance of
// it.
type Workload struct {
	// Name is how results name it.
	Name string
	// File is the BPMN file; Shared says it lives in the shared workloads
	// directory rather than in bench/workloads.
	File   string
	Shared bool
	// Process is the process id to start.
	Process string
	// Vars returns the start variables of the i-th instance (nil: none).
	Vars func(i int) map[string]any
	// Script plays the part between start and completion (nil: nothing,
	// the instance runs to its end on its own).
	Script func(s Session, ref Ref, i int) error
	// Advance, if set, is how far the virtual clock moves once the
	// instances wait on their timers. Sequentially the driver advances
	// after each instance; with instances in flight it starts a batch,
	// waits until all of it waits, and advances once (the clock is one
	// per engine, so per-instance advances would fire each other's timers).
	Advance time.Duration
}

// Ref is a driver's handle on one instance.
type Ref any

// Session is what a workload script can do to an instance through a host.
// Every method is safe for concurrent use.
type Session interface {
	// AwaitWaiting returns once the instance has a token waiting for
	// reason ("message", "timer", "job"). Hosts whose calls settle return
	// at once.
	AwaitWaiting(ref Ref, reason string) error
	// Publish publishes message name with correlation key to the engine
	// that runs ref.
	Publish(ref Ref, name, key string) error
	// CompleteJob completes the instance's activatable job of jobType,
	// waiting for it to be created where the host does not settle.
	CompleteJob(ref Ref, jobType string) error
}

// All returns the workloads in report order.
func All() []Workload {
	return []Workload{
		{Name: "straight", File: "straight.bpmn", Shared: true, Process: "straight"},
		{Name: "parallel", File: "parallel.bpmn", Shared: true, Process: "parallel"},
		{Name: "exclusive", File: "exclusive.bpmn", Shared: true, Process: "exclusive",
			Vars: func(i int) map[string]any {
				if i%2 == 0 {
					return map[string]any{"x": 3}
				}
				return map[string]any{"x": 7}
			}},
		{Name: "message", File: "message.bpmn", Shared: true, Process: "message",
			Vars: func(i int) map[string]any { return map[string]any{"key": key(i)} },
			Script: func(s Session, ref Ref, i int) error {
				if err := s.AwaitWaiting(ref, "message"); err != nil {
					return err
				}
				return s.Publish(ref, "go", key(i))
			}},
		{Name: "timer", File: "timer.bpmn", Shared: true, Process: "timer", Advance: time.Second},
		{Name: "inclusive", File: "inclusive.bpmn", Process: "inclusive",
			Vars: func(int) map[string]any { return map[string]any{"x": 4} }},
		{Name: "jobs", File: "jobs.bpmn", Process: "jobs",
			Script: func(s Session, ref Ref, _ int) error {
				for range 10 {
					if err := s.CompleteJob(ref, "work"); err != nil {
						return err
					}
				}
				return nil
			}},
		{Name: "timer1h", File: "timer1h.bpmn", Process: "timer1h", Advance: time.Hour},
		{Name: "order", File: "order.bpmn", Process: "order",
			Vars: func(i int) map[string]any {
				amount := 50
				if i%2 == 1 {
					amount = 500
				}
				return map[string]any{"amount": amount, "orderId": key(i)}
			},
			Script: func(s Session, ref Ref, i int) error {
				if err := s.CompleteJob(ref, "validate"); err != nil {
					return err
				}
				if i%2 == 1 {
					if err := s.AwaitWaiting(ref, "message"); err != nil {
						return err
					}
					if err := s.Publish(ref, "payment", key(i)); err != nil {
						return err
					}
				}
				return s.CompleteJob(ref, "pack")
			}},
	}
}

// Find returns the workload called name.
func Find(name string) (Workload, bool) {
	for _, w := range All() {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

// key is the correlation key of the i-th instance; unique within a run
// because a run's instances are numbered from a per-run base.
func key(i int) string { return fmt.Sprintf("k%d", i) }

// Dirs locates the workload files.
type Dirs struct {
	// Shared is the shared workloads directory ($FLOWTRACK_WORKLOADS,
	// default ../shared/workloads from the repository root).
	Shared string
	// Own is bench/workloads.
	Own string
}

// DefaultDirs finds the directories from the repository root root.
func DefaultDirs(root string) Dirs {
	shared := os.Getenv("FLOWTRACK_WORKLOADS")
	if shared == "" {
		shared = filepath.Join(root, "..", "shared", "workloads")
	}
	return Dirs{Shared: shared, Own: filepath.Join(root, "bench", "workloads")}
}

// XML reads w's BPMN file.
func (d Dirs) XML(w Workload) ([]byte, error) {
	dir := d.Own
	if w.Shared {
		dir = d.Shared
	}
	b, err := os.ReadFile(filepath.Join(dir, w.File))
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w (set FLOWTRACK_WORKLOADS to the shared workloads directory)", w.Name, err)
	}
	return b, nil
}
