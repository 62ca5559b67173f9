package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// Sentinel errors, for errors.Is.
var (
	// ErrUnknownProcess is returned by Start for a process id never deployed.
	ErrUnknownProcess = runtime.ErrUnknownProcess
	// ErrNoNoneStart is returned by Start for a process that only events
	// can start.
	ErrNoNoneStart = runtime.ErrNoNoneStart
	// ErrUnknownJob is returned by the job calls for a key that names no
	// activatable job (never created, already completed, or cancelled).
	ErrUnknownJob = runtime.ErrUnknownJob
	// ErrUnknownIncident is returned by ResolveIncident for a key that
	// names no open incident.
	ErrUnknownIncident = runtime.ErrUnknownIncident
	// ErrInstanceEnded is returned by calls on an instance that has ended.
	ErrInstanceEnded = runtime.ErrInstanceEnded
	// ErrClosed is returned by every call that takes input or waits (Deploy,
	// Start, the job calls, PublishMessage, BroadcastSignal, Advance,
	// AdvanceTo, ResolveIncident, Settle) once Close has begun; the input
	// is not taken. Instance calls report ErrInstanceEnded, since Close
	// ended every instance.
	ErrClosed = runtime.ErrClosed
	// ErrCalledFromObserver is returned by Advance, AdvanceTo and Close
	// when an observer (Subscribe) calls them from its callback: each waits
	// until every observer has returned, the calling one included, so it
	// would wait forever. An observer may call Settle and every other
	// method (see "Observers" in the package doc).
	ErrCalledFromObserver = runtime.ErrCalledFromObserver
	// ErrNotVirtual is returned by Advance and AdvanceTo when the engine's
	// clock is not a *clock.Virtual.
	ErrNotVirtual = runtime.ErrNotVirtual
	// ErrBadVariables is returned when variables are not JSON-compatible
	// or nest deeper than MaxVariableDepth.
	ErrBadVariables = runtime.ErrBadVariables
	// ErrStaleActivation is returned by CompleteJob, FailJob and
	// ThrowError given a JobActivation the job no longer has: it timed out
	// and was activated again, or a failure ended it.
	ErrStaleActivation = runtime.ErrStaleActivation
	// ErrUnknownScope is returned by SetVariables and ScopeVariables for a
	// scope token that names no open variable scope of the instance.
	ErrUnknownScope = runtime.ErrUnknownScope
	// ErrBadModification is returned by ModifyInstance for a change the
	// instance cannot apply (an unknown element or token, an element that
	// cannot be activated, no open scope for it); nothing is applied.
	ErrBadModification = runtime.ErrBadModification
	// ErrBadChoice is returned by ChooseFlows for a token that waits for
	// no choice, or flows its gateway cannot take; nothing changes.
	ErrBadChoice = runtime.ErrBadChoice
	// ErrTimeOutOfRange is wrapped by the calls that reject an instant the
	// engine cannot represent (outside [clock.Min, clock.Max]): New for a
	// clock that reads one, Advance and AdvanceTo, PublishMessage for a TTL
	// that ends after clock.Max. A timer whose firing falls outside the
	// range opens an incident naming the time and the limit.
	ErrTimeOutOfRange = clock.ErrOutOfRange
	// ErrUnknownInstance is returned for an instance key that names no
	// live or recently finished instance (by hosts, whose calls take keys;
	// Engine.Instance reports it as false).
	ErrUnknownInstance = runtime.ErrUnknownInstance
	// ErrInvalidArgument is wrapped by every error of a call given an
	// argument it cannot take (an empty message or signal name, negative
	// retries, an empty error code, a negative duration or TTL). Bad
	// variables are ErrBadVariables instead. It is the BAD_REQUEST code of
	// the WebAssembly module and the SDK.
	ErrInvalidArgument = errors.New("invalid argument")
)

// DeployError reports a model that cannot be deployed. It names the first
// problem; Problems lists them all, in document order. It unwraps to its
// problems, so errors.As finds a *Problem and errors.Is matches a rule:
//
//	var de *engine.DeployError
//	if errors.As(err, &de) {
//		for _, p := range de.Problems {
//			fmt.Printf("%s:%d:%d: %s: %s: %s\n", de.File, p.Line, p.Column, p.RuleID, p.ElementID, p.Rule)
//		}
//	}
//	if errors.Is(err, &engine.Problem{RuleID: "EXT.127"}) { /* a message reference is missing */ }
type DeployError struct {
	// File is the name given to Deploy.
	File string
	// ProcessID and ElementID locate the first problem (either may be
	// empty for document-level problems such as malformed XML).
	ProcessID string
	ElementID string
	// Rule says what is wrong.
	Rule string
	// Problems lists every problem found, the first one included, sorted
	// by position in the document and without duplicates.
	Problems []Problem
}

// Problem is one rule a model breaks, or, among Deployment.Warnings, one
// thing that deploys but is probably not what the modeller meant.
type Problem struct {
	// RuleID names the rule: "EXT.nnn" and "REF.nn" are the extended
	// constraints and reference rules of the BPMN 2.0 constraint
	// catalogue (as BPMNspector numbers them), "XSD.<what>" a rule of the
	// BPMN schema, "FT.<what>" a rule of flowtrack's own.
	// engine/internal/model/RULES.md lists them.
	RuleID    string `json:"ruleId,omitempty"`
	ProcessID string `json:"processId,omitempty"`
	ElementID string `json:"elementId,omitempty"`
	// Line and Column locate the offending element in the document
	// (1-based; Column counts bytes); zero when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Rule says, in one line, what is wrong and how to fix it.
	Rule string `json:"rule"`
}

// Error renders the problem as "line:col: rule-id: element: message",
// leaving out the parts that are unknown.
func (p *Problem) Error() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "%d:%d: ", p.Line, p.Column)
	}
	if p.RuleID != "" {
		b.WriteString(p.RuleID + ": ")
	}
	if p.ElementID != "" {
		b.WriteString(p.ElementID + ": ")
	}
	b.WriteString(p.Rule)
	return b.String()
}

// Is reports whether target is a *Problem naming the same rule, so that
// errors.Is(err, &Problem{RuleID: "REF.93"}) asks whether a deploy error
// contains a problem of that rule.
func (p *Problem) Is(target error) bool {
	t, ok := target.(*Problem)
	return ok && t.RuleID != "" && t.RuleID == p.RuleID
}

// Error names the file, the first problem and how many more there are.
func (e *DeployError) Error() string {
	msg := fmt.Sprintf("deploy %s: ", e.File)
	if e.ElementID != "" {
		msg += fmt.Sprintf("element %s: ", e.ElementID)
	}
	msg += e.Rule
	if n := len(e.Problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// Unwrap returns the problems, each a *Problem.
func (e *DeployError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i := range e.Problems {
		errs[i] = &e.Problems[i]
	}
	return errs
}

// invalidArgument is an error of a call given an argument it cannot take:
// its message is a plain sentence, and errors.Is matches ErrInvalidArgument.
type invalidArgument struct{ msg string }

func (e *invalidArgument) Error() string        { return e.msg }
func (e *invalidArgument) Is(target error) bool { return target == ErrInvalidArgument }

// invalid returns an invalidArgument error with a formatted message.
func invalid(format string, args ...any) error {
	return &invalidArgument{fmt.Sprintf(format, args...)}
}
