package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/bpmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/decision"
	"github.com/flowtrack/flowtrack/engine/internal/dmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// Decisions returns every deployed version of every decision, ordered by
// decision id, then version.
func (e *Engine) Decisions() []Decision {
	vs := e.rt.Decisions()
	out := make([]Decision, len(vs))
	for i, v := range vs {
		out[i] = decisionOf(&v)
	}
	return out
}

func decisionOf(v *runtime.DecisionVersion) Decision {
	return Decision{ID: v.ID, Name: v.Name, Version: v.Version, VersionTag: v.VersionTag, Resource: v.Resource}
}

// EvaluateDecision evaluates the newest version of the decision with id
// decisionID over vars (JSON-compatible values, keyed by input data
// name; a string where the model declares a date, time or duration is
// read as one) and returns its output and the rules that matched.
//
// # Errors
//
// ErrUnknownDecision (wrapped) for a decision never deployed; a
// *DecisionError, with the result (output null), for an evaluation that
// failed; ErrClosed after Close.
func (e *Engine) EvaluateDecision(ctx context.Context, decisionID string, vars map[string]any) (*DecisionResult, error) {
	return e.EvaluateDecisionVersion(ctx, decisionID, 0, vars)
}

// EvaluateDecisionVersion is EvaluateDecision for version (from 1; 0: the
// newest) of the decision.
//
// # Errors
//
// As EvaluateDecision; ErrInvalidArgument for a negative version.
func (e *Engine) EvaluateDecisionVersion(ctx context.Context, decisionID string, version int, vars map[string]any) (*DecisionResult, error) {
	if version < 0 {
		return nil, invalid("evaluate decision %s: version must be >= 0, got %d", decisionID, version)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	binding := "version"
	if version == 0 {
		binding = "latest"
	}
	v, err := e.rt.FindDecision(decisionID, binding, "", version, 0)
	if err != nil {
		return nil, fmt.Errorf("evaluate decision: %w", err)
	}
	o, err := v.Evaluate(vars)
	if o == nil {
		return nil, &DecisionError{DecisionID: decisionID, Err: err}
	}
	res := &DecisionResult{Decision: decisionOf(v), Output: o.Value, MatchedRules: []MatchedRule{}}
	for _, ev := range o.Evaluated {
		ed := EvaluatedDecision{DecisionID: ev.DecisionID, DecisionName: ev.DecisionName, Output: normalizeOutput(ev.Value)}
		if ev.Err != nil {
			ed.Failure = ev.Err.Error()
		}
		for _, r := range ev.Matched {
			m := MatchedRule{DecisionID: ev.DecisionID, RuleID: r.ID, RuleIndex: r.Index}
			ed.MatchedRules = append(ed.MatchedRules, m)
			res.MatchedRules = append(res.MatchedRules, m)
		}
		res.Evaluated = append(res.Evaluated, ed)
	}
	if err != nil {
		return res, &DecisionError{DecisionID: decisionID, Err: err}
	}
	return res, nil
}

// deployDMN deploys one DMN model: import, compile (every expression,
// requirement and type), then register its decisions.
func (e *Engine) deployDMN(name string, data []byte, deployment int64) (*Deployment, error) {
	d, err := dmnxml.Import(name, data)
	if err != nil {
		return nil, dmnDeployError(name, err)
	}
	set, err := e.rt.CompileDecisions(d, runtime.CompileOptions{Expr: e.expr})
	if err != nil {
		return nil, dmnDeployError(name, err)
	}
	vs, err := e.rt.InstallDecisions(name, deployment, d, set)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		return nil, dmnDeployError(name, err)
	}
	e.rt.Deployed(name, data, nil, deployment)
	dep := &Deployment{Name: name}
	for _, v := range vs {
		dep.Decisions = append(dep.Decisions, decisionOf(v))
	}
	return dep, nil
}

// dmnDeployError turns an import or compile error of a DMN model into a
// *DeployError locating it.
func dmnDeployError(name string, err error) error {
	p := Problem{RuleID: "FT.dmn", Rule: err.Error()}
	var ie *dmnxml.Error
	var ce *decision.CompileError
	switch {
	case errors.As(err, &ie):
		p.Line, p.Column, p.ElementID = ie.Line, ie.Col, ie.Element
		p.Rule = ie.Msg
	case errors.As(err, &ce):
		p.Line, p.Column, p.ElementID = ce.Pos.Line, ce.Pos.Column, ce.Element
		p.Rule = ce.Err.Error()
	}
	return &DeployError{File: name, ElementID: p.ElementID, Rule: p.Rule, Problems: []Problem{p}}
}

// parseDMN reads a DMN deployment's source for Restore.
func parseDMN(name string, source []byte) (*model.Definitions, error) {
	d, err := dmnxml.Import(name, source)
	if err != nil {
		return nil, dmnDeployError(name, err)
	}
	return &model.Definitions{ID: d.ID, DMN: d}, nil
}

// normalizeOutput is an evaluated decision's value as a JSON value.
func normalizeOutput(v any) any { return expr.Normalize(v) }

// Resource is one document of a deployment: a BPMN process model or a
// DMN decision model (told apart by content), under a name used in
// errors.
type Resource struct {
	Name string
	Data []byte
}

// DeployResources deploys several documents as one deployment, as
// Camunda deploys a .bpmn with the .dmn files its business rule tasks
// call: DMN models first (a model after the ones it imports), then the
// processes, whose business rule tasks with binding "deployment" call
// the decisions deployed with them. Every document is read and checked
// before any is registered, so a malformed one or a process with a
// problem registers nothing.
//
// # Errors
//
// A *DeployError for the first document refused; ErrClosed after Close.
// With a store, an error wrapping ErrNotAcknowledged comes with the
// deployment, which is registered (WithStore).
func (e *Engine) DeployResources(resources ...Resource) (d *Deployment, err error) {
	err = e.durably(context.Background(), func() error {
		d, err = e.deployResources(resources)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotAcknowledged) {
		return nil, err
	}
	return d, err
}

func (e *Engine) deployResources(resources []Resource) (*Deployment, error) {
	var dmn, bpmn []Resource
	namespaces := map[string]string{}
	imports := map[string][]string{}
	for _, r := range resources {
		if !dmnxml.IsDMN(r.Data) {
			defs, err := bpmnxml.Import(r.Name, r.Data)
			if defs == nil {
				return nil, deployError(r.Name, nil, problemsOf(err))
			}
			if ps := problemsOf(err); len(ps) > 0 {
				return nil, deployError(r.Name, defs, ps)
			}
			if problems, _ := model.Check(defs); len(problems) > 0 {
				return nil, deployError(r.Name, defs, problems)
			}
			bpmn = append(bpmn, r)
			continue
		}
		md, err := dmnxml.Import(r.Name, r.Data)
		if err != nil {
			return nil, dmnDeployError(r.Name, err)
		}
		namespaces[r.Name] = md.Namespace
		for _, imp := range md.Imports {
			imports[r.Name] = append(imports[r.Name], imp.Namespace)
		}
		dmn = append(dmn, r)
	}
	// Imported models first: repeatedly take a model whose imports are
	// deployed (or not among these resources).
	among := map[string]bool{}
	for _, r := range dmn {
		among[namespaces[r.Name]] = true
	}
	var ordered []Resource
	done := map[string]bool{}
	for len(ordered) < len(dmn) {
		progress := false
		for _, r := range dmn {
			if done[r.Name] {
				continue
			}
			ready := true
			for _, ns := range imports[r.Name] {
				if among[ns] && !doneNS(done, namespaces, ns) {
					ready = false
				}
			}
			if ready {
				ordered = append(ordered, r)
				done[r.Name] = true
				progress = true
			}
		}
		if !progress {
			return nil, &DeployError{File: dmn[0].Name, Rule: "the DMN models import each other in a cycle",
				Problems: []Problem{{RuleID: "FT.dmn", Rule: "the DMN models import each other in a cycle"}}}
		}
	}
	deployment := e.rt.NewDeployment()
	out := &Deployment{}
	var names []string
	for _, r := range append(ordered, bpmn...) {
		d, err := e.deployIn(r.Name, r.Data, deployment)
		if err != nil {
			return nil, err
		}
		names = append(names, r.Name)
		out.Processes = append(out.Processes, d.Processes...)
		out.Decisions = append(out.Decisions, d.Decisions...)
		out.Warnings = append(out.Warnings, d.Warnings...)
	}
	out.Name = strings.Join(names, ", ")
	return out, nil
}

// doneNS reports whether the model of namespace ns is among done.
func doneNS(done map[string]bool, namespaces map[string]string, ns string) bool {
	for name, n := range namespaces {
		if n == ns && done[name] {
			return true
		}
	}
	return false
}

// IsDMN reports whether data is a DMN model (its root element is
// definitions in a DMN 1.1–1.5 namespace), as Deploy and DeployResources
// tell a .dmn resource from a .bpmn one by content.
func IsDMN(data []byte) bool { return dmnxml.IsDMN(data) }
