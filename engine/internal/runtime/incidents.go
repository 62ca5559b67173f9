// Incidents: the engine-wide index and resolving them.

package runtime

import (
	"context"
	"fmt"
	"sort"
)

// Incidents returns the open incidents of live instances, ordered by key.
// It reads the engine's incident index, so it costs no round trip to any
// instance loop.
func (e *Engine) Incidents() []Incident {
	e.mu.Lock()
	out := make([]Incident, 0, len(e.incidents))
	for _, ie := range e.incidents {
		out = append(out, ie.incident)
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// ResolveIncident retries what the incident holds: a failed job becomes
// activatable again (with one retry if it had none), any other incident
// re-executes its element.
func (e *Engine) ResolveIncident(ctx context.Context, key int64) error {
	e.mu.Lock()
	inst, closed := e.incidents[key].inst, e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if inst == nil {
		return fmt.Errorf("incident %d: %w", key, ErrUnknownIncident)
	}
	return inst.call(ctx, &command{op: cmdResolveIncident, key: key})
}

// incidentEntry is the engine's index entry of an open incident: the
// instance whose loop owns it and a copy of the record (an Incident never
// changes once opened).
type incidentEntry struct {
	inst     *Instance
	incident Incident
}

// indexIncident adds an incident the loop of inst opened to the index.
func (e *Engine) indexIncident(inst *Instance, inc Incident) {
	e.mu.Lock()
	e.incidents[inc.Key] = incidentEntry{inst: inst, incident: inc}
	e.mu.Unlock()
}

// unindexIncident removes a resolved or discarded incident from the index.
func (e *Engine) unindexIncident(key int64) {
	e.mu.Lock()
	delete(e.incidents, key)
	e.mu.Unlock()
}

func (inst *Instance) resolveIncident(key int64) error {
	is := inst.incidents[key]
	if is == nil {
		return fmt.Errorf("incident %d: %w", key, ErrUnknownIncident)
	}
	delete(inst.incidents, key)
	inst.eng.unindexIncident(key)
	if key == inst.heldBy {
		inst.releaseHeld(is)
		return nil
	}
	tv := inst.tokens[is.token]
	tv.incident = 0
	inst.record(Event{Type: IncidentResolved, ElementID: is.incident.ElementID, TokenID: tv.id, IncidentKey: key})
	if jk := is.incident.JobKey; jk != 0 {
		if js := inst.jobs[jk]; js != nil {
			next := *js.job
			next.Retries = max(next.Retries, 1)
			js.job = &next
			js.incident = 0
			tv.wait = WaitJob
			inst.eng.addJob(inst, js.job)
			return nil
		}
	}
	if tv.inner != nil && tv.inner.adhoc != nil {
		inst.adHocResolved(tv, tv.inner) // its completion condition failed
		return nil
	}
	if inst.plan.nodes[tv.node.Index].waitsIn(tv.scope) && !is.reported {
		// The loop set up this wait, so it sets it up again; the track
		// still blocks at the node.
		inst.closeBoundaries(tv)
		inst.waitIn(tv, tv.node)
		return nil
	}
	inst.notify(tv, notice{kind: retry})
	return nil
}
