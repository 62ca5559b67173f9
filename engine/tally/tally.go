// Package tally counts what an engine did, from its event stream: the
// instances started and ended per process, the elements entered per
// element type, the jobs created, completed and failed per job type, the
// incidents, messages, signals, timers and decisions. It is how a host
// program reads the figures flowtrack serve publishes to Prometheus
// (server/monitor) and publishes them its own way.
//
// A Tally is fed one record at a time (Observe), by an observer of the
// engine's stream (Subscribe, or an observer the host already has), so
// the engine's hot path is untouched: counting is a map increment on the
// observer's goroutine. What the stream does not carry, the host adds:
// jobs activated (AddJobsActivated) and messages and signals published
// through the API (AddMessagesPublished, AddSignalsBroadcast).
//
// Counts are cumulative from when the Tally started observing; what is
// open now (active instances, open incidents, timers) is Engine.Stats and
// Engine.Metrics, which a Tally does not duplicate.
package tally

import (
	"maps"
	"sync"

	"github.com/flowtrack/flowtrack/engine"
)

// Counts is a copy of a Tally's counters. Maps are never nil.
type Counts struct {
	// Processes counts instances by process id.
	Processes map[string]ProcessCounts
	// ElementsEntered counts element activations by element type (the
	// BPMN element's local name: serviceTask, exclusiveGateway...).
	ElementsEntered map[string]uint64
	// Jobs counts jobs by job type.
	Jobs map[string]JobCounts
	// Events counts every record by event type.
	Events map[engine.EventType]uint64

	IncidentsCreated   uint64
	IncidentsResolved  uint64
	MessagesPublished  uint64 // through the API and by throw events
	MessagesCorrelated uint64
	SignalsBroadcast   uint64 // through the API and by throw events
	SignalsReceived    uint64
	TimersScheduled    uint64
	TimersFired        uint64
	DecisionsEvaluated uint64
}

// ProcessCounts counts one process's instances.
type ProcessCounts struct {
	Started, Completed, Terminated, Failed uint64
}

// JobCounts counts one job type's jobs. Failed counts every failure
// reported (with or without retries left); Canceled the jobs whose
// element was left otherwise (a boundary event, the instance cancelled).
// A BPMN error thrown from
// a job is an errorThrown record (Counts.Events), which names no job type.
type JobCounts struct {
	Created, Activated, Completed, Failed, Canceled uint64
}

// Tally counts an engine's records. Its methods are safe for concurrent
// use; the zero value is not usable, call New.
type Tally struct {
	mu sync.Mutex
	c  Counts
}

// New returns an empty Tally.
func New() *Tally {
	return &Tally{c: Counts{Processes: map[string]ProcessCounts{}, ElementsEntered: map[string]uint64{},
		Jobs: map[string]JobCounts{}, Events: map[engine.EventType]uint64{}}}
}

// Subscribe returns a Tally fed by a new observer of eng
// (Engine.Subscribe) and the function that ends the observer.
func Subscribe(eng *engine.Engine) (*Tally, func() error) {
	t := New()
	return t, eng.Subscribe(t.Observe)
}

// Observe counts one record. It has the signature of an engine observer.
func (t *Tally) Observe(ev engine.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &t.c
	c.Events[ev.Type]++
	switch ev.Type {
	case engine.InstanceStarted, engine.InstanceCompleted, engine.InstanceTerminated, engine.InstanceFailed:
		p := c.Processes[ev.ProcessID]
		switch ev.Type {
		case engine.InstanceStarted:
			p.Started++
		case engine.InstanceCompleted:
			p.Completed++
		case engine.InstanceTerminated:
			p.Terminated++
		default:
			p.Failed++
		}
		c.Processes[ev.ProcessID] = p
	case engine.ElementEntered:
		c.ElementsEntered[ev.ElementType]++
	case engine.JobCreated, engine.JobCompleted, engine.JobFailed, engine.JobCanceled:
		j := c.Jobs[ev.JobType]
		switch ev.Type {
		case engine.JobCreated:
			j.Created++
		case engine.JobCompleted:
			j.Completed++
		case engine.JobFailed:
			j.Failed++
		default:
			j.Canceled++
		}
		c.Jobs[ev.JobType] = j
	case engine.IncidentCreated:
		c.IncidentsCreated++
	case engine.IncidentResolved:
		c.IncidentsResolved++
	case engine.MessagePublished:
		c.MessagesPublished++
	case engine.MessageCorrelated:
		c.MessagesCorrelated++
	case engine.SignalBroadcast:
		c.SignalsBroadcast++
	case engine.SignalReceived:
		c.SignalsReceived++
	case engine.TimerScheduled:
		c.TimersScheduled++
	case engine.TimerFired:
		c.TimersFired++
	case engine.DecisionEvaluated:
		c.DecisionsEvaluated++
	}
}

// AddJobsActivated counts n jobs of jobType handed to a worker
// (Engine.ActivateJobs returned them): activations are no record of the
// stream, so whoever activates counts them.
func (t *Tally) AddJobsActivated(jobType string, n int) {
	if n <= 0 {
		return
	}
	t.mu.Lock()
	j := t.c.Jobs[jobType]
	j.Activated += uint64(n)
	t.c.Jobs[jobType] = j
	t.mu.Unlock()
}

// AddMessagesPublished counts n messages published through the API
// (Engine.PublishMessage), which write no record unless they correlate.
func (t *Tally) AddMessagesPublished(n int) {
	if n > 0 {
		t.mu.Lock()
		t.c.MessagesPublished += uint64(n)
		t.mu.Unlock()
	}
}

// AddSignalsBroadcast counts n signals broadcast through the API
// (Engine.BroadcastSignal).
func (t *Tally) AddSignalsBroadcast(n int) {
	if n > 0 {
		t.mu.Lock()
		t.c.SignalsBroadcast += uint64(n)
		t.mu.Unlock()
	}
}

// Counts returns a copy of the counters now.
func (t *Tally) Counts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.c
	c.Processes = maps.Clone(t.c.Processes)
	c.ElementsEntered = maps.Clone(t.c.ElementsEntered)
	c.Jobs = maps.Clone(t.c.Jobs)
	c.Events = maps.Clone(t.c.Events)
	return c
}
