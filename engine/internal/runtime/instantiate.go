package runtime

import (
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Besides its start events, BPMN 2.0 lets two elements without incoming
// flows start a process (§10.4.2, §10.6.6): a receive task with
// instantiate="true", whose message creates an instance, and an
// event-based gateway with instantiate="true", the first event of any of
// whose arms creates one. Their triggers are registered like a message,
// signal or timer start event's (Engine.registerStarts); the instance
// begins with its token past the catch that fired (beginAtCatch).

// compileInstantiation makes n's trigger, or its arms' triggers, start
// instances when n is an instantiating receive task or event-based
// gateway at the top of the process with no incoming flow.
func (plan *Plan) compileInstantiation(n *model.Node) error {
	if !n.Instantiate || len(n.Incoming) > 0 || n.Parent != nil {
		return nil
	}
	var catches []*model.Node
	switch n.Kind {
	case model.KindReceiveTask:
		if n.Loop != nil || n.Multi != nil {
			return broke("FT.unsupported", "unsupported: an instantiating bpmn:receiveTask with loop characteristics: start the process with a message start event before the loop")
		}
		catches = []*model.Node{n}
	case model.KindEventBasedGateway:
		if n.ParallelEvents {
			// The first event starts an instance, and the later events of
			// the other arms would have to find that same instance.
			return broke("FT.unsupported", "unsupported: an instantiating bpmn:eventBasedGateway with eventGatewayType=\"Parallel\": use eventGatewayType=\"Exclusive\", or a message or signal start event for each arm and a parallel gateway to join them")
		}
		for _, f := range n.Outgoing {
			catches = append(catches, f.Target)
		}
	default:
		return nil
	}
	for _, c := range catches {
		// Validate allows only message, signal and timer catches here.
		if np := &plan.nodes[c.Index]; len(np.catches) == 1 {
			np.startCatch = &np.catches[0]
		}
	}
	return nil
}

// beginAtCatch creates the first token of an instance started by the
// trigger of catch n, an instantiating receive task or an arm of an
// instantiating event-based gateway: the gateway, if any, is passed
// through, n is entered, and the token leaves it at once, its event
// having occurred.
func (inst *Instance) beginAtCatch(n *model.Node) {
	var via *model.Flow
	if in := n.Incoming; len(in) > 0 && in[0].Source.Kind == model.KindEventBasedGateway {
		via = in[0]
		for _, f := range n.Incoming {
			if f.Source.Instantiate && len(f.Source.Incoming) == 0 {
				via = f
			}
		}
		id := inst.nextToken + 1
		inst.recordNode(ElementEntered, via.Source, id)
		inst.recordNode(ElementLeft, via.Source, id)
		inst.recordFlow(via, id)
	}
	tv := inst.newToken(n, via, false, inst.root)
	tv.track = newTrack(inst, tv, n, via)
	inst.park(tv, WaitEvent)
	inst.notify(tv, notice{kind: resume})
}
