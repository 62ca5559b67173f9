package engine

import (
	"context"
	"fmt"
)

// ModifyInstance repairs a live instance, as Zeebe's
// ModifyProcessInstance: it starts a token before each element of
// m.Activate (in the process scope, or in an open scope of the enclosing
// sub-process, entering the enclosing sub-processes that are not open
// first, with the activation's variables set locally there; a joining
// gateway receives it as on one incoming flow), then terminates each token of m.Terminate (ids from Tokens): its job,
// subscriptions and incidents go and its element is recorded terminated.
// Terminating the last token of a sub-process terminates the sub-process;
// terminating the last token of the instance terminates the instance. The
// whole modification is checked before anything is applied.
//
// # Errors
//
// ErrBadModification naming the element or token for a change the
// instance cannot apply; ErrUnknownInstance, ErrInstanceEnded;
// ErrBadVariables for activation variables that are not JSON-compatible.
func (e *Engine) ModifyInstance(ctx context.Context, instanceKey int64, m Modification) error {
	acts := make([]Activation, len(m.Activate))
	for i, a := range m.Activate {
		norm, err := normalize(a.Variables)
		if err != nil {
			return fmt.Errorf("modify instance %d: activate %q: %w", instanceKey, a.ElementID, err)
		}
		a.Variables = norm
		acts[i] = a
	}
	inst, err := e.liveInstance(instanceKey)
	if err != nil {
		return err
	}
	if err := e.durably(ctx, func() error { return inst.Modify(ctx, Modification{Activate: acts, Terminate: m.Terminate}) }); err != nil {
		return fmt.Errorf("modify instance %d: %w", instanceKey, err)
	}
	return nil
}
