package engine

import (
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

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
