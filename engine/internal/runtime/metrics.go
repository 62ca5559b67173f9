package runtime

import (
	"sort"
	"time"
)

// procCount is the engine's running count of one process's ended
// instances, kept under Engine.mu.
type procCount struct {
	completed, terminated, failed int
	total, longest                time.Duration
}

// countFinished adds an ended instance to its process's counts. The
// caller holds e.mu and runs on inst's loop (or restores it), which owns
// its history.
func (e *Engine) countFinished(inst *Instance) {
	if e.ended == nil {
		e.ended = make(map[string]*procCount)
	}
	id := inst.plan.Process.ID
	c := e.ended[id]
	if c == nil {
		c = &procCount{}
		e.ended[id] = c
	}
	switch inst.State() {
	case Completed:
		c.completed++
		if n := len(inst.history); n > 0 {
			d := time.Duration(inst.history[n-1].at - inst.history[0].at)
			c.total += d
			c.longest = max(c.longest, d)
		}
	case Terminated:
		c.terminated++
	case Failed:
		c.failed++
	}
}

// Metrics returns the engine's metrics now.
func (e *Engine) Metrics() Metrics {
	m := Metrics{Open: e.Stats(), JobsByType: map[string]int{}}
	now := e.clock.Now()
	e.mu.Lock()
	var oldest *Job
	for _, j := range e.jobRecs {
		m.JobsByType[j.Type]++
		if oldest == nil || j.Created.Before(oldest.Created) || (j.Created.Equal(oldest.Created) && j.Key < oldest.Key) {
			oldest = j
		}
	}
	if oldest != nil {
		m.OldestJob = &JobAge{Key: oldest.Key, Type: oldest.Type, ElementID: oldest.ElementID, InstanceKey: oldest.InstanceKey,
			Created: oldest.Created, WaitingMs: ms(now.Sub(oldest.Created))}
	}
	procs := map[string]*ProcessMetrics{}
	get := func(id string) *ProcessMetrics {
		p := procs[id]
		if p == nil {
			p = &ProcessMetrics{ProcessID: id}
			procs[id] = p
		}
		return p
	}
	for _, inst := range e.live {
		get(inst.plan.Process.ID).Active++
	}
	for id, c := range e.ended {
		p := get(id)
		p.Completed, p.Terminated, p.Failed = c.completed, c.terminated, c.failed
		if c.completed > 0 {
			p.MeanLatencyMs = ms(c.total) / float64(c.completed)
			p.MaxLatencyMs = ms(c.longest)
		}
	}
	e.mu.Unlock()
	m.Processes = make([]ProcessMetrics, 0, len(procs))
	for _, p := range procs {
		m.Processes = append(m.Processes, *p)
	}
	sort.Slice(m.Processes, func(i, j int) bool { return m.Processes[i].ProcessID < m.Processes[j].ProcessID })
	return m
}

// ms is d in (fractional) milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
