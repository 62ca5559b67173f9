// Package client speaks to a flowtrack server (flowtrack serve, package
// server) over NATS, with the API shape of host.Engine and engine.Engine:
// the same operations, the same results, and errors that match the same
// sentinels (errors.Is(err, engine.ErrUnknownJob)...). Requests and
// responses are those of the wire contract (wasm/ABI.md). It speaks to a
// partitioned cluster (flowtrack serve --node, package cluster) the same
// way: any node answers, and keys, partitions and failover stay the
// cluster's business.
package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/internal/reply"
	"github.com/flowtrack/flowtrack/internal/tracing"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
)

// Error is an error response of the server (wasm/ABI.md, "Error codes").
// Unwrap returns the sentinel of its code, the one the native engine
// returns for the same mistake; deploy failures are *engine.DeployError.
type Error = wire.Error

// ErrNoServer is returned (wrapped) when no server answers on the
// cluster's subjects: NATS answers the request "no responders" at once,
// so the call fails at once rather than after its timeout. It is
// api.ErrNoServer, the NO_SERVER code of the SDK's remote mode.
var ErrNoServer = api.ErrNoServer

// ErrUnsupported is returned for operations the server's engine cannot do
// (UNSUPPORTED): restore, which would replace the served engine, and
// advance, for it runs on the real clock. It is host.ErrUnsupported.
var ErrUnsupported = wire.ErrUnsupported

// DefaultTimeout bounds a request whose context has no deadline.
const DefaultTimeout = 30 * time.Second

// ReconnectGrace is how long a request waits for a connection that is
// down (reconnecting: its NATS server died) to come back, to another
// server of the NATS cluster or the same one, before it fails with
// ErrNoServer rather than wait out its whole timeout.
const ReconnectGrace = 2 * time.Second

// Client is a connection to the server (or the nodes) of one cluster. It
// is safe for concurrent use; the server runs the operations that only
// call the engine concurrently, and the others one at a time.
type Client struct {
	nc      *nats.Conn
	cluster string
	// mux sends the requests: an answer larger than a NATS message
	// comes in chunks (package reply).
	mux *reply.Mux
}

// New returns a client of cluster ("" is "default") over nc, which stays
// the caller's to close.
func New(nc *nats.Conn, cluster string) *Client {
	if cluster == "" {
		cluster = "default"
	}
	return &Client{nc: nc, cluster: cluster, mux: reply.NewMux(nc)}
}

// Call runs operation op with a JSON request and returns the JSON result
// (host.Engine.Call).
func (c *Client) Call(ctx context.Context, op string, request []byte) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, op, json.RawMessage(request), &out)
	return out, err
}

// call sends req to operation op and decodes the result into out.
func (c *Client) call(ctx context.Context, op string, req any, out any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: encode request: %w", op, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := c.watchDown(ctx, cancel)
	subject := wire.OpSubject(c.cluster, op)
	var hdr nats.Header
	if v, ok := wire.TimeoutOf(ctx); ok {
		// A cluster node works on the request as long as this call
		// waits for it (a partition being taken over answers late).
		hdr = nats.Header{wire.TimeoutHeader: []string{v}}
	}
	var msg *nats.Msg
	err = c.guard(ctx, subject, func(ctx context.Context) error {
		var err error
		// The span of ctx, if any, goes with the request (W3C trace context).
		msg, err = c.mux.Request(ctx, subject, data, tracing.Header(ctx, hdr))
		return err
	})
	stop()
	if errors.Is(err, ErrPermissionDenied) {
		return fmt.Errorf("%s: cluster %q: %w", op, c.cluster, err)
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrNoServer) {
		return fmt.Errorf("%s: cluster %q: %w", op, c.cluster, cause)
	}
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("%s: cluster %q: %w (NATS has no responders on its subjects)", op, c.cluster, ErrNoServer)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var resp wire.Response[json.RawMessage]
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("%s: decode response: %w", op, err)
	}
	if !resp.OK {
		if resp.Error == nil {
			return fmt.Errorf("%s: response neither ok nor an error", op)
		}
		return resp.Error.Native()
	}
	if out == nil || len(resp.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("%s: decode result: %w", op, err)
	}
	return nil
}

// watchDown cancels ctx with ErrNoServer once the connection has been
// down (reconnecting) for ReconnectGrace; the returned function stops
// watching.
func (c *Client) watchDown(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var since time.Time
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				switch {
				case c.nc.IsConnected():
					since = time.Time{}
				case since.IsZero():
					since = now
				case now.Sub(since) >= ReconnectGrace:
					cancel(fmt.Errorf("%w: the NATS connection has been down for %s", ErrNoServer, now.Sub(since).Round(time.Millisecond)))
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// Deploy parses, validates and registers the executable processes of a
// BPMN 2.0 XML document; an invalid document is a *engine.DeployError.
func (c *Client) Deploy(ctx context.Context, name string, bpmn []byte) (*api.Deployment, error) {
	var res wire.DeployResult
	doc := base64.StdEncoding.EncodeToString(bpmn) // its bytes, whatever its encoding
	if err := c.call(ctx, "deploy", wire.DeployRequest{Name: name, XMLBase64: &doc}, &res); err != nil {
		var de *api.DeployError
		if errors.As(err, &de) {
			de.File = name
		}
		return nil, err
	}
	return &api.Deployment{Name: res.Name, Processes: res.Processes, Warnings: res.Warnings}, nil
}

// Start starts an instance of the newest version of processID and returns
// its key once the engine has settled and committed it.
func (c *Client) Start(ctx context.Context, processID string, vars map[string]any) (int64, error) {
	var res wire.StartResult
	err := c.call(ctx, "start", wire.StartRequest{ProcessID: processID, Variables: vars}, &res)
	return res.InstanceKey, err
}

// PublishMessage publishes msg as engine.Engine.PublishMessage does.
func (c *Client) PublishMessage(ctx context.Context, msg api.Message) error {
	_, err := c.PublishMessageReached(ctx, msg)
	return err
}

// PublishMessageReached is PublishMessage that also returns where the
// instances the message reached stand once settled (publish_message's
// result), as engine.Engine.PublishMessageReached returns them: those it
// was correlated to (at most one per process), then those it started,
// each with its state and activatable jobs; empty when it reached none
// (buffered for later, or dropped). A cluster answers the instances of
// every partition the message reached.
func (c *Client) PublishMessageReached(ctx context.Context, msg api.Message) ([]wire.CompleteJobResult, error) {
	var res wire.MessageResult
	err := c.call(ctx, "publish_message", wire.MessageRequest{Name: msg.Name, CorrelationKey: msg.CorrelationKey,
		Variables: msg.Variables, TTLMs: float64(msg.TTL) / float64(time.Millisecond), MessageID: msg.MessageID}, &res)
	return res.Instances, err
}

// BroadcastSignal delivers a signal to every instance waiting for it.
func (c *Client) BroadcastSignal(ctx context.Context, name string, vars map[string]any) error {
	return c.call(ctx, "broadcast_signal", wire.SignalRequest{Name: name, Variables: vars}, nil)
}

// JobsPageSize is how many jobs Jobs asks for at a time.
const JobsPageSize = 1000

// Jobs returns the activatable jobs matching f, ordered by key, asking
// for them a page at a time (JobsPage), so that no answer is large
// however many jobs there are.
func (c *Client) Jobs(ctx context.Context, f api.JobFilter) ([]api.Job, error) {
	var all []api.Job
	after := int64(0)
	for {
		page, err := c.JobsPage(ctx, f, after, JobsPageSize)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < JobsPageSize {
			return all, nil
		}
		after = page[len(page)-1].Key
	}
}

// JobsPage returns up to limit activatable jobs matching f whose keys
// are above afterKey, ordered by key (limit 0: all of them): the next
// page starts after the last key of this one.
func (c *Client) JobsPage(ctx context.Context, f api.JobFilter, afterKey int64, limit int) ([]api.Job, error) {
	var jobs []api.Job
	err := c.call(ctx, "jobs", wire.JobsRequest{Type: f.Type, InstanceKey: f.InstanceKey, ElementID: f.ElementID,
		AfterKey: afterKey, Limit: limit}, &jobs)
	return jobs, err
}

// ActivateJobs activates up to maxJobs jobs of jobType for worker, as
// engine.Engine.ActivateJobs does. Workers of a served engine usually pull
// activated jobs from its job queue instead (HandleJobs).
func (c *Client) ActivateJobs(ctx context.Context, jobType, worker string, timeout time.Duration, maxJobs int) ([]api.Job, error) {
	ms := float64(timeout) / float64(time.Millisecond)
	var jobs []api.Job
	err := c.call(ctx, "activate_jobs", wire.ActivateJobsRequest{Type: jobType, Worker: worker, TimeoutMs: &ms, MaxJobs: &maxJobs}, &jobs)
	return jobs, err
}

// CompleteJob completes a job; vars are merged into the process variables.
// With engine.JobActivation the activation must still be the job's
// (engine.ErrStaleActivation).
func (c *Client) CompleteJob(ctx context.Context, key int64, vars map[string]any, opts ...api.JobOption) error {
	a := api.JobArgsOf(opts)
	return c.call(ctx, "complete_job", wire.CompleteJobRequest{JobKey: &key, Variables: vars, Activation: a.Activation}, nil)
}

// FailJob reports a failed attempt at a job; with retries 0 an incident
// holds the token. It takes engine.JobActivation and engine.RetryBackoff.
func (c *Client) FailJob(ctx context.Context, key int64, retries int, message string, opts ...api.JobOption) error {
	a := api.JobArgsOf(opts)
	return c.call(ctx, "fail_job", wire.FailJobRequest{JobKey: &key, Retries: &retries, Message: message,
		Activation: a.Activation, BackoffMs: float64(a.Backoff) / float64(time.Millisecond)}, nil)
}

// ThrowError raises the BPMN error code from a job's element. It takes
// engine.JobActivation.
func (c *Client) ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any, opts ...api.JobOption) error {
	a := api.JobArgsOf(opts)
	return c.call(ctx, "throw_error", wire.ThrowErrorRequest{JobKey: &key, ErrorCode: code, Message: message, Variables: vars, Activation: a.Activation}, nil)
}

// Incidents returns the open incidents of live instances, ordered by key.
func (c *Client) Incidents(ctx context.Context) ([]api.Incident, error) {
	var out []api.Incident
	err := c.call(ctx, "incidents", wire.IncidentsRequest{}, &out)
	return out, err
}

// ResolveIncident retries what an incident holds.
func (c *Client) ResolveIncident(ctx context.Context, key int64) error {
	return c.call(ctx, "resolve_incident", wire.IncidentRequest{IncidentKey: &key}, nil)
}

// Instance returns a live or recently finished instance's state,
// variables and incidents; an unknown key is engine.ErrUnknownInstance.
func (c *Client) Instance(ctx context.Context, key int64) (*wire.InstanceResult, error) {
	var res wire.InstanceResult
	if err := c.call(ctx, "instance", wire.InstanceRequest{InstanceKey: &key}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Tokens returns where every token of an instance is and why it waits.
func (c *Client) Tokens(ctx context.Context, key int64) ([]api.Token, error) {
	var toks []api.Token
	err := c.call(ctx, "tokens", wire.InstanceRequest{InstanceKey: &key}, &toks)
	return toks, err
}

// History returns an instance's event stream so far.
func (c *Client) History(ctx context.Context, key int64) ([]api.Event, error) {
	var evs []api.Event
	err := c.call(ctx, "history", wire.InstanceRequest{InstanceKey: &key}, &evs)
	return evs, err
}

// Cancel terminates an instance.
func (c *Client) Cancel(ctx context.Context, key int64) error {
	return c.call(ctx, "cancel", wire.InstanceRequest{InstanceKey: &key}, nil)
}

// Now returns the server engine's clock.
func (c *Client) Now(ctx context.Context) (time.Time, error) {
	var res wire.NowResult
	if err := c.call(ctx, "now", wire.NowRequest{}, &res); err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, res.Now)
}

// Subscribe calls fn with every event the server publishes from now on,
// each instance's in order (NATS keeps a publisher's order on a
// subscription), fn never concurrently with itself. An event that cannot
// be decoded is dropped; the subscription's error handler is the
// connection's. The returned function unsubscribes.
//
// Events published while no subscriber listened are not replayed: the
// history (History) holds them.
func (c *Client) Subscribe(fn func(api.Event)) (unsubscribe func() error, err error) {
	sub, err := c.nc.Subscribe(wire.AllEventsSubject(c.cluster), func(m *nats.Msg) {
		var ev api.Event
		if json.Unmarshal(m.Data, &ev) == nil {
			fn(ev)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe to the events of cluster %q: %w", c.cluster, err)
	}
	if err := c.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("subscribe to the events of cluster %q: %w", c.cluster, err)
	}
	if c.refusedSubscription(wire.AllEventsSubject(c.cluster)) {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("subscribe to the events of cluster %q: %w: %v", c.cluster, ErrPermissionDenied, c.nc.LastError())
	}
	return sub.Unsubscribe, nil
}
