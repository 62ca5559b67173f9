package engine

import "github.com/flowtrack/flowtrack/api"

// Sentinel errors, for errors.Is. They are package api's (api/errors.go,
// where each is documented); engine names the ones its calls return.
var (
	ErrUnknownProcess  = api.ErrUnknownProcess
	ErrNoNoneStart     = api.ErrNoNoneStart
	ErrUnknownJob      = api.ErrUnknownJob
	ErrUnknownIncident = api.ErrUnknownIncident
	ErrInstanceEnded   = api.ErrInstanceEnded
	ErrClosed          = api.ErrClosed
	// ErrCalledFromObserver: see api.ErrCalledFromObserver.
	ErrCalledFromObserver = api.ErrCalledFromObserver
	ErrNotVirtual         = api.ErrNotVirtual
	ErrBadVariables       = api.ErrBadVariables
	ErrStaleActivation    = api.ErrStaleActivation
	ErrUnknownScope       = api.ErrUnknownScope
	ErrBadModification    = api.ErrBadModification
	ErrBadChoice          = api.ErrBadChoice
	ErrTimeOutOfRange     = api.ErrTimeOutOfRange
	ErrUnknownInstance    = api.ErrUnknownInstance
	ErrInvalidArgument    = api.ErrInvalidArgument
	ErrUnknownDecision    = api.ErrUnknownDecision
	ErrBadState           = api.ErrBadState
	ErrNotSettled         = api.ErrNotSettled
	ErrKeyInUse           = api.ErrKeyInUse
	ErrDuplicateMessage   = api.ErrDuplicateMessage
	ErrTooManyFirings     = api.ErrTooManyFirings
	ErrObserverDropped    = api.ErrObserverDropped
	ErrNoEngineDocument   = api.ErrNoEngineDocument
	ErrStoreNotEmpty      = api.ErrStoreNotEmpty
	ErrNotAcknowledged    = api.ErrNotAcknowledged
	ErrStoreLost          = api.ErrStoreLost
)

// The error types of deploys, decisions and observers are package api's.
type (
	// DeployError reports a model that cannot be deployed (api.DeployError).
	DeployError = api.DeployError
	// Problem is one rule a model breaks (api.Problem).
	Problem = api.Problem
	// DecisionError is a decision whose evaluation failed (api.DecisionError).
	DecisionError = api.DecisionError
	// ObserverPanicError reports an observer that panicked
	// (api.ObserverPanicError).
	ObserverPanicError = api.ObserverPanicError
	// BPMNError is the error a JobHandler returns to throw a BPMN error
	// (api.BPMNError).
	BPMNError = api.BPMNError
)

// invalid returns an error wrapping ErrInvalidArgument whose message is
// the formatted sentence.
func invalid(format string, args ...any) error { return api.InvalidArgument(format, args...) }
