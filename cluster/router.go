package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/reply"
	"github.com/flowtrack/flowtrack/internal/tracing"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
)

// ForwardTimeout is the least time a node works on one request whose
// requester does not say how long it waits (wire.TimeoutHeader):
// forwarding it, and retrying while the partition it goes to has no
// owner. A node with a long lease TTL works longer (forwardTTLs), since
// a dead owner's partition is served again only about a TTL after it
// died.
const ForwardTimeout = 15 * time.Second

// MaxForwardTimeout bounds the time a requester may ask a node to work on
// one request (wire.TimeoutHeader).
const MaxForwardTimeout = 10 * time.Minute

// forwardTTLs is how many lease TTLs a node works on a request whose
// requester does not say how long it waits, when that is more than
// ForwardTimeout: the dead owner's lease expires (one TTL), a node sees
// it in its next round (a quarter) and opens the partition from its
// store (the rest).
const forwardTTLs = 3

// MaxInFlight bounds the requests one node routes at once; further
// requests wait in the NATS subscription's buffer.
const MaxInFlight = 256

// routerQueue is the NATS queue group of the nodes' routers: each request
// of the cluster reaches one node.
const routerQueue = "flowtrack-router"

// NodeHeader is the header a cluster node's answers carry, naming the
// node: an answer without it comes from a single flowtrack serve.
const NodeHeader = "Flowtrack-Node"

// router answers the cluster's operations on one node by forwarding them
// to the partitions that own them (see the package doc, Routing).
type router struct {
	n       *Node
	prefix  string
	sub     *nats.Subscription
	slots   chan struct{}
	gate    sync.Mutex
	closed  bool
	running sync.WaitGroup
	next    atomic.Uint64 // round robin over partitions
}

func newRouter(n *Node) *router {
	return &router{n: n, prefix: wire.OpSubject(n.cfg.Cluster, ""), slots: make(chan struct{}, MaxInFlight)}
}

func (r *router) start() error {
	var err error
	r.sub, err = r.n.nc.QueueSubscribe(r.prefix+"*", routerQueue, r.accept)
	if err == nil {
		err = r.n.nc.Flush()
	}
	if err != nil {
		return fmt.Errorf("cluster %s: subscribe to %s*: %w", r.n.cfg.Cluster, r.prefix, err)
	}
	return nil
}

// close stops taking requests and waits for those under way.
func (r *router) close() {
	r.gate.Lock()
	r.closed = true
	r.gate.Unlock()
	_ = r.sub.Unsubscribe()
	r.running.Wait()
}

func (r *router) accept(m *nats.Msg) {
	r.slots <- struct{}{}
	r.gate.Lock()
	if r.closed {
		r.gate.Unlock()
		<-r.slots
		r.respond(m, errorResponse(wire.CodeClosed, "the flowtrack node is closing"))
		return
	}
	r.running.Add(1)
	r.gate.Unlock()
	go func() {
		defer func() { <-r.slots; r.running.Done() }()
		op := m.Subject[len(r.prefix):]
		ctx, span := r.span(m, op)
		defer span.End()
		ctx, cancel := context.WithTimeout(ctx, r.timeout(m))
		defer cancel()
		if a := r.n.cfg.Access; a != nil {
			if err := a.Check(m.Header, op, m.Data, nil); err != nil {
				r.respond(m, server.DeniedResponse(err))
				return
			}
			ctx = withCaller(ctx, m.Header)
		}
		r.respond(m, r.route(ctx, op, m.Data))
	}()
}

// timeout is how long the router works on request m: as long as its
// requester waits for the answer (wire.TimeoutHeader, at most
// MaxForwardTimeout), less a margin for the answer to reach it, so that
// a request waiting for a partition's takeover is answered ("no owner
// answered in time") before its requester gives up, and not given up
// while the requester still waits; from a requester that does not say,
// the longer of ForwardTimeout and forwardTTLs lease TTLs.
func (r *router) timeout(m *nats.Msg) time.Duration {
	if m.Header != nil {
		if d, ok := wire.ParseTimeout(m.Header.Get(wire.TimeoutHeader)); ok {
			d = min(d, MaxForwardTimeout)
			return d - min(d/10, time.Second)
		}
	}
	return max(ForwardTimeout, forwardTTLs*r.n.ttl)
}

// respond answers m, if it asks for an answer, naming this node
// (NodeHeader).
func (r *router) respond(m *nats.Msg, out []byte) {
	r.n.respondWith(m, out, nats.Header{NodeHeader: []string{r.n.cfg.Node}})
}

// keyField names the key that routes each keyed operation.
var keyField = map[string]string{
	"complete_job": "jobKey", "fail_job": "jobKey", "throw_error": "jobKey", "update_job_retries": "jobKey",
	"resolve_incident": "incidentKey",
	"tokens":           "instanceKey", "instance": "instanceKey", "history": "instanceKey", "cancel": "instanceKey",
	"activate_ad_hoc": "instanceKey", "modify_instance": "instanceKey", "set_variables": "instanceKey",
	"scope_variables": "instanceKey", "choose_flows": "instanceKey",
}

// unknownCode is the error code of a key no partition of the cluster can
// hold, by key field.
var unknownCode = map[string]wire.Code{
	"jobKey": wire.CodeUnknownJob, "incidentKey": wire.CodeUnknownIncident, "instanceKey": wire.CodeUnknownInstance,
}

// route answers one request of operation op.
func (r *router) route(ctx context.Context, op string, data []byte) []byte {
	if field, ok := keyField[op]; ok {
		return r.keyed(ctx, op, field, data)
	}
	switch op {
	case "deploy":
		return r.deploy(ctx, data)
	case "start":
		return r.startInstance(ctx, data)
	case "publish_message":
		var req struct {
			CorrelationKey string `json:"correlationKey"`
		}
		if json.Unmarshal(data, &req) != nil {
			return r.forward(ctx, 1, op, data) // its BAD_REQUEST
		}
		// The key's partition correlates it to its own instances, then
		// to the waits other partitions registered there (messages.go).
		p := MessagePartition(req.CorrelationKey, r.n.parts)
		out, err := r.request(ctx, msgSubject(r.n.cfg.Cluster, p, "publish"), data)
		if err != nil {
			return errorResponse(wire.CodeClosed, fmt.Sprintf("%s: partition %d: %v", op, p, err))
		}
		return out
	case "broadcast_signal":
		return r.merge(ctx, op, data, func([]json.RawMessage) (json.RawMessage, error) { return json.RawMessage("null"), nil })
	case "jobs":
		if _, ok := keyOf(data, "instanceKey"); ok {
			return r.keyed(ctx, op, "instanceKey", data)
		}
		var page wire.JobsRequest
		_ = json.Unmarshal(data, &page) // a bad request is each partition's BAD_REQUEST
		return r.merge(ctx, op, data, func(results []json.RawMessage) (json.RawMessage, error) {
			// Each partition answered its first Limit jobs after
			// AfterKey: the first Limit of all are among them.
			return mergeByKeyLimit(results, page.Limit)
		})
	case "incidents":
		return r.merge(ctx, op, data, mergeByKey)
	case "metrics":
		return r.merge(ctx, op, data, mergeMetrics)
	case "activate_jobs":
		return r.activate(ctx, data)
	case "definitions", "definition_xml", "evaluate_decision", "now":
		// Every partition holds the same deployments.
		return r.forward(ctx, int(r.next.Add(1)%uint64(r.n.parts))+1, op, data)
	case "advance", "configure", "checkpoint", "restore", "call":
		return errorResponse(wire.CodeUnsupported, op+": not supported by a flowtrack cluster (its partitions run on the real clock with their own stores)")
	}
	return errorResponse(wire.CodeUnknownOperation, "unknown operation "+strconv.Quote(op))
}

// keyOf reads the integer key field of a request.
func keyOf(data []byte, field string) (int64, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return 0, false
	}
	k, err := strconv.ParseInt(string(m[field]), 10, 64)
	return k, err == nil
}

// keyed forwards a request to the partition of its key.
func (r *router) keyed(ctx context.Context, op, field string, data []byte) []byte {
	key, ok := keyOf(data, field)
	if !ok {
		return r.forward(ctx, 1, op, data) // its BAD_REQUEST
	}
	p := engine.PartitionOf(key)
	if p < 1 || p > r.n.parts {
		return errorResponse(unknownCode[field], fmt.Sprintf("%s: %s %d names partition %d, and the cluster has partitions 1 to %d", op, field, key, p, r.n.parts))
	}
	return r.forward(ctx, p, op, data)
}

// startInstance forwards a start to the partition of its business key, or round
// robin; a partition that has not applied the deployment log yet (it
// just opened) applies it and the start is tried again.
func (r *router) startInstance(ctx context.Context, data []byte) []byte {
	p := 0
	if bk := r.n.cfg.BusinessKey; bk != "" {
		var req struct {
			Variables map[string]json.RawMessage `json:"variables"`
		}
		if json.Unmarshal(data, &req) == nil {
			if v, ok := correlationText(req.Variables[bk]); ok {
				p = MessagePartition(v, r.n.parts)
			}
		}
	}
	if p == 0 {
		p = int(r.next.Add(1)%uint64(r.n.parts)) + 1
	}
	out := r.forward(ctx, p, "start", data)
	if code(out) == wire.CodeUnknownProcess {
		if _, err := r.request(ctx, syncSubject(r.n.cfg.Cluster, p), []byte("0")); err == nil {
			out = r.forward(ctx, p, "start", data)
		}
	}
	return out
}

// correlationText is the correlation key a business key variable's value
// makes: a string's text, a number's JSON text.
func correlationText(v json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var num json.Number
	if json.Unmarshal(v, &num) == nil {
		return num.String(), true
	}
	return "", false
}

// deploy validates a deployment, appends it to the cluster's log and has
// every partition apply the log up to it; the result is the lowest
// partition's (process keys are that partition's).
func (r *router) deploy(ctx context.Context, data []byte) []byte {
	e, fresh, refused := r.n.validate(data)
	if refused != nil {
		return refused
	}
	seq, err := r.n.appendDeployment(ctx, e)
	if err != nil {
		return errorResponse(wire.CodeInternal, "deploy: "+err.Error())
	}
	results := make([]json.RawMessage, r.n.parts)
	errs := make([]error, r.n.parts)
	var wg sync.WaitGroup
	for i := range r.n.parts {
		wg.Go(func() {
			out, err := r.request(ctx, syncSubject(r.n.cfg.Cluster, i+1), []byte(strconv.FormatUint(seq, 10)))
			if err != nil {
				errs[i] = err
				return
			}
			var resp wire.Response[json.RawMessage]
			if err := json.Unmarshal(out, &resp); err != nil || !resp.OK {
				errs[i] = fmt.Errorf("partition %d: %s", i+1, out)
				return
			}
			results[i] = resp.Result
		})
	}
	wg.Wait()
	for _, res := range results {
		if len(res) > 0 && !bytes.Equal(res, []byte("null")) {
			return okResponse(res, nil)
		}
	}
	for i, res := range results {
		if res != nil {
			// Applied, but by owners that have moved since: read the
			// versions back from the partition's definitions.
			if out, err := r.deployedAs(ctx, i+1, fresh); err == nil {
				return okResponse(out, nil)
			}
		}
	}
	// The deployment is in the log, and every partition applies it before
	// it serves again; none answered in time.
	return errorResponse(wire.CodeClosed, fmt.Sprintf("deploy: logged as deployment %d, applied by no partition that answered in time (each applies it before it serves): %v",
		seq, errors.Join(errs...)))
}

// deployedAs rebuilds the result of a deployment partition p applied
// under an earlier owner: each process of the fresh engine's result with
// the newest version p holds of it from the same resource.
func (r *router) deployedAs(ctx context.Context, p int, fresh *wire.DeployResult) (json.RawMessage, error) {
	out := r.forward(ctx, p, "definitions", []byte("{}"))
	var resp wire.Response[[]engine.Definition]
	if err := json.Unmarshal(out, &resp); err != nil || !resp.OK {
		return nil, fmt.Errorf("definitions of partition %d: %s", p, out)
	}
	res := *fresh
	res.Processes = make([]engine.Process, len(fresh.Processes))
	for i, proc := range fresh.Processes {
		for _, d := range resp.Result {
			if d.ProcessID == proc.ID && d.Resource == fresh.Name && d.Version >= proc.Version {
				proc.Key, proc.Version = d.Key, d.Version
			}
		}
		res.Processes[i] = proc
	}
	return json.Marshal(res)
}

// activate activates jobs on the partitions in turn, from a rotating
// first one, until maxJobs are activated. A partition without an owner
// right now is skipped: workers ask again.
func (r *router) activate(ctx context.Context, data []byte) []byte {
	var req map[string]json.RawMessage
	maxJobs := 0
	if json.Unmarshal(data, &req) != nil || json.Unmarshal(req["maxJobs"], &maxJobs) != nil || maxJobs <= 0 {
		return r.forward(ctx, 1, "activate_jobs", data) // its BAD_REQUEST
	}
	first := int(r.next.Add(1) % uint64(r.n.parts))
	var jobs []json.RawMessage
	var answers []wire.Response[json.RawMessage]
	for i := 0; i < r.n.parts && len(jobs) < maxJobs; i++ {
		p := (first+i)%r.n.parts + 1
		req["maxJobs"] = json.RawMessage(strconv.Itoa(maxJobs - len(jobs)))
		body, _ := json.Marshal(req)
		msg, err := r.n.mux.Request(ctx, wire.PartitionOpSubject(r.n.cfg.Cluster, p, "activate_jobs"), body, tracing.Header(ctx, nil))
		if err != nil {
			continue
		}
		var resp wire.Response[[]json.RawMessage]
		if json.Unmarshal(msg.Data, &resp) != nil {
			continue
		}
		if !resp.OK {
			if len(jobs) == 0 && code(msg.Data) != wire.CodeClosed {
				return msg.Data // the request's own error, the same on every partition
			}
			continue
		}
		jobs = append(jobs, resp.Result...)
		answers = append(answers, wire.Response[json.RawMessage]{Now: resp.Now, NextDeadline: resp.NextDeadline})
	}
	if jobs == nil {
		jobs = []json.RawMessage{}
	}
	out, _ := json.Marshal(jobs)
	return okResponse(out, answers)
}

// forward sends a request to partition p, retrying while the partition
// has no owner (no responder, or an owner that is closing or fenced),
// until ctx ends.
func (r *router) forward(ctx context.Context, p int, op string, data []byte) []byte {
	out, err := r.request(ctx, wire.PartitionOpSubject(r.n.cfg.Cluster, p, op), data)
	if err != nil {
		return errorResponse(wire.CodeClosed, fmt.Sprintf("%s: partition %d: %v", op, p, err))
	}
	return out
}

// request sends data to subject and returns the reply, retrying while no
// one serves the subject or the answer is that of an owner that is
// closing or fenced (the command was not taken: safe to send again).
func (r *router) request(ctx context.Context, subject string, data []byte) ([]byte, error) {
	wait := 20 * time.Millisecond
	for {
		msg, err := r.n.mux.Request(ctx, subject, data, tracing.Header(ctx, callerOf(ctx)))
		switch {
		case err == nil && !retryable(msg.Data):
			return msg.Data, nil
		case err == nil, errors.Is(err, nats.ErrNoResponders):
		default:
			if ctx.Err() != nil {
				return nil, fmt.Errorf("no owner answered in time (the partition is moving, or the request's outcome is unknown): %w", err)
			}
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no owner answered in time (the partition is moving): %w", ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// callerKey carries the header naming a request's caller (the NATS
// server's request info) from the router to the partitions it forwards
// the request to, which check the caller's role again (server.Access).
// Only nodes publish on partition subjects, so the header they carry is
// the one the NATS server set.
type callerKey struct{}

func withCaller(ctx context.Context, h nats.Header) context.Context {
	if v := h.Get(server.RequestInfoHeader); v != "" {
		return context.WithValue(ctx, callerKey{}, nats.Header{server.RequestInfoHeader: []string{v}})
	}
	return ctx
}

func callerOf(ctx context.Context) nats.Header {
	h, _ := ctx.Value(callerKey{}).(nats.Header)
	return h
}

// retryable reports whether a response says the command was not taken by
// an owner that is going away: CLOSED, or a commit refused by the fence.
func retryable(out []byte) bool {
	c := code(out)
	return c == wire.CodeClosed || (c != "" && bytes.Contains(out, []byte(ErrFenced.Error())))
}

// code returns the error code of a response, "" for a success.
func code(out []byte) wire.Code {
	if !bytes.HasPrefix(out, []byte(`{"ok":false`)) {
		return ""
	}
	var resp wire.Response[json.RawMessage]
	if json.Unmarshal(out, &resp) != nil || resp.Error == nil {
		return wire.CodeInternal
	}
	return resp.Error.Code
}

// merge sends a request to every partition and merges the results with
// fn; the first error answers for all.
func (r *router) merge(ctx context.Context, op string, data []byte, fn func([]json.RawMessage) (json.RawMessage, error)) []byte {
	outs := make([][]byte, r.n.parts)
	var wg sync.WaitGroup
	for i := range r.n.parts {
		wg.Go(func() { outs[i] = r.forward(ctx, i+1, op, data) })
	}
	wg.Wait()
	results := make([]json.RawMessage, 0, len(outs))
	answers := make([]wire.Response[json.RawMessage], 0, len(outs))
	for _, out := range outs {
		var resp wire.Response[json.RawMessage]
		if err := json.Unmarshal(out, &resp); err != nil {
			return errorResponse(wire.CodeInternal, fmt.Sprintf("%s: a partition's response: %v", op, err))
		}
		if !resp.OK {
			return out
		}
		results = append(results, resp.Result)
		answers = append(answers, resp)
	}
	merged, err := fn(results)
	if err != nil {
		return errorResponse(wire.CodeInternal, fmt.Sprintf("%s: merge the partitions' results: %v", op, err))
	}
	return okResponse(merged, answers)
}

// respond answers m, if it asks for an answer, with out (package reply:
// in chunks to a requester that takes them), logging what could not be
// sent: its requester hears nothing and waits out its timeout.
func (n *Node) respond(m *nats.Msg, out []byte) { n.respondWith(m, out, nil) }

func (n *Node) respondWith(m *nats.Msg, out []byte, hdr nats.Header) {
	if err := reply.Respond(n.nc, m, out, hdr, server.TooLarge); err != nil {
		n.logf("answer %s: %v", m.Subject, err)
	}
}

// okResponse is a success envelope with result; its clock reading is the
// latest of the answers' and its next deadline the earliest.
func okResponse(result json.RawMessage, answers []wire.Response[json.RawMessage]) []byte {
	resp := wire.Response[json.RawMessage]{OK: true, Result: result, Events: []engine.Event{}, Now: time.Now()}
	if len(answers) > 0 {
		resp.Now = time.Time{}
	}
	for _, a := range answers {
		if a.Now.After(resp.Now) {
			resp.Now = a.Now
		}
		if a.NextDeadline != nil && (resp.NextDeadline == nil || a.NextDeadline.Before(*resp.NextDeadline)) {
			resp.NextDeadline = a.NextDeadline
		}
	}
	out, _ := json.Marshal(resp)
	return out
}

// errorResponse is an error envelope.
func errorResponse(c wire.Code, msg string) []byte {
	out, _ := json.Marshal(wire.Response[any]{Error: &wire.Error{Code: c, Message: msg}, Events: []engine.Event{}, Now: time.Now()})
	return out
}
