package wire

import (
	"errors"

	"github.com/flowtrack/flowtrack/api"
)

// Code is a stable error code of an error response.
type Code string

// The error codes. The module answers with the first group; hosts raise
// the second themselves, for what happens outside the module.
const (
	CodeBadRequest       Code = "BAD_REQUEST"
	CodeUnknownOperation Code = "UNKNOWN_OPERATION"
	CodeDeployFailed     Code = "DEPLOY_FAILED"
	CodeUnknownProcess   Code = "UNKNOWN_PROCESS"
	CodeUnknownDecision  Code = "UNKNOWN_DECISION"
	CodeNoNoneStart      Code = "NO_NONE_START"
	CodeUnknownInstance  Code = "UNKNOWN_INSTANCE"
	CodeUnknownJob       Code = "UNKNOWN_JOB"
	CodeUnknownIncident  Code = "UNKNOWN_INCIDENT"
	CodeStaleActivation  Code = "STALE_ACTIVATION"
	CodeUnknownScope     Code = "UNKNOWN_SCOPE"
	CodeBadModification  Code = "BAD_MODIFICATION"
	CodeInstanceEnded    Code = "INSTANCE_ENDED"
	CodeBadVariables     Code = "BAD_VARIABLES"
	CodeDuplicateMessage Code = "DUPLICATE_MESSAGE"
	CodeTimeOutOfRange   Code = "TIME_OUT_OF_RANGE"
	CodeTooManyFirings   Code = "TOO_MANY_FIRINGS"
	CodeUnsupported      Code = "UNSUPPORTED"
	CodeBadState         Code = "BAD_STATE"
	CodeKeyInUse         Code = "KEY_IN_USE"
	CodeInternal         Code = "INTERNAL"

	CodeTrapped     Code = "TRAPPED"
	CodeClosed      Code = "CLOSED"
	CodeTooManyJobs Code = "TOO_MANY_JOBS"
	// CodePermissionDenied is a server's answer to a request its caller's
	// role does not allow (package server, Access).
	CodePermissionDenied Code = "PERMISSION_DENIED"
	CodeTooLarge         Code = "TOO_LARGE"
	CodeNoServer         Code = "NO_SERVER"
)

// ErrTrapped is the error of a call on a module that trapped (stopped
// without returning): the module was discarded with its instances.
var ErrTrapped = api.ErrTrapped

// ErrPermissionDenied is the error of a request to a flowtrack server
// that the caller's role does not allow, refused by the server
// (PERMISSION_DENIED) or by the NATS server's subject permissions.
var ErrPermissionDenied = api.ErrPermissionDenied

// ErrUnsupported is the error of an operation the module's engine cannot
// do.
var ErrUnsupported = api.ErrUnsupported

// ErrTooLarge is the error of an answer larger than the transport
// carries in one message (NATS' max payload) to a requester that does
// not take it in chunks.
var ErrTooLarge = api.ErrTooLarge

// ErrNoServer is the error of a request no flowtrack server answers: no
// server or node serves the cluster's subjects (NATS no-responders).
var ErrNoServer = api.ErrNoServer

// CodeInfo describes one error code.
type CodeInfo struct {
	Code Code
	// Err is the sentinel error the code stands for in Go: the module
	// answers with Code for an error that errors.Is matches Err, and the
	// Go host's errors unwrap to Err. Nil for DEPLOY_FAILED (an
	// *api.DeployError), INTERNAL and codes only the SDK raises.
	Err error
	// Class is the SDK's error class for the code.
	Class string
	// Host marks a code that hosts raise and the module never answers.
	Host bool
	// When says when the code is reported (ABI.md's table, the SDK's
	// class documentation).
	When string
}

// Codes lists every error code. Order matters where one error matches two
// sentinels: the first listed wins.
var Codes = []CodeInfo{
	{CodeBadRequest, api.ErrInvalidArgument, "BadRequestError", false,
		"malformed JSON, unknown/missing/mistyped field, oversized request, invalid argument (e.g. an empty signal name, negative `retries` or `byMs`)."},
	{CodeUnknownOperation, api.ErrInvalidArgument, "UnknownOperationError", false,
		"`call` with an `op` that does not exist, or an operation the module does not export."},
	{CodeDeployFailed, nil, "DeployError", false,
		"the BPMN document is malformed or invalid; see `problems`."},
	{CodeUnknownProcess, api.ErrUnknownProcess, "UnknownProcessError", false,
		"`start` of a process id never deployed."},
	{CodeUnknownDecision, api.ErrUnknownDecision, "UnknownDecisionError", false,
		"`evaluate_decision` of a decision id (or version) never deployed."},
	{CodeNoNoneStart, api.ErrNoNoneStart, "NoNoneStartError", false,
		"`start` of a process that only events can start."},
	{CodeUnknownInstance, api.ErrUnknownInstance, "UnknownInstanceError", false,
		"an instance key that names no live or recently finished instance."},
	{CodeUnknownJob, api.ErrUnknownJob, "UnknownJobError", false,
		"a job key that names no activatable job."},
	{CodeUnknownIncident, api.ErrUnknownIncident, "UnknownIncidentError", false,
		"an incident key that names no open incident."},
	{CodeStaleActivation, api.ErrStaleActivation, "StaleActivationError", false,
		"a job result naming an `activation` the job no longer has: it timed out and was activated again, or failed."},
	{CodeUnknownScope, api.ErrUnknownScope, "UnknownScopeError", false,
		"a `scope` token that names no open variable scope of the instance."},
	{CodeBadModification, api.ErrBadModification, "BadModificationError", false,
		"a `modify_instance` change the instance cannot apply (an unknown element or token, an element that cannot be activated, no open scope for it), or a `choose_flows` choice no waiting token can take; nothing is applied."},
	{CodeInstanceEnded, api.ErrInstanceEnded, "InstanceEndedError", false,
		"the instance has already ended (e.g. `cancel` twice)."},
	{CodeBadVariables, api.ErrBadVariables, "BadVariablesError", false,
		"variables that are not a JSON object of JSON values, or nest deeper than 64 levels."},
	{CodeDuplicateMessage, api.ErrDuplicateMessage, "DuplicateMessageError", false,
		"`publish_message` with a `messageId` still buffered."},
	{CodeTimeOutOfRange, api.ErrTimeOutOfRange, "TimeOutOfRangeError", false,
		"an instant the engine cannot represent (see [Time range](#time-range)): `advance` past the limit, a `ttlMs` that ends past it. Nothing moves."},
	{CodeTooManyFirings, api.ErrTooManyFirings, "TooManyFiringsError", false,
		"`advance` over a span in which more than 100,000 timers fall due; the clock stops at the last firing, repeat the call."},
	{CodeUnsupported, ErrUnsupported, "UnsupportedError", false,
		"the operation exists in the ABI but this build's engine cannot do it."},
	{CodeBadState, api.ErrBadState, "BadStateError", false,
		"`restore` of a document the engine cannot read: not a state document, a newer state version, or one that does not hold together. The engine is left as it was."},
	{CodeKeyInUse, api.ErrKeyInUse, "KeyInUseError", false,
		"`restore` with `instance` of an instance whose key the engine holds already (restored here before). Nothing is added."},
	{CodeInternal, nil, "InternalError", false,
		"a bug: the operation panicked; the panic was recovered and the engine stays usable."},
	{CodeTrapped, ErrTrapped, "TrappedError", true,
		"the module trapped (or a Go host's call was abandoned when its context ended) and was discarded with its instances; create a new engine."},
	{CodeClosed, api.ErrClosed, "ClosedError", true,
		"a call on an engine after Close."},
	{CodeTooManyJobs, nil, "TooManyJobsError", true,
		"the SDK's job handlers worked more jobs after one call than its `maxHandledJobs` allows (a model that loops through jobs)."},
	{CodePermissionDenied, ErrPermissionDenied, "PermissionDeniedError", true,
		"a `flowtrack serve` (remote mode) refused the request: the caller's role does not allow the operation, or a worker's job types do not include the job's."},
	{CodeTooLarge, ErrTooLarge, "TooLargeError", true,
		"a served engine's answer larger than NATS carries in one message, to a requester that does not take chunked answers; ask for a page (`jobs`: `limit`, `afterKey`)."},
	{CodeNoServer, ErrNoServer, "NoServerError", true,
		"remote mode: no flowtrack server answers on the cluster's subjects (NATS no-responders); raised at once, not after the timeout."},
}

// CodeOf returns the code the module answers with for err: DEPLOY_FAILED
// for a *api.DeployError, the code of the first sentinel in Codes that
// err matches, else INTERNAL.
func CodeOf(err error) Code {
	var we *Error
	if errors.As(err, &we) {
		return we.Code
	}
	var de *api.DeployError
	if errors.As(err, &de) {
		return CodeDeployFailed
	}
	for _, c := range Codes {
		if c.Err != nil && errors.Is(err, c.Err) {
			return c.Code
		}
	}
	return CodeInternal
}

// Sentinel returns the sentinel error of code, or nil.
func Sentinel(code Code) error {
	for _, c := range Codes {
		if c.Code == code {
			return c.Err
		}
	}
	return nil
}
