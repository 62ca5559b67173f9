package server

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
)

// Role is what a client user may do (docs/server.md, "Users and
// roles"). The embedded NATS server enforces it with subject permissions
// (NetConfig); the server checks it again on every request (Access).
type Role string

// The roles.
const (
	// RoleAdmin may call every operation (deploy, start, cancel, modify,
	// restore, checkpoint...), read the events and serve every job type.
	RoleAdmin Role = "admin"
	// RoleWorker may serve the jobs of its job types (pull them from
	// their queues, activate, complete, fail, throw from them, list them)
	// and publish messages.
	RoleWorker Role = "worker"
	// RoleReader may query (instances, tokens, history, jobs, incidents,
	// definitions, metrics) and read the events.
	RoleReader Role = "reader"
)

// AllJobTypes in a worker's job types lets it serve every type.
const AllJobTypes = "*"

// Grant is a client user's role and, for a worker, the job types it
// serves (AllJobTypes for every one).
type Grant struct {
	Role     Role
	JobTypes []string
}

// The NATS accounts of a secured embedded server: the nodes (and
// JetStream, with every stream and bucket) live in NodeAccount, the
// client users in ClientAccount, which reaches the nodes only through
// the service and stream imports of the operations, the events and the
// job queues.
const (
	NodeAccount   = "FLOWTRACK"
	ClientAccount = "CLIENTS"
)

// RequestInfoHeader is the header a NATS server sets on a request that
// crosses accounts through a service import: the requester's account and
// (the import shares it) user, as JSON. A client cannot forge it: the
// server replaces any value the client sent.
const RequestInfoHeader = "Nats-Request-Info"

// CallerHeader returns the header with which a component of the node
// account (the REST API of flowtrack serve, which requests operations on
// the node's own connection) has the server check a request as client
// user user would be checked: its role and, for a worker, its job
// types. Only the node account can send it: on a request from
// ClientAccount the NATS server replaces the header with the real
// caller.
func CallerHeader(user string) nats.Header {
	info, _ := json.Marshal(struct {
		Account string `json:"acc"`
		User    string `json:"user"`
	}{ClientAccount, user})
	return nats.Header{RequestInfoHeader: []string{string(info)}}
}

// readOps are the operations of RoleReader (and of every other role).
var readOps = map[string]bool{
	"jobs": true, "instance": true, "tokens": true, "history": true, "incidents": true, "metrics": true,
	"definitions": true, "definition_xml": true, "now": true, "scope_variables": true, "evaluate_decision": true,
}

// workerOps are the operations of RoleWorker; those naming a job are
// checked against its job types.
var workerOps = map[string]bool{
	"complete_job": true, "fail_job": true, "throw_error": true, "activate_jobs": true, "jobs": true,
	"publish_message": true, "now": true,
}

// Ops returns the operations role may request, sorted; every operation
// for RoleAdmin is nil (no list: all of them).
func (r Role) Ops() []string {
	var set map[string]bool
	switch r {
	case RoleReader:
		set = readOps
	case RoleWorker:
		set = workerOps
	default:
		return nil
	}
	out := make([]string, 0, len(set))
	for op := range set {
		out = append(out, op)
	}
	slices.Sort(out)
	return out
}

// Access checks every request a server (or a cluster node's router)
// takes against the caller's role. The caller is read from the header
// the NATS server sets on requests that cross from ClientAccount; a
// request without it comes from the node account (nodes, the HTTP API of
// a node), which is trusted. Its methods are safe for concurrent use; it
// is not changed after NewAccess.
type Access struct {
	users map[string]Grant
}

// NewAccess returns the policy of users (by NATS user name, or nkey
// public key for nkey users).
func NewAccess(users map[string]Grant) *Access {
	cp := make(map[string]Grant, len(users))
	for u, g := range users {
		cp[u] = Grant{Role: g.Role, JobTypes: slices.Clone(g.JobTypes)}
	}
	return &Access{users: cp}
}

// Caller is who sent a request: Node for the node account.
type Caller struct {
	User  string
	Grant Grant
	Node  bool
}

// CallerOf reads who sent a request with header h. It fails for a
// request from another account or from a user the policy does not know.
func (a *Access) CallerOf(h nats.Header) (Caller, error) {
	raw := h.Get(RequestInfoHeader)
	if raw == "" {
		return Caller{Node: true}, nil
	}
	var info struct {
		Account string `json:"acc"`
		User    string `json:"user"`
	}
	if err := json.Unmarshal([]byte(raw), &info); err != nil {
		return Caller{}, denied("the request's %s header is not readable", RequestInfoHeader)
	}
	switch info.Account {
	case NodeAccount:
		return Caller{Node: true}, nil
	case ClientAccount:
	default:
		return Caller{}, denied("account %q is not a flowtrack client account", info.Account)
	}
	g, ok := a.users[info.User]
	if !ok {
		return Caller{}, denied("user %q has no role", info.User)
	}
	return Caller{User: info.User, Grant: g}, nil
}

// Check returns nil when the caller that sent a request with header h
// may run operation op with request data, else a *wire.Error with code
// PERMISSION_DENIED naming the user, the role and what it lacks. jobType
// finds the type of a job by key (the engine's Job), for a worker's job
// results; nil when the checker holds no engine (a router), which then
// lets job results through to the partition that checks them.
func (a *Access) Check(h nats.Header, op string, data []byte, jobType func(key int64) (string, bool)) error {
	c, err := a.CallerOf(h)
	if err != nil || c.Node {
		return err
	}
	g := c.Grant
	switch g.Role {
	case RoleAdmin:
		return nil
	case RoleReader:
		if readOps[op] {
			return nil
		}
	case RoleWorker:
		if workerOps[op] {
			return a.checkJobs(c, op, data, jobType)
		}
	}
	return denied("user %q (role %s) may not call %s", c.User, g.Role, op)
}

// checkJobs checks a worker's job operation against its job types.
func (a *Access) checkJobs(c Caller, op string, data []byte, jobType func(int64) (string, bool)) error {
	switch op {
	case "activate_jobs", "jobs":
		var req struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(data, &req) // a bad request is refused by the operation
		if req.Type == "" && !slices.Contains(c.Grant.JobTypes, AllJobTypes) {
			return denied("user %q (role worker) must name one of its job types to call %s", c.User, op)
		}
		if req.Type != "" && !serves(c.Grant, req.Type) {
			return denied("user %q (role worker) does not serve job type %q", c.User, req.Type)
		}
	case "complete_job", "fail_job", "throw_error":
		if jobType == nil || slices.Contains(c.Grant.JobTypes, AllJobTypes) {
			return nil
		}
		var req struct {
			JobKey int64 `json:"jobKey"`
		}
		_ = json.Unmarshal(data, &req)
		t, ok := jobType(req.JobKey)
		if ok && !serves(c.Grant, t) {
			return denied("user %q (role worker) does not serve job type %q (job %d)", c.User, t, req.JobKey)
		}
		// An unknown job is the operation's UNKNOWN_JOB: no type to leak.
	}
	return nil
}

// serves reports whether g's job types include jobType.
func serves(g Grant, jobType string) bool {
	return slices.Contains(g.JobTypes, AllJobTypes) || slices.Contains(g.JobTypes, jobType)
}

// denied is a PERMISSION_DENIED error response.
func denied(format string, args ...any) error {
	return &wire.Error{Code: wire.CodePermissionDenied, Message: "permission denied: " + fmt.Sprintf(format, args...)}
}

// DeniedResponse is the response envelope of a refused request.
func DeniedResponse(err error) []byte {
	out, _ := json.Marshal(wire.Response[any]{Error: asWireError(err), Events: []engine.Event{}})
	return out
}

func asWireError(err error) *wire.Error {
	if we, ok := err.(*wire.Error); ok {
		return we
	}
	return &wire.Error{Code: wire.CodePermissionDenied, Message: err.Error()}
}
