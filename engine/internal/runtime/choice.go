package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Gateway choices: with them on (Engine.SetGatewayChoices), a token about
// to leave a diverging exclusive or inclusive gateway stops there before
// the gateway evaluates its conditions, waiting (WaitChoice) until Choose
// names the flows it takes, or lets the conditions decide. The token
// simulator uses them to let a person route a token, as an explicit
// override recorded in the history (FlowsChosen), instead of repairing
// the instance after the engine has routed it. The wait is a track
// continuation like any other, so a checkpoint keeps it.

// SetGatewayChoices turns gateway choices on or off for tokens that reach
// a gateway from now on; tokens already waiting for a choice keep waiting.
func (e *Engine) SetGatewayChoices(on bool) { e.choices.Store(on) }

// GatewayChoices reports whether gateway choices are on.
func (e *Engine) GatewayChoices() bool { return e.choices.Load() }

// choosable reports whether a token stops before n routes when gateway
// choices are on: a diverging exclusive or inclusive gateway.
func choosable(n *model.Node) bool {
	return (n.Kind == model.KindExclusiveGateway || n.Kind == model.KindInclusiveGateway) && len(n.Outgoing) > 1
}

// choiceAt evaluates the conditions of np's gateway with the variables
// vars gives.
func choiceAt(np *nodePlan, vars func() map[string]any) *Choice {
	c := &Choice{Holds: []string{}, Takes: []string{}}
	var scope map[string]any
	for i, f := range np.node.Outgoing {
		if f.IsDefault {
			continue
		}
		if cond := np.conds[i]; cond != nil {
			if scope == nil {
				scope = vars()
			}
			ok, err := cond.EvalBool(scope)
			if err != nil {
				c.Error = fmt.Sprintf("sequence flow %s: %v", f.ID, err)
				continue
			}
			if !ok {
				continue
			}
		}
		c.Holds = append(c.Holds, f.ID)
	}
	if flows, err := selectFlows(np, vars); err != nil {
		c.Error = err.Error()
	} else if c.Error == "" {
		for _, f := range flows {
			c.Takes = append(c.Takes, f.ID)
		}
	}
	return c
}

// Choose routes token out of the gateway it waits at for a choice: through
// flowIDs, outgoing flows of the gateway (exactly one for an exclusive
// gateway), or, with none, by the gateway's conditions.
//
// # Errors
//
// ErrBadChoice when the token does not wait for a choice or a flow is not
// one the gateway can take; ErrInstanceEnded.
func (inst *Instance) Choose(ctx context.Context, token int, flowIDs []string) error {
	return inst.call(ctx, &command{op: cmdChoose, token: token, ids: slices.Clone(flowIDs)})
}

// choose applies cmdChoose: it checks the choice whole, records it and
// resumes the token.
func (inst *Instance) choose(c *command) error {
	tv := inst.tokens[c.token]
	if tv == nil || tv.node == nil || tv.doomed || !tv.parked || tv.wait != WaitChoice {
		return fmt.Errorf("%w: instance %d has no token %d waiting for a choice at a gateway (see its tokens)", ErrBadChoice, inst.key, c.token)
	}
	n := tv.node
	var flows []*model.Flow
	for _, f := range n.Outgoing { // document order, whatever the order asked
		if slices.Contains(c.ids, f.ID) {
			flows = append(flows, f)
		}
	}
	for i, id := range c.ids {
		if !slices.ContainsFunc(n.Outgoing, func(f *model.Flow) bool { return f.ID == id }) {
			return fmt.Errorf("%w: %q is no outgoing sequence flow of gateway %s", ErrBadChoice, id, n.ID)
		}
		if slices.Contains(c.ids[:i], id) {
			return fmt.Errorf("%w: sequence flow %s is chosen twice", ErrBadChoice, id)
		}
	}
	if n.Kind == model.KindExclusiveGateway && len(flows) > 1 {
		return fmt.Errorf("%w: exclusive gateway %s takes one flow, not %d", ErrBadChoice, n.ID, len(flows))
	}
	if len(flows) == 0 {
		inst.notify(tv, notice{kind: resume}) // the conditions decide
		return nil
	}
	ids := make([]string, len(flows))
	for i, f := range flows {
		ids[i] = f.ID
	}
	ch := choiceAt(&inst.plan.nodes[n.Index], tv.scope.visible)
	why := "the conditions would take " + strings.Join(ch.Takes, ", ")
	if ch.Error != "" {
		why = "the conditions cannot decide: " + ch.Error
	} else if len(ch.Takes) == 0 {
		why = "the conditions take no flow"
	}
	inst.record(Event{Type: FlowsChosen, ElementID: n.ID, TokenID: tv.id, Message: fmt.Sprintf("chose %s; %s", strings.Join(ids, ", "), why)})
	inst.notify(tv, notice{kind: resume, flows: flows})
	return nil
}
