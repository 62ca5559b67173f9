package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/flowtrack/flowtrack/engine"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// problemError is an error that is answered with its own status.
type problemError struct {
	status int
	title  string
	detail string
}

func (e *problemError) Error() string { return e.detail }

// badRequest is a 400 INVALID_ARGUMENT problem.
func badRequest(format string, args ...any) error {
	return &problemError{status: http.StatusBadRequest, title: "INVALID_ARGUMENT", detail: fmt.Sprintf(format, args...)}
}

// notFound is a 404 NOT_FOUND problem.
func notFound(format string, args ...any) error {
	return &problemError{status: http.StatusNotFound, title: "NOT_FOUND", detail: fmt.Sprintf(format, args...)}
}

// unsupported is a 501 problem: an endpoint or field flowtrack does not
// serve (docs/camunda-rest.md says why).
func unsupported(format string, args ...any) error {
	return &problemError{status: http.StatusNotImplemented, title: "NOT_IMPLEMENTED", detail: fmt.Sprintf(format, args...)}
}

// statusOf maps an error code of the wire contract to the status and
// title Camunda answers for the same rejection: an unknown key is 404
// NOT_FOUND, an invalid request 400 INVALID_ARGUMENT, a state that
// forbids the command 409 INVALID_STATE, a node going away 503
// UNAVAILABLE.
func statusOf(code wire.Code) (int, string) {
	switch code {
	case wire.CodeUnknownProcess, wire.CodeUnknownInstance, wire.CodeUnknownJob, wire.CodeUnknownIncident, wire.CodeUnknownScope:
		return http.StatusNotFound, "NOT_FOUND"
	case wire.CodeBadRequest, wire.CodeDeployFailed, wire.CodeBadVariables, wire.CodeNoNoneStart, wire.CodeBadModification, wire.CodeTimeOutOfRange:
		return http.StatusBadRequest, "INVALID_ARGUMENT"
	case wire.CodeStaleActivation, wire.CodeInstanceEnded, wire.CodeBadState, wire.CodeDuplicateMessage, wire.CodeKeyInUse:
		return http.StatusConflict, "INVALID_STATE"
	case wire.CodeClosed, wire.CodeTooManyJobs:
		return http.StatusServiceUnavailable, "UNAVAILABLE"
	case wire.CodePermissionDenied:
		return http.StatusForbidden, "FORBIDDEN"
	case wire.CodeUnsupported, wire.CodeUnknownOperation:
		return http.StatusNotImplemented, "NOT_IMPLEMENTED"
	}
	return http.StatusInternalServerError, "INTERNAL"
}

// writeProblem answers err as an RFC 7807 problem detail and returns its
// status.
func writeProblem(w http.ResponseWriter, r *http.Request, err error) int {
	p := Problem{Status: http.StatusInternalServerError, Title: "INTERNAL", Detail: err.Error(), Instance: r.URL.Path}
	var pe *problemError
	var we *wire.Error
	switch {
	case errors.As(err, &pe):
		p.Status, p.Title = pe.status, pe.title
	case errors.As(err, &we):
		p.Status, p.Title = statusOf(we.Code)
		if we.Code == wire.CodeInternal && strings.Contains(we.Message, engine.ErrNotAcknowledged.Error()) {
			// The command was taken, and whether it lasts is unknown (a
			// store failing over): Camunda's gateway answers such a
			// command 504, which clients do not retry blindly.
			p.Status, p.Title = http.StatusGatewayTimeout, "DEADLINE_EXCEEDED"
		}
		p.Detail = we.Message
		for i := range we.Problems {
			p.Detail += "; " + we.Problems[i].Error()
		}
	case errors.Is(err, errNoServer):
		p.Status, p.Title = http.StatusServiceUnavailable, "UNAVAILABLE"
	}
	p.Type = "about:blank"
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
	return p.Status
}
