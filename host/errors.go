package host

import (
	"github.com/flowtrack/flowtrack/engine"
)

// Error is an error response of the module (wasm/ABI.md, "Error codes").
// Unwrap returns the matching sentinel of package engine (or of this
// package), so errors.Is(err, engine.ErrUnknownJob) works as with the
// native engine. Deploy failures are returned as *engine.DeployError
// instead.
type Error struct {
	Code      string           `json:"code"`
	Message   string           `json:"message"`
	ElementID string           `json:"elementId,omitempty"`
	ProcessID string           `json:"processId,omitempty"`
	Problems  []engine.Problem `json:"problems,omitempty"`
}

// Error returns the module's message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel error for e.Code, or nil.
func (e *Error) Unwrap() error { return sentinels[e.Code] }

var sentinels = map[string]error{
	"BAD_REQUEST":       ErrBadRequest,
	"UNKNOWN_OPERATION": ErrBadRequest,
	"UNKNOWN_PROCESS":   engine.ErrUnknownProcess,
	"NO_NONE_START":     engine.ErrNoNoneStart,
	"UNKNOWN_INSTANCE":  ErrUnknownInstance,
	"UNKNOWN_JOB":       engine.ErrUnknownJob,
	"UNKNOWN_INCIDENT":  engine.ErrUnknownIncident,
	"INSTANCE_ENDED":    engine.ErrInstanceEnded,
	"BAD_VARIABLES":     engine.ErrBadVariables,
	"UNSUPPORTED":       ErrUnsupported,
	"DUPLICATE_MESSAGE": engine.ErrDuplicateMessage,
	"TOO_MANY_FIRINGS":  engine.ErrTooManyFirings,
	"TIME_OUT_OF_RANGE": engine.ErrTimeOutOfRange,
	"BAD_STATE":         engine.ErrBadState,
}

// native returns the error a native engine call would return: a
// *engine.DeployError for deploy failures, e itself otherwise.
func (e *Error) native() error {
	if e.Code != "DEPLOY_FAILED" {
		return e
	}
	de := &engine.DeployError{ProcessID: e.ProcessID, ElementID: e.ElementID, Problems: e.Problems}
	if len(e.Problems) > 0 {
		de.Rule = e.Problems[0].Rule
	} else {
		de.Rule = e.Message
	}
	return de
}
