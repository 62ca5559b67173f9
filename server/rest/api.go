package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/flowtrack/flowtrack/internal/tracing"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"
)

// Config configures New.
type Config struct {
	// Conn is the node's NATS connection: operations are requested on
	// its cluster's subjects and the projection reads its events. It
	// stays the caller's.
	Conn *nats.Conn
	// Cluster is the cluster name ("" is "default").
	Cluster string
	// Clock, when set, is the served engine's clock, which PUT /v2/clock
	// pins and POST /v2/clock/reset resets; without it those endpoints
	// answer 501 (a cluster's partitions each have their own clock).
	Clock *Clock
	// Auth, when set, authenticates every request but GET /v2/status
	// and checks its role against the endpoint (auth.go); the job
	// operations of a configured user are also checked by the server
	// as that user's, so a worker serves only its job types. Without it
	// every request is an administrator's: the listener must then be on
	// loopback (Listen checks).
	Auth *Auth
	// Topology, when set, reads the cluster's topology for GET
	// /v2/topology (a cluster's nodes and the partitions they hold); nil
	// is one node owning one partition.
	Topology func(ctx context.Context) (Topology, error)
	// Logf, when set, reports the requests answered with a server error
	// (5xx), which an operator should see.
	Logf func(format string, args ...any)
	// Logger, when set, reports those requests too, at level Error with
	// the method, path, status and error as attributes (log/slog).
	Logger *slog.Logger
	// MaxProjected bounds the finished process instances the search
	// projection keeps (default 100,000); the oldest go first.
	MaxProjected int
}

// Topology is what GET /v2/topology reports.
type Topology struct {
	// Nodes are the cluster's live nodes, in order.
	Nodes []TopologyNode
	// Partitions is the partition count (0 is 1).
	Partitions int
	// Replicas is the replication factor (0 is 1).
	Replicas int
}

// TopologyNode is one node and the partitions whose lease it holds.
type TopologyNode struct {
	Name       string
	Partitions []int
}

// API serves the REST API. It is an http.Handler, safe for concurrent
// use; Close stops its projection.
type API struct {
	cfg  Config
	mux  *http.ServeMux
	proj *projection
	keys keySource
}

// identityKey keys the authenticated caller (identity) in a request's
// context.
type identityKey struct{}

// actAsKey keys, in a context, the configured user whose operations
// call requests as that user's (server.CallerHeader).
type actAsKey struct{}

// asCaller returns ctx with which call requests job operations as the
// request's caller when it is a configured user, so that the server
// checks them by its role and job types; an OAuth caller or an API
// without Auth requests as the node.
func asCaller(ctx context.Context) context.Context {
	if id, ok := ctx.Value(identityKey{}).(identity); ok && id.user {
		return context.WithValue(ctx, actAsKey{}, id.name)
	}
	return ctx
}

// DefaultRequestTimeout bounds a job activation's long poll and a
// creation that awaits completion when the request names no timeout, as
// Camunda's gateway defaults them (10 s).
const DefaultRequestTimeout = 10 * time.Second

// opTimeout bounds one operation; a cluster node told it
// (wire.TimeoutHeader) retries that long while a partition has no owner.
const opTimeout = 20 * time.Second

// errNoServer reports that no server answers on the cluster's subjects.
var errNoServer = errors.New("no flowtrack server answers")

// New returns the API of cfg's cluster and starts its projection.
func New(cfg Config) (*API, error) {
	if cfg.Conn == nil {
		return nil, fmt.Errorf("rest: Config.Conn is nil")
	}
	if cfg.Cluster == "" {
		cfg.Cluster = "default"
	}
	if cfg.MaxProjected <= 0 {
		cfg.MaxProjected = 100_000
	}
	a := &API{cfg: cfg, mux: http.NewServeMux()}
	var err error
	if a.proj, err = startProjection(cfg.Conn, cfg.Cluster, cfg.MaxProjected); err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	a.routes()
	return a, nil
}

// Close stops the projection.
func (a *API) Close() error { return a.proj.close() }

// ServeHTTP authenticates the request and dispatches it.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.cfg.Auth != nil && r.URL.Path != "/v2/status" {
		id, err := a.cfg.Auth.authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="flowtrack", Bearer`)
			writeProblem(w, r, err)
			return
		}
		if !allowed(id.role, r) {
			writeProblem(w, r, &problemError{status: http.StatusForbidden, title: "FORBIDDEN",
				detail: fmt.Sprintf("%s (role %s) may not %s %s", id.name, id.role, r.Method, r.URL.Path)})
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), identityKey{}, id))
	}
	a.mux.ServeHTTP(w, r)
}

// handler is an endpoint: it returns the status and body to answer (nil
// body: none), or an error to answer as a problem.
type handler func(r *http.Request) (int, any, error)

// handle registers pattern (a Go 1.22 method and path pattern).
func (a *API) handle(pattern string, h handler) {
	a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if tracing.Enabled() {
			// A span per request, the child of the caller's traceparent;
			// the operations it requests carry it on.
			ctx, span := tracing.Start(tracing.ExtractHTTP(r.Context(), r.Header), "flowtrack REST "+pattern, trace.SpanKindServer)
			defer span.End()
			r = r.WithContext(ctx)
		}
		status, body, err := h(r)
		if err != nil {
			// A request its client gave up on is nobody's problem.
			if st := writeProblem(w, r, err); st >= 500 && st != http.StatusNotImplemented && r.Context().Err() == nil {
				if a.cfg.Logf != nil {
					a.cfg.Logf("rest: %s %s: %d: %v", r.Method, r.URL.Path, st, err)
				}
				if a.cfg.Logger != nil {
					a.cfg.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", st, "err", err)
				}
			}
			return
		}
		if body == nil {
			w.WriteHeader(status)
			return
		}
		if raw, ok := body.(rawBody); ok {
			w.Header().Set("Content-Type", raw.contentType)
			w.WriteHeader(status)
			_, _ = w.Write(raw.data)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(body)
	})
}

// rawBody is a body answered as it is.
type rawBody struct {
	contentType string
	data        []byte
}

// MaxBody bounds a JSON request body (the wire contract's request bound).
const MaxBody = wire.MaxRequest

// decodeBody reads r's JSON body into v; an empty body leaves v as it is.
func decodeBody(r *http.Request, v any) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return badRequest("read the request body: %v", err)
	}
	if len(data) > MaxBody {
		return badRequest("the request body is larger than %d bytes", MaxBody)
	}
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return badRequest("the request body is not the expected JSON: %v", err)
	}
	return nil
}

// pathKey reads the path parameter name as a key.
func pathKey(r *http.Request, name string) (int64, error) {
	return parseKey(r.PathValue(name), name)
}

// parseKey reads a decimal key.
func parseKey(s, name string) (int64, error) {
	k, err := strconv.ParseInt(s, 10, 64)
	if err != nil || k <= 0 {
		return 0, badRequest("%s %q is not a key (a positive decimal integer)", name, s)
	}
	return k, nil
}

// key writes a key as the API does: decimal text.
func key(k int64) string { return strconv.FormatInt(k, 10) }

// call runs operation op with req on the cluster (any node answers) and
// decodes its result into out (nil: discarded). An error answer is a
// *wire.Error.
func (a *API) call(ctx context.Context, op string, req, out any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: encode request: %w", op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	m := &nats.Msg{Subject: wire.OpSubject(a.cfg.Cluster, op), Data: data}
	if user, ok := ctx.Value(actAsKey{}).(string); ok {
		m.Header = server.CallerHeader(user)
	}
	if v, ok := wire.TimeoutOf(ctx); ok {
		if m.Header == nil {
			m.Header = nats.Header{}
		}
		m.Header.Set(wire.TimeoutHeader, v)
	}
	// The span of ctx, if any, goes with the request (W3C trace context).
	m.Header = tracing.Header(ctx, m.Header)
	msg, err := a.cfg.Conn.RequestMsgWithContext(ctx, m)
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("%s: cluster %q: %w", op, a.cfg.Cluster, errNoServer)
	}
	if err != nil {
		return &problemError{status: http.StatusServiceUnavailable, title: "UNAVAILABLE", detail: fmt.Sprintf("%s: %v", op, err)}
	}
	var resp wire.Response[json.RawMessage]
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("%s: decode response: %w", op, err)
	}
	if !resp.OK {
		if resp.Error == nil {
			return fmt.Errorf("%s: response neither ok nor an error", op)
		}
		return resp.Error
	}
	if out == nil || len(resp.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("%s: decode result: %w", op, err)
	}
	return nil
}

// timeText writes t as the API does (RFC 3339 with milliseconds, UTC).
func timeText(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// optTime is timeText, or nil for the zero time.
func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := timeText(t)
	return &s
}

// optString is s, or nil when empty.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
