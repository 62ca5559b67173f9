package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
)

// Options configure a runtime Engine. The public engine package fills them
// from its functional options; the zero value is valid.
type Options struct {
	Clock clock.Clock
	// Strict rejects job tasks that name no job type at deploy.
	Strict bool
	// Durable keeps, for a store, the keys of the finished instances no
	// longer findable (CheckpointDirty).
	Durable bool
	// RetainFinished is how many finished instances stay findable by key.
	// Zero means DefaultRetainFinished; negative keeps none.
	RetainFinished int
	// MaxSteps bounds how many elements one token may pass without waiting
	// before the engine opens an incident. Zero means DefaultMaxSteps.
	MaxSteps int
	// The budgets of one outside input (budget.go); zero means the
	// default. MaxStepsPerInput, MaxTokensPerInput and MaxRecordsPerInput
	// bound the steps, the tokens created and the records written by an
	// instance between two idle points; MaxTokens bounds the tokens alive
	// in an instance at once; MaxStartsPerInput bounds the instances one
	// input starts, across every instance it reaches.
	MaxStepsPerInput   int
	MaxTokensPerInput  int
	MaxRecordsPerInput int
	MaxTokens          int
	MaxStartsPerInput  int
	// EventLog makes the engine keep every record of every instance, in
	// the order the loops wrote them, until DrainEvents takes them.
	EventLog bool
	// ObserverBacklog is how many records an observer may have waiting
	// before it is dropped. Zero means DefaultObserverBacklog.
	ObserverBacklog int
	// OnError receives the errors no caller is there to get: an
	// observer's panic, as an *ObserverPanicError. Nil means
	// LogError.
	OnError func(error)
	// Resumption says who runs tokens: a goroutine per token or the
	// instance loop itself (track.go). Zero means DefaultResumption.
	Resumption Resumption
	// Dehydrate turns dehydration on (dehydrate.go): an instance idle for
	// DehydrateAfter of wall-clock time, or with DehydrateAfter zero as
	// soon as it is idle, is kept as its state document until input
	// reaches it.
	Dehydrate      bool
	DehydrateAfter time.Duration
	// Partition is the engine's key space (keyspace.go): its keys are
	// Partition<<KeySpaceBits plus a counter. Zero counts from 1.
	Partition int
	// NoTimerSignalStarts leaves timer and signal start events out of
	// the start events deploy registers: a cluster partition other than
	// the first, where another engine starts those instances.
	NoTimerSignalStarts bool
}

// Resumption says how an engine runs its tokens.
type Resumption uint8

const (
	// ResumeGoroutines runs each token on a goroutine of its own, which
	// parks on a channel while the token waits.
	ResumeGoroutines Resumption = iota + 1
	// ResumeDirect has each instance's loop resume its tokens'
	// continuations itself, with no goroutine per token.
	ResumeDirect
)

// Defaults of Options.
const (
	DefaultRetainFinished     = 1024
	DefaultMaxSteps           = 10_000
	DefaultMaxStepsPerInput   = 100_000
	DefaultMaxTokensPerInput  = 10_000
	DefaultMaxRecordsPerInput = 500_000
	DefaultMaxTokens          = 10_000
	DefaultMaxStartsPerInput  = 1_000
)

// Engine owns deployed plans, live instances, the job and incident indexes
// and the quiescence count. All methods are safe for concurrent use.
type Engine struct {
	opts  Options
	clock clock.Clock
	keys  atomic.Int64
	busy  *quiescence
	// choices makes tokens stop before diverging exclusive and inclusive
	// gateways route, for a choice (choice.go).
	choices atomic.Bool

	mu     sync.Mutex
	closed bool
	plans  map[string][]*Plan // by process id, oldest version first
	// decisions are the deployed decisions (decisions.go).
	decisions decisionRegistry
	deploySeq atomic.Int64
	live      map[int64]*Instance
	// dirty lists the instances changed since the last CheckpointDirty
	// (Instance.dirty), live or finished since.
	dirtyMu sync.Mutex
	dirty   []*Instance
	// dryStore, when set (KeepDryIn), reads a dehydrated instance's
	// document back from the store that holds it (dehydrate.go).
	// restoreMu makes one RestoreInstance at a time check the keys it
	// brings and take them (restore_instance.go).
	restoreMu  sync.Mutex
	dryStore   atomic.Pointer[DryReader]
	dryChanged atomic.Pointer[func()]
	// evicted are the finished instances dropped from the ring since the
	// last CheckpointDirty (with Options.Durable); guarded by mu.
	evicted  []int64
	finished []*Instance // ring of recently finished instances
	finNext  int
	byKey    map[int64]*Instance // finished instances still in the ring
	jobs     map[int64]*Instance // activatable jobs → owning instance
	jobRecs  map[int64]*Job
	// jobTimes orders the jobs' activation deadlines and back-off ends
	// for NextDeadline (jobtimes.go).
	jobTimes jobTimes
	// instJobs indexes jobRecs by instance key, for Jobs filtered by
	// instance, which hosts ask after every call that moves an instance.
	instJobs  map[int64][]*Job
	incidents map[int64]incidentEntry
	// ended counts the ended instances by process id (metrics.go).
	ended map[string]*procCount

	subs atomic.Pointer[[]*subscriber]
	// observerGoroutines maps the id of each observer's running goroutine
	// to its subscriber, observerCount counts them (observe.go
	// callingObserver).
	observerGoroutines sync.Map
	observerCount      atomic.Int32

	hub *eventhub.Hub
	// Start events of the newest version of every process, by trigger.
	messageStarts map[string][]startTarget // by message name
	signalStarts  map[string][]startTarget // by signal name
	timerStarts   map[string][]int64       // by process id: open hub timers
	// keyedStarts counts live instances started by a message with a
	// correlation key, by process id and key: while one lives, the same
	// message does not start another.
	keyedStarts map[[2]string]int
	// deployments are the sources of the successful deployments, in
	// order, for checkpoints (checkpoint.go).
	deployments []deployment

	advanceMu sync.Mutex

	// With direct resumption: the instances waiting to be driven, and
	// the lock of the goroutine driving them (drive.go).
	runMu   sync.Mutex
	runq    []*Instance
	driveMu sync.Mutex

	eventLog atomic.Bool // loops log records while set
	logMu    sync.Mutex
	log      []logged // records not yet drained

	// stopSweep ends the goroutine that dehydrates idle instances, which
	// closes swept as it ends (dehydrate.go sweep); both nil without one.
	stopSweep chan struct{}
	swept     chan struct{}

	// posted, when set (by tests, before any instance starts), sees every
	// message posted to an instance, on the poster's goroutine before it is
	// queued: a producer that fires at once, inside the loop's own
	// subscribe call, shows what the loop had recorded by then (SRD-027
	// FR-5).
	posted func(*Instance, report)
}

// NewEngine returns an engine configured by opts.
func NewEngine(opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.RetainFinished == 0 {
		opts.RetainFinished = DefaultRetainFinished
	}
	for _, b := range []struct {
		v   *int
		def int
	}{
		{&opts.MaxSteps, DefaultMaxSteps},
		{&opts.MaxStepsPerInput, DefaultMaxStepsPerInput},
		{&opts.MaxTokensPerInput, DefaultMaxTokensPerInput},
		{&opts.MaxRecordsPerInput, DefaultMaxRecordsPerInput},
		{&opts.MaxTokens, DefaultMaxTokens},
		{&opts.MaxStartsPerInput, DefaultMaxStartsPerInput},
	} {
		if *b.v <= 0 {
			*b.v = b.def
		}
	}
	if opts.Resumption == 0 {
		opts.Resumption = DefaultResumption
	}
	if opts.ObserverBacklog <= 0 {
		opts.ObserverBacklog = DefaultObserverBacklog
	}
	if opts.OnError == nil {
		opts.OnError = LogError
	}
	e := &Engine{
		opts:      opts,
		clock:     opts.Clock,
		busy:      newQuiescence(),
		plans:     make(map[string][]*Plan),
		live:      make(map[int64]*Instance),
		byKey:     make(map[int64]*Instance),
		jobs:      make(map[int64]*Instance),
		jobRecs:   make(map[int64]*Job),
		instJobs:  make(map[int64][]*Job),
		incidents: make(map[int64]incidentEntry),
	}
	if opts.RetainFinished > 0 {
		e.finished = make([]*Instance, opts.RetainFinished)
	}
	e.keys.Store(keyBase(opts.Partition))
	e.subs.Store(new([]*subscriber))
	e.eventLog.Store(opts.EventLog)
	e.hub = eventhub.New(opts.Clock)
	e.messageStarts = make(map[string][]startTarget)
	e.signalStarts = make(map[string][]startTarget)
	e.timerStarts = make(map[string][]int64)
	e.keyedStarts = make(map[[2]string]int)
	if opts.Dehydrate && opts.DehydrateAfter > 0 {
		e.stopSweep, e.swept = make(chan struct{}), make(chan struct{})
		go e.sweep(opts.DehydrateAfter, e.stopSweep)
	}
	return e
}

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.clock }

// NextKey returns a fresh key, unique within this engine.
func (e *Engine) NextKey() int64 { return e.keys.Add(1) }

// SkipKeys moves the key counter n keys on, so that no key up to there is
// handed out (engine.New opening a store: keys handed out but never
// committed are not handed out again).
func (e *Engine) SkipKeys(n int64) { e.keys.Add(n) }

// checkOpen returns ErrClosed once Close has begun, so that calls which
// would otherwise hand their input to a closing engine report it instead
// of dropping it.
func (e *Engine) checkOpen() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	return nil
}

// Close cancels every live instance and waits until their goroutines and
// the observers' goroutines have ended. Close is idempotent.
func (e *Engine) Close(ctx context.Context) error {
	if err := e.refuseObserver("close"); err != nil {
		return err
	}
	e.mu.Lock()
	first := !e.closed
	e.closed = true
	for id, subs := range e.timerStarts {
		for _, sub := range subs {
			e.hub.Unsubscribe(sub)
		}
		delete(e.timerStarts, id)
	}
	e.mu.Unlock()
	if first && e.stopSweep != nil {
		close(e.stopSweep)
	}
	if e.swept != nil {
		select {
		case <-e.swept:
		case <-ctx.Done():
			return fmt.Errorf("close: waiting for the dehydration sweep: %w", ctx.Err())
		}
	}
	for _, inst := range e.Instances() {
		if err := inst.Cancel(ctx); err != nil && !errors.Is(err, ErrInstanceEnded) {
			return fmt.Errorf("close: cancelling instance %d: %w", inst.key, err)
		}
	}
	for _, inst := range e.Instances() {
		select {
		case <-inst.done:
		case <-ctx.Done():
			return fmt.Errorf("close: waiting for instance %d to end: %w", inst.key, ctx.Err())
		}
	}
	// Every loop has ended, so nothing publishes any more: the observers
	// deliver what they hold and end, or ctx ends first (one that never
	// returns cannot be made to).
	if err := e.stopObservers(ctx); err != nil {
		return err
	}
	return e.busy.wait(ctx)
}

// Stats returns what the engine holds open right now.
func (e *Engine) Stats() Stats {
	open := e.hub.Open()
	e.mu.Lock()
	defer e.mu.Unlock()
	return Stats{
		Instances: len(e.live), Jobs: len(e.jobRecs), Incidents: len(e.incidents),
		MessageSubscriptions: open[eventhub.Message], SignalSubscriptions: open[eventhub.Signal], Timers: open[eventhub.Timer],
	}
}

// Now returns the engine clock's reading.
func (e *Engine) Now() time.Time { return e.clock.Now() }
