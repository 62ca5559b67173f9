package engine

import (
	"fmt"
	"slices"

	"github.com/flowtrack/flowtrack/engine/internal/bpmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/model"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// Validation is what Validate found in a valid document.
type Validation struct {
	// Executable lists the ids of the processes Deploy would register,
	// in document order.
	Executable []string
	// Warnings lists what is valid but probably not what the modeller
	// meant, sorted by position, as Deployment.Warnings.
	Warnings []Problem
}

// Validate checks a BPMN 2.0 XML document the way a validator does,
// registering nothing: every process is held to the rules of the
// constraint catalogue, executable or not (Deploy checks only what it
// will execute, and skips descriptive processes), and a document without
// an executable process is valid. resolve, when not nil, reads the
// document an import's location names, so that imports are resolved
// (EXT.001, EXT.002); the CLI reads them relative to the model's file.
//
// # Errors
//
// A *DeployError listing every problem of an invalid document (with rule
// FT.internal for a defect of flowtrack met while validating it).
func Validate(name string, bpmn []byte, resolve func(location string) ([]byte, error)) (v *Validation, err error) {
	defer func() {
		if r := recover(); r != nil {
			v = nil
			p := Problem{RuleID: ruleInternal, Rule: fmt.Sprintf("internal error while validating: %v (please report it with the model)", r)}
			err = &DeployError{File: name, Rule: p.Rule, Problems: []Problem{p}}
		}
	}()
	defs, err := bpmnxml.ImportWith(name, bpmn, bpmnxml.Options{AllProcesses: true, Resolve: resolve})
	if defs == nil {
		return nil, deployError(name, nil, problemsOf(err))
	}
	imported := problemsOf(err)
	problems, warnings := model.Check(defs)
	compiled := slices.DeleteFunc(untypedConditions(defs, compileProblems(defs, runtime.CompileOptions{})), func(p *model.Problem) bool {
		return p.RuleID == noExecutable().RuleID // a descriptive model is valid BPMN
	})
	if all := model.MergeStages(imported, problems, compiled, defs.Descriptive); len(all) > 0 {
		return nil, deployError(name, defs, all)
	}
	v = &Validation{Warnings: publicProblems(warnings)}
	for _, p := range defs.Processes {
		if p != nil && p.Executable {
			v.Executable = append(v.Executable, p.ID)
		}
	}
	return v, nil
}
