package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// selectFlows decides which outgoing flows a token leaves np's node
// through, given the variables vars visible there (read only when a
// condition needs them). It is the one place sequence-flow selection lives
// (BPMN 2.0 §10.5.1, §10.6):
//
//   - a parallel gateway takes every flow, conditions not evaluated;
//   - an exclusive gateway takes the first flow, in document order, whose
//     condition holds (a flow without one holds), else its default;
//   - an inclusive (or diverging complex) gateway takes every flow whose
//     condition holds, else its default;
//   - any other node (an activity, an event) takes every flow without a
//     condition, every conditional flow whose condition holds, and its
//     default exactly when no conditional flow holds, whatever the
//     unconditional flows do: several flows taken are an implicit fork.
//
// When nothing can be taken the error says why; the caller opens an
// incident. A node without outgoing flows returns none: the token ends.
func selectFlows(np *nodePlan, vars func() map[string]any) ([]*model.Flow, error) {
	n := np.node
	if len(n.Outgoing) == 1 && np.conds[0] == nil || np.fork {
		return n.Outgoing, nil // no choice to make
	}
	var scope map[string]any
	holds := func(i int) (bool, error) {
		cond := np.conds[i]
		if cond == nil {
			return true, nil
		}
		if scope == nil {
			scope = vars()
		}
		ok, err := cond.EvalBool(scope)
		if err != nil {
			return false, fmt.Errorf("sequence flow %s: %w", n.Outgoing[i].ID, err)
		}
		return ok, nil
	}
	gateway := n.Kind == model.KindExclusiveGateway || n.Kind == model.KindInclusiveGateway || n.Kind == model.KindComplexGateway
	var taken []*model.Flow
	conditionalHeld := false
	for i, f := range n.Outgoing {
		if f.IsDefault {
			continue
		}
		ok, err := holds(i)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if n.Kind == model.KindExclusiveGateway {
			return n.Outgoing[i : i+1], nil
		}
		taken = append(taken, f)
		conditionalHeld = conditionalHeld || np.conds[i] != nil
	}
	if n.Default != nil && (len(taken) == 0 || !gateway && !conditionalHeld) {
		taken = append(taken, n.Default)
	}
	if len(taken) == 0 && len(n.Outgoing) > 0 {
		return nil, fmt.Errorf("no outgoing sequence flow of %s %s can be taken: no condition is true and there is no default flow", n.Kind, n.ID)
	}
	return taken, nil
}
