package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/bpmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/dmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/model"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// StateVersion is the version of the state document Checkpoint writes.
// Restore reads every version up to it and refuses a newer one.
const StateVersion = runtime.StateVersion

// Checkpoint settles the engine and returns its state as a JSON document
// (engine/STATE.md): the deployments, the clock, the buffered messages,
// the timer start events, and every instance with its tokens, scopes,
// variables, joins, jobs, incidents, subscriptions and history. Restore
// turns it into an engine, on this host or any other, that continues
// exactly where this one stands.
//
// Checkpoint must not run concurrently with calls that give the engine
// input (Start, the job calls, PublishMessage, BroadcastSignal, Advance,
// ResolveIncident, Cancel): a document is one settled moment. Observers
// and the event log are the host's, and are not in it.
//
// # Errors
//
// ErrClosed; ErrNotSettled when input arrived meanwhile; the context's
// error.
func (e *Engine) Checkpoint(ctx context.Context) ([]byte, error) {
	doc, err := e.rt.Checkpoint(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// CheckpointInstance settles the engine and returns the state document of
// one live instance: the same format as Checkpoint, holding the
// deployments, the clock, and the instance with the whole call tree it
// belongs to (the instances that called it, up to the top one, and those
// they called). The engine's buffered messages, timer start events and
// finished instances are left out: Restore makes an engine that holds only
// that tree, going on where it stands (to move an instance from a
// simulator to a server, say). The concurrency rule of Checkpoint applies.
//
// # Errors
//
// ErrUnknownInstance; ErrClosed; ErrNotSettled when input arrived
// meanwhile; the context's error.
func (e *Engine) CheckpointInstance(ctx context.Context, key int64) ([]byte, error) {
	doc, err := e.rt.CheckpointInstance(ctx, key)
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// Restore returns a new engine in the state a Checkpoint document
// describes, configured by opts. Its instances go on from where their
// tokens were parked: nothing in their history happens again (a job
// completed before the checkpoint is not created again, a timer that
// fired does not fire again), and for the same inputs they write the same
// history the original engine would have.
//
// Without WithClock the engine gets a virtual clock reading the
// document's time if the document was written on one, else the real
// clock; on the real clock, timers that fell due meanwhile fire at once,
// in due order. A virtual clock given with WithClock that reads earlier
// than the document is set to the document's time. Options are not part of the document: pass the ones the
// original engine had (budgets, WithStrict, WithRetainFinished) for it to
// behave the same.
//
// # Errors
//
// An error wrapping ErrBadState for a document that is not a state
// document, has a newer version, or does not hold together (a deployment
// that no longer deploys, a token at an element the process lacks, ...);
// nothing is left running then. The errors of New for bad options. With
// WithStore, ErrStoreNotEmpty for a store that holds state already (New
// resumes that), or the store's error: the restored state is committed to
// the store before Restore returns.
func Restore(state []byte, opts ...Option) (*Engine, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.store != nil {
		st, err := cfg.store.Load(context.Background())
		if err != nil {
			return nil, fmt.Errorf("restore: store: %w", err)
		}
		if st.Engine != nil {
			return nil, fmt.Errorf("restore: %w", ErrStoreNotEmpty)
		}
	}
	e, err := restore(state, opts)
	if err != nil {
		return nil, err
	}
	if cfg.store != nil {
		if err := e.attachFresh(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// decodeState reads a state document strictly: a newer version, an
// unknown field or a clock out of range is refused with ErrBadState.
func decodeState(state []byte) (*runtime.Document, error) {
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(state, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if head.Format != runtime.StateFormat {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrBadState, head.Format, runtime.StateFormat)
	}
	if head.Version > StateVersion {
		return nil, fmt.Errorf("%w: version %d is newer than this engine reads (%d): restore it with a newer flowtrack", ErrBadState, head.Version, StateVersion)
	}
	var doc runtime.Document
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.DisallowUnknownFields()
	dec.UseNumber() // every digit of a decimal variable (runtime.Document.exactNumbers)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if err := clock.CheckRange(doc.Clock.Now); err != nil {
		return nil, fmt.Errorf("%w: clock: %v", ErrBadState, err)
	}
	return &doc, nil
}

// restore is Restore leaving a store aside.
func restore(state []byte, opts []Option) (*Engine, error) {
	doc, err := decodeState(state)
	if err != nil {
		return nil, err
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	switch c := cfg.clock.(type) {
	case nil:
		var c2 clock.Clock = clock.Real{}
		if doc.Clock.Virtual {
			c2 = clock.NewVirtual(doc.Clock.Now)
		}
		opts = append(opts[:len(opts):len(opts)], WithClock(c2))
	case *clock.Virtual:
		if c.Now().Before(doc.Clock.Now) {
			if err := c.Set(doc.Clock.Now); err != nil {
				return nil, err
			}
		}
	}
	e, err := newEngine(opts)
	if err != nil {
		return nil, err
	}
	copts := runtime.CompileOptions{Expr: e.expr, Strict: e.cfg.strict}
	if err := e.rt.Restore(doc, parseDeployment, copts); err != nil {
		_ = e.Close(context.Background())
		return nil, err
	}
	return e, nil
}

// parseDeployment reads a deployment's source as Deploy does, for
// Restore.
func parseDeployment(name string, source []byte) (*model.Definitions, error) {
	if dmnxml.IsDMN(source) {
		return parseDMN(name, source)
	}
	defs, err := bpmnxml.Import(name, source)
	if defs == nil {
		return nil, deployError(name, nil, problemsOf(err))
	}
	imported := problemsOf(err)
	if problems, _ := model.Check(defs); len(imported) > 0 || len(problems) > 0 {
		return nil, deployError(name, defs, model.MergeStages(imported, problems))
	}
	return defs, nil
}
