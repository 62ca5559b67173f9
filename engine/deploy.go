package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/bpmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/dmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/model"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// ruleInternal is the rule of a problem that is flowtrack's fault, not the
// model's.
const ruleInternal = "FT.internal"

// Deploy parses, validates and registers the executable processes of a
// BPMN 2.0 XML document. name is used in errors. An invalid document is
// rejected whole with a *DeployError listing every problem found;
// nothing of it is registered.
//
// # Errors
//
// A *DeployError for an invalid document (and, with rule FT.internal, for
// a defect of flowtrack met while deploying it, which is recovered rather
// than allowed to crash the program); ErrClosed after Close. With a
// store, an error wrapping ErrNotAcknowledged comes with the deployment,
// which is registered (WithStore).
func (e *Engine) Deploy(name string, bpmn []byte) (d *Deployment, err error) {
	err = e.durably(context.Background(), func() error {
		d, err = e.deploy(name, bpmn)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotAcknowledged) {
		return nil, err
	}
	return d, err // with ErrNotAcknowledged, what was deployed (WithStore)
}

// deploy is Deploy, leaving the store aside.
func (e *Engine) deploy(name string, bpmn []byte) (*Deployment, error) {
	return e.deployAs(name, bpmn, e.rt.NewDeployment())
}

// deployAs is deploy as part of deployment: a defect of flowtrack met
// while deploying is recovered into a *DeployError.
func (e *Engine) deployAs(name string, bpmn []byte, deployment int64) (d *Deployment, err error) {
	defer func() {
		if r := recover(); r != nil {
			d = nil
			p := Problem{RuleID: ruleInternal, Rule: fmt.Sprintf("internal error while deploying: %v (please report it with the model)", r)}
			err = &DeployError{File: name, Rule: p.Rule, Problems: []Problem{p}}
		}
	}()
	return e.deployIn(name, bpmn, deployment)
}

// deployIn deploys one document (BPMN or DMN, told apart by content) as
// part of deployment.
func (e *Engine) deployIn(name string, bpmn []byte, deployment int64) (d *Deployment, err error) {
	if dmnxml.IsDMN(bpmn) {
		return e.deployDMN(name, bpmn, deployment)
	}
	defs, err := bpmnxml.Import(name, bpmn)
	if defs == nil {
		return nil, deployError(name, nil, problemsOf(err))
	}
	imported := problemsOf(err)
	problems, warnings := model.Check(defs)
	opts := runtime.CompileOptions{Expr: e.expr, Strict: e.cfg.strict, Deployment: deployment}
	if len(imported) > 0 || len(problems) > 0 {
		// The document is refused, but the modeller hears about every
		// problem at once: compile what imported, for its problems only,
		// and say what its descriptive processes break too.
		return nil, deployError(name, defs, model.MergeStages(imported, problems, untypedConditions(defs, compileProblems(defs, opts)), defs.Descriptive))
	}
	plans, err := e.rt.Install(defs, opts)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		return nil, deployError(name, defs, untypedConditions(defs, problemsOf(err)))
	}
	if len(plans) == 0 {
		return nil, deployError(name, defs, append([]*model.Problem{noExecutable()}, defs.Descriptive...))
	}
	e.rt.Deployed(name, bpmn, plans, deployment)
	// What a process that is not deployed breaks refuses nothing that
	// runs: the modeller is told.
	d = &Deployment{Name: name, Warnings: publicProblems(model.SortProblems(append(warnings, defs.Descriptive...)))}
	for _, p := range plans {
		d.Processes = append(d.Processes, Process{ID: p.Process.ID, Name: p.Process.Name, Key: p.Key, Version: p.Version})
	}
	return d, nil
}

// compileProblems compiles every executable process of defs and returns
// the problems found, registering nothing. It runs on documents that
// earlier checks refused, so it tolerates what they reported (an element
// that failed to import is simply absent); a panic while compiling is
// flowtrack's defect, reported as such beside the model's problems.
func compileProblems(defs *model.Definitions, opts runtime.CompileOptions) (ps []*model.Problem) {
	executable := false
	for _, p := range defs.Processes {
		if p == nil || !p.Executable {
			continue
		}
		executable = true
		func() {
			defer func() {
				if r := recover(); r != nil {
					ps = append(ps, &model.Problem{RuleID: ruleInternal, ProcessID: p.ID,
						Rule: fmt.Sprintf("internal error while compiling: %v (please report it with the model)", r)})
				}
			}()
			if _, err := runtime.Compile(p, opts); err != nil {
				ps = append(ps, problemsOf(err)...)
			}
		}()
	}
	if !executable {
		ps = append(ps, noExecutable())
	}
	return ps
}

// untypedConditions gives the compilation problems of untyped conditions
// that do not compile the rule they break (model.Definitions.Untyped):
// EXT.012, or EXT.123 for a conditional event. The message is unchanged.
func untypedConditions(defs *model.Definitions, ps []*model.Problem) []*model.Problem {
	for _, p := range ps {
		if rule, ok := defs.Untyped[p.ElementID]; ok && p.RuleID == "FT.expression" {
			p.RuleID = rule
		}
	}
	return ps
}

// noExecutable is the problem of a document without executable process.
func noExecutable() *model.Problem {
	return &model.Problem{RuleID: "FT.executable", Rule: `no executable process: mark a process isExecutable="true"`}
}

// problemsOf flattens the problems inside err (joined with errors.Join);
// an error that is not a problem becomes an FT.internal one.
func problemsOf(err error) []*model.Problem {
	var ps []*model.Problem
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				walk(e)
			}
			return
		}
		var p *model.Problem
		if errors.As(err, &p) {
			ps = append(ps, p)
			return
		}
		ps = append(ps, &model.Problem{RuleID: ruleInternal, Rule: err.Error()})
	}
	walk(err)
	return ps
}

// publicProblems converts model problems to Problems.
func publicProblems(ps []*model.Problem) []Problem {
	if len(ps) == 0 {
		return nil
	}
	out := make([]Problem, len(ps))
	for i, p := range ps {
		out[i] = Problem{RuleID: p.RuleID, ProcessID: p.ProcessID, ElementID: p.ElementID,
			Line: p.Pos.Line, Column: p.Pos.Column, Rule: p.Rule}
	}
	return out
}

// deployError returns ps as a *DeployError, locating them in defs (nil
// when the document could not be read) and sorting them.
func deployError(file string, defs *model.Definitions, ps []*model.Problem) error {
	defs.Locate(ps)
	de := &DeployError{File: file, Problems: publicProblems(model.SortProblems(ps))}
	for i := range de.Problems {
		// The importer names the file; Error names it once, first.
		de.Problems[i].Rule = strings.TrimPrefix(de.Problems[i].Rule, file+": ")
	}
	first := de.Problems[0]
	de.ProcessID, de.ElementID, de.Rule = first.ProcessID, first.ElementID, first.Rule
	return de
}
