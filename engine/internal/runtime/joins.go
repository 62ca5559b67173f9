// Joins: parallel, inclusive (OR) and complex gateways, and activities
// with a start quantity, waiting for tokens per scope activation.

package runtime

import (
	"fmt"
	"sort"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

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
	inst.notify(st, notice{kind: resume})
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
// change what this firing consumes. A token "can reach" an empty flow if
// anything it may still cause arrives there (r.feeds, boundary events
// included), and a filled one only if it can go there itself (r.carries):
// a non-interrupting boundary event's token on a filled flow does not
// excuse the activity's own token on its way to an empty one.
func inclusiveWaits(r joinReach, arrived [][]int, occupied map[int]bool) bool {
	for idx := range occupied {
		toEmpty, toFilled := false, false
		for i := range arrived {
			if len(arrived[i]) > 0 {
				toFilled = toFilled || r.carries[i][idx]
			} else {
				toEmpty = toEmpty || r.feeds[i][idx]
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
		more = more || reachesAny(np.reaches.feeds[i], occupied)
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
	inst.notify(st, notice{kind: resume})
}

// merge consumes token id at join n: it is told to exit.
func (inst *Instance) merge(n *model.Node, id int) {
	other := inst.tokens[id]
	inst.record(Event{Type: TokenMerged, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: id})
	other.node = nil
	inst.notify(other, notice{kind: merged})
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
