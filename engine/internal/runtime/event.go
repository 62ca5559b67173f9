package runtime

import (
	"time"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// eventTypes lists the event types by their compact code (see record); a
// checkpoint holds codes, so the order only ever grows at the end.
var eventTypes = [...]EventType{
	InstanceStarted, InstanceCompleted, InstanceTerminated, InstanceFailed, ElementEntered, ElementLeft,
	ElementTerminated, FlowTaken, TokenMerged, JobCreated, JobCompleted, JobFailed, JobCanceled,
	IncidentCreated, IncidentResolved, VariablesUpdated, MessageSubscribed, MessageCorrelated,
	SignalSubscribed, SignalReceived, TimerScheduled, TimerFired, ErrorThrown, EscalationThrown,
	MessagePublished, SignalBroadcast, ErrorCaught, EscalationCaught, CallStarted, ConditionSatisfied,
	FlowsChosen,
	DecisionEvaluated,
}

// EventTypes returns every event type the engine writes.
func EventTypes() []EventType { return append([]EventType(nil), eventTypes[:]...) }

// typeCode maps an event type to its index in eventTypes.
var typeCode = func() map[EventType]uint8 {
	m := make(map[EventType]uint8, len(eventTypes))
	for i, t := range eventTypes {
		m[t] = uint8(i)
	}
	return m
}()

// Codes of the records written at every step, looked up once.
var (
	codeEntered = typeCode[ElementEntered]
	codeLeft    = typeCode[ElementLeft]
	codeFlow    = typeCode[FlowTaken]
)

// record is the compact form in which an instance keeps its stream: the
// common records (an element entered or left, a flow taken) need only the
// node or flow and the token, so they are stored in 32 bytes and expanded
// to an Event only when read. A record holds no pointer (its node and flow
// are indexes into the immutable process), so the garbage collector never
// scans an instance's history; rarer records keep their full Event in the
// instance's details.
type record struct {
	at    int64 // clock reading, Unix nanoseconds
	node  int32 // 1 + the Node.Index of the element concerned; 0: none
	flow  int32 // 1 + the Flow.Index of the flow taken; 0: none
	token int32
	more  int32 // 1 + the index of the record's details in Instance.details; 0: none
	typ   uint8
}

// element returns the node r concerns, or nil.
func (r *record) element(p *model.Process) *model.Node {
	if r.node == 0 {
		return nil
	}
	return p.Nodes[r.node-1]
}

// event expands r, the seq-th record of inst, whose details are more (nil
// for a common record), into a public Event.
func (r *record) event(inst *Instance, more *Event, seq int) Event {
	var ev Event
	if more != nil {
		ev = *more
	}
	ev.Seq = uint64(seq)
	ev.Time = time.Unix(0, r.at).UTC()
	ev.Type = eventTypes[r.typ]
	ev.InstanceKey = inst.key
	p := inst.plan.Process
	ev.ProcessID = p.ID
	if n := r.element(p); n != nil {
		ev.ElementID = n.ID
		ev.ElementType = n.Kind.String()
	}
	if r.flow != 0 {
		f := p.Flows[r.flow-1]
		ev.ElementID = f.ID
		ev.ElementType = "sequenceFlow"
		ev.FlowID = f.ID
	}
	if r.token != 0 {
		ev.TokenID = int(r.token)
	}
	return ev
}

// nodeRef and flowRef are a record's reference to n and f.
func nodeRef(n *model.Node) int32 {
	if n == nil {
		return 0
	}
	return int32(n.Index) + 1
}

func flowRef(f *model.Flow) int32 {
	if f == nil {
		return 0
	}
	return int32(f.Index) + 1
}
