package runtime

import (
	"context"
	"fmt"
)

// Variables set from outside, as Zeebe's SetVariables: on the process
// scope or on the scope of one sub-process activation, named by the token
// that waits at the sub-process for its inner tokens (Token.Waiting
// "scope"), or by the token of one inner instance of a multi-instance
// activity. Local writes go to that scope's own variables; propagating
// writes go, variable by variable, to the nearest scope up from it that
// holds the variable, else to the process scope. The loop rechecks
// conditional events after the command, as after any message.

// SetVariables sets vars (normalized) on the scope the token scopeToken
// names (0: the process scope), locally or propagating.
func (inst *Instance) SetVariables(ctx context.Context, scopeToken int, vars map[string]any, local bool) error {
	return inst.call(ctx, &command{op: cmdSetVariables, scope: scopeToken, vars: vars, local: local})
}

// ScopeVariables returns a copy of the variables of the scope the token
// scopeToken names (0: the process scope): only its own with local, else
// every variable visible in it.
func (inst *Instance) ScopeVariables(ctx context.Context, scopeToken int, local bool) (map[string]any, error) {
	c := &command{op: cmdScopeVariables, scope: scopeToken, local: local}
	if err := inst.call(ctx, c); err != nil {
		return nil, err
	}
	return c.vars, nil
}

// scopeOf finds the open scope token id names: the process scope for 0.
func (inst *Instance) scopeOf(id int) (*scope, error) {
	if id == 0 {
		return inst.root, nil
	}
	if tv := inst.tokens[id]; tv != nil && tv.node != nil {
		if tv.scope != nil && tv.scope.token == id && !tv.scope.done {
			return tv.scope, nil // an inner instance of a multi-instance activity
		}
		if s := tv.scope.childOf(id); s != nil {
			return s, nil
		}
		return nil, fmt.Errorf("token %d at %s holds no variable scope (a sub-process waiting for its inner tokens does): %w",
			id, tv.node.ID, ErrUnknownScope)
	}
	return nil, fmt.Errorf("instance %d has no token %d: %w", inst.key, id, ErrUnknownScope)
}

// childOf returns the open child scope of s entered by token id.
func (s *scope) childOf(id int) *scope {
	if s == nil {
		return nil
	}
	for _, c := range s.children {
		if c.token == id && !c.done {
			return c
		}
	}
	return nil
}

// setVariables applies a SetVariables command.
func (inst *Instance) setVariables(c *command) error {
	s, err := inst.scopeOf(c.scope)
	if err != nil {
		return err
	}
	if c.local {
		s.setLocal(c.vars)
	} else {
		s.set(c.vars)
	}
	inst.record(Event{Type: VariablesUpdated, TokenID: c.scope, Variables: cloneVars(c.vars)})
	return nil
}

// scopeVariables applies a ScopeVariables command.
func (inst *Instance) scopeVariables(c *command) error {
	s, err := inst.scopeOf(c.scope)
	if err != nil {
		return err
	}
	if c.local {
		c.vars = cloneVars(s.vars)
	} else {
		c.vars = cloneVars(s.visible())
	}
	if c.vars == nil {
		c.vars = map[string]any{}
	}
	return nil
}
