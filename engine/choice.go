package engine

import (
	"context"
	"fmt"
)

// SetGatewayChoices turns gateway choices on or off (default off). With
// them on, a token about to leave a diverging exclusive or inclusive
// gateway stops there before the gateway evaluates its conditions: it
// waits (WaitChoice, its Token.Choice saying what the conditions would
// take) until ChooseFlows routes it. The token simulator offers the
// choice to a person this way, as bpmn-js-token-simulation does, and the
// engine records it (a FlowsChosen event) instead of being repaired after
// it routed. The setting is the engine's, not the state document's; it
// applies to tokens that reach a gateway from now on.
//
// It is safe to call concurrently with any other method.
func (e *Engine) SetGatewayChoices(on bool) { e.rt.SetGatewayChoices(on) }

// ChooseFlows routes token tokenID of an instance, waiting for a choice
// at a gateway (SetGatewayChoices), through flowIDs: outgoing flows of
// the gateway, exactly one for an exclusive gateway, any of them for an
// inclusive one. A FlowsChosen event records the choice and what the
// conditions would have taken. With no flowIDs the gateway's conditions
// decide, as with choices off.
//
// # Errors
//
// ErrBadChoice for a token that waits for no choice or a flow the gateway
// cannot take; ErrUnknownInstance, ErrInstanceEnded.
func (e *Engine) ChooseFlows(ctx context.Context, instanceKey int64, tokenID int, flowIDs []string) error {
	inst, err := e.liveInstance(instanceKey)
	if err != nil {
		return err
	}
	if err := e.durably(ctx, func() error { return inst.Choose(ctx, tokenID, flowIDs) }); err != nil {
		return fmt.Errorf("choose flows of instance %d token %d: %w", instanceKey, tokenID, err)
	}
	return nil
}
