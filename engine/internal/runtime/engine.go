package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Sentinel errors. The public engine package re-exports them, so callers
// test them with errors.Is against engine.ErrX.
var (
	ErrUnknownProcess  = errors.New("unknown process")
	ErrNoNoneStart     = errors.New("process has no none start event")
	ErrUnknownJob      = errors.New("unknown job")
	ErrUnknownInstance = errors.New("unknown instance")
	ErrUnknownIncident = errors.New("unknown incident")
	ErrInstanceEnded   = errors.New("instance has ended")
	ErrClosed          = errors.New("engine is closed")
	ErrNotVirtual      = errors.New("clock is not virtual")
	ErrBadVariables    = errors.New("variables are not JSON-compatible")
	// ErrStaleActivation is returned for a job result that names an
	// activation the job no longer has: it timed out and another worker
	// activated the job, or a failure ended the activation.
	ErrStaleActivation = errors.New("job activation is stale")
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

	mu     sync.Mutex
	closed bool
	plans  map[string][]*Plan // by process id, oldest version first
	live   map[int64]*Instance
	// dirty lists the instances changed since the last CheckpointDirty
	// (Instance.dirty), live or finished since.
	dirtyMu sync.Mutex
	dirty   []*Instance
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
	posted func(*Instance, message)
}

// startTarget is a start event that creates instances when its event
// happens.
type startTarget struct {
	plan *Plan
	node *model.Node
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

// Install compiles and registers every process of d as a new version. It
// is all or nothing: on error nothing is registered.
func (e *Engine) Install(d *model.Definitions, opts CompileOptions) ([]*Plan, error) {
	plans := make([]*Plan, 0, len(d.Processes))
	var errs []error
	for _, p := range d.Processes {
		if !p.Executable {
			continue
		}
		plan, err := Compile(p, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, plan)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	for _, plan := range plans {
		plan.Key = e.NextKey()
		plan.Version = len(e.plans[plan.Process.ID]) + 1
		e.plans[plan.Process.ID] = append(e.plans[plan.Process.ID], plan)
		e.registerStarts(plan)
	}
	return plans, nil
}

// registerStarts makes plan's event start events the ones that create
// instances of its process, replacing those of older versions (as Zeebe
// does). Called with e.mu held.
func (e *Engine) registerStarts(plan *Plan) {
	id := plan.Process.ID
	drop := func(m map[string][]startTarget) {
		for name, ts := range m {
			kept := ts[:0]
			for _, t := range ts {
				if t.plan.Process.ID != id {
					kept = append(kept, t)
				}
			}
			m[name] = kept
		}
	}
	drop(e.messageStarts)
	drop(e.signalStarts)
	for _, sub := range e.timerStarts[id] {
		e.hub.Unsubscribe(sub)
	}
	delete(e.timerStarts, id)
	for _, n := range plan.Process.Top {
		// Event start events, instantiating receive tasks and the arms of
		// an instantiating event-based gateway (instantiate.go).
		c := plan.nodes[n.Index].startCatch
		if c == nil {
			continue // Compile reports a start trigger it cannot compile
		}
		t := startTarget{plan: plan, node: n}
		switch c.def.Kind {
		case model.EventMessage:
			e.messageStarts[c.name()] = append(e.messageStarts[c.name()], t)
		case model.EventSignal:
			e.signalStarts[c.name()] = append(e.signalStarts[c.name()], t)
		case model.EventTimer:
			s, err := c.timer.evaluate(nil, e.clock.Now())
			if err != nil {
				continue // a timer start that cannot be evaluated never fires; Validate reports bad values
			}
			r := &timerStart{eng: e, target: t, period: s.period, left: s.times}
			if r.left < 0 || r.left > MaxCycleFirings {
				r.left = MaxCycleFirings
			}
			e.timerStarts[id] = append(e.timerStarts[id], e.hub.Schedule(s.first, r))
		}
	}
}

// timerStart is the hub receiver of a timer start event: each firing
// starts an instance and schedules the next repetition of a cycle.
type timerStart struct {
	eng    *Engine
	target startTarget
	period time.Duration
	left   int // firings left, this one included
}

func (r *timerStart) Deliver(d eventhub.Delivery) bool {
	e := r.eng
	_, _ = e.startAt(r.target, nil, &Event{Type: TimerFired, Due: timeOf(d.Due)}, "", new(cause))
	r.left--
	// A cycle ends at the last repetition the engine can represent.
	if next := d.Due.Add(r.period); r.left > 0 && r.period > 0 && clock.CheckRange(next) == nil {
		e.mu.Lock()
		id := r.target.plan.Process.ID
		e.timerStarts[id] = append(e.timerStarts[id], e.hub.Schedule(next, r))
		e.mu.Unlock()
	}
	return true
}

// Latest returns the newest version of a process.
func (e *Engine) Latest(processID string) (*Plan, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	versions := e.plans[processID]
	if len(versions) == 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknownProcess, processID)
	}
	return versions[len(versions)-1], nil
}

// Start creates an instance of plan at its none start event with vars
// (already normalized) and sets it running. It returns at once; the
// instance moves on its own goroutines.
func (e *Engine) Start(plan *Plan, vars map[string]any) (*Instance, error) {
	if plan.start == nil {
		return nil, fmt.Errorf("start %s: %w", plan.Process.ID, ErrNoNoneStart)
	}
	return e.startAt(startTarget{plan: plan, node: plan.start}, vars, nil, "", new(cause))
}

// startAt creates an instance beginning at the start event of t. trigger,
// if set, is recorded as what started it (a message or signal); c is the
// outside input its first work is done for.
func (e *Engine) startAt(t startTarget, vars map[string]any, trigger *Event, startKey string, c *cause) (*Instance, error) {
	inst := newInstance(e, t.plan, vars)
	inst.startKey = startKey
	inst.cause = c
	return e.launch(inst, t, trigger)
}

// launch registers inst and sets it running at the start event of t.
func (e *Engine) launch(inst *Instance, t startTarget, trigger *Event) (*Instance, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, ErrClosed
	}
	e.live[inst.key] = inst
	e.mu.Unlock()
	inst.markDirty()
	e.busy.add(1) // the first token
	if inst.direct {
		inst.startAt, inst.trigger = t.node, trigger
		e.schedule(inst)
		return inst, nil
	}
	go inst.loop(t.node, trigger)
	return inst, nil
}

// resume registers inst, restored from a state document with its tokens
// parked where they were (restore.go), and sets its loop going. Nothing
// runs until input comes, so nothing is counted as running.
func (e *Engine) resume(inst *Instance) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.live[inst.key] = inst
	e.mu.Unlock()
	if inst.direct {
		e.schedule(inst) // nothing to begin: drive finds its tokens parked
		return nil
	}
	go inst.loop(nil, nil)
	return nil
}

// PublishMessage publishes a message: it correlates to the waiting
// subscriptions by name and key (at most once per process definition),
// starts instances of processes with a matching message start event, and
// with ttl > 0 is buffered for subscriptions opened later. vars are
// normalized.
func (e *Engine) PublishMessage(name, key string, vars map[string]any, ttl time.Duration, id string) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	return e.publishMessage(name, key, vars, ttl, id, new(cause))
}

// publishMessage is PublishMessage for an input c. When the instances the
// message could start would exceed c's budget, nothing is published.
func (e *Engine) publishMessage(name, key string, vars map[string]any, ttl time.Duration, id string, c *cause) error {
	e.mu.Lock()
	could := len(e.messageStarts[name])
	e.mu.Unlock()
	if err := c.reserve(could, e.opts.MaxStartsPerInput, fmt.Sprintf("message %q", name)); err != nil {
		return err
	}
	served, err := e.hub.PublishMessage(name, key, vars, ttl, id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	var starts []startTarget
	for _, t := range e.messageStarts[name] {
		pid := t.plan.Process.ID
		if served[pid] || (key != "" && e.keyedStarts[[2]string{pid, key}] > 0) {
			continue
		}
		if key != "" {
			e.keyedStarts[[2]string{pid, key}]++
		}
		starts = append(starts, t)
	}
	e.mu.Unlock()
	for _, t := range starts {
		trigger := &Event{Type: MessageCorrelated, Name: name, CorrelationKey: key, Variables: cloneVars(vars)}
		if _, err := e.startAt(t, vars, trigger, key, c); err != nil {
			if key != "" {
				e.mu.Lock()
				e.keyedStarts[[2]string{t.plan.Process.ID, key}]--
				e.mu.Unlock()
			}
			return err
		}
	}
	return nil
}

// BroadcastSignal delivers a signal to every subscription of its name and
// starts instances of processes with a matching signal start event. A
// signal nobody catches is a no-op. It fails, doing nothing, when it would
// start more instances than MaxStartsPerInput. After Close it returns
// ErrClosed.
func (e *Engine) BroadcastSignal(name string, vars map[string]any) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	return e.broadcastSignal(name, vars, new(cause))
}

// broadcastSignal is BroadcastSignal for an input c. When the instances
// the signal starts would exceed c's budget, nothing is broadcast.
func (e *Engine) broadcastSignal(name string, vars map[string]any, c *cause) error {
	e.mu.Lock()
	starts := append([]startTarget(nil), e.signalStarts[name]...)
	e.mu.Unlock()
	if err := c.reserve(len(starts), e.opts.MaxStartsPerInput, fmt.Sprintf("signal %q", name)); err != nil {
		return err
	}
	e.hub.BroadcastSignal(name, vars)
	for _, t := range starts {
		_, _ = e.startAt(t, vars, &Event{Type: SignalReceived, Name: name, Variables: cloneVars(vars)}, "", c)
	}
	return nil
}

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

// NextDeadline returns the earliest instant at which the engine's state
// changes with time alone: a timer falls due, a job's activation times out
// or its retry back-off ends. The job times are read when ActivateJobs
// runs, not fired (activation.go), but a host in real time must still wake
// at them, or a worker never sees the job activatable again. Only job
// times after the clock's now count: a passed one is already activatable.
func (e *Engine) NextDeadline() (time.Time, bool) {
	due, ok := e.hub.NextDeadline()
	if at, found := e.nextJobTime(e.clock.Now()); found && (!ok || at.Before(due)) {
		due, ok = at, true
	}
	return due, ok
}

// MaxFiringsPerAdvance bounds how many timer firings one Advance call
// processes, so that no call loops without end.
const MaxFiringsPerAdvance = 100_000

// ErrTooManyFirings is returned by AdvanceTo when more timers fell due in
// the span than MaxFiringsPerAdvance.
var ErrTooManyFirings = errors.New("too many timer firings in one advance")

// AdvanceTo moves a virtual clock to t, firing due timers one due time at a
// time, in order, and settling after each, so that a timer started by an
// earlier firing inside the span fires too.
func (e *Engine) AdvanceTo(ctx context.Context, t time.Time) error {
	v, ok := e.clock.(*clock.Virtual)
	if !ok {
		return ErrNotVirtual
	}
	e.advanceMu.Lock()
	defer e.advanceMu.Unlock()
	if err := e.checkOpen(); err != nil {
		return err
	}
	if err := clock.CheckRange(t); err != nil {
		return fmt.Errorf("advance: %w", err)
	}
	for fired := 0; ; fired++ {
		if err := e.Settle(ctx); err != nil {
			return err
		}
		due, ok := v.NextDue()
		if !ok || due.After(t) {
			break
		}
		if fired >= MaxFiringsPerAdvance {
			return fmt.Errorf("advance to %s: %w (stopped at %s)", t.Format(time.RFC3339), ErrTooManyFirings, v.Now().Format(time.RFC3339))
		}
		if err := v.AdvanceTo(due); err != nil {
			return fmt.Errorf("advance: %w", err)
		}
	}
	if err := v.AdvanceTo(t); err != nil {
		return fmt.Errorf("advance: %w", err)
	}
	return e.Settle(ctx)
}

// Instance finds a live or recently finished instance.
func (e *Engine) Instance(key int64) (*Instance, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if inst, ok := e.live[key]; ok {
		return inst, true
	}
	inst, ok := e.byKey[key]
	return inst, ok
}

// Instances returns the live instances ordered by key.
func (e *Engine) Instances() []*Instance {
	e.mu.Lock()
	out := make([]*Instance, 0, len(e.live))
	for _, inst := range e.live {
		out = append(out, inst)
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// finish moves inst from the live set to the finished ring. Called by the
// instance's loop as its last act.
func (e *Engine) finish(inst *Instance) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.live, inst.key)
	e.countFinished(inst)
	if inst.startKey != "" {
		k := [2]string{inst.plan.Process.ID, inst.startKey}
		if e.keyedStarts[k]--; e.keyedStarts[k] <= 0 {
			delete(e.keyedStarts, k)
		}
	}
	if len(e.finished) == 0 {
		return
	}
	if old := e.finished[e.finNext]; old != nil {
		delete(e.byKey, old.key)
		if e.opts.Durable {
			e.evicted = append(e.evicted, old.key)
		}
	}
	e.finished[e.finNext] = inst
	e.byKey[inst.key] = inst
	e.finNext = (e.finNext + 1) % len(e.finished)
}

// Settle returns when nothing in the engine can move without outside input.
// After Close it returns ErrClosed: nothing is left to settle, and a caller
// that settles to see the effect of a call must learn that there was none.
func (e *Engine) Settle(ctx context.Context) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	e.drive()
	return e.busy.wait(ctx)
}

// OnTimerFired makes the engine call f after each timer the clock fired
// has been handed to its instance (or has started one): input that comes
// through no command, which a store commits on. f must not block.
func (e *Engine) OnTimerFired(f func()) { e.hub.SetOnFire(f) }

// settleWork returns when nothing but observers can move without outside
// input: records may still wait for an observer. A store's commit settles
// so, since an observer may give a command that waits for that commit.
func (e *Engine) settleWork(ctx context.Context) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	e.drive()
	return e.busy.waitWork(ctx)
}

// JobFilter selects jobs. Zero fields match anything.
type JobFilter struct {
	Type        string
	InstanceKey int64
	ElementID   string
}

// Jobs returns copies of the activatable jobs matching f, ordered by key.
func (e *Engine) Jobs(f JobFilter) []Job {
	e.mu.Lock()
	all := maps.Values(e.jobRecs)
	if f.InstanceKey != 0 {
		all = slices.Values(e.instJobs[f.InstanceKey])
	}
	out := make([]Job, 0)
	for j := range all {
		if (f.Type == "" || j.Type == f.Type) && (f.InstanceKey == 0 || j.InstanceKey == f.InstanceKey) &&
			(f.ElementID == "" || j.ElementID == f.ElementID) {
			out = append(out, j.clone())
		}
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Job returns a copy of the activatable job with key.
func (e *Engine) Job(key int64) (Job, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, ok := e.jobRecs[key]
	if !ok {
		return Job{}, false
	}
	return j.clone(), true
}

func (j *Job) clone() Job {
	c := *j
	if j.Headers != nil {
		c.Headers = make(map[string]string, len(j.Headers))
		for k, v := range j.Headers {
			c.Headers[k] = v
		}
	}
	c.Variables = cloneVars(j.Variables)
	return c
}

func (e *Engine) addJob(inst *Instance, j *Job) {
	e.mu.Lock()
	e.jobs[j.Key] = inst
	e.indexJob(j)
	e.mu.Unlock()
}

// indexJob records j in jobRecs and instJobs, replacing the record of the
// same key (a failed attempt's). Called with e.mu held.
func (e *Engine) indexJob(j *Job) {
	list := e.instJobs[j.InstanceKey]
	if i := slices.IndexFunc(list, func(o *Job) bool { return o.Key == j.Key }); i >= 0 {
		list[i] = j
	} else {
		list = append(list, j)
	}
	e.instJobs[j.InstanceKey] = list
	e.jobRecs[j.Key] = j
	e.noteJobTimes(j)
}

func (e *Engine) removeJob(key int64) {
	e.mu.Lock()
	delete(e.jobs, key)
	if j, ok := e.jobRecs[key]; ok {
		rest := slices.DeleteFunc(e.instJobs[j.InstanceKey], func(o *Job) bool { return o.Key == key })
		if len(rest) == 0 {
			delete(e.instJobs, j.InstanceKey)
		} else {
			e.instJobs[j.InstanceKey] = rest
		}
	}
	delete(e.jobRecs, key)
	e.mu.Unlock()
}

func (e *Engine) jobOwner(key int64) (*Instance, error) {
	e.mu.Lock()
	inst, closed := e.jobs[key], e.closed
	e.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if inst == nil {
		return nil, fmt.Errorf("job %d: %w", key, ErrUnknownJob)
	}
	return inst, nil
}

// CompleteJob completes an activatable job, merging vars (normalized) into
// the instance, and moves its token on.
func (e *Engine) CompleteJob(ctx context.Context, key int64, vars map[string]any) error {
	return e.CompleteJobAs(ctx, key, JobArgs{}, vars)
}

// FailJob records a failed attempt. With retries left the job stays
// activatable; with none an incident holds the token.
func (e *Engine) FailJob(ctx context.Context, key int64, retries int, message string) error {
	return e.FailJobAs(ctx, key, JobArgs{}, retries, message)
}

// ThrowError raises a BPMN error with code from a job's element.
func (e *Engine) ThrowError(ctx context.Context, key int64, code, message string, vars map[string]any) error {
	return e.ThrowErrorAs(ctx, key, JobArgs{}, code, message, vars)
}

// jobCall maps an instance that ended between finding a job and reaching
// its loop to what the caller asked about: the job no longer exists.
func jobCall(key int64, err error) error {
	if errors.Is(err, ErrInstanceEnded) {
		return fmt.Errorf("job %d: %w", key, ErrUnknownJob)
	}
	return err
}

// Incidents returns the open incidents of live instances, ordered by key.
// It reads the engine's incident index, so it costs no round trip to any
// instance loop.
func (e *Engine) Incidents() []Incident {
	e.mu.Lock()
	out := make([]Incident, 0, len(e.incidents))
	for _, ie := range e.incidents {
		out = append(out, ie.incident)
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// ResolveIncident retries what the incident holds: a failed job becomes
// activatable again (with one retry if it had none), any other incident
// re-executes its element.
func (e *Engine) ResolveIncident(ctx context.Context, key int64) error {
	e.mu.Lock()
	inst, closed := e.incidents[key].inst, e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if inst == nil {
		return fmt.Errorf("incident %d: %w", key, ErrUnknownIncident)
	}
	return inst.call(ctx, &command{op: cmdResolveIncident, key: key})
}

// incidentEntry is the engine's index entry of an open incident: the
// instance whose loop owns it and a copy of the record (an Incident never
// changes once opened).
type incidentEntry struct {
	inst     *Instance
	incident Incident
}

// indexIncident adds an incident the loop of inst opened to the index.
func (e *Engine) indexIncident(inst *Instance, inc Incident) {
	e.mu.Lock()
	e.incidents[inc.Key] = incidentEntry{inst: inst, incident: inc}
	e.mu.Unlock()
}

// unindexIncident removes a resolved or discarded incident from the index.
func (e *Engine) unindexIncident(key int64) {
	e.mu.Lock()
	delete(e.incidents, key)
	e.mu.Unlock()
}

// Close cancels every live instance and waits until their goroutines and
// the observers' goroutines have ended. Close is idempotent.
func (e *Engine) Close(ctx context.Context) error {
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

// Stats counts what the engine holds open.
type Stats struct {
	Instances            int `json:"instances"`
	Jobs                 int `json:"jobs"`
	Incidents            int `json:"incidents"`
	MessageSubscriptions int `json:"messageSubscriptions"`
	SignalSubscriptions  int `json:"signalSubscriptions"`
	Timers               int `json:"timers"`
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

// logged is a record in the event log, kept compact until drained. The
// record and its details never change once written, so expanding it later,
// on another goroutine, reads only immutable data.
type logged struct {
	inst *Instance
	more *Event
	rec  record
	seq  int
}

// logRecord appends a record to the event log.
func (e *Engine) logRecord(l logged) {
	e.logMu.Lock()
	e.log = append(e.log, l)
	e.logMu.Unlock()
}

// SetEventLog turns the event log on or off. Turning it off discards what
// was not drained.
func (e *Engine) SetEventLog(on bool) {
	e.eventLog.Store(on)
	if !on {
		e.logMu.Lock()
		e.log = nil
		e.logMu.Unlock()
	}
}

// DrainEvents returns the records logged since the last call, in the order
// their loops wrote them (each instance's in its own order), and empties
// the log. With the log off it returns nil.
func (e *Engine) DrainEvents() []Event {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	if len(e.log) == 0 {
		return nil
	}
	out := make([]Event, len(e.log))
	for i := range e.log {
		l := &e.log[i]
		out[i] = l.rec.event(l.inst, l.more, l.seq)
		out[i].Variables = cloneVars(out[i].Variables)
		e.log[i] = logged{} // the log's array is reused: let go of what it held
	}
	e.log = e.log[:0]
	return out
}
