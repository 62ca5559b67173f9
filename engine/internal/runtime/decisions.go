package runtime

import (
	"fmt"
	"sort"

	"github.com/flowtrack/flowtrack/engine/internal/decision"
	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// DecisionVersion is one deployed version of a decision: deploying a DMN
// model registers a new version of each of its decisions, as deploying
// a process does.
type DecisionVersion struct {
	ID, Name   string
	Version    int
	VersionTag string
	// Resource is the name the model was deployed under; Deployment the
	// deployment it came with (processes deployed together share it).
	Resource   string
	Deployment int64
	// Model is the DMN model's definitions (its id and name).
	Model *model.DMNDefinitions
	set   *decision.Set
}

// decisionRegistry holds the deployed decisions; guarded by Engine.mu.
type decisionRegistry struct {
	byID map[string][]*DecisionVersion // oldest version first
	// models are the newest DMN models by namespace, which later models
	// import.
	models map[string]*model.DMNDefinitions
}

// CompileDecisions compiles a DMN model (the models it imports found
// among those deployed before, by namespace) without registering it.
func (e *Engine) CompileDecisions(d *model.DMNDefinitions, opts CompileOptions) (*decision.Set, error) {
	e.mu.Lock()
	var others []*model.DMNDefinitions
	for ns, m := range e.decisions.models {
		if ns != d.Namespace {
			others = append(others, m)
		}
	}
	e.mu.Unlock()
	sort.Slice(others, func(i, j int) bool { return others[i].Namespace < others[j].Namespace })
	return decision.Compile(append([]*model.DMNDefinitions{d}, others...), decision.Options{Clock: e.clock})
}

// InstallDecisions registers a compiled DMN model's decisions, each as a
// new version, and returns them.
func (e *Engine) InstallDecisions(resource string, deployment int64, d *model.DMNDefinitions, set *decision.Set) ([]*DecisionVersion, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if e.decisions.byID == nil {
		e.decisions.byID = map[string][]*DecisionVersion{}
		e.decisions.models = map[string]*model.DMNDefinitions{}
	}
	var out []*DecisionVersion
	for _, dec := range d.Decisions {
		v := &DecisionVersion{ID: dec.ID, Name: dec.Name, VersionTag: dec.VersionTag, Resource: resource,
			Deployment: deployment, Model: d, set: set, Version: len(e.decisions.byID[dec.ID]) + 1}
		e.decisions.byID[dec.ID] = append(e.decisions.byID[dec.ID], v)
		out = append(out, v)
	}
	if d.Namespace != "" {
		e.decisions.models[d.Namespace] = d
	}
	return out, nil
}

// Decisions returns every deployed version of every decision, by id then
// version.
func (e *Engine) Decisions() []DecisionVersion {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []DecisionVersion
	for _, vs := range e.decisions.byID {
		for _, v := range vs {
			out = append(out, *v)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ID != out[j].ID {
			return out[i].ID < out[j].ID
		}
		return out[i].Version < out[j].Version
	})
	return out
}

// FindDecision returns the version of decision id a call binds to:
// binding "latest" or "" (the newest), "deployment" (the one of
// deployment, else the newest), "versionTag" (tagged tag) or "version"
// (version).
func (e *Engine) FindDecision(id, binding, tag string, version int, deployment int64) (*DecisionVersion, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	vs := e.decisions.byID[id]
	if len(vs) == 0 {
		return nil, fmt.Errorf("%w %q: no deployed DMN model has it", ErrUnknownDecision, id)
	}
	switch binding {
	case "", "latest":
		return vs[len(vs)-1], nil
	case "deployment":
		for i := len(vs) - 1; i >= 0; i-- {
			if deployment != 0 && vs[i].Deployment == deployment {
				return vs[i], nil
			}
		}
		return nil, fmt.Errorf("%w %q: the process's deployment has none", ErrUnknownDecision, id)
	case "versionTag":
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].VersionTag == tag {
				return vs[i], nil
			}
		}
		return nil, fmt.Errorf("%w %q: no version is tagged %q", ErrUnknownDecision, id, tag)
	case "version":
		if version >= 1 && version <= len(vs) {
			return vs[version-1], nil
		}
		return nil, fmt.Errorf("%w %q: no version %d (%d deployed)", ErrUnknownDecision, id, version, len(vs))
	}
	return nil, fmt.Errorf("decision %q: unknown binding %q", id, binding)
}

// DecisionOutcome is an evaluation of a deployed decision.
type DecisionOutcome struct {
	Decision *DecisionVersion
	// Value is the decision's result as a JSON value.
	Value any
	// Evaluated lists every decision evaluated, required ones first,
	// with the rules their tables matched.
	Evaluated []decision.Evaluated
	// Entries is the result as Camunda 7's decision result (one context
	// per matched rule).
	Entries []map[string]any
}

// Evaluate evaluates v over vars (JSON values), every one of them in
// scope of its decisions, as Camunda evaluates decisions over process
// variables (decision.Set.EvaluateInScope).
func (v *DecisionVersion) Evaluate(vars map[string]any) (*DecisionOutcome, error) {
	res, err := v.set.EvaluateInScope(v.ID, vars)
	if res == nil {
		return nil, err
	}
	out := &DecisionOutcome{Decision: v, Value: expr.Normalize(res.Value), Evaluated: res.Evaluated,
		Entries: v.set.Entries(v.ID, res.Value)}
	return out, err
}

// decisionResult computes the variables a business rule task sets from
// its decision: Camunda 8 sets the result variable to the decision's
// output; Camunda 7 maps the decision result first (mapDecisionResult).
func decisionResult(call *model.DecisionCall, o *DecisionOutcome) (any, error) {
	if !call.Camunda7 {
		return o.Value, nil
	}
	es := o.Entries
	switch call.MapResult {
	case "singleEntry":
		if len(es) == 0 {
			return nil, nil
		}
		if len(es) > 1 || len(es[0]) > 1 {
			return nil, fmt.Errorf("mapDecisionResult singleEntry: the result has %d rules with %d outputs, not one entry", len(es), len(es[0]))
		}
		for _, v := range es[0] {
			return v, nil
		}
		return nil, nil
	case "singleResult":
		if len(es) == 0 {
			return nil, nil
		}
		if len(es) > 1 {
			return nil, fmt.Errorf("mapDecisionResult singleResult: %d rules matched, not one", len(es))
		}
		return map[string]any(es[0]), nil
	case "collectEntries":
		out := make([]any, 0, len(es))
		for _, e := range es {
			if len(e) != 1 {
				return nil, fmt.Errorf("mapDecisionResult collectEntries: a result has %d outputs, not one", len(e))
			}
			for _, v := range e {
				out = append(out, v)
			}
		}
		return out, nil
	}
	out := make([]any, len(es))
	for i, e := range es {
		out[i] = map[string]any(e)
	}
	return out, nil
}

// matchedRules lists the rules the tables of an evaluation matched, for
// history.
func matchedRules(evs []decision.Evaluated) []any {
	out := []any{}
	for _, ev := range evs {
		for _, r := range ev.Matched {
			out = append(out, map[string]any{"decisionId": ev.DecisionID, "ruleId": r.ID, "ruleIndex": r.Index})
		}
	}
	return out
}

// evaluateDecision evaluates np's decision for a token whose variables
// are vars, records a decisionEvaluated event, and returns what the task
// sets.
func (inst *Instance) evaluateDecision(tv *tokenView, np *nodePlan, vars map[string]any) (map[string]any, error) {
	call := np.node.Decision
	var v *DecisionVersion
	var err error
	if call.Binding == "deployment" && inst.plan.DeploymentInferred {
		v, err = inst.eng.findDecisionUpTo(call.DecisionID, inst.plan.Deployment)
	} else {
		v, err = inst.eng.FindDecision(call.DecisionID, call.Binding, call.VersionTag, call.Version, inst.plan.Deployment)
	}
	if err != nil {
		return nil, fmt.Errorf("business rule task: %w", err)
	}
	o, err := v.Evaluate(vars)
	if err != nil {
		return nil, fmt.Errorf("business rule task: decision %s version %d: %w", v.ID, v.Version, err)
	}
	result, err := decisionResult(call, o)
	if err != nil {
		return nil, fmt.Errorf("business rule task: decision %s: %w", v.ID, err)
	}
	inst.record(Event{Type: DecisionEvaluated, ElementID: np.node.ID, ElementType: np.node.Kind.String(), TokenID: tv.id,
		Name: v.ID, Variables: map[string]any{
			"decisionId": v.ID, "decisionName": v.Name, "decisionVersion": v.Version,
			"result": o.Value, "matchedRules": matchedRules(o.Evaluated),
		}})
	return map[string]any{call.ResultVariable: result}, nil
}

// findDecisionUpTo returns the newest version of decision id deployed
// in deployment or before it: binding "deployment" for a plan whose
// deployment was inferred (Plan.DeploymentInferred).
func (e *Engine) findDecisionUpTo(id string, deployment int64) (*DecisionVersion, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	vs := e.decisions.byID[id]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].Deployment <= deployment {
			return vs[i], nil
		}
	}
	return nil, fmt.Errorf("%w %q: none was deployed with or before the process", ErrUnknownDecision, id)
}

// NewDeployment returns a new deployment's identifier (processes and
// decisions deployed together share one).
func (e *Engine) NewDeployment() int64 { return e.deploySeq.Add(1) }
