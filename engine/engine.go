// Package engine is flowtrack's public Go API: deploy BPMN 2.0 processes,
// start instances, complete the jobs they create, deliver events, and watch
// tokens move.
//
// An Engine runs each instance as one loop goroutine (the single writer of
// the instance's state) plus one goroutine per token. Calls return once
// their effect is taken by the instance; Settle waits until nothing can
// move without outside input, which is how tests, simulators and the
// WebAssembly module make execution deterministic.
//
//	e, _ := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
//	defer e.Close(ctx)
//	e.Deploy("order.bpmn", xml)
//	inst, _ := e.Start(ctx, "order", map[string]any{"amount": 120})
//	e.Settle(ctx)
//	for _, job := range e.Jobs(engine.JobFilter{Type: "check-order"}) {
//		e.CompleteJob(ctx, job.Key, map[string]any{"ok": true})
//	}
//
// # Observers
//
// An observer is a function that receives event records (Engine.Subscribe;
// host.Engine.Subscribe and the SDK's engine.on follow the same contract):
//
//   - Order: an observer receives each instance's records in the order
//     they were written (Seq 1, 2, 3...), none missing; records of
//     different instances may interleave. Every observer sees the same
//     order, and each is independent of the others.
//   - Goroutine: an observer is never called concurrently with itself. Here
//     each observer runs on a goroutine of its own, never on the caller's
//     or an instance's, so a slow observer delays no instance; Settle
//     waits until every observer has returned from every record it was
//     given. (The Go host runs observers on the goroutine of a call that
//     produced records, after the call; the SDK runs listeners on the
//     JavaScript thread, before the call's promise resolves.)
//   - Calls: an observer may call the engine from its callback: give
//     commands (with a store too: each returns once committed, even while
//     AdvanceTo runs), read state, and Settle. Settle from an observer
//     waits for everything but the records of observers themselves
//     waiting in Settle, the caller's included (they wait for it to
//     return), so it sees its own commands take effect; an outside Settle
//     still waits for every observer to return. Advance, AdvanceTo and
//     Close wait for every observer, the caller included, so from an
//     observer they return ErrCalledFromObserver at once and do nothing.
//     An observer must not call its own unsubscribe function. (The Go
//     host and the SDK allow every call: their Settle and advance wait
//     for no observer.)
//   - Panic: a panic in an observer (an exception in an SDK listener) is
//     recovered; that observer loses that record and gets the next ones as
//     usual; the engine and the other observers are not affected. The
//     failure goes to the error handler (WithErrorHandler; the SDK's
//     onError) as an *ObserverPanicError (the SDK's ObserverError) naming
//     the record and the panic value. The default handler logs it.
//
// Natively, an observer that falls more than WithObserverBacklog records
// behind is dropped (see Subscribe). The Go host and the SDK deliver
// records on the goroutine or thread of the calls that produced them, so
// they hold no backlog and drop no observer.
package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// Engine deploys processes and runs their instances. All methods are safe
// for concurrent use.
type Engine struct {
	rt   *runtime.Engine
	expr expr.Options
	cfg  config
	dur  *durability // nil without WithStore
}

// New returns an engine configured by opts. With WithStore and a store
// that holds state, it resumes that state (see WithStore).
//
// # Errors
//
// An error naming the option for a bad option; with a store, the store's
// error reading its state, or one wrapping ErrBadState for state that
// does not restore.
func New(opts ...Option) (*Engine, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.store == nil {
		return newEngine(opts)
	}
	st, err := cfg.store.Load(context.Background())
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if st.Engine == nil {
		e, err := newEngine(opts)
		if err != nil {
			return nil, err
		}
		if err := e.attachFresh(); err != nil {
			return nil, err
		}
		return e, nil
	}
	state, records, err := documentOf(st)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	e, err := restore(state, opts)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if !closedCleanly(st.Engine) {
		e.rt.SkipKeys(storeKeyGap)
	}
	e.attach(cfg.store, records, len(st.Deployments))
	// The key counter (moved, or no longer marked closed) is stored before
	// a command can take a key, so that an engine opened again after a
	// crash skips past the keys this one hands out.
	if err := e.dur.await(context.Background()); err != nil {
		_ = e.Close(context.Background())
		return nil, fmt.Errorf("open store: %w", err)
	}
	return e, nil
}

// attachFresh attaches the empty store of the configuration and commits
// the engine's state to it.
func (e *Engine) attachFresh() error {
	e.rt.MarkAllDirty() // a restored engine's instances are new to the store
	e.attach(e.cfg.store, nil, 0)
	if err := e.dur.await(context.Background()); err != nil {
		_ = e.Close(context.Background())
		return fmt.Errorf("open store: %w", err)
	}
	return nil
}

// newEngine returns an engine configured by opts, leaving a store aside.
func newEngine(opts []Option) (*Engine, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.clock != nil {
		if err := clock.CheckRange(cfg.clock.Now()); err != nil {
			return nil, fmt.Errorf("WithClock: the clock reads a %w", err)
		}
	}
	if err := cfg.limits.Check(); err != nil {
		return nil, err
	}
	if cfg.backlog < 0 {
		return nil, fmt.Errorf("WithObserverBacklog(%d): must not be negative", cfg.backlog)
	}
	if r := cfg.resumption; r != 0 && r != ResumeGoroutines && r != ResumeDirect {
		return nil, fmt.Errorf("WithResumption(%d): not a Resumption", r)
	}
	if cfg.dehydrateAfter < 0 {
		return nil, fmt.Errorf("WithDehydration(%s): must not be negative", cfg.dehydrateAfter)
	}
	if cfg.partition < 0 || cfg.partition > MaxPartitions {
		return nil, fmt.Errorf("WithKeySpace(%d): a partition is 1 to %d (0: none)", cfg.partition, MaxPartitions)
	}
	l := cfg.limits
	rt := runtime.NewEngine(runtime.Options{
		Clock: cfg.clock, Strict: cfg.strict, RetainFinished: cfg.retainFinished, MaxSteps: l.MaxSteps,
		MaxStepsPerInput: l.MaxStepsPerInput, MaxTokensPerInput: l.MaxTokensPerInput, MaxRecordsPerInput: l.MaxRecordsPerInput,
		MaxTokens: l.MaxTokens, MaxStartsPerInput: l.MaxStartsPerInput, EventLog: cfg.eventLog, ObserverBacklog: cfg.backlog,
		Resumption: cfg.resumption, OnError: cfg.onError, Durable: cfg.store != nil,
		Dehydrate: cfg.dehydrate, DehydrateAfter: cfg.dehydrateAfter, Partition: cfg.partition,
		NoTimerSignalStarts: cfg.noTimerSignalStarts,
	})
	return &Engine{rt: rt, cfg: cfg, expr: expr.Options{
		Clock: rt.Clock(), MaxSteps: l.MaxEvalSteps, MaxBytes: l.MaxEvalBytes,
	}}, nil
}

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.rt.Clock() }

// Start creates an instance of the newest version of processID at its none
// start event, with vars as its variables (they must be JSON-compatible;
// numbers become float64). It returns as soon as the instance runs. With
// a store, an error wrapping ErrNotAcknowledged comes with the instance,
// which runs (WithStore).
func (e *Engine) Start(ctx context.Context, processID string, vars map[string]any) (*Instance, error) {
	return e.StartVersion(ctx, processID, 0, vars)
}

// StartVersion starts an instance of version (from 1; 0: the newest) of
// processID, as Start does. The instance runs on that version to its end,
// whatever is deployed later.
//
// # Errors
//
// As Start; ErrUnknownProcess also for a version never deployed, and
// ErrInvalidArgument for a negative version.
func (e *Engine) StartVersion(ctx context.Context, processID string, version int, vars map[string]any) (*Instance, error) {
	if version < 0 {
		return nil, invalid("start %s: version must be >= 0, got %d", processID, version)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if processID == "" {
		return nil, invalid("start: the process id is empty")
	}
	norm, err := normalize(vars)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", processID, err)
	}
	plan, err := e.rt.Version(processID, version)
	if err != nil {
		return nil, err
	}
	var inst *runtime.Instance
	err = e.durably(ctx, func() (err error) {
		inst, err = e.rt.Start(plan, norm)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotAcknowledged) {
		return nil, err
	}
	return e.instanceOf(inst), err // with ErrNotAcknowledged, the instance started (WithStore)
}

// Instance returns a live or recently finished instance by key.
func (e *Engine) Instance(key int64) (*Instance, bool) {
	inst, ok := e.rt.Instance(key)
	if !ok {
		return nil, false
	}
	return e.instanceOf(inst), true
}

// Instances returns the live instances, ordered by key.
func (e *Engine) Instances() []*Instance { return e.instancesOf(e.rt.Instances()) }

// Advance moves a virtual clock forward by d; see AdvanceTo.
func (e *Engine) Advance(ctx context.Context, d time.Duration) error {
	if d < 0 {
		return invalid("advance by negative duration %s", d)
	}
	return e.AdvanceTo(ctx, e.Now().Add(d))
}

// AdvanceTo moves a virtual clock to t. Timers due on the way fire in due
// order, and the engine settles after each due time, observers included,
// so a timer scheduled by an earlier firing inside the span fires too, and
// a command an observer gives on seeing a firing lands before the next
// firing. With a store, a commit may happen between two firings (an
// observer's command waits for one); it holds the engine as of the due
// time reached, and AdvanceTo returns once a commit holds all of it.
//
// # Errors
//
// ErrNotVirtual if the engine's clock is not a *clock.Virtual;
// ErrTimeOutOfRange for a t after clock.Max (nothing moves);
// ErrTooManyFirings; ErrClosed (with a store, Close may stop an advance
// between two firings: the error names the time reached, which Close's
// commit holds); ErrCalledFromObserver from an observer's callback
// (nothing moves); the context's error.
func (e *Engine) AdvanceTo(ctx context.Context, t time.Time) error {
	return e.durablyHeld(ctx, func(hold func() (func(), error)) error { return e.rt.AdvanceToHeld(ctx, t, hold) })
}

// NextDeadline returns when the earliest timer is due or a job's
// activation timeout or retry back-off ends (so the job can be activated
// again), and false when none is pending. A host that owns time advances
// to it; a host in real time wakes then and lets its workers activate.
func (e *Engine) NextDeadline() (time.Time, bool) { return e.rt.NextDeadline() }

// Incidents returns the open incidents of live instances, ordered by key.
// It reads the engine's incident index (kept by the instance loops as they
// open and resolve incidents), so it never waits for a busy instance.
//
// # Errors
//
// The context's error if ctx has already ended.
func (e *Engine) Incidents(ctx context.Context) ([]Incident, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.rt.Incidents(), nil
}

// ResolveIncident retries what an incident holds: a failed job becomes
// activatable again, any other element is executed again.
func (e *Engine) ResolveIncident(ctx context.Context, key int64) error {
	return e.durably(ctx, func() error { return e.rt.ResolveIncident(ctx, key) })
}

// Settle returns when nothing can move without outside input (a job
// result, a message, time), including the delivery of every record to
// observers. Called by an observer from its callback, it does not wait for
// the records of observers that are themselves in Settle, the caller's
// included, which wait for them to return (see "Observers" in the package
// doc).
func (e *Engine) Settle(ctx context.Context) error { return e.rt.Settle(ctx) }

// Subscribe calls fn with every record of every instance, in each
// instance's order, on a goroutine of its own, so a slow observer never
// blocks an instance. fn may call the engine, Settle included, except
// Advance, AdvanceTo and Close, which return ErrCalledFromObserver from
// it (they wait for every observer to return); it must not call the
// returned unsubscribe function, which waits for fn's last return. A panic
// in fn is recovered and reported to the error handler (WithErrorHandler);
// fn keeps getting records. The package doc ("Observers") states the
// contract every host follows.
//
// Settle waits until every observer has returned from every record it was
// given. An observer that falls more than the backlog limit behind
// (WithObserverBacklog) is dropped: it gets no more records, what it had
// waiting is discarded and no longer holds Settle, and unsubscribe returns
// ErrObserverDropped.
func (e *Engine) Subscribe(fn func(Event)) (unsubscribe func() error) { return e.rt.Subscribe(fn) }

// Now returns the engine clock's reading.
func (e *Engine) Now() time.Time { return e.rt.Now() }

// SetEventLog turns the event log of WithEventLog on or off while the
// engine runs; turning it off discards what was not drained. A host turns
// it off while nobody listens, so that records are neither kept nor
// encoded for nothing.
func (e *Engine) SetEventLog(on bool) { e.rt.SetEventLog(on) }

// DrainEvents returns the records written since the last call, each
// instance's in its own order, and empties the log. It returns nil while
// the log is off (see WithEventLog and SetEventLog). Call it after Settle
// to get everything a call caused.
func (e *Engine) DrainEvents() []Event { return e.rt.DrainEvents() }

// Stats returns what the engine holds open right now (for monitoring, and
// for checking that nothing leaks).
func (e *Engine) Stats() Stats { return e.rt.Stats() }

// Metrics returns what an operator reads of the engine: Stats (what is
// open now), open jobs by type and the one waiting longest, and per process
// the instances active and ended in each state, with the mean and longest
// start-to-end time of the completed ones on the engine clock. Stats stays
// "what is open" so that an engine with nothing open has zero Stats; the
// counts of ended instances are here, from when the engine was created or
// restored.
func (e *Engine) Metrics() Metrics { return e.rt.Metrics() }

// Close cancels every live instance and waits until all goroutines the
// engine started have ended. Calls after Close fail with ErrClosed (see
// there for which). Close is idempotent.
//
// With a store (WithStore), Close first commits what changed without a
// command; the instances it then cancels stay live in the store, and the
// next engine opened on it resumes them.
//
// Close waits for every observer to return, so an observer's callback
// cannot close the engine: it gets ErrCalledFromObserver, and the engine
// stays open.
func (e *Engine) Close(ctx context.Context) error {
	if err := e.rt.RefuseObserver("close"); err != nil {
		return err // before the store's last commit: the engine stays open
	}
	var err error
	if e.dur != nil {
		err = e.dur.close()
	}
	return errors.Join(err, e.rt.Close(ctx))
}
