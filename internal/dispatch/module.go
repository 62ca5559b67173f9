// Package dispatch is the transport-independent half of flowtrack's wire
// contract (internal/wire, wasm/ABI.md): it decodes an operation's JSON
// request, runs it on an engine and encodes the JSON response envelope.
// The wasm module's exports (wasm/) and the NATS server (server/) both
// call it, so every transport answers the same request the same way.
package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// abiVersion is the version documented in ABI.md.
const abiVersion = wire.ABIVersion

// maxRequest bounds a request: larger ones are rejected before decoding.
const maxRequest = wire.MaxRequest

// Module is the engine behind the operations. Calls must be serialised by
// the caller (a wasm instance is single-threaded; the server holds a lock). The engine keeps an event log
// that each call drains into its response: the loops write it directly, so
// no observer goroutine sits between the engine and the response.
type Module struct {
	clock clock.Clock
	eng   *engine.Engine
	// settings are the engine options configure has set (see
	// opConfigure); the engine is rebuilt with them while it is still
	// empty.
	settings engineSettings
	// events is whether responses carry events (configure; default on).
	events bool
	// choices is whether tokens stop at gateways for a choice
	// (configure gatewayChoices; default off).
	choices bool
	// used is set by the first operation that gives the engine state a
	// rebuild would lose (deploy, publish_message); after it, engine
	// options can no longer change.
	used bool
	// served is set by NewServed: the engine is the caller's (real clock,
	// store), so restore, which would replace it, is refused.
	served bool
	// activated, when set (OnActivated), is told the jobs activate_jobs
	// hands out.
	activated func(jobType string, n int)
}

// OnActivated makes activate_jobs tell fn how many jobs of which type it
// handed out (the server's metrics count activations, which the event
// stream does not carry). Call it before the module answers anything;
// fn may run on several goroutines at once.
func (m *Module) OnActivated(fn func(jobType string, n int)) { m.activated = fn }

// engineSettings are the engine options the configure operation sets.
// The zero value is the engine's defaults.
type engineSettings struct {
	limits engine.Limits
}

// options returns the engine options of s.
func (s engineSettings) options() []engine.Option {
	return []engine.Option{engine.WithLimits(s.limits)}
}

// New returns a module on a fresh engine with a virtual clock at
// clock.Epoch and the event log on: the wasm module's.
func New() *Module {
	m := &Module{clock: clock.NewVirtual(clock.Epoch), events: true}
	if err := m.build(); err != nil {
		panic(err) // only invalid options fail, and the defaults are valid
	}
	return m
}

// NewServed returns a module over eng, an engine the caller built and
// closes (on any clock, with any store). Its responses carry no events
// until configure turns them on (the server publishes events as they
// happen instead); its engine options are fixed, and restore (which would
// replace the engine, or with instance add one from a document) is
// refused with UNSUPPORTED.
func NewServed(eng *engine.Engine, clk clock.Clock) *Module {
	eng.SetEventLog(false)
	return &Module{clock: clk, eng: eng, used: true, served: true}
}

// markUsed records that the engine holds state a rebuild would lose. It
// writes only the first time, so that on a served module (used from the
// start) the operations that call it write nothing and may run
// concurrently (Concurrent).
func (m *Module) markUsed() {
	if !m.used {
		m.used = true
	}
}

// Concurrent reports whether operation op may run on a served module
// (NewServed) at the same time as other such operations: it only calls
// the engine, which is safe for concurrent use, and writes nothing of the
// module. The others (deploy, configure, restore, checkpoint, call,
// advance, unknown names) must run alone.
func Concurrent(op string) bool {
	switch op {
	case "start", "publish_message", "broadcast_signal", "complete_job", "fail_job", "throw_error",
		"resolve_incident", "activate_ad_hoc", "cancel", "jobs", "instance", "tokens", "history", "incidents", "now",
		"activate_jobs", "update_job_retries", "set_variables", "scope_variables", "modify_instance", "choose_flows",
		"metrics", "definitions", "definition_xml", "evaluate_decision":
		return true
	}
	return false
}

// Operations returns the names of the operations, sorted.
func Operations() []string {
	ops := make([]string, 0, len(operations))
	for op := range operations {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

// build (re)creates the engine on the module's clock with its settings,
// the event log on as by default.
func (m *Module) build() error {
	eng, err := engine.New(append([]engine.Option{engine.WithClock(m.clock), engine.WithEventLog()}, m.settings.options()...)...)
	if err != nil {
		return err
	}
	if m.eng != nil {
		_ = m.eng.Close(context.Background()) // empty: nothing to cancel
	}
	m.eng = eng
	m.eng.SetGatewayChoices(m.choices)
	return nil
}

// response is the envelope the module answers with (wire.Response).
type response = wire.Response[any]

// callError is an error response's error object.
type callError = wire.Error

func badRequest(format string, args ...any) *callError {
	return &callError{Code: wire.CodeBadRequest, Message: fmt.Sprintf(format, args...)}
}

// toCallError maps engine errors to their stable ABI codes (wire.CodeOf).
func toCallError(err error) *callError {
	var ce *callError
	if errors.As(err, &ce) {
		return ce
	}
	var de *engine.DeployError
	if errors.As(err, &de) {
		return &callError{Code: wire.CodeDeployFailed, Message: de.Error(), ElementID: de.ElementID,
			ProcessID: de.ProcessID, Problems: de.Problems}
	}
	return &callError{Code: wire.CodeOf(err), Message: err.Error()}
}

// Call runs operation op on the JSON request req, settles the engine and
// returns the JSON response. It never panics.
func (m *Module) Call(op string, req []byte) []byte { return m.Respond(m.run(op, req)) }

// Respond completes resp with the call's events, the clock and the next
// deadline, and encodes it.
func (m *Module) Respond(resp response) []byte {
	resp.Events = m.eng.DrainEvents()
	if resp.Events == nil {
		resp.Events = []engine.Event{}
	}
	resp.Now = m.clock.Now()
	if due, ok := m.eng.NextDeadline(); ok {
		resp.NextDeadline = &due
	}
	out, err := encode(&resp)
	if err != nil {
		// A result JSON cannot carry: report it instead of losing the call.
		resp = response{Error: &callError{Code: wire.CodeInternal, Message: "encode response: " + err.Error()},
			Events: resp.Events, Now: resp.Now, NextDeadline: resp.NextDeadline}
		out, _ = encode(&resp)
	}
	return out
}

// encode writes the envelope r as encoding/json would (times in UTC), but
// without reflection for the usual parts: the events (most of a response)
// through wire.AppendEvent, the hot results through wire.AppendResult.
func encode(r *response) ([]byte, error) {
	buf := make([]byte, 0, 256+160*len(r.Events))
	buf = append(buf, `{"ok":`...)
	buf = strconv.AppendBool(buf, r.OK)
	buf = append(buf, `,"result":`...)
	buf, err := wire.AppendResult(buf, r.Result)
	if err != nil {
		return nil, err
	}
	if r.Error != nil {
		buf = append(buf, `,"error":`...)
		part, err := json.Marshal(r.Error)
		if err != nil {
			return nil, err
		}
		buf = append(buf, part...)
	}
	buf = append(buf, `,"events":[`...)
	for i := range r.Events {
		if i > 0 {
			buf = append(buf, ',')
		}
		if buf, err = wire.AppendEvent(buf, &r.Events[i]); err != nil {
			return nil, err
		}
	}
	buf = append(buf, `],"now":`...)
	buf = wire.AppendTime(buf, r.Now.UTC())
	buf = append(buf, `,"nextDeadline":`...)
	if r.NextDeadline == nil {
		buf = append(buf, "null"...)
	} else {
		buf = wire.AppendTime(buf, r.NextDeadline.UTC())
	}
	return append(buf, '}'), nil
}

// run dispatches op and turns panics into INTERNAL errors.
func (m *Module) run(op string, req []byte) (resp response) {
	defer func() {
		if p := recover(); p != nil {
			resp = response{Error: &callError{Code: wire.CodeInternal, Message: fmt.Sprintf("operation %s panicked: %v", op, p)}}
		}
	}()
	if len(req) > maxRequest {
		return response{Error: badRequest("%s: request of %d bytes exceeds the limit of %d bytes", op, len(req), maxRequest)}
	}
	fn, ok := operations[op]
	if !ok {
		return response{Error: &callError{Code: wire.CodeUnknownOperation, Message: fmt.Sprintf("unknown operation %q", op)}}
	}
	ctx := context.Background()
	result, err := fn(ctx, m, req)
	if serr := m.eng.Settle(ctx); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return response{Error: toCallError(err)}
	}
	return response{OK: true, Result: result}
}

// decode strictly decodes the JSON request data into v: unknown fields
// (names match exactly, case included), duplicate keys at any level,
// nesting past maxRequestDepth, wrong types and trailing data are
// BAD_REQUEST errors naming the field, the key or the limit. Empty data
// means {}.
func decode(op string, data []byte, v any) error { return decodeNested(op, data, v, maxRequestDepth) }

// decodeNested is decode with a nesting limit of its own, for a request
// that wraps another one (call).
func decodeNested(op string, data []byte, v any, limit int) error {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	s := scanRequest(data, limit)
	if err := s.depthError(op, limit); err != nil {
		return err
	}
	if err := decodeJSON(op, data, v); err != nil {
		return err
	}
	return s.keyError(op, v)
}

// decodeJSON decodes data into v with encoding/json, unknown fields
// rejected and numbers in untyped values kept as their JSON text, and maps
// its errors to BAD_REQUEST.
func decodeJSON(op string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	// Variables keep every digit: the engine turns each json.Number into
	// a float64 when one holds it exactly and keeps the text otherwise.
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te) && te.Field == "variables":
			return &callError{Code: wire.CodeBadVariables,
				Message: fmt.Sprintf("%s: field \"variables\" must be a JSON object of JSON values, got JSON %s", op, te.Value)}
		case errors.As(err, &te) && te.Field != "":
			return badRequest("%s: field %q: expected %s, got JSON %s", op, te.Field, te.Type, te.Value)
		case errors.As(err, &te):
			return badRequest("%s: request must be a JSON object, got JSON %s", op, te.Value)
		case errors.As(err, &se):
			return badRequest("%s: malformed JSON at byte %d: %v", op, se.Offset, err)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return badRequest("%s: %s", op, strings.TrimPrefix(err.Error(), "json: "))
		case errors.Is(err, io.ErrUnexpectedEOF):
			return badRequest("%s: malformed JSON: unexpected end of input", op)
		}
		return badRequest("%s: malformed JSON: %v", op, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("%s: malformed JSON: data after the request object", op)
	}
	return nil
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
