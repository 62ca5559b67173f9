package runtime

import (
	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// reportKind says what an entry of an instance's intake reports or asks.
type reportKind uint8

// Track events report what a track did; msgCommand carries a request from
// outside the instance.
const (
	evMoved     reportKind = iota + 1 // left node through flow onto flow.Target
	evFork                            // left node through several flows at once
	evJob                             // parked at loop activity node for the loop to set up the iteration's wait (other waits are set up on entry)
	evArrive                          // parked at the join node, arrived through flow
	evIncident                        // parked on an incident at node
	evEnded                           // finished at end event node
	evTerminate                       // reached terminate end event node
	evExited                          // stopped: its channel was closed or the instance is stopping
	evFailed                          // the track failed (a recovered panic)
	evThrow                           // parked at a throw node until the loop has published its event
	evDeliver                         // the hub fired a subscription (posted, not sent by a track)
	evIteration                       // a looping activity starts its next iteration
	evCallEnded                       // a called instance ended (posted by the child to its parent)
	evCancel                          // the calling instance asks this one to terminate (posted)
	evRaise                           // parked at an error or escalation end or throw event
	evLinked                          // left link throw event node for the link catch event it names
	evInnerDone                       // an inner instance of multi-instance activity node is done with its work
	evRaisedUp                        // a called instance raised an error or escalation it does not catch (posted by the child to its parent)
	evAnswered                        // the call tree has dealt with what this instance raised (posted to the thrower)
	evChoice                          // parked at a diverging gateway node, before it routes, for a choice of flows (choice.go)
	msgCommand
)

// report is one entry of an instance's intake: what a track reports it
// did, or a command from outside (msgCommand). "Message" is kept for BPMN
// messages. A report is passed by value and kept small (40 bytes), so
// that a step costs no allocation and an instance's intake buffer little
// memory; what only rare reports carry sits behind more.
type report struct {
	kind  reportKind
	token int
	node  *model.Node
	flow  *model.Flow
	more  *reportMore
}

// reportMore is what forks, failures, commands and deliveries carry.
type reportMore struct {
	flows []*model.Flow
	err   error
	cmd   *command
	ev    *eventhub.Delivery
	child *Instance
	// raised is what a called instance raised, for evRaisedUp and
	// evAnswered.
	raised *raised
}

// noticeKind says what a parked track is told.
type noticeKind uint8

const (
	resume noticeKind = iota + 1 // continue past the node
	retry                        // execute the node again (incident resolved)
	merged                       // consumed by a join: exit
	exit                         // told to exit: its channel was closed, or, resumed directly, the same
)

// notice is what the loop sends to a parked track.
type notice struct {
	kind noticeKind
	// arm is the node whose event fired, for a token waiting at a catch
	// node or event-based gateway.
	arm *model.Node
	// flows are the flows chosen for a token waiting for a choice at a
	// gateway (choice.go); nil lets the gateway's conditions decide.
	flows []*model.Flow
	// capture is where a goroutine track told to capture sends itself.
	capture chan<- track
}

// handle applies one intake report. It is the only place instance state
// changes.
func (inst *Instance) handle(m report) {
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
	case evChoice:
		inst.park(tv, WaitChoice)
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
func (inst *Instance) handleWhileStopping(tv *tokenView, m report) {
	switch m.kind {
	case evJob, evArrive, evIncident, evThrow, evRaise, evInnerDone, evChoice:
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
		if tv.track != nil { // the loop drives it
			inst.resumeDirect(tv, notice{kind: exit})
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

// afterMove rechecks waiting inclusive and complex joins when a message changed where
// tokens are; most instances have none, and pay one comparison.
func (inst *Instance) afterMove(k reportKind) {
	if inst.orJoins == 0 || inst.stopping.Load() {
		return
	}
	switch k {
	case evMoved, evFork, evLinked, evEnded, evExited, evJob, evIncident, evThrow, evDeliver, msgCommand:
		inst.recheckInclusive()
	}
}
