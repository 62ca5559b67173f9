package engine

import (
	"context"
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// SetVariables sets vars on a scope of a live instance, as Zeebe's
// SetVariables, so an operator can fix data before resolving an incident.
// Conditional events whose condition turns true fire at once.
//
// # Errors
//
// ErrUnknownInstance for a key that names no instance; ErrInstanceEnded
// for a finished one; ErrUnknownScope for a scope token that names no open
// scope; ErrBadVariables for variables that are not JSON-compatible.
func (e *Engine) SetVariables(ctx context.Context, instanceKey int64, vars map[string]any, s Scope) error {
	norm, err := normalize(vars)
	if err != nil {
		return fmt.Errorf("set variables of instance %d: %w", instanceKey, err)
	}
	inst, err := e.liveInstance(instanceKey)
	if err != nil {
		return err
	}
	if err := e.durably(ctx, func() error { return inst.SetVariables(ctx, s.Token, norm, s.Local) }); err != nil {
		return fmt.Errorf("set variables of instance %d: %w", instanceKey, err)
	}
	return nil
}

// ScopeVariables returns a copy of the variables of a scope of a live
// instance: only its own with s.Local, else every variable visible in it.
//
// # Errors
//
// As SetVariables.
func (e *Engine) ScopeVariables(ctx context.Context, instanceKey int64, s Scope) (map[string]any, error) {
	inst, err := e.liveInstance(instanceKey)
	if err != nil {
		return nil, err
	}
	vars, err := inst.ScopeVariables(ctx, s.Token, s.Local)
	if err != nil {
		return nil, fmt.Errorf("variables of instance %d: %w", instanceKey, err)
	}
	return vars, nil
}

// liveInstance finds an instance by key for an operation on it; a
// finished instance answers ErrInstanceEnded from its loop.
func (e *Engine) liveInstance(key int64) (*runtime.Instance, error) {
	inst, ok := e.rt.Instance(key)
	if !ok {
		return nil, fmt.Errorf("instance %d: %w", key, ErrUnknownInstance)
	}
	return inst, nil
}
