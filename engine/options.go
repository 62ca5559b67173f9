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
	limits         Limits
	eventLog       bool
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
