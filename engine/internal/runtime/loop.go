package runtime

import (
	"fmt"
	"sort"
	"strconv"

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
	evJob                          // parked at loop activity node for the loop to set up the iteration's wait (other waits are set up on entry)
	evArrive                       // parked at the join node, arrived through flow
	evIncident                     // parked on an incident at node
	evEnded                        // finished at end event node
	evTerminate                    // reached terminate end event node
	evExited                       // stopped: its channel was closed or the instance is stopping
	evFailed                       // the track failed (a recovered panic)
	evThrow                        // parked at a throw node until the loop has published its event
	evDeliver                      // the hub fired a subscription (posted, not sent by a track)
	evIteration                    // a looping activity starts its next iteration
	evCallEnded                    // a called instance ended (posted by the child to its parent)
	evCancel                       // the calling instance asks this one to terminate (posted)
	evRaise                        // parked at an error or escalation end or throw event
	evLinked                       // left link throw event node for the link catch event it names
	evInnerDone                    // an inner instance of multi-instance activity node is done with its work
	evRaisedUp                     // a called instance raised an error or escalation it does not catch (posted by the child to its parent)
	evAnswered                     // the call tree has dealt with what this instance raised (posted to the thrower)
	msgCommand
)

// message is one entry of an instance's intake. It is passed by value and
// kept small (40 bytes), so that a step costs no allocation and an
// instance's intake buffer little memory; what only rare messages carry
// sits behind more.
type message struct {
	kind  msgKind
	token int
	node  *model.Node
	flow  *model.Flow
	more  *messageMore
}

// messageMore is what forks, failures, commands and deliveries carry.
type messageMore struct {
	flows []*model.Flow
	err   error
	cmd   *command
	ev    *eventhub.Delivery
	child *Instance
	// raised is what a called instance raised, for evRaisedUp and
	// evAnswered.
	raised *raised
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
	cmdCheckpoint
	cmdActivateJob
	cmdUpdateRetries
	cmdSetVariables
	cmdScopeVariables
	cmdModify
	cmdActivateAdHoc
	cmdDehydrate
)

// readOnly reports whether the operation only reads the instance (a
// dehydration changes how it is kept, not its state).
func (op cmdOp) readOnly() bool {
	return op == cmdTokens || op == cmdIncidents || op == cmdHistory || op == cmdCheckpoint || op == cmdScopeVariables ||
		op == cmdDehydrate
}

// command is a request from outside handled by the loop. The loop answers
// on reply exactly once.
type command struct {
	op      cmdOp
	key     int64
	vars    map[string]any
	retries int
	code    string
	msg     string
	// job carries the job-worker fields of a command (activation.go).
	job JobArgs
	// scope and local say where cmdSetVariables and cmdScopeVariables
	// work (setvars.go).
	scope int
	local bool
	// modify is cmdModify's modification (modify.go).
	modify *Modification
	reply  chan error
	// answered is set once the loop has sent on reply.
	answered bool

	tokens    []Token
	incidents []Incident
	history   []Event

	activated *Job // cmdActivateJob: the job as activated

	index *planIndex // cmdCheckpoint: the plan's names
	doc   *InstDoc   // cmdCheckpoint: the instance's state
	from  int        // cmdCheckpoint: the first history record to write

	ids []string // cmdActivateAdHoc: the elements to activate (msg names the ad-hoc sub-process)
}

// deliveryKind says what a parked track is told.
type deliveryKind uint8

const (
	resume deliveryKind = iota + 1 // continue past the node
	retry                          // execute the node again (incident resolved)
	merged                         // consumed by a join: exit
	exit                           // told to exit: its channel was closed, or, resumed directly, the same
)

// delivery is what the loop sends to a parked track.
type delivery struct {
	kind deliveryKind
	// arm is the node whose event fired, for a token waiting at a catch
	// node or event-based gateway.
	arm *model.Node
	// capture is where a goroutine track told to capture sends itself.
	capture chan<- track
}

// handle applies one intake message. It is the only place instance state
// changes.
func (inst *Instance) handle(m message) {
	if m.kind != msgCommand || !m.more.cmd.op.readOnly() {
		inst.markDirty()
	}
	switch m.kind {
	case msgCommand:
		inst.command(m.more.cmd)
		inst.released++
		return
	case evCallEnded:
		inst.released++ // counted by post
		if !inst.stopping.Load() {
			inst.callEnded(m)
		}
		return
	case evCancel:
		inst.released++ // counted by post
		inst.stopAll(Terminated, "cancelled with the instance that called it")
		return
	case evRaisedUp, evAnswered:
		inst.released++ // counted by post
		if !inst.stopping.Load() {
			inst.raisedInTree(m)
		}
		return
	case evDeliver:
		inst.released++ // counted by post
		if inst.stopping.Load() || inst.finished() {
			if m.more.ev.Kind == eventhub.Message {
				inst.eng.hub.Reject(*m.more.ev)
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
	if inst.stopping.Load() || tv.doomed {
		inst.handleWhileStopping(tv, m)
		return
	}
	inst.work.steps++
	inst.spend()
	switch m.kind {
	case evMoved:
		inst.recordStep(codeLeft, m.node, nil, tv.id)
		inst.completedActivity(tv, m.node)
		if inst.adHocCut(tv) {
			inst.movedWhileStopping(tv, m.flow.Target)
			return
		}
		inst.moveTo(tv, m.flow)
	case evFork:
		inst.recordNode(ElementLeft, m.node, tv.id)
		inst.completedActivity(tv, m.node)
		if inst.adHocCut(tv) {
			inst.movedWhileStopping(tv, m.more.flows[0].Target)
			return
		}
		inst.moveTo(tv, m.more.flows[0])
		for _, f := range m.more.flows[1:] {
			inst.recordFlow(f, inst.nextToken+1)
			inst.spawn(f.Target, f, true, tv.scope)
		}
	case evJob:
		inst.waitIn(tv, m.node)
	case evArrive:
		inst.park(tv, WaitJoin)
		inst.arrive(tv, m.node, m.flow)
	case evIncident:
		if m.more.err == errHeld {
			inst.parkHeld(tv)
			return
		}
		inst.park(tv, WaitIncident)
		key := inst.openIncident(tv, m.node, 0, m.more.err.Error())
		inst.incidents[key].reported = true
	case evIteration:
		inst.recordStep(codeLeft, m.node, nil, tv.id)
		inst.completedActivity(tv, m.node)
		inst.recordStep(codeEntered, m.node, nil, tv.id)
	case evRaise:
		inst.raiseAt(tv, m.node)
	case evLinked:
		inst.linked(tv, m.node)
	case evThrow:
		inst.throw(tv, m.node)
	case evInnerDone:
		inst.completing(tv, m.node)
	case evEnded:
		inst.recordNode(ElementLeft, m.node, tv.id)
		inst.completedActivity(tv, m.node)
		tv.node = nil
		inst.adHocChildDone(tv.scope, tv)
		inst.removeToken(tv, false)
	case evTerminate:
		inst.recordNode(ElementLeft, m.node, tv.id)
		tv.node = nil
		if sc := tv.scope; sc != inst.root {
			// Inside a sub-process a terminate end event ends only that
			// scope: the other tokens there are withdrawn, and the
			// sub-process completes once they have gone.
			inst.terminateIn(sc, tv)
			inst.removeToken(tv, false)
			return
		}
		inst.removeToken(tv, false)
		inst.stopAll(Completed, "")
	case evExited:
		inst.removeToken(tv, true)
	case evFailed:
		inst.removeToken(tv, true)
		inst.stopAll(Failed, m.more.err.Error())
	}
}

// handleWhileStopping drains what running tracks reported before they saw
// the stopping flag: anything that parks is woken to exit at once, and no
// new work is started.
func (inst *Instance) handleWhileStopping(tv *tokenView, m message) {
	switch m.kind {
	case evJob, evArrive, evIncident, evThrow, evRaise, evInnerDone:
		inst.wakeToExit(tv)
	case evEnded, evTerminate:
		inst.removeToken(tv, false)
	case evExited, evFailed:
		inst.removeToken(tv, true)
	case evMoved:
		inst.movedWhileStopping(tv, m.flow.Target)
	case evFork:
		inst.movedWhileStopping(tv, m.more.flows[0].Target)
	case evLinked:
		inst.movedWhileStopping(tv, inst.plan.nodes[m.node.Index].link)
	}
}

// movedWhileStopping follows a withdrawn token onto n. A token withdrawn
// with its element recorded terminated has no node any more and stays so.
// Where n is a wait state the track blocks there without reporting, so it
// is woken to exit.
func (inst *Instance) movedWhileStopping(tv *tokenView, n *model.Node) {
	if tv.node != nil {
		tv.node = n
	}
	if inst.plan.nodes[n.Index].waits {
		inst.wakeToExit(tv)
	}
}

// wakeToExit closes the channel of a track that is about to block on it,
// so that it exits. It stays counted as running until it reports the exit.
func (inst *Instance) wakeToExit(tv *tokenView) {
	if tv.closed {
		return
	}
	tv.closed = true
	if inst.turn == tv.id {
		// It has the turn still: it moved onto a wait state.
		if inst.direct {
			inst.resumeDirect(tv, delivery{kind: exit})
		} else {
			close(tv.ch)
		}
		return
	}
	inst.ready(wakeup{kind: wakeClose, tv: tv})
}

// enter records that tv took flow f onto its target.
func (inst *Instance) enter(tv *tokenView, f *model.Flow) {
	inst.recordFlow(f, tv.id)
	tv.node = f.Target
	tv.atJoin = inst.plan.nodes[f.Target.Index].join
	if !tv.atJoin {
		inst.recordStep(codeEntered, f.Target, nil, tv.id)
	}
}

// moveTo records that tv took flow f and, where the target is a wait
// state, sets up what tv waits for there in the same step.
func (inst *Instance) moveTo(tv *tokenView, f *model.Flow) {
	inst.enter(tv, f)
	if inst.plan.nodes[f.Target.Index].waits {
		inst.waitIn(tv, f.Target)
	}
}

// waitIn parks tv at wait state n, which the history has just shown it
// enter, and opens what it waits for: its events, its job, its
// sub-process or its called instance, with its boundary events. Doing it
// in the step that records the entry means anything handled after that
// record (a sibling's signal, a message this instance throws) finds the
// token subscribed, and parking before subscribing keeps SRD-027 FR-5: a
// subscription that fires at once finds the token parked. The track, which
// may not have reached its channel yet, reports nothing for the node; the
// channel's one slot holds a delivery until it does.
func (inst *Instance) waitIn(tv *tokenView, n *model.Node) {
	switch np := &inst.plan.nodes[n.Index]; {
	case np.multi != nil && !tv.scope.instanceOf(n):
		inst.enterMulti(tv, n)
	case len(np.catches) > 0:
		inst.waitAt(tv, n)
	case n.Kind == model.KindSubProcess:
		inst.enterScope(tv, n)
	case n.Kind == model.KindCallActivity:
		inst.enterCall(tv, n)
	default:
		inst.createJob(tv, n)
	}
}

// arrive queues a token at a synchronising join and fires the join when
// every incoming flow has a token: the token from the firing flow goes on,
// the others are merged.
func (inst *Instance) arrive(tv *tokenView, n *model.Node, via *model.Flow) {
	if inst.joins == nil {
		inst.joins = make(map[joinKey]*joinState)
	}
	np := &inst.plan.nodes[n.Index]
	key := joinKey{tv.scope.id, n.Index}
	js := inst.joins[key]
	if js == nil {
		js = &joinState{arrived: make([][]int, len(n.Incoming)), node: n, scope: tv.scope}
		inst.joins[key] = js
		if np.inclusive || np.complex {
			inst.orJoins++
		}
	}
	in := flowIndex(n.Incoming, via)
	js.arrived[in] = append(js.arrived[in], tv.id)
	switch {
	case np.inclusive:
		inst.tryInclusive(js)
		return
	case np.complex:
		inst.tryComplex(js)
		return
	case n.Kind.IsActivity():
		inst.tryQuantity(js) // quantity.go
		return
	}
	for _, q := range js.arrived {
		if len(q) == 0 {
			return
		}
	}
	inst.fire(js, in)
}

// fire consumes the oldest token of every incoming flow that has one: the
// one from flow in goes on, the others are merged.
func (inst *Instance) fire(js *joinState, in int) {
	n := js.node
	survivor := js.arrived[in][0]
	for i, q := range js.arrived {
		if len(q) == 0 {
			continue
		}
		id := q[0]
		js.arrived[i] = q[1:]
		if id != survivor {
			inst.merge(n, id)
		}
	}
	if empty(js.arrived) {
		inst.dropJoin(js)
	}
	st := inst.tokens[survivor]
	st.atJoin = false
	inst.recordNode(ElementEntered, n, st.id)
	inst.deliver(st, delivery{kind: resume})
}

// tryInclusive fires inclusive join n once no live token elsewhere can
// still make a difference to it (BPMN 2.0 §13.4.3, see inclusiveWaits).
func (inst *Instance) tryInclusive(js *joinState) {
	n := js.node
	first := -1
	for i, q := range js.arrived {
		if len(q) > 0 {
			first = i
			break
		}
	}
	if first < 0 {
		return
	}
	occupied, inTransit := joinPositions(n, inst.positions(js.scope), js.parked())
	if inTransit {
		return // a token is on its way onto the join: it will arrive
	}
	if inclusiveWaits(inst.plan.nodes[n.Index].reaches, js.arrived, occupied) {
		return
	}
	inst.fire(js, first)
}

// inclusiveWaits reports whether an inclusive join holding the tokens
// arrived (per incoming flow) must wait for a token at one of the occupied
// nodes. BPMN 2.0 §13.4.3 (Table 13.3) activates the join when at least one
// incoming flow has a token and, for every path from a token to an empty
// incoming flow that does not visit the join, there is also a path from
// that token to an incoming flow that has a token, not visiting the join.
// So the join waits only for a token that can reach an empty flow and no
// filled one: a token that can also reach a filled flow may arrive there
// and only queue behind that flow's token, so waiting for it could not
// change what this firing consumes. reaches[i] holds, by node index, the
// nodes with a path to incoming flow i that does not visit the join.
func inclusiveWaits(reaches [][]bool, arrived [][]int, occupied map[int]bool) bool {
	for idx := range occupied {
		toEmpty, toFilled := false, false
		for i, reach := range reaches {
			if !reach[idx] {
				continue
			}
			if len(arrived[i]) > 0 {
				toFilled = true
			} else {
				toEmpty = true
			}
		}
		if toEmpty && !toFilled {
			return true
		}
	}
	return false
}

// dropJoin forgets a join's state once no token waits there.
func (inst *Instance) dropJoin(js *joinState) {
	delete(inst.joins, joinKey{js.scope.id, js.node.Index})
	if np := &inst.plan.nodes[js.node.Index]; np.inclusive || np.complex {
		inst.orJoins--
	}
}

// tryComplex applies a complex gateway's activation rule (BPMN 2.0
// §13.4.4). Before it fires, it fires when the activation condition, over
// the variables and activationCount (tokens arrived), is true, consuming
// every arrived token; it aborts the instance when the condition is false
// and no further token can arrive. After it fires, it waits for reset:
// tokens of the same activation arriving later are consumed without firing
// again, until no further token can arrive.
func (inst *Instance) tryComplex(js *joinState) {
	n := js.node
	np := &inst.plan.nodes[n.Index]
	occupied, inTransit := joinPositions(n, inst.positions(js.scope), js.parked())
	more := inTransit
	for i := range js.arrived {
		more = more || reachesAny(np.reaches[i], occupied)
	}
	count := 0
	for _, q := range js.arrived {
		count += len(q)
	}
	if js.fired {
		inst.consumeAll(n, js, -1)
		if !more {
			inst.dropJoin(js)
		}
		return
	}
	if count == 0 {
		return
	}
	if np.activation == nil {
		if inTransit || inclusiveWaits(np.reaches, js.arrived, occupied) {
			return // without a rule it waits like an inclusive join
		}
	} else {
		ok, err := np.activation.EvalBool(overlay(js.scope.visible(), map[string]any{"activationCount": float64(count)}))
		if err != nil {
			inst.stopAll(Terminated, fmt.Sprintf("complex gateway %s: activation condition: %v", n.ID, err))
			return
		}
		if !ok {
			if !more {
				inst.stopAll(Terminated, fmt.Sprintf("complex gateway %s: activation condition %q can no longer become true", n.ID, np.activation.Text()))
			}
			return
		}
	}
	survivor := -1
	for _, q := range js.arrived {
		if len(q) > 0 {
			survivor = q[0]
			break
		}
	}
	inst.consumeAll(n, js, survivor)
	js.fired = true
	if !more {
		inst.dropJoin(js)
	}
	st := inst.tokens[survivor]
	st.atJoin = false
	inst.recordNode(ElementEntered, n, st.id)
	inst.deliver(st, delivery{kind: resume})
}

// merge consumes token id at join n: it is told to exit.
func (inst *Instance) merge(n *model.Node, id int) {
	other := inst.tokens[id]
	inst.record(Event{Type: TokenMerged, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: id})
	other.node = nil
	inst.deliver(other, delivery{kind: merged})
}

// consumeAll merges every token waiting at join n except survivor.
func (inst *Instance) consumeAll(n *model.Node, js *joinState, survivor int) {
	for i, q := range js.arrived {
		for _, id := range q {
			if id != survivor {
				inst.merge(n, id)
			}
		}
		js.arrived[i] = nil
	}
}

// positions is the loop-owned position view of one scope: token id → the
// node its last report put it on (SRD-028). Nothing reads a live track.
func (inst *Instance) positions(sc *scope) map[int]*model.Node {
	out := make(map[int]*model.Node, len(inst.tokens))
	for id, tv := range inst.tokens {
		if tv.node != nil && tv.scope == sc && !tv.doomed {
			out[id] = tv.node
		}
	}
	return out
}

// parked returns the tokens that have arrived at the join and wait there.
func (js *joinState) parked() map[int]bool {
	out := make(map[int]bool)
	for _, q := range js.arrived {
		for _, id := range q {
			out[id] = true
		}
	}
	return out
}

// joinPositions derives, from the loop-owned maps alone, which nodes live
// tokens occupy (by node index; tokens parked at the join excluded) and
// whether a token is in transit onto join: on it, but not yet parked
// there. It is a pure function: one read of each position, so the in-transit
// guard and the reachability check can never disagree (SRD-027 §3.8,
// SRD-028 §3.4).
func joinPositions(join *model.Node, position map[int]*model.Node, parked map[int]bool) (occupied map[int]bool, inTransit bool) {
	occupied = make(map[int]bool, len(position))
	for id, n := range position {
		if parked[id] {
			continue
		}
		if join != nil && n == join {
			inTransit = true
			continue
		}
		occupied[n.Index] = true
	}
	return occupied, inTransit
}

// reachesAny reports whether a token at any occupied node can reach the
// flow whose upstream set is reach.
func reachesAny(reach []bool, occupied map[int]bool) bool {
	for idx := range occupied {
		if reach[idx] {
			return true
		}
	}
	return false
}

// recheckInclusive re-evaluates every inclusive join holding tokens, after
// a token moved, ended or was merged: that may be what they wait for.
func (inst *Instance) recheckInclusive() {
	keys := make([]joinKey, 0, len(inst.joins))
	for k := range inst.joins {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].scope < keys[j].scope || keys[i].scope == keys[j].scope && keys[i].node < keys[j].node
	})
	for _, k := range keys {
		js := inst.joins[k]
		if js == nil || inst.stopping.Load() {
			continue
		}
		switch np := &inst.plan.nodes[k.node]; {
		case np.inclusive:
			inst.tryInclusive(js)
		case np.complex:
			inst.tryComplex(js)
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
		t, err := np.jobType.EvalString(tv.scope.visible())
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
	retries := np.retries
	if np.retriesExpr != nil {
		r, err := evalRetries(np, tv.scope.visible())
		if err != nil {
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, err.Error())
			return
		}
		retries = r
	}
	jobVars := tv.scope.visible()
	if len(np.inputs) > 0 {
		locals, err := applyMappings(np.inputs, tv.scope.visible())
		if err != nil {
			tv.wait = WaitIncident
			inst.openIncident(tv, n, 0, err.Error())
			return
		}
		tv.locals = locals
		jobVars = overlay(tv.scope.visible(), locals)
	}
	headers, err := np.jobHeaders(jobVars)
	if err != nil {
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, err.Error())
		return
	}
	key := inst.eng.NextKey()
	job := &Job{
		Key: key, Type: typ, ProcessID: inst.plan.Process.ID, ElementID: n.ID, InstanceKey: inst.key,
		Retries: retries, Headers: headers, Variables: jobVars, Created: inst.eng.clock.Now(),
	}
	if inst.jobs == nil {
		inst.jobs = make(map[int64]*jobState)
	}
	inst.jobs[key] = &jobState{job: job, token: tv.id}
	tv.jobKey = key
	// Index the job before recording it: an observer that reacts to the
	// record by completing the job must find it.
	if retries > 0 {
		inst.eng.addJob(inst, job)
	}
	inst.record(Event{Type: JobCreated, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: tv.id, JobKey: key, JobType: typ})
	if err := inst.openBoundaries(tv, n); err != nil {
		inst.record(Event{Type: IncidentCreated, ElementID: n.ID, TokenID: tv.id, Message: err.Error()})
	}
	if retries == 0 {
		inst.jobs[key].incident = inst.openIncident(tv, n, key, "job has no retries")
		tv.wait = WaitIncident
	}
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
	return applyMappings(np.outputs, overlay(overlay(tv.scope.visible(), tv.locals), result))
}

// evalRetries evaluates a job's retries expression to a whole number.
func evalRetries(np *nodePlan, vars map[string]any) (int, error) {
	v, err := np.retriesExpr.Eval(vars)
	if err != nil {
		return 0, fmt.Errorf("job retries: %w", err)
	}
	switch r := v.(type) {
	case float64:
		if r >= 0 && r == float64(int(r)) {
			return int(r), nil
		}
	case string:
		if n, err := strconv.Atoi(r); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("job retries %q yielded %v, not a non-negative whole number", np.retriesExpr.Text(), v)
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
	case cmdCheckpoint:
		c.doc, err = inst.checkpoint(c.index, c.from)
	case cmdActivateAdHoc:
		err = inst.activateAdHocCmd(c.msg, c.ids)
	case cmdActivateJob:
		err = inst.activateJob(c)
	case cmdUpdateRetries:
		err = inst.updateRetries(c)
	case cmdSetVariables:
		err = inst.setVariables(c)
	case cmdScopeVariables:
		err = inst.scopeVariables(c)
	case cmdModify:
		err = inst.modify(c)
	case cmdDehydrate:
		// Answered at the next idle point, once dry (atIdle), and counted
		// as running work until then, so that Settle waits for it.
		inst.dryReqs = append(inst.dryReqs, c)
		inst.eng.busy.add(1)
		return
	}
	inst.answer(c, err)
}

// answer sends a command's answer, once.
func (inst *Instance) answer(c *command, err error) {
	c.answered = true
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
	if err := checkActivation(js, c); err != nil {
		return err
	}
	n := inst.plan.Process.Node(js.job.ElementID)
	update, err := inst.outputs(tv, n, c.vars)
	if err != nil {
		return fmt.Errorf("complete job %d: %w", c.key, err) // the job stays open: fix the variables and retry
	}
	inst.endJob(js)
	inst.closeBoundaries(tv)
	inst.record(Event{Type: JobCompleted, ElementID: js.job.ElementID, TokenID: tv.id, JobKey: c.key,
		JobType: js.job.Type, Variables: cloneVars(c.vars)})
	tv.scope.set(update)
	inst.keepLocals(tv, n)
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
	if err := checkActivation(js, c); err != nil {
		return err
	}
	retries := max(c.retries, 0)
	// The record the engine index holds is replaced, never mutated, so that
	// copies handed out earlier stay as they were.
	next := *js.job
	next.Retries = retries
	next.ErrorMessage = c.msg
	inst.backOff(&next, c.job.Backoff)
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

// throwError raises a BPMN error from a job: the nearest boundary event or
// event sub-process that catches its code handles it; with none, an
// incident holds the token, as in Zeebe.
func (inst *Instance) throwError(c *command) error {
	js, tv, err := inst.activeJob(c.key)
	if err != nil {
		return err
	}
	if err := checkActivation(js, c); err != nil {
		return err
	}
	inst.endJob(js)
	n := inst.plan.Process.Node(js.job.ElementID)
	inst.record(Event{Type: ErrorThrown, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: tv.id, JobKey: c.key, Name: c.code, Message: c.msg})
	tv.scope.set(c.vars)
	inst.raise(tv, n, model.EventError, c.code, c.msg, true, c.vars)
	return nil
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

// afterMove rechecks waiting inclusive and complex joins when a message changed where
// tokens are; most instances have none, and pay one comparison.
func (inst *Instance) afterMove(k msgKind) {
	if inst.orJoins == 0 || inst.stopping.Load() {
		return
	}
	switch k {
	case evMoved, evFork, evLinked, evEnded, evExited, evJob, evIncident, evThrow, evDeliver, msgCommand:
		inst.recheckInclusive()
	}
}
