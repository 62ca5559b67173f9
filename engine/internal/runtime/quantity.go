package runtime

import (
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// An activity's startQuantity is how many tokens must arrive before it
// starts; its completionQuantity how many tokens it sends on each
// outgoing flow when it completes (BPMN 2.0 §10.3.1, both 1 by default).
// An activity with a start quantity above 1 is a join: arriving tokens
// wait there (not yet entering it) until there are enough, from any of
// its incoming flows; then the oldest ones are merged into one that
// enters and runs the activity, and the others go on waiting. Its
// waiting tokens are a join's in the state document.

// compileStartQuantity makes np's activity a join when its start
// quantity is above 1.
func compileStartQuantity(np *nodePlan) error {
	n := np.node
	if n.StartQuantity <= 1 {
		return nil
	}
	if np.loop != nil || np.multi != nil {
		return broke("FT.unsupported", "unsupported: startQuantity=\"%d\" on a looping or multi-instance activity: put a parallel gateway before it instead", n.StartQuantity)
	}
	np.startsWaiting = waitsOnEntry(np)
	np.join = true
	return nil
}

// tryQuantity starts activity js.node once its start quantity of tokens
// has arrived: the first token, in the order of the incoming flows and
// oldest first on each, enters it and the others are merged into it.
func (inst *Instance) tryQuantity(js *joinState) {
	n := js.node
	need, total := n.StartQuantity, 0
	for _, q := range js.arrived {
		total += len(q)
	}
	if total < need {
		return
	}
	taken := make([]int, 0, need)
	for i, q := range js.arrived {
		k := min(len(q), need-len(taken))
		taken = append(taken, q[:k]...)
		js.arrived[i] = q[k:]
	}
	for _, id := range taken[1:] {
		inst.merge(n, id)
	}
	if empty(js.arrived) {
		inst.dropJoin(js)
	}
	st := inst.tokens[taken[0]]
	st.atJoin = false
	inst.recordNode(ElementEntered, n, st.id)
	inst.notify(st, notice{kind: resume})
}

// started runs the activity a track's start quantity of tokens has just
// started: what the loop sets up for a wait state (a job, a message, a
// sub-process, a called instance), the throw or output mappings the loop
// applies, or nothing, and it leaves.
func (t *track) started() outcome {
	n := t.node
	np := &t.inst.plan.nodes[n.Index]
	switch {
	case np.startsWaiting:
		return t.park(atStarted, report{kind: evJob, node: n})
	case np.writes():
		return t.park(atThrow, report{kind: evThrow, node: n})
	}
	return t.leave(n)
}

// completionTokens returns the flows a completing activity n sends
// tokens on, each as many times as its completion quantity says.
func completionTokens(n *model.Node, flows []*model.Flow) []*model.Flow {
	if n.CompletionQuantity <= 1 || !n.Kind.IsActivity() {
		return flows
	}
	out := make([]*model.Flow, 0, len(flows)*n.CompletionQuantity)
	for _, f := range flows {
		for range n.CompletionQuantity {
			out = append(out, f)
		}
	}
	return out
}
