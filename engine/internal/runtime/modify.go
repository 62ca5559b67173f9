package runtime

import (
	"context"
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Instance modification, as Zeebe's ModifyProcessInstance: an operator
// repairs an instance by starting tokens before elements and terminating
// tokens. Activations apply first, then terminations, so "move a token"
// is one modification that never leaves the instance empty in between.
// Terminating the last token of a sub-process terminates the sub-process
// (its waiting token, and so on up); terminating the last token of the
// instance terminates the instance, as in Zeebe.

// Modify applies m to the instance.
func (inst *Instance) Modify(ctx context.Context, m Modification) error {
	return inst.call(ctx, &command{op: cmdModify, modify: &m})
}

// activationTarget is a checked activation.
type activationTarget struct {
	node *model.Node
	sc   *scope
	// create are the sub-processes to enter first, outermost first, the
	// first one in sc.
	create []*model.Node
	vars   map[string]any
}

// modify checks every change of c.modify, then applies them.
func (inst *Instance) modify(c *command) error {
	m := c.modify
	var targets []activationTarget
	for _, a := range m.Activate {
		t, err := inst.activationOf(a)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	seen := map[int]bool{}
	for _, id := range m.Terminate {
		tv := inst.tokens[id]
		if tv == nil || tv.node == nil || tv.doomed || seen[id] {
			return fmt.Errorf("%w: instance %d has no token %d to terminate (see its tokens)", ErrBadModification, inst.key, id)
		}
		seen[id] = true
	}
	created := map[*model.Node]*scope{} // activations into one missing sub-process share it
	picked := map[joinKey][]int{}
	for _, t := range targets {
		sc := t.sc
		for _, sub := range t.create {
			if open := created[sub]; open != nil && open.parent == sc && !open.done {
				sc = open
				continue
			}
			if sc = inst.createScope(sub, sc); sc == nil {
				break // its inputs or boundaries failed: an incident holds it
			}
			created[sub] = sc
		}
		if sc == nil {
			continue
		}
		if len(t.vars) > 0 {
			sc.setLocal(t.vars)
		}
		inst.spawn(t.node, inst.joinFlow(t.node, sc, picked), true, sc)
	}
	for _, id := range m.Terminate {
		if tv := inst.tokens[id]; tv != nil && !tv.doomed {
			inst.terminateToken(tv)
		}
	}
	return nil
}

// createScope enters sub-process n in scope parent for an activation
// inside it: a token waits at n, with n's scope open and nothing started
// in it. It returns nil when the scope could not open (an incident holds
// the token).
func (inst *Instance) createScope(n *model.Node, parent *scope) *scope {
	tv := inst.newToken(n, nil, true, parent)
	tv.track = newTrack(inst, tv, n, nil)
	return inst.openScope(tv, n)
}

// joinFlow is the incoming flow a token activated at n arrives through
// when n joins flows: the one with the fewest tokens waiting at n in sc,
// counting those this modification already sent (picked), the first of
// equals. It is nil for any other element.
func (inst *Instance) joinFlow(n *model.Node, sc *scope, picked map[joinKey][]int) *model.Flow {
	if !inst.plan.nodes[n.Index].join {
		return nil
	}
	key := joinKey{sc.id, n.Index}
	if picked[key] == nil {
		picked[key] = make([]int, len(n.Incoming))
	}
	counts := picked[key]
	waiting := func(i int) int {
		if js := inst.joins[key]; js != nil {
			return len(js.arrived[i]) + counts[i]
		}
		return counts[i]
	}
	best := 0
	for i := range n.Incoming {
		if waiting(i) < waiting(best) {
			best = i
		}
	}
	counts[best]++
	return n.Incoming[best]
}

// activationOf checks one activation and finds its scope, or the
// sub-processes to enter for it.
func (inst *Instance) activationOf(a Activation) (activationTarget, error) {
	n := inst.plan.Process.Node(a.ElementID)
	bad := func(format string, args ...any) (activationTarget, error) {
		return activationTarget{}, fmt.Errorf("%w: activate %q: %s", ErrBadModification, a.ElementID, fmt.Sprintf(format, args...))
	}
	switch {
	case n == nil:
		return bad("process %s has no such element", inst.plan.Process.ID)
	case n.Kind == model.KindStartEvent:
		return bad("a start event starts its scope; activate the element after it")
	case n.Kind == model.KindBoundaryEvent:
		return bad("a boundary event belongs to its activity; activate the element after it")
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Multi != nil || p.Loop != nil {
			return bad("it is inside the multi-instance or loop activity %s", p.ID)
		}
	}
	if n.Parent == nil {
		if a.Scope != 0 {
			return bad("it is at process level, so scope must be 0")
		}
		return activationTarget{node: n, sc: inst.root, vars: a.Variables}, nil
	}
	var create []*model.Node
	for p := n.Parent; ; p = p.Parent {
		if p == nil {
			return activationTarget{node: n, sc: inst.root, create: create, vars: a.Variables}, nil
		}
		found := inst.openScopesOf(p, a.Scope)
		switch {
		case len(found) == 1:
			return activationTarget{node: n, sc: found[0], create: create, vars: a.Variables}, nil
		case len(found) > 1:
			return bad("sub-process %s has %d open scopes; name one by its waiting token", p.ID, len(found))
		case a.Scope != 0:
			return bad("no open scope of sub-process %s%s", p.ID, scopeNamed(a.Scope))
		case p.Kind != model.KindSubProcess || p.TriggeredByEvent || p.AdHoc != nil:
			return bad("no open scope of %s, and only an embedded sub-process (not an event or ad-hoc one) is entered for it", p.ID)
		}
		create = append([]*model.Node{p}, create...)
	}
}

// openScopesOf returns the open scopes of sub-process p: the one entered
// by token if token is not 0, else all.
func (inst *Instance) openScopesOf(p *model.Node, token int) []*scope {
	var found []*scope
	inst.eachScope(inst.root, func(s *scope) {
		if s.node == p && !s.done && (token == 0 || s.token == token) {
			found = append(found, s)
		}
	})
	return found
}

func scopeNamed(token int) string {
	if token == 0 {
		return ""
	}
	return fmt.Sprintf(" entered by token %d", token)
}

// eachScope calls fn for s and every scope below it, by id.
func (inst *Instance) eachScope(s *scope, fn func(*scope)) {
	fn(s)
	for _, id := range sortedKeys(s.children) {
		inst.eachScope(s.children[id], fn)
	}
}

// terminateToken terminates tv; when it is the last thing running in its
// scope, the scope's activity is terminated instead (the instance, for
// the process scope).
func (inst *Instance) terminateToken(tv *tokenView) {
	for {
		sc := tv.scope
		if inst.othersIn(sc, tv) {
			inst.withdraw(tv)
			return
		}
		if sc.parent == nil {
			inst.stopAll(Terminated, fmt.Sprintf("instance modification terminated token %d, the last one", tv.id))
			return
		}
		owner := inst.tokens[sc.token]
		if owner == nil || sc.inner || sc.node.TriggeredByEvent {
			inst.withdraw(tv) // an inner instance or event sub-process: let its own completion rules act
			return
		}
		tv = owner
	}
}

// othersIn reports whether anything besides tv runs in sc: another token
// or an event sub-process.
func (inst *Instance) othersIn(sc *scope, tv *tokenView) bool {
	for _, o := range inst.tokens {
		if o != tv && o.scope == sc && !o.doomed && o.node != nil {
			return true
		}
	}
	for _, c := range sc.children {
		if c.node != nil && c.node.TriggeredByEvent && !c.done {
			return true
		}
	}
	return false
}
