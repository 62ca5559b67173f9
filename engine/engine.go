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
//     JavaScript thread, before the call's promise resolves.) An observer
//     may call the engine.
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
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/bpmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/dmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// Sentinel errors, for errors.Is.
var (
	// ErrUnknownProcess is returned by Start for a process id never deployed.
	ErrUnknownProcess = runtime.ErrUnknownProcess
	// ErrNoNoneStart is returned by Start for a process that only events
	// can start.
	ErrNoNoneStart = runtime.ErrNoNoneStart
	// ErrUnknownJob is returned by the job calls for a key that names no
	// activatable job (never created, already completed, or cancelled).
	ErrUnknownJob = runtime.ErrUnknownJob
	// ErrUnknownIncident is returned by ResolveIncident for a key that
	// names no open incident.
	ErrUnknownIncident = runtime.ErrUnknownIncident
	// ErrInstanceEnded is returned by calls on an instance that has ended.
	ErrInstanceEnded = runtime.ErrInstanceEnded
	// ErrClosed is returned by every call that takes input or waits (Deploy,
	// Start, the job calls, PublishMessage, BroadcastSignal, Advance,
	// AdvanceTo, ResolveIncident, Settle) once Close has begun; the input
	// is not taken. Instance calls report ErrInstanceEnded, since Close
	// ended every instance.
	ErrClosed = runtime.ErrClosed
	// ErrNotVirtual is returned by Advance and AdvanceTo when the engine's
	// clock is not a *clock.Virtual.
	ErrNotVirtual = runtime.ErrNotVirtual
	// ErrBadVariables is returned when variables are not JSON-compatible
	// or nest deeper than MaxVariableDepth.
	ErrBadVariables = runtime.ErrBadVariables
	// ErrStaleActivation is returned by CompleteJob, FailJob and
	// ThrowError given a JobActivation the job no longer has: it timed out
	// and was activated again, or a failure ended it.
	ErrStaleActivation = runtime.ErrStaleActivation
	// ErrUnknownScope is returned by SetVariables and ScopeVariables for a
	// scope token that names no open variable scope of the instance.
	ErrUnknownScope = runtime.ErrUnknownScope
	// ErrBadModification is returned by ModifyInstance for a change the
	// instance cannot apply (an unknown element or token, an element that
	// cannot be activated, no open scope for it); nothing is applied.
	ErrBadModification = runtime.ErrBadModification
	// ErrBadChoice is returned by ChooseFlows for a token that waits for
	// no choice, or flows its gateway cannot take; nothing changes.
	ErrBadChoice = runtime.ErrBadChoice
	// ErrTimeOutOfRange is wrapped by the calls that reject an instant the
	// engine cannot represent (outside [clock.Min, clock.Max]): New for a
	// clock that reads one, Advance and AdvanceTo, PublishMessage for a TTL
	// that ends after clock.Max. A timer whose firing falls outside the
	// range opens an incident naming the time and the limit.
	ErrTimeOutOfRange = clock.ErrOutOfRange
	// ErrUnknownInstance is returned for an instance key that names no
	// live or recently finished instance (by hosts, whose calls take keys;
	// Engine.Instance reports it as false).
	ErrUnknownInstance = runtime.ErrUnknownInstance
	// ErrInvalidArgument is wrapped by every error of a call given an
	// argument it cannot take (an empty message or signal name, negative
	// retries, an empty error code, a negative duration or TTL). Bad
	// variables are ErrBadVariables instead. It is the BAD_REQUEST code of
	// the WebAssembly module and the SDK.
	ErrInvalidArgument = errors.New("invalid argument")
)

// Plain data types of the event stream and the jobs API. They are copies:
// changing one never changes the engine.
type (
	// Event is one record of an instance's ordered event stream.
	Event = runtime.Event
	// EventType names what an Event records.
	EventType = runtime.EventType
	// Token is where one path of an instance is and why it waits.
	Token = runtime.Token
	// WaitReason says why a token waits.
	WaitReason = runtime.WaitReason
	// Job is a unit of work the engine waits on.
	Job = runtime.Job
	// JobFilter selects jobs; zero fields match anything.
	JobFilter = runtime.JobFilter
	// Incident is a problem holding a token until resolved.
	Incident = runtime.Incident
	// Activation starts a token before an element (ModifyInstance).
	Activation = runtime.Activation
	// Modification is a set of changes to one instance (ModifyInstance).
	Modification = runtime.Modification
	// Choice is what the conditions of the gateway a token waits at say
	// (Token.Choice, with gateway choices on).
	Choice = runtime.Choice
	// Definition is one deployed version of a process (Definitions).
	Definition = runtime.Definition
	// Metrics is what an operator reads of an engine (Engine.Metrics).
	Metrics = runtime.Metrics
	// JobAge names a job and how long it has waited.
	JobAge = runtime.JobAge
	// ProcessMetrics counts one process's instances by state, with the
	// latency of the completed ones.
	ProcessMetrics = runtime.ProcessMetrics
	// State is an instance's lifecycle state.
	State = runtime.State
	// Stats counts what an engine holds open: live instances, activatable
	// jobs, open incidents, subscriptions and timers.
	Stats = runtime.Stats
)

// Wait reasons of a token (Token.Waiting). A token that is moving has none.
const (
	WaitJob      = runtime.WaitJob
	WaitMessage  = runtime.WaitMessage
	WaitSignal   = runtime.WaitSignal
	WaitTimer    = runtime.WaitTimer
	WaitEvent    = runtime.WaitEvent // any arm of an event-based gateway
	WaitJoin     = runtime.WaitJoin
	WaitIncident = runtime.WaitIncident
	WaitScope    = runtime.WaitScope  // an activity waiting for its inner tokens
	WaitCall     = runtime.WaitCall   // a call activity waiting for the instance it started
	WaitChoice   = runtime.WaitChoice // a gateway, before it routes, waiting for ChooseFlows
)

// Instance states.
const (
	Active     = runtime.Active
	Completed  = runtime.Completed
	Terminated = runtime.Terminated
	Failed     = runtime.Failed
)

// Event types.
const (
	InstanceStarted    = runtime.InstanceStarted
	InstanceCompleted  = runtime.InstanceCompleted
	InstanceTerminated = runtime.InstanceTerminated
	InstanceFailed     = runtime.InstanceFailed
	ElementEntered     = runtime.ElementEntered
	ElementLeft        = runtime.ElementLeft
	ElementTerminated  = runtime.ElementTerminated
	FlowTaken          = runtime.FlowTaken
	TokenMerged        = runtime.TokenMerged
	JobCreated         = runtime.JobCreated
	JobCompleted       = runtime.JobCompleted
	JobFailed          = runtime.JobFailed
	JobCanceled        = runtime.JobCanceled
	IncidentCreated    = runtime.IncidentCreated
	IncidentResolved   = runtime.IncidentResolved
	ErrorThrown        = runtime.ErrorThrown
	MessageSubscribed  = runtime.MessageSubscribed
	MessageCorrelated  = runtime.MessageCorrelated
	MessagePublished   = runtime.MessagePublished
	SignalSubscribed   = runtime.SignalSubscribed
	SignalReceived     = runtime.SignalReceived
	SignalBroadcast    = runtime.SignalBroadcast
	TimerScheduled     = runtime.TimerScheduled
	TimerFired         = runtime.TimerFired
	ErrorCaught        = runtime.ErrorCaught
	EscalationThrown   = runtime.EscalationThrown
	EscalationCaught   = runtime.EscalationCaught
	CallStarted        = runtime.CallStarted
	ConditionSatisfied = runtime.ConditionSatisfied
	VariablesUpdated   = runtime.VariablesUpdated
	FlowsChosen        = runtime.FlowsChosen
	DecisionEvaluated  = runtime.DecisionEvaluated
)

// eventTypes are the event types the engine writes.
var eventTypes = [...]EventType{
	InstanceStarted, InstanceCompleted, InstanceTerminated, InstanceFailed, ElementEntered, ElementLeft,
	ElementTerminated, FlowTaken, TokenMerged, JobCreated, JobCompleted, JobFailed, JobCanceled,
	IncidentCreated, IncidentResolved, MessageSubscribed, MessageCorrelated, SignalSubscribed,
	SignalReceived, TimerScheduled, TimerFired, ErrorThrown, EscalationThrown, MessagePublished,
	SignalBroadcast, ErrorCaught, EscalationCaught, CallStarted, ConditionSatisfied, VariablesUpdated,
	FlowsChosen,
	DecisionEvaluated,
}

// EventTypes returns every event type the engine writes, for hosts and
// tools that list or check them.
func EventTypes() []EventType { return append([]EventType(nil), eventTypes[:]...) }

// DeployError reports a model that cannot be deployed. It names the first
// problem; Problems lists them all, in document order. It unwraps to its
// problems, so errors.As finds a *Problem and errors.Is matches a rule:
//
//	var de *engine.DeployError
//	if errors.As(err, &de) {
//		for _, p := range de.Problems {
//			fmt.Printf("%s:%d:%d: %s: %s: %s\n", de.File, p.Line, p.Column, p.RuleID, p.ElementID, p.Rule)
//		}
//	}
//	if errors.Is(err, &engine.Problem{RuleID: "EXT.127"}) { /* a message reference is missing */ }
type DeployError struct {
	// File is the name given to Deploy.
	File string
	// ProcessID and ElementID locate the first problem (either may be
	// empty for document-level problems such as malformed XML).
	ProcessID string
	ElementID string
	// Rule says what is wrong.
	Rule string
	// Problems lists every problem found, the first one included, sorted
	// by position in the document and without duplicates.
	Problems []Problem
}

// Problem is one rule a model breaks, or, among Deployment.Warnings, one
// thing that deploys but is probably not what the modeller meant.
type Problem struct {
	// RuleID names the rule: "EXT.nnn" and "REF.nn" are the extended
	// constraints and reference rules of the BPMN 2.0 constraint
	// catalogue (as BPMNspector numbers them), "XSD.<what>" a rule of the
	// BPMN schema, "FT.<what>" a rule of flowtrack's own.
	// engine/internal/model/RULES.md lists them.
	RuleID    string `json:"ruleId,omitempty"`
	ProcessID string `json:"processId,omitempty"`
	ElementID string `json:"elementId,omitempty"`
	// Line and Column locate the offending element in the document
	// (1-based; Column counts bytes); zero when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Rule says, in one line, what is wrong and how to fix it.
	Rule string `json:"rule"`
}

// Error renders the problem as "line:col: rule-id: element: message",
// leaving out the parts that are unknown.
func (p *Problem) Error() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "%d:%d: ", p.Line, p.Column)
	}
	if p.RuleID != "" {
		b.WriteString(p.RuleID + ": ")
	}
	if p.ElementID != "" {
		b.WriteString(p.ElementID + ": ")
	}
	b.WriteString(p.Rule)
	return b.String()
}

// Is reports whether target is a *Problem naming the same rule, so that
// errors.Is(err, &Problem{RuleID: "REF.93"}) asks whether a deploy error
// contains a problem of that rule.
func (p *Problem) Is(target error) bool {
	t, ok := target.(*Problem)
	return ok && t.RuleID != "" && t.RuleID == p.RuleID
}

// Error names the file, the first problem and how many more there are.
func (e *DeployError) Error() string {
	msg := fmt.Sprintf("deploy %s: ", e.File)
	if e.ElementID != "" {
		msg += fmt.Sprintf("element %s: ", e.ElementID)
	}
	msg += e.Rule
	if n := len(e.Problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// Unwrap returns the problems, each a *Problem.
func (e *DeployError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i := range e.Problems {
		errs[i] = &e.Problems[i]
	}
	return errs
}

// invalidArgument is an error of a call given an argument it cannot take:
// its message is a plain sentence, and errors.Is matches ErrInvalidArgument.
type invalidArgument struct{ msg string }

func (e *invalidArgument) Error() string        { return e.msg }
func (e *invalidArgument) Is(target error) bool { return target == ErrInvalidArgument }

// invalid returns an invalidArgument error with a formatted message.
func invalid(format string, args ...any) error {
	return &invalidArgument{fmt.Sprintf(format, args...)}
}

// config is what the options set; its zero value is the default.
type config struct {
	clock          clock.Clock
	strict         bool
	retainFinished int
	maxSteps       int
	budgets        budgets
	eventLog       bool
	maxEvalSteps   int64
	maxEvalBytes   int64
	backlog        int
	resumption     Resumption
	onError        func(error)
	store          Store
	dehydrate      bool
	dehydrateAfter time.Duration
	partition      int
	// noTimerSignalStarts: WithoutTimerAndSignalStarts.
	noTimerSignalStarts bool
}

// budgets are what the WithMax...PerInput and WithMaxTokens options set.
type budgets struct {
	stepsPerInput, tokensPerInput, recordsPerInput, tokens, startsPerInput int
}

// Option configures an Engine at New.
type Option func(*config)

// WithClock sets the engine's clock. The default is the real clock; use a
// *clock.Virtual for deterministic timers (tests, simulators).
func WithClock(c clock.Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithStrict makes Deploy reject job tasks that name no job type. By
// default such a task becomes a job typed by its element kind
// ("serviceTask", "userTask"), so a simulator or generic host can complete
// it.
func WithStrict() Option { return func(cfg *config) { cfg.strict = true } }

// WithRetainFinished sets how many finished instances stay findable through
// Engine.Instance (default 1024; negative keeps none). Finished instances
// are never scanned, so this bounds memory, not speed.
func WithRetainFinished(n int) Option { return func(cfg *config) { cfg.retainFinished = n } }

// WithMaxSteps sets how many elements a token may pass without waiting
// before the engine opens an incident at the element it reached (default
// 10,000).
func WithMaxSteps(n int) Option { return func(cfg *config) { cfg.maxSteps = n } }

// Budgets bound the work one outside input (a start, a job completion or
// error, a message, a signal, a timer firing, a command) can make an
// instance do, so that a model whose handlers rethrow what they catch,
// whose cycles fork, or which starts itself cannot take the engine's time
// and memory. An instance's work counts from the moment no token of it is
// moving until none is again. When a budget is exceeded, the instance is
// held: one incident names the budget, the element and the figure, and
// every token stops at its next element, so the engine settles. Resolving
// the incident grants a fresh budget and lets the tokens go on;
// cancelling the instance ends it. Zero keeps a default; New rejects
// negative values.

// WithMaxStepsPerInput sets how many elements the tokens of one instance
// may pass, together, for one input (default 100,000).
func WithMaxStepsPerInput(n int) Option { return func(cfg *config) { cfg.budgets.stepsPerInput = n } }

// WithMaxTokensPerInput sets how many tokens one instance may create for
// one input (default 10,000).
func WithMaxTokensPerInput(n int) Option { return func(cfg *config) { cfg.budgets.tokensPerInput = n } }

// WithMaxRecordsPerInput sets how many history records one instance may
// write for one input (default 500,000).
func WithMaxRecordsPerInput(n int) Option {
	return func(cfg *config) { cfg.budgets.recordsPerInput = n }
}

// WithMaxTokens sets how many tokens may be alive in one instance at once
// (default 10,000).
func WithMaxTokens(n int) Option { return func(cfg *config) { cfg.budgets.tokens = n } }

// WithMaxStartsPerInput sets how many instances one input may start,
// counting those started by messages and signals thrown and by call
// activities in the instances it started, and in theirs (default 1,000).
// The throw or call activity that would exceed it holds its token with an
// incident; a PublishMessage or BroadcastSignal whose start events alone
// would exceed it fails and publishes nothing.
func WithMaxStartsPerInput(n int) Option { return func(cfg *config) { cfg.budgets.startsPerInput = n } }

// WithMaxEvalSteps sets how much work one evaluation of an expression may
// do (default expr.DefaultMaxSteps, 1,000,000): every operator or function
// applied, loop iteration, list or context entry built, and entry or 64
// bytes of text a function reads is a step. An evaluation that exceeds it
// fails like any expression error (an incident, or an error for the call
// that triggered it) naming the budget and its figure, so no expression can
// hold an instance, or a WebAssembly module, for long: the default takes
// well under a second natively.
func WithMaxEvalSteps(n int64) Option { return func(cfg *config) { cfg.maxEvalSteps = n } }

// WithMaxEvalBytes sets how much one evaluation of an expression may
// allocate (default expr.DefaultMaxBytes, 16 MiB): the text of every
// string and 16 bytes per entry of every list and context it makes. It
// also bounds the size of the variable a mapping sets, counted as a tree
// (a value shared in several places counts in each). Exceeding it fails
// like any expression error, naming the budget and its figure.
func WithMaxEvalBytes(n int64) Option { return func(cfg *config) { cfg.maxEvalBytes = n } }

// WithEventLog makes the engine keep every record of every instance until
// DrainEvents takes them. The loops write the log themselves, with no
// observer goroutine in between, so a host that returns each call's records
// (the WebAssembly module) gets them cheaply and in order. Off by default:
// the log grows until drained.
func WithEventLog() Option { return func(cfg *config) { cfg.eventLog = true } }

// WithObserverBacklog sets how many records an observer (Subscribe) may
// have waiting before the engine drops it (default 65,536). The engine
// never blocks on an observer: one that falls further behind, for example
// because its function never returns, is dropped instead, and its
// unsubscribe function reports ErrObserverDropped.
func WithObserverBacklog(n int) Option { return func(cfg *config) { cfg.backlog = n } }

// WithErrorHandler sets the function that receives the errors no caller is
// there to get: a panic in an observer, as an *ObserverPanicError (see
// "Observers" in the package doc). It is called on the observer's
// goroutine and must not panic itself. The default logs the error with
// the standard log package, as net/http does with a handler's panic.
func WithErrorHandler(fn func(error)) Option { return func(cfg *config) { cfg.onError = fn } }

// ObserverPanicError is what the error handler (WithErrorHandler) receives
// for an observer that panicked: the record it was handling (Event), the
// panic value (Value; Unwrap returns it if it is an error) and the
// observer's stack (Stack).
type ObserverPanicError = runtime.ObserverPanicError

// Resumption says who runs an engine's tokens. A token's position is a
// continuation, data the engine resumes when the token may go on; either
// way an instance runs one token at a time, and every history is the same
// (RATIONALE.md, "Why are tokens continuations?").
type Resumption = runtime.Resumption

const (
	// ResumeGoroutines runs each token on a goroutine of its own, which
	// blocks on a channel while the token waits. The native default.
	ResumeGoroutines Resumption = runtime.ResumeGoroutines
	// ResumeDirect has each instance resume its tokens itself, with no
	// goroutine per token: cheaper where goroutine switches are dear. The
	// default of the WebAssembly build.
	ResumeDirect Resumption = runtime.ResumeDirect
)

// WithResumption sets who runs the engine's tokens (default
// ResumeGoroutines natively, ResumeDirect in the WebAssembly build).
func WithResumption(r Resumption) Option { return func(cfg *config) { cfg.resumption = r } }

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
	b := cfg.budgets
	for _, o := range []struct {
		name string
		v    int
	}{
		{"WithMaxSteps", cfg.maxSteps}, {"WithMaxStepsPerInput", b.stepsPerInput}, {"WithMaxTokensPerInput", b.tokensPerInput},
		{"WithMaxRecordsPerInput", b.recordsPerInput}, {"WithMaxTokens", b.tokens}, {"WithMaxStartsPerInput", b.startsPerInput},
		{"WithObserverBacklog", cfg.backlog},
	} {
		if o.v < 0 {
			return nil, fmt.Errorf("%s(%d): must not be negative", o.name, o.v)
		}
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
	if cfg.maxEvalSteps < 0 {
		return nil, fmt.Errorf("WithMaxEvalSteps(%d): must not be negative", cfg.maxEvalSteps)
	}
	if cfg.maxEvalBytes < 0 {
		return nil, fmt.Errorf("WithMaxEvalBytes(%d): must not be negative", cfg.maxEvalBytes)
	}
	rt := runtime.NewEngine(runtime.Options{
		Clock: cfg.clock, Strict: cfg.strict, RetainFinished: cfg.retainFinished, MaxSteps: cfg.maxSteps,
		MaxStepsPerInput: b.stepsPerInput, MaxTokensPerInput: b.tokensPerInput, MaxRecordsPerInput: b.recordsPerInput,
		MaxTokens: b.tokens, MaxStartsPerInput: b.startsPerInput, EventLog: cfg.eventLog, ObserverBacklog: cfg.backlog,
		Resumption: cfg.resumption, OnError: cfg.onError, Durable: cfg.store != nil,
		Dehydrate: cfg.dehydrate, DehydrateAfter: cfg.dehydrateAfter, Partition: cfg.partition,
		NoTimerSignalStarts: cfg.noTimerSignalStarts,
	})
	return &Engine{rt: rt, cfg: cfg, expr: expr.Options{
		Clock: rt.Clock(), MaxSteps: cfg.maxEvalSteps, MaxBytes: cfg.maxEvalBytes,
	}}, nil
}

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.rt.Clock() }

// Deployment describes what Deploy registered.
type Deployment struct {
	Name      string
	Processes []Process
	// Decisions are the decisions a DMN model deployed (DeployResources
	// deploys .dmn and .bpmn together).
	Decisions []Decision
	// Warnings lists what deploys but is probably not what the modeller
	// meant (a non-executable process beside executable ones, a flow
	// without condition beside a default flow), sorted by position.
	Warnings []Problem
}

// Process describes one deployed process version.
type Process struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	Key     int64  `json:"key"`
	Version int    `json:"version"`
}

// ruleInternal is the rule of a problem that is flowtrack's fault, not the
// model's.
const ruleInternal = "FT.internal"

// Deploy parses, validates and registers the executable processes of a
// BPMN 2.0 XML document. name is used in errors. An invalid document is
// rejected whole with a *DeployError listing every problem found;
// nothing of it is registered.
//
// # Errors
//
// A *DeployError for an invalid document (and, with rule FT.internal, for
// a defect of flowtrack met while deploying it, which is recovered rather
// than allowed to crash the program); ErrClosed after Close. With a
// store, an error wrapping ErrNotAcknowledged comes with the deployment,
// which is registered (WithStore).
func (e *Engine) Deploy(name string, bpmn []byte) (d *Deployment, err error) {
	err = e.durably(context.Background(), func() error {
		d, err = e.deploy(name, bpmn)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotAcknowledged) {
		return nil, err
	}
	return d, err // with ErrNotAcknowledged, what was deployed (WithStore)
}

// deploy is Deploy, leaving the store aside.
func (e *Engine) deploy(name string, bpmn []byte) (*Deployment, error) {
	return e.deployAs(name, bpmn, e.rt.NewDeployment())
}

// deployAs is deploy as part of deployment: a defect of flowtrack met
// while deploying is recovered into a *DeployError.
func (e *Engine) deployAs(name string, bpmn []byte, deployment int64) (d *Deployment, err error) {
	defer func() {
		if r := recover(); r != nil {
			d = nil
			p := Problem{RuleID: ruleInternal, Rule: fmt.Sprintf("internal error while deploying: %v (please report it with the model)", r)}
			err = &DeployError{File: name, Rule: p.Rule, Problems: []Problem{p}}
		}
	}()
	return e.deployIn(name, bpmn, deployment)
}

// deployIn deploys one document (BPMN or DMN, told apart by content) as
// part of deployment.
func (e *Engine) deployIn(name string, bpmn []byte, deployment int64) (d *Deployment, err error) {
	if dmnxml.IsDMN(bpmn) {
		return e.deployDMN(name, bpmn, deployment)
	}
	defs, err := bpmnxml.Import(name, bpmn)
	if defs == nil {
		return nil, deployError(name, nil, problemsOf(err))
	}
	imported := problemsOf(err)
	problems, warnings := model.Check(defs)
	opts := runtime.CompileOptions{Expr: e.expr, Strict: e.cfg.strict, Deployment: deployment}
	if len(imported) > 0 || len(problems) > 0 {
		// The document is refused, but the modeller hears about every
		// problem at once: compile what imported, for its problems only,
		// and say what its descriptive processes break too.
		return nil, deployError(name, defs, model.MergeStages(imported, problems, untypedConditions(defs, compileProblems(defs, opts)), defs.Descriptive))
	}
	plans, err := e.rt.Install(defs, opts)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		return nil, deployError(name, defs, untypedConditions(defs, problemsOf(err)))
	}
	if len(plans) == 0 {
		return nil, deployError(name, defs, append([]*model.Problem{noExecutable()}, defs.Descriptive...))
	}
	e.rt.Deployed(name, bpmn, plans, deployment)
	// What a process that is not deployed breaks refuses nothing that
	// runs: the modeller is told.
	d = &Deployment{Name: name, Warnings: publicProblems(model.SortProblems(append(warnings, defs.Descriptive...)))}
	for _, p := range plans {
		d.Processes = append(d.Processes, Process{ID: p.Process.ID, Name: p.Process.Name, Key: p.Key, Version: p.Version})
	}
	return d, nil
}

// compileProblems compiles every executable process of defs and returns
// the problems found, registering nothing. It runs on documents that
// earlier checks refused, so it tolerates what they reported (an element
// that failed to import is simply absent); a panic while compiling is
// flowtrack's defect, reported as such beside the model's problems.
func compileProblems(defs *model.Definitions, opts runtime.CompileOptions) (ps []*model.Problem) {
	executable := false
	for _, p := range defs.Processes {
		if p == nil || !p.Executable {
			continue
		}
		executable = true
		func() {
			defer func() {
				if r := recover(); r != nil {
					ps = append(ps, &model.Problem{RuleID: ruleInternal, ProcessID: p.ID,
						Rule: fmt.Sprintf("internal error while compiling: %v (please report it with the model)", r)})
				}
			}()
			if _, err := runtime.Compile(p, opts); err != nil {
				ps = append(ps, problemsOf(err)...)
			}
		}()
	}
	if !executable {
		ps = append(ps, noExecutable())
	}
	return ps
}

// untypedConditions gives the compilation problems of untyped conditions
// that do not compile the rule they break (model.Definitions.Untyped):
// EXT.012, or EXT.123 for a conditional event. The message is unchanged.
func untypedConditions(defs *model.Definitions, ps []*model.Problem) []*model.Problem {
	for _, p := range ps {
		if rule, ok := defs.Untyped[p.ElementID]; ok && p.RuleID == "FT.expression" {
			p.RuleID = rule
		}
	}
	return ps
}

// noExecutable is the problem of a document without executable process.
func noExecutable() *model.Problem {
	return &model.Problem{RuleID: "FT.executable", Rule: `no executable process: mark a process isExecutable="true"`}
}

// problemsOf flattens the problems inside err (joined with errors.Join);
// an error that is not a problem becomes an FT.internal one.
func problemsOf(err error) []*model.Problem {
	var ps []*model.Problem
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				walk(e)
			}
			return
		}
		var p *model.Problem
		if errors.As(err, &p) {
			ps = append(ps, p)
			return
		}
		ps = append(ps, &model.Problem{RuleID: ruleInternal, Rule: err.Error()})
	}
	walk(err)
	return ps
}

// publicProblems converts model problems to Problems.
func publicProblems(ps []*model.Problem) []Problem {
	if len(ps) == 0 {
		return nil
	}
	out := make([]Problem, len(ps))
	for i, p := range ps {
		out[i] = Problem{RuleID: p.RuleID, ProcessID: p.ProcessID, ElementID: p.ElementID,
			Line: p.Pos.Line, Column: p.Pos.Column, Rule: p.Rule}
	}
	return out
}

// deployError returns ps as a *DeployError, locating them in defs (nil
// when the document could not be read) and sorting them.
func deployError(file string, defs *model.Definitions, ps []*model.Problem) error {
	defs.Locate(ps)
	de := &DeployError{File: file, Problems: publicProblems(model.SortProblems(ps))}
	for i := range de.Problems {
		// The importer names the file; Error names it once, first.
		de.Problems[i].Rule = strings.TrimPrefix(de.Problems[i].Rule, file+": ")
	}
	first := de.Problems[0]
	de.ProcessID, de.ElementID, de.Rule = first.ProcessID, first.ElementID, first.Rule
	return de
}

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

// Jobs returns the activatable jobs matching f, ordered by key.
func (e *Engine) Jobs(f JobFilter) []Job { return e.rt.Jobs(f) }

// Job returns the activatable job with key, or false when there is none
// (completed, cancelled, held by an incident, or never created).
func (e *Engine) Job(key int64) (Job, bool) { return e.rt.Job(key) }

// CompleteJob completes a job; vars are merged into the process variables
// and the waiting token moves on. With JobActivation the activation must
// still be the job's (ErrStaleActivation).
func (e *Engine) CompleteJob(ctx context.Context, key int64, vars map[string]any, opts ...JobOption) error {
	norm, err := normalize(vars)
	if err != nil {
		return fmt.Errorf("complete job %d: %w", key, err)
	}
	return e.durably(ctx, func() error { return e.rt.CompleteJobAs(ctx, key, JobArgsOf(opts), norm) })
}

// FailJob reports a failed attempt at a job. With retries > 0 the job stays
// activatable, after the RetryBackoff option's back-off; with 0 an incident
// holds the token until ResolveIncident. With JobActivation the activation
// must still be the job's (ErrStaleActivation).
func (e *Engine) FailJob(ctx context.Context, key int64, retries int, message string, opts ...JobOption) error {
	if retries < 0 {
		return invalid("fail job %d: retries must be >= 0, got %d", key, retries)
	}
	a := JobArgsOf(opts)
	if a.Backoff < 0 {
		return invalid("fail job %d: retry back-off must be >= 0, got %s", key, a.Backoff)
	}
	return e.durably(ctx, func() error { return e.rt.FailJobAs(ctx, key, a, retries, message) })
}

// ThrowError raises the BPMN error code from a job's element. Without a
// boundary event or event sub-process that catches it, an incident holds
// the token. With JobActivation the activation must still be the job's
// (ErrStaleActivation).
func (e *Engine) ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any, opts ...JobOption) error {
	if code == "" {
		return invalid("throw error from job %d: the error code is empty", key)
	}
	norm, err := normalize(vars)
	if err != nil {
		return fmt.Errorf("throw error from job %d: %w", key, err)
	}
	return e.durably(ctx, func() error { return e.rt.ThrowErrorAs(ctx, key, JobArgsOf(opts), code, message, norm) })
}

// ActivateAdHoc activates inner elements of the active ad-hoc sub-process
// adHocID of an instance, as Zeebe's ad-hoc activation API does: each
// element named gets a token of its own there (a sequential ad-hoc
// sub-process runs them one after another, after what it runs already). An
// element may be activated again while it runs; the sub-process completes,
// as always, when nothing inside is active and its completion condition
// held.
//
// # Errors
//
// ErrUnknownInstance for a key that names no instance; ErrInstanceEnded
// once it has ended; an error matching ErrInvalidArgument when the
// instance has no active ad-hoc sub-process adHocID, runs it more than once
// (a multi-instance one), elementIDs is empty, or an id names something
// other than an inner element without incoming flows.
func (e *Engine) ActivateAdHoc(ctx context.Context, instanceKey int64, adHocID string, elementIDs []string) error {
	inst, ok := e.rt.Instance(instanceKey)
	if !ok {
		return fmt.Errorf("activate ad-hoc elements: instance %d: %w", instanceKey, ErrUnknownInstance)
	}
	err := e.durably(ctx, func() error { return inst.ActivateAdHoc(ctx, adHocID, elementIDs) })
	if ae := (*runtime.AdHocError)(nil); errors.As(err, &ae) {
		return invalid("activate ad-hoc elements: %s", ae)
	}
	return err
}

// Message is a message to publish.
type Message struct {
	// Name is the message name the subscriptions wait for.
	Name string `json:"name"`
	// CorrelationKey selects the subscriptions whose key equals it.
	CorrelationKey string `json:"correlationKey,omitempty"`
	// Variables are merged into the instance the message correlates to,
	// or become the variables of an instance it starts.
	Variables map[string]any `json:"variables,omitempty"`
	// TTL is how long, on the engine clock, a message nobody waits for yet
	// stays buffered for subscriptions opened later. Zero: not buffered.
	TTL time.Duration `json:"ttl,omitempty"`
	// MessageID, if set, makes a second publication with the same id fail
	// with ErrDuplicateMessage while the first is buffered.
	MessageID string `json:"messageId,omitempty"`
}

// ErrDuplicateMessage is returned by PublishMessage for a message whose
// MessageID matches a message still buffered.
var ErrDuplicateMessage = eventhub.ErrDuplicateMessage

// ErrTooManyFirings is returned by Advance and AdvanceTo when more timers
// fall due in the span than one call processes (runtime.MaxFiringsPerAdvance);
// the clock stops at the last firing and the call may be repeated.
var ErrTooManyFirings = runtime.ErrTooManyFirings

// PublishMessage correlates m to the subscriptions waiting for its name and
// correlation key (at most one per process definition, the oldest), starts
// instances of processes with a matching message start event (unless one
// started by the same key is still active), and with a TTL buffers it for
// subscriptions opened later.
func (e *Engine) PublishMessage(ctx context.Context, m Message) error {
	_, err := e.publishMessage(ctx, m)
	return err
}

// PublishMessageReached is PublishMessage that also returns the instances
// the message reached when it was published: those it was correlated to
// (at most one per process definition), then those it started. It is
// empty for a message nobody waited for, buffered or not; a buffered
// message that correlates later is not reported. The instances may still
// be handling the message when it returns (Instance.Wait, Engine.Settle).
// Zeebe's CorrelateMessage answers the same question with the process
// instance key.
//
// # Errors
//
// As PublishMessage: ErrInvalidArgument, ErrDuplicateMessage, ErrClosed;
// with a store, an error wrapping ErrNotAcknowledged comes with the
// instances reached, since the message was published (WithStore).
func (e *Engine) PublishMessageReached(ctx context.Context, m Message) ([]*Instance, error) {
	reached, err := e.publishMessage(ctx, m)
	if reached == nil {
		return nil, err
	}
	return e.instancesOf(reached), err
}

// publishMessage is PublishMessageReached with the runtime's instances,
// which PublishMessage does not wrap.
func (e *Engine) publishMessage(ctx context.Context, m Message) ([]*runtime.Instance, error) {
	if err := e.checkMessage(ctx, m); err != nil {
		return nil, err
	}
	norm, err := normalize(m.Variables)
	if err != nil {
		return nil, fmt.Errorf("publish message %q: %w", m.Name, err)
	}
	var reached []*runtime.Instance
	if err := e.durably(ctx, func() (err error) {
		reached, err = e.rt.PublishMessage(m.Name, m.CorrelationKey, norm, m.TTL, m.MessageID)
		return err
	}); err != nil {
		if errors.Is(err, ErrNotAcknowledged) {
			return reached, fmt.Errorf("publish message %q: %w", m.Name, err)
		}
		return nil, fmt.Errorf("publish message %q: %w", m.Name, err)
	}
	return reached, nil
}

// checkMessage refuses a message PublishMessage cannot publish.
func (e *Engine) checkMessage(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.Name == "" {
		return invalid("publish message: the name is empty")
	}
	if m.TTL < 0 {
		return invalid("publish message %q: negative TTL %s", m.Name, m.TTL)
	}
	if err := clock.CheckRange(e.Now().Add(m.TTL)); err != nil {
		return fmt.Errorf("publish message %q: TTL %s: %w", m.Name, m.TTL, err)
	}
	return nil
}

// BroadcastSignal delivers a signal to every instance waiting for it and
// starts instances of processes with a matching signal start event. A
// signal nobody catches is not an error; one whose start events would
// start more instances than WithMaxStartsPerInput allows fails and
// delivers nothing.
func (e *Engine) BroadcastSignal(ctx context.Context, name string, vars map[string]any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if name == "" {
		return invalid("broadcast signal: the name is empty")
	}
	norm, err := normalize(vars)
	if err != nil {
		return fmt.Errorf("broadcast signal %q: %w", name, err)
	}
	if err := e.durably(ctx, func() error { return e.rt.BroadcastSignal(name, norm) }); err != nil {
		return fmt.Errorf("broadcast signal %q: %w", name, err)
	}
	return nil
}

// Advance moves a virtual clock forward by d; see AdvanceTo.
func (e *Engine) Advance(ctx context.Context, d time.Duration) error {
	if d < 0 {
		return invalid("advance by negative duration %s", d)
	}
	return e.AdvanceTo(ctx, e.Now().Add(d))
}

// AdvanceTo moves a virtual clock to t. Timers due on the way fire in due
// order, and the engine settles after each due time, so a timer scheduled
// by an earlier firing inside the span fires too.
//
// # Errors
//
// ErrNotVirtual if the engine's clock is not a *clock.Virtual;
// ErrTimeOutOfRange for a t after clock.Max (nothing moves);
// ErrTooManyFirings; ErrClosed; the context's error.
func (e *Engine) AdvanceTo(ctx context.Context, t time.Time) error {
	return e.durably(ctx, func() error { return e.rt.AdvanceTo(ctx, t) })
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
// observers.
func (e *Engine) Settle(ctx context.Context) error { return e.rt.Settle(ctx) }

// Subscribe calls fn with every record of every instance, in each
// instance's order, on a goroutine of its own, so a slow observer never
// blocks an instance. fn may call the engine but must not call the
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

// ErrObserverDropped is returned by the unsubscribe function of an
// observer that fell more than the backlog limit behind (see Subscribe).
var ErrObserverDropped = runtime.ErrObserverDropped

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
func (e *Engine) Close(ctx context.Context) error {
	var err error
	if e.dur != nil {
		err = e.dur.close()
	}
	return errors.Join(err, e.rt.Close(ctx))
}
