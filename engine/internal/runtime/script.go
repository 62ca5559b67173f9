package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// compileScript compiles a script task's zeebe:script: an expression the
// engine evaluates itself, as Zeebe does, whose value is set to the result
// variable. It is a mapping from the expression to that variable, so the
// value passes the same checks as every other variable a mapping sets.
func compileScript(np *nodePlan, opts expr.Options) error {
	n := np.node
	if n.ResultVariable == "" {
		return broke("FT.script", "zeebe:script needs a resultVariable: name the variable that receives the expression's value")
	}
	ms, err := compileMappings([]model.Mapping{{Source: n.ScriptExpression, Target: n.ResultVariable}}, opts)
	if err != nil {
		return fmt.Errorf("script %w", err)
	}
	np.script = &ms[0]
	return nil
}

// evaluate computes what the loop sets when a token leaves np's node
// without waiting for anyone (a throw, a script task, an element with
// output mappings): the element's input mappings become its locals, then
// its script's result, then the outputs (see Instance.outputs).
func (inst *Instance) evaluate(tv *tokenView, np *nodePlan) (map[string]any, error) {
	vars := tv.scope.visible()
	if len(np.inputs) > 0 {
		locals, err := applyMappings(np.inputs, vars)
		if err != nil {
			return nil, fmt.Errorf("input %w", err)
		}
		tv.locals = locals
		vars = overlay(vars, locals)
	}
	var result map[string]any
	if np.script != nil {
		r, err := applyMappings([]mappingSpec{*np.script}, vars)
		if err != nil {
			return nil, fmt.Errorf("script %w", err)
		}
		result = r
	}
	if np.decides {
		r, err := inst.evaluateDecision(tv, np, vars)
		if err != nil {
			return nil, err
		}
		result = r
	}
	update, err := inst.outputs(tv, np.node, result)
	if err == nil {
		inst.keepLocals(tv, np.node)
	}
	tv.locals = nil
	if err != nil {
		return nil, fmt.Errorf("output %w", err)
	}
	return update, nil
}
