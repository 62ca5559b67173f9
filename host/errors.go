package host

import (
	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// Error is an error response of the module (wasm/ABI.md, "Error codes").
// Unwrap returns the sentinel the code stands for, the one the native
// engine returns for the same mistake (engine.ErrInvalidArgument for
// BAD_REQUEST, engine.ErrUnknownJob for UNKNOWN_JOB...), so errors.Is works
// as with the native engine. Deploy failures are returned as
// *engine.DeployError instead.
type Error struct {
	Code      string        `json:"code"`
	Message   string        `json:"message"`
	ElementID string        `json:"elementId,omitempty"`
	ProcessID string        `json:"processId,omitempty"`
	Problems  []api.Problem `json:"problems,omitempty"`
}

// Error returns the module's message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel error for e.Code, or nil.
func (e *Error) Unwrap() error { return wire.Sentinel(wire.Code(e.Code)) }

// native returns the error a native engine call would return for the
// module's error object we: a *engine.DeployError for deploy failures, an
// *Error otherwise.
func native(we *wire.Error) error {
	if we.Code != wire.CodeDeployFailed {
		return &Error{Code: string(we.Code), Message: we.Message, ElementID: we.ElementID, ProcessID: we.ProcessID, Problems: we.Problems}
	}
	return we.Native()
}
