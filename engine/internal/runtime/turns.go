package runtime

import "github.com/flowtrack/flowtrack/engine/internal/model"

// An instance runs one track at a time, and takes outside input only when
// no track runs. That makes its history a function of the model and the
// order of its inputs, the same on every host and every run, whatever the
// goroutine scheduler does (RATIONALE.md, "Why does an instance run one
// token at a time?"). The rule:
//
//   - A track runs until it waits (parks on its channel) or ends; moving
//     and forking do not end its turn. A token that the loop parks at a
//     wait state as it records the entry ends its turn there.
//   - Tracks that become runnable meanwhile (a fork's other branches, a
//     delivery to a parked token, a withdrawn token woken to exit) take
//     their turns in the order they became runnable.
//   - Outside input (commands, the hub's deliveries, other instances'
//     posts) is handled one item at a time, in arrival order, once no
//     track runs and none is runnable.
//
// Only the loop reads or writes the fields behind this (turn, runnable,
// inputs), like every other piece of instance state.

// wakeKind says how a runnable track is set going.
type wakeKind uint8

const (
	wakeStart   wakeKind = iota + 1 // start the track's goroutine
	wakeDeliver                     // send a delivery to the parked track
	wakeClose                       // close the track's channel so it exits
)

// wakeup is a track waiting for its turn.
type wakeup struct {
	kind wakeKind
	tv   *tokenView
	d    notice
	// For wakeStart: the node the track starts at and the flow it came by.
	node *model.Node
	via  *model.Flow
}

// ready sets a track going now if no other track has the turn, else queues
// it. The caller has counted the track as running work.
func (inst *Instance) ready(w wakeup) {
	if inst.turn != 0 || len(inst.runnable) > 0 {
		inst.runnable = append(inst.runnable, w)
		return
	}
	inst.give(w)
}

// give hands the turn to w's track.
func (inst *Instance) give(w wakeup) {
	inst.turn = w.tv.id
	if inst.direct || w.tv.track != nil {
		// With goroutine tracks too, a track the loop holds as a
		// continuation (it started parked, was restored, or its instance
		// was dehydrated) runs on the loop's goroutine, as with direct
		// resumption, instead of getting a goroutine: waking a dehydrated
		// instance then starts one goroutine, its loop's, not two
		// (RATIONALE.md, "Why does a woken track run on its loop's
		// goroutine?").
		d := w.d
		switch w.kind {
		case wakeStart:
			w.tv.track = newTrack(inst, w.tv, w.node, w.via)
		case wakeClose:
			d = notice{kind: exit}
		}
		w.tv.track.ch = nil // the loop drives it: it reports to inst.reports
		inst.resumeDirect(w.tv, d)
		return
	}
	switch w.kind {
	case wakeStart:
		go newTrack(inst, w.tv, w.node, w.via).run()
	case wakeDeliver:
		w.tv.ch <- w.d // never blocks: one slot, and at most one delivery per park
	case wakeClose:
		close(w.tv.ch)
	}
}

// resumeDirect, in direct resumption, makes tv's track, which has the
// turn, the one the loop runs next, handing it d if it is parked.
func (inst *Instance) resumeDirect(tv *tokenView, d notice) {
	inst.running, inst.handOver = tv, d
}

// driveDirect does the next piece of work of a track the loop drives
// (direct resumption, or a loop-held track of a goroutine instance): it
// handles the oldest report of the track with the turn, or, when all are
// handled, runs that track one step on. It reports false when there was
// nothing to do: no track the loop drives has the turn.
func (inst *Instance) driveDirect() bool {
	if len(inst.reports) > 0 {
		m := inst.reports[0]
		inst.reports[0] = report{}
		inst.reports = inst.reports[1:]
		if len(inst.reports) == 0 {
			inst.reports = inst.reportBuf[:0]
		}
		inst.receive(m)
		return true
	}
	tv := inst.running
	if tv == nil {
		return false
	}
	d := inst.handOver
	inst.handOver = notice{}
	if tv.track.safeNext(d) != running {
		inst.running = nil
	}
	return true
}

// nextTurn gives the turn to the oldest runnable track, if no track has it.
// It reports whether a track now runs.
func (inst *Instance) nextTurn() bool {
	if inst.turn != 0 {
		return true
	}
	if len(inst.runnable) == 0 {
		return false
	}
	w := inst.runnable[0]
	inst.runnable[0] = wakeup{}
	inst.runnable = inst.runnable[1:]
	if len(inst.runnable) == 0 {
		inst.runnable = nil
	}
	inst.give(w)
	return true
}

// moving reports whether a track runs or waits for its turn: the
// instance is busy with an input.
func (inst *Instance) moving() bool { return inst.turn != 0 || len(inst.runnable) > 0 }

// endTurn ends tv's turn, if it has the turn: the loop has parked it (at a
// wait state it just entered, say) or forgotten it.
func (inst *Instance) endTurn(tv *tokenView) {
	if inst.turn == tv.id {
		inst.turn = 0
	}
}

// endsTurn reports whether a track's report of kind k means it has stopped
// running: it parked on its channel or exited.
func endsTurn(k reportKind) bool {
	switch k {
	case evMoved, evFork, evIteration, evLinked:
		return false
	}
	return true
}

// isTrackReport reports whether m comes from a track rather than from
// outside the instance.
func isTrackReport(m report) bool {
	switch m.kind {
	case msgCommand, evDeliver, evCallEnded, evCancel, evRaisedUp, evAnswered:
		return false
	}
	return true
}
