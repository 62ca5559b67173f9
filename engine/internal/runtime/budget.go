package runtime

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Budgets bound what one outside input (a start, a job completion or
// error, a message, a signal, a timer firing, a command) can make an
// instance do. A model can make that work unbounded in ways no per-token
// guard sees: a handler that rethrows what it catches starts a new token
// each round, a cycle through a parallel fork doubles its tokens each lap,
// a process started by a signal it throws starts instances without end.
//
// An instance's work is counted from the moment it was last idle (no
// track running) until it is idle again: that is the work of one input, or
// of several that arrived while it worked. When a budget is exceeded the
// instance is held: one incident names the budget, the element and the
// figure, and every track parks under it at its next step, so the engine
// settles and a call into the WebAssembly module returns. Resolving the
// incident grants a fresh budget and lets the held tokens go on (useful
// when the work was large but finite); cancelling the instance ends it.
// Holding rather than terminating keeps the instance's state to inspect.

// work counts what an instance did since it was last idle.
type work struct {
	steps, tokens, records int
}

// cause is one outside input as it travels between instances: the
// instances started because of it (by a message or signal thrown, or a
// call activity, in an instance it started) count against
// MaxStartsPerInput together.
type cause struct {
	starts atomic.Int64
}

// errHeld is what a track reports when it parks because its instance is
// held by a budget incident.
var errHeld = errors.New("instance held by a budget incident")

// reserve counts n instance starts against c, and fails without counting
// them when that would exceed limit. what says what would start them.
func (c *cause) reserve(n, limit int, what string) error {
	if n == 0 {
		return nil
	}
	if got := c.starts.Add(int64(n)); got > int64(limit) {
		c.starts.Add(-int64(n))
		return fmt.Errorf("budget %q exceeded: %s would start instance %d of one outside input, limit %d (limits.maxStartsPerInput)",
			"starts per input", what, got, limit)
	}
	return nil
}

// causeOf returns the cause the instance's current work carries, creating
// one for an outside input that finds it idle.
func (inst *Instance) causeOf() *cause {
	if inst.cause == nil {
		inst.cause = new(cause)
	}
	return inst.cause
}

// idle runs after every message the loop handles: an instance with no
// track running or runnable starts counting afresh.
func (inst *Instance) idle() {
	if !inst.moving() {
		inst.work = work{}
		inst.cause = nil
	}
}

// spend holds the instance if it has exceeded a budget. It runs where the
// counts grow (a step handled, a token created, a record written), so a
// token created past the budget is held before its track takes a step.
func (inst *Instance) spend() {
	if inst.heldBy != 0 || inst.stopping.Load() {
		return // held already, or ending
	}
	o := &inst.eng.opts
	switch {
	case len(inst.tokens) > o.MaxTokens:
		inst.holdInstance("live tokens", len(inst.tokens), o.MaxTokens, "tokens alive in the instance", "maxTokens")
	case inst.work.steps > o.MaxStepsPerInput:
		inst.holdInstance("steps per input", inst.work.steps, o.MaxStepsPerInput, "steps since the instance was last idle", "maxStepsPerInput")
	case inst.work.tokens > o.MaxTokensPerInput:
		inst.holdInstance("tokens per input", inst.work.tokens, o.MaxTokensPerInput, "tokens created since the instance was last idle", "maxTokensPerInput")
	case inst.work.records > o.MaxRecordsPerInput:
		inst.holdInstance("records per input", inst.work.records, o.MaxRecordsPerInput, "records written since the instance was last idle", "maxRecordsPerInput")
	}
}

// holdInstance opens the budget incident and tells every track to park
// under it.
func (inst *Instance) holdInstance(budget string, got, limit int, what, option string) {
	n := inst.plan.Process.Nodes[inst.lastNode-1] // set: the first token's entry is recorded before any work
	msg := fmt.Sprintf("budget %q exceeded at element %s: %d %s, limit %d (limits.%s); the instance is held until this incident is resolved (a fresh budget) or the instance is cancelled",
		budget, n.ID, got, what, limit, option)
	key := inst.eng.NextKey()
	if inst.incidents == nil {
		inst.incidents = make(map[int64]*incidentState)
	}
	inc := Incident{Key: key, InstanceKey: inst.key, ElementID: n.ID, Message: msg}
	inst.incidents[key] = &incidentState{incident: inc}
	inst.eng.indexIncident(inst, inc)
	inst.heldBy = key
	inst.hold.Store(true)
	inst.record(Event{Type: IncidentCreated, ElementID: n.ID, ElementType: n.Kind.String(), IncidentKey: key, Message: msg})
}

// parkHeld parks tv, whose track stopped because the instance is held,
// under the budget incident.
func (inst *Instance) parkHeld(tv *tokenView) {
	inst.park(tv, WaitIncident)
	is := inst.incidents[inst.heldBy]
	if is == nil { // resolved while the track was on its way
		inst.notify(tv, notice{kind: retry})
		return
	}
	tv.incident = inst.heldBy
	is.held = append(is.held, tv.id)
}

// releaseHeld resolves the budget incident is: the instance gets a fresh
// budget and the tokens held under it go on.
func (inst *Instance) releaseHeld(is *incidentState) {
	inst.heldBy = 0
	inst.hold.Store(false)
	inst.work = work{}
	inst.record(Event{Type: IncidentResolved, ElementID: is.incident.ElementID, IncidentKey: is.incident.Key})
	for _, id := range is.held {
		if tv := inst.tokens[id]; tv != nil && tv.incident == is.incident.Key {
			tv.incident = 0
			inst.notify(tv, notice{kind: retry})
		}
	}
}
