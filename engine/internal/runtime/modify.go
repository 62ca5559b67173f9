package runtime

import (
	"context"
	"errors"
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

// Activation starts a token before an element.
type Activation struct {
	// ElementID is the element to start at: an activity, an event or a
	// gateway that does not join flows; not a start event, a boundary
	// event, or an element inside a multi-instance activity.
	ElementID string
	// Scope is the token waiting at the enclosing sub-process for its
	// inner tokens; 0 finds the only open scope of that sub-process, or
	// the process scope for an element at process level.
	Scope int
	// Variables are set locally in that scope first.
	Variables map[string]any
}

// Modification is a set of changes to one instance, applied at once.
type Modification struct {
	Activate  []Activation
	Terminate []int // token ids
}

// ErrBadModification is returned for a modification the instance cannot
// apply; nothing of it is applied.
var ErrBadModification = errors.New("bad instance modification")

// Modify applies m to the instance.
func (inst *Instance) Modify(ctx context.Context, m Modification) error {
	return inst.call(ctx, &command{op: cmdModify, modify: &m})
}

// activationTarget is a checked activation.
type activationTarget struct {
	node *model.Node
	sc   *scope
	vars map[string]any
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
	for _, t := range targets {
		if len(t.vars) > 0 {
			t.sc.setLocal(t.vars)
		}
		inst.spawn(t.node, nil, true, t.sc)
	}
	for _, id := range m.Terminate {
		if tv := inst.tokens[id]; tv != nil && !tv.doomed {
			inst.terminateToken(tv)
		}
	}
	return nil
}

// activationOf checks one activation and finds its scope.
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
	case inst.plan.nodes[n.Index].join:
		return bad("a gateway that joins flows waits for its incoming tokens; activate an element before or after it")
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
	var found []*scope
	inst.eachScope(inst.root, func(s *scope) {
		if s.node == n.Parent && !s.done && (a.Scope == 0 || s.token == a.Scope) {
			found = append(found, s)
		}
	})
	switch len(found) {
	case 0:
		return bad("no open scope of sub-process %s%s; activate the sub-process itself", n.Parent.ID, scopeNamed(a.Scope))
	case 1:
		return activationTarget{node: n, sc: found[0], vars: a.Variables}, nil
	}
	return bad("sub-process %s has %d open scopes; name one by its waiting token", n.Parent.ID, len(found))
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
