package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	flag "github.com/spf13/pflag"
	"io"
	"strings"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// decideCmd deploys a DMN model (and the models it imports, --with),
// evaluates one decision over --vars and prints its output and the rules
// that matched, or with --json the result as evaluate_decision answers it.
// Exit 0 when the decision has an output, 1 when its evaluation failed.
func decideCmd(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("decide", flag.ContinueOnError)
	decision := fs.String("decision", "", "the decision id to evaluate (default: the model's first decision)")
	varsText := fs.String("vars", "{}", "input data values as one JSON object")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	var with fileList
	fs.Var(&with, "with", "another DMN model the model imports (repeatable)")
	file, err := parse(fs, args)
	if err != nil {
		return 0, err
	}
	var vars map[string]any
	dec := json.NewDecoder(strings.NewReader(*varsText))
	dec.UseNumber()
	if err := dec.Decode(&vars); err != nil {
		return 0, fmt.Errorf("%w: --vars is not a JSON object: %v", errInput, err)
	}
	e, err := host.New(ctx)
	if err != nil {
		return 0, err
	}
	defer e.Close(ctx)
	for _, w := range with {
		if _, err := deploy(ctx, e, w); err != nil {
			return 0, err
		}
	}
	d, err := deploy(ctx, e, file)
	if err != nil {
		return 0, err
	}
	if *decision == "" {
		if len(d.Decisions) == 0 {
			return 0, fmt.Errorf("%w: %s deploys no decision (is it a DMN model?)", errInput, file)
		}
		*decision = d.Decisions[0].ID
	}
	r, err := e.EvaluateDecision(ctx, *decision, 0, vars)
	var de *engine.DecisionError
	if err != nil && !errors.As(err, &de) {
		return 0, err
	}
	code := exitOK
	if de != nil {
		code = exitProcess
	}
	if *asJSON {
		out := struct {
			*engine.DecisionResult
			Failure string `json:"failure,omitempty"`
		}{DecisionResult: r}
		if de != nil {
			out.Failure = de.Err.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return code, enc.Encode(out)
	}
	for _, ev := range r.Evaluated {
		for _, m := range ev.MatchedRules {
			fmt.Fprintf(stdout, "matched: %s rule %d %s\n", m.DecisionID, m.RuleIndex, m.RuleID)
		}
		if ev.Failure != "" {
			fmt.Fprintf(stdout, "failed: %s: %s\n", ev.DecisionID, ev.Failure)
		}
	}
	output, err := json.Marshal(r.Output)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "%s (version %d): %s\n", r.Decision.ID, r.Decision.Version, output)
	return code, nil
}
