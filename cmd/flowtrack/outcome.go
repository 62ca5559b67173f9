package main

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// outcome is what a state command prints with --json: one object, the
// same shape for every command (README, "The CLI").
type outcome struct {
	Command string `json:"command"`
	OK      bool   `json:"ok"`
	// Result is the command's answer (null for commands that only act; for
	// run, the instance with its tokens).
	Result any `json:"result"`
	// Events are the records the command made, in order.
	Events []engine.Event `json:"events"`
	// Now is the engine clock after the command; NextDeadline is when the
	// next timer is due (absent: none pending).
	Now          *time.Time `json:"now,omitempty"`
	NextDeadline *time.Time `json:"nextDeadline,omitempty"`
	Error        *failure   `json:"error,omitempty"`
}

// failure is a failed command's error: the ABI's error code (wasm/ABI.md)
// or one of the CLI's own (USAGE, BAD_INPUT, NO_TIMER, STATE_CHANGED).
type failure struct {
	Code     string           `json:"code"`
	Message  string           `json:"message"`
	Problems []engine.Problem `json:"problems,omitempty"`
}

func failureOf(err error) *failure {
	f := &failure{Message: err.Error()}
	var ue usageError
	var de *engine.DeployError
	switch {
	case errors.As(err, &ue):
		f.Code = "USAGE"
	case errors.Is(err, errNoTimer):
		f.Code = "NO_TIMER"
	case errors.Is(err, errStateChanged):
		f.Code = "STATE_CHANGED"
	case errors.Is(err, engine.ErrBadState):
		f.Code = string(wire.CodeBadState)
	case errors.Is(err, errInput):
		f.Code = "BAD_INPUT"
	case errors.As(err, &de):
		f.Code, f.Problems = string(wire.CodeDeployFailed), de.Problems
	default:
		f.Code = string(wire.CodeOf(err))
	}
	return f
}

// printOutcomeIf prints out as printOutcome does when --json was given,
// and also when the flags did not parse but args ask for JSON; never for
// --help.
func printOutcomeIf(asJSON bool, args []string, stdout io.Writer, out *outcome, code int, err error) error {
	if errors.As(err, new(helpError)) {
		return err
	}
	if !asJSON && (err == nil || !slices.ContainsFunc(args, func(a string) bool {
		return a == "--json" || a == "--json=true"
	})) {
		return err
	}
	return printOutcome(stdout, out, code, err)
}

// printOutcome prints out with err, the command's error, and returns err
// (or the printing's error).
func printOutcome(stdout io.Writer, out *outcome, code int, err error) error {
	if err != nil {
		out.Error = failureOf(err)
	}
	out.OK = err == nil && code == exitOK
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if encErr := enc.Encode(out); err == nil {
		return encErr
	}
	return err
}
