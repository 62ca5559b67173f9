package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// msgKind says what a message on an instance's intake reports or asks.
type msgKind uint8

// Track events report what a track did; msgCommand carries a request from
// outside the instance.
const (
	evMoved     msgKind = iota + 1 // left node through flow onto flow.Target
	evFork                         // left node through several flows at once
	evJob                          // parked on a job at node
	evArrive                       // parked at the join node, arrived through flow
	evIncident                     // parked on an incident at node
	evEnded                        // finished at end event node
	evTerminate                    // reached terminate end event node
	evExited                       // stopped: its channel was closed or the instance is stopping
	evFailed                       // the track failed (a recovered panic)
	evWaiting                      // parked at a catch node, waiting for one of its events
	evThrow                        // parked at a throw node until the loop has published its event
	evDeliver                      // the hub fired a subscription (posted, not sent by a track)
	msgCommand
)

// message is one entry of an instance's intake. It is passed by value so
// that a step costs no allocation.
type message struct {
	kind  msgKind
	token int
	node  *model.Node
	flow  *model.Flow
	flows []*model.Flow
	err   error
	cmd   *command
	ev    *eventhub.Delivery
}

// cmdOp is the operation of a command.
type cmdOp uint8

const (
	cmdCompleteJob cmdOp = iota + 1
	cmdFailJob
	cmdThrowError
	cmdCancel
	cmdTokens
	cmdIncidents
	cmdResolveIncident
	cmdHistory
)

// command is a request from outside handled by the loop. The loop answers
// on reply exactly once.
type command struct {
	op      cmdOp
	key     int64
	vars    map[string]any
	retries int
	code    string
	msg     string
	reply   chan error

	tokens    []Token
	incidents []Incident
	history   []Event
}

// deliveryKind says what a parked track is told.
type deliveryKind uint8

const (
	resume deliveryKind = iota + 1 // continue past the node
	retry                          // execute the node again (incident resolved)
	merged                         // consumed by a join: exit
)

// delivery is what the loop sends to a parked track.
type delivery struct {
	kind deliveryKind
	// arm is the node whose event fired, for a token waiting at a catch
	// node or event-based gateway.
	arm *model.Node
}

// handle applies one intake message. It is the only place instance state
// changes.
func (inst *Instance) handle(m message) {
	defer inst.afterMove(m.kind)
	switch m.kind {
	case msgCommand:
		inst.command(m.cmd)
		inst.released++
		return
	case evDeliver:
		inst.released++ // counted by post
		if inst.stopping.Load() || inst.finished() {
			if m.ev.Kind == eventhub.Message {
				inst.eng.hub.Reject(*m.ev)
			}
			return
		}
		inst.fired(m)
		return
	}
	tv := inst.tokens[m.token]
	if tv == nil {
		return // cannot happen: a token reports until its exit, and is forgotten only then
	}
	if inst.stopping.Load() {
		inst.handleWhileStopping(tv, m)
		return
	}
	switch m.kind {
	case evMoved:
		inst.recordStep(codeLeft, m.node, nil, tv.id)
		inst.enter(tv, m.flow)
	case evFork:
		inst.recordNode(ElementLeft, m.node, tv.id)
		inst.enter(tv, m.flows[0])
		for _, f := range m.flows[1:] {
			inst.recordFlow(f, inst.nextToken+1)
			inst.spawn(f.Target, f, true)
		}
	case evJob:
		inst.createJob(tv, m.node)
	case evArrive:
		inst.park(tv, WaitJoin)
		inst.arrive(tv, m.node, m.flow)
	case evIncident:
		inst.park(tv, WaitIncident)
		inst.openIncident(tv, m.node, 0, m.err.Error())
	case evWaiting:
		inst.waitAt(tv, m.node)
	case evThrow:
		inst.throw(tv, m.node)
	case evEnded:
		inst.recordNode(ElementLeft, m.node, tv.id)
		tv.node = nil
		inst.removeToken(tv, false)
	case evTerminate:
		inst.recordNode(ElementLeft, m.node, tv.id)
		tv.node = nil
		inst.removeToken(tv, false)
		inst.stopAll(Completed, "")
	case evExited:
		inst.removeToken(tv, true)
	case evFailed:
		inst.removeToken(tv, true)
		inst.stopAll(Failed, m.err.Error())
	}
}

// handleWhileStopping drains what running tracks reported before they saw
// the stopping flag: anything that parks is woken to exit at once, and no
// new work is started.
func (inst *Instance) handleWhileStopping(tv *tokenView, m message) {
	switch m.kind {
	case evJob, evArrive, evIncident, evWaiting, evThrow:
		// The track is about to block on its channel: close it so it exits.
		// It stays counted as running until it reports the exit.
		tv.closed = true
		close(tv.ch)
	case evEnded, evTerminate:
		inst.removeToken(tv, false)
	case evExited, evFailed:
		inst.removeToken(tv, true)
	case evMoved:
		tv.node = m.flow.Target
	case evFork:
		tv.node = m.flows[0].Target
	}
}

// enter records that tv took flow f onto its target.
func (inst *Instance) enter(tv *tokenView, f *model.Flow) {
	inst.recordFlow(f, tv.id)
	tv.node = f.Target
	if !inst.plan.nodes[f.Target.Index].join {
		inst.recordStep(codeEntered, f.Target, nil, tv.id)
	}
}

// arrive queues a token at a synchronising join and fires the join when
// every incoming flow has a token: the token from the firing flow goes on,
// the others are merged.
func (inst *Instance) arrive(tv *tokenView, n *model.Node, via *model.Flow) {
	if inst.joins == nil {
		inst.joins = make(map[int]*joinState)
	}
	js := inst.joins[n.Index]
	if js == nil {
		js = &joinState{arrived: make([][]int, len(n.Incoming))}
		inst.joins[n.Index] = js
	}
	in := flowIndex(n.Incoming, via)
	js.arrived[in] = append(js.arrived[in], tv.id)
	if inst.plan.nodes[n.Index].inclusive {
		inst.orJoins++
		inst.tryInclusive(n, js)
		return
	}
	for _, q := range js.arrived {
		if len(q) == 0 {
			return
		}
	}
	inst.fire(n, js, in)
}

// fire consumes the oldest token of every incoming flow that has one: the
// one from flow in goes on, the others are merged.
func (inst *Instance) fire(n *model.Node, js *joinState, in int) {
	survivor := js.arrived[in][0]
	for i, q := range js.arrived {
		if len(q) == 0 {
			continue
		}
		id := q[0]
		js.arrived[i] = q[1:]
		if id == survivor {
			continue
		}
		other := inst.tokens[id]
		inst.record(Event{Type: TokenMerged, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: id})
		other.node = nil
		inst.deliver(other, delivery{kind: merged})
	}
	if empty(js.arrived) {
		delete(inst.joins, n.Index)
	}
	st := inst.tokens[survivor]
	inst.recordNode(ElementEntered, n, st.id)
	inst.deliver(st, delivery{kind: resume})
}

// tryInclusive fires inclusive join n if no live token elsewhere can still
// arrive on an incoming flow that has no token yet (BPMN 2.0 §13.4.3). It
// reads only the loop-owned token view (SRD-028): a token counts at the
// node its last report put it on, and a token already on the join but not
// yet arrived is in transit, so the join waits for it.
func (inst *Instance) tryInclusive(n *model.Node, js *joinState) {
	np := &inst.plan.nodes[n.Index]
	waiting := make(map[int]bool)
	first := -1
	for i, q := range js.arrived {
		for _, id := range q {
			waiting[id] = true
		}
		if len(q) > 0 && first < 0 {
			first = i
		}
	}
	if first < 0 {
		return
	}
	for id, tv := range inst.tokens {
		if waiting[id] || tv.node == nil {
			continue
		}
		if tv.node == n {
			return // in transit onto the join: it will arrive
		}
		for i, q := range js.arrived {
			if len(q) == 0 && np.reaches[i][tv.node.Index] {
				return // may still arrive on an empty incoming flow
			}
		}
	}
	for _, q := range js.arrived {
		if len(q) > 0 {
			inst.orJoins--
		}
	}
	inst.fire(n, js, first)
}

// recheckInclusive re-evaluates every inclusive join holding tokens, after
// a token moved, ended or was merged: that may be what they wait for.
func (inst *Instance) recheckInclusive() {
	for _, idx := range sortedKeys(inst.joins) {
		if js := inst.joins[idx]; js != nil && inst.plan.nodes[idx].inclusive {
			inst.tryInclusive(inst.plan.nodes[idx].node, js)
		}
	}
}

func empty(queues [][]int) bool {
	for _, q := range queues {
		if len(q) > 0 {
			return false
		}
	}
	return true
}

func flowIndex(flows []*model.Flow, f *model.Flow) int {
	for i, g := range flows {
		if g == f {
			return i
		}
	}
	panic(fmt.Sprintf("flow %s is not an incoming flow of %s", f.ID, f.Target.ID))
}

// createJob parks tv on a new job for node n.
func (inst *Instance) createJob(tv *tokenView, n *model.Node) {
	inst.park(tv, WaitJob)
	np := &inst.plan.nodes[n.Index]
	typ := np.jobTypeName
	if np.jobType != nil {
		t, err := np.jobType.EvalString(inst.varsMap)
		if err != nil || t == "" {
			if err == nil {
				err = fmt.Errorf("job type expression %q yielded empty text", np.jobType.Text())
			}
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, err.Error())
			return
		}
		typ = t
	}
	jobVars := inst.varsMap
	if len(np.inputs) > 0 {
		locals, err := applyMappings(np.inputs, inst.varsMap)
		if err != nil {
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, err.Error())
			return
		}
		tv.locals = locals
		jobVars = overlay(inst.varsMap, locals)
	}
	key := inst.eng.NextKey()
	job := &Job{
		Key: key, Type: typ, ProcessID: inst.plan.Process.ID, ElementID: n.ID, InstanceKey: inst.key,
		Retries: np.retries, Headers: np.headers, Variables: jobVars, Created: inst.eng.clock.Now(),
	}
	if inst.jobs == nil {
		inst.jobs = make(map[int64]*jobState)
	}
	inst.jobs[key] = &jobState{job: job, token: tv.id}
	tv.jobKey = key
	inst.record(Event{Type: JobCreated, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: tv.id, JobKey: key, JobType: typ})
	if np.retries == 0 {
		inst.jobs[key].incident = inst.openIncident(tv, n, key, "job has no retries")
		tv.wait = WaitIncident
		return
	}
	inst.eng.addJob(inst, job)
}

// outputs computes what leaving n sets in the process scope, given the
// result variables of its job or event. With output mappings only their
// targets are set, evaluated over the process variables, the element's
// locals and the result; without, the result merges as it is (Zeebe).
func (inst *Instance) outputs(tv *tokenView, n *model.Node, result map[string]any) (map[string]any, error) {
	np := &inst.plan.nodes[n.Index]
	if len(np.outputs) == 0 {
		return result, nil
	}
	return applyMappings(np.outputs, overlay(overlay(inst.varsMap, tv.locals), result))
}

// command applies a request from outside and answers it.
func (inst *Instance) command(c *command) {
	var err error
	switch c.op {
	case cmdCompleteJob:
		err = inst.completeJob(c)
	case cmdFailJob:
		err = inst.failJob(c)
	case cmdThrowError:
		err = inst.throwError(c)
	case cmdCancel:
		inst.stopAll(Terminated, c.msg)
	case cmdTokens:
		c.tokens = inst.tokenSnapshot()
	case cmdIncidents:
		for _, k := range sortedKeys(inst.incidents) {
			c.incidents = append(c.incidents, inst.incidents[k].incident)
		}
	case cmdResolveIncident:
		err = inst.resolveIncident(c.key)
	case cmdHistory:
		c.history = inst.expandHistory()
	}
	c.reply <- err
}

func (inst *Instance) activeJob(key int64) (*jobState, *tokenView, error) {
	js := inst.jobs[key]
	if js == nil || js.incident != 0 {
		return nil, nil, fmt.Errorf("job %d: %w", key, ErrUnknownJob)
	}
	return js, inst.tokens[js.token], nil
}

func (inst *Instance) completeJob(c *command) error {
	js, tv, err := inst.activeJob(c.key)
	if err != nil {
		return err
	}
	n := inst.plan.Process.Node(js.job.ElementID)
	update, err := inst.outputs(tv, n, c.vars)
	if err != nil {
		return fmt.Errorf("complete job %d: %w", c.key, err) // the job stays open: fix the variables and retry
	}
	inst.endJob(js)
	inst.record(Event{Type: JobCompleted, ElementID: js.job.ElementID, TokenID: tv.id, JobKey: c.key,
		JobType: js.job.Type, Variables: cloneVars(c.vars)})
	inst.setVars(update)
	tv.locals = nil
	inst.deliver(tv, delivery{kind: resume})
	return nil
}

func (inst *Instance) endJob(js *jobState) {
	delete(inst.jobs, js.job.Key)
	inst.eng.removeJob(js.job.Key)
	if tv := inst.tokens[js.token]; tv != nil {
		tv.jobKey = 0
	}
}

func (inst *Instance) failJob(c *command) error {
	js, tv, err := inst.activeJob(c.key)
	if err != nil {
		return err
	}
	retries := max(c.retries, 0)
	// The record the engine index holds is replaced, never mutated, so that
	// copies handed out earlier stay as they were.
	next := *js.job
	next.Retries = retries
	next.ErrorMessage = c.msg
	js.job = &next
	inst.record(Event{Type: JobFailed, ElementID: next.ElementID, TokenID: tv.id, JobKey: c.key, JobType: next.Type, Message: c.msg})
	if retries > 0 {
		inst.eng.addJob(inst, js.job)
		return nil
	}
	inst.eng.removeJob(c.key)
	msg := c.msg
	if msg == "" {
		msg = "job failed with no retries left"
	}
	js.incident = inst.openIncident(tv, inst.plan.Process.Node(next.ElementID), c.key, msg)
	tv.wait = WaitIncident
	return nil
}

// throwError raises a BPMN error from a job. With no catching boundary or
// event sub-process it opens an incident, as Zeebe does.
func (inst *Instance) throwError(c *command) error {
	js, tv, err := inst.activeJob(c.key)
	if err != nil {
		return err
	}
	inst.endJob(js)
	n := inst.plan.Process.Node(js.job.ElementID)
	inst.record(Event{Type: ErrorThrown, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: tv.id, JobKey: c.key, Name: c.code, Message: c.msg})
	inst.setVars(c.vars)
	tv.wait = WaitIncident
	inst.openIncident(tv, n, 0, fmt.Sprintf("unhandled BPMN error %q: %s", c.code, c.msg))
	return nil
}

func (inst *Instance) resolveIncident(key int64) error {
	is := inst.incidents[key]
	if is == nil {
		return fmt.Errorf("incident %d: %w", key, ErrUnknownIncident)
	}
	delete(inst.incidents, key)
	inst.eng.setIncident(key, nil)
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
	inst.deliver(tv, delivery{kind: retry})
	return nil
}

func (inst *Instance) tokenSnapshot() []Token {
	out := make([]Token, 0, len(inst.tokens))
	for _, id := range sortedKeys(inst.tokens) {
		tv := inst.tokens[id]
		if tv.node == nil {
			continue
		}
		out = append(out, Token{ID: id, ElementID: tv.node.ID, Waiting: tv.wait, JobKey: tv.jobKey, IncidentKey: tv.incident})
	}
	return out
}

// afterMove rechecks waiting inclusive joins when a message changed where
// tokens are; most instances have none, and pay one comparison.
func (inst *Instance) afterMove(k msgKind) {
	if inst.orJoins == 0 || inst.stopping.Load() {
		return
	}
	switch k {
	case evMoved, evFork, evEnded, evExited, evJob, evWaiting, evIncident, evThrow, evDeliver, msgCommand:
		inst.recheckInclusive()
	}
}
