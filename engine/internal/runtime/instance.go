package runtime

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// intakeDepth is the capacity of an instance's intake. A buffer lets a
// track run several steps ahead of the loop instead of handing over the
// processor at every step, which matters most in WebAssembly, where a
// goroutine switch costs several times what it costs natively. Order is
// unaffected: one channel, first in first out.
const intakeDepth = 16

// Instance is one running process instance.
//
// Concurrency: one loop goroutine is the only writer of the instance's
// state (tokens, joins, jobs, variables, incidents); one goroutine per
// track runs nodes and reports to the loop through the intake, one track
// at a time (turns.go), so that the history's order never depends on
// scheduling. The loop
// never reads a live track's state: it keeps its own view (tokens). Public
// methods are safe to call from any goroutine; those that need loop state
// ask the loop through the mailbox (call).
type Instance struct {
	eng  *Engine
	plan *Plan
	key  int64

	intake chan report
	done   chan struct{}
	// The mailbox takes messages from producers outside the instance
	// (the hub, timers); wake tells the loop there is mail.
	mailMu     sync.Mutex
	mail       []report
	mailClosed bool
	wake       chan struct{}
	// stopping tells running tracks to stop at their next step.
	stopping atomic.Bool
	// root is the process scope. Its published view is what Variables
	// returns; the loop alone writes it, and sets the pointer under mailMu
	// (nil while the instance is dehydrated).
	root *scope

	mu    sync.Mutex // guards state
	state State

	// Loop-owned from here on; readable by others once done is closed.
	history  []record
	details  []*Event // the details of the rarer records (record.more)
	startKey string   // the correlation key of the message that started it
	// parent is the instance whose call activity started this one, and
	// parentToken the token waiting there; nil for a top-level instance.
	parent      *Instance
	parentToken int
	depth       int    // how many call activities above this instance
	final       State  // the state to end in once the last token is gone
	finalMsg    string // why, for terminations and failures
	// direct is set when the loop resumes tracks itself instead of
	// running them on goroutines (track.go).
	direct  bool
	startAt *model.Node // the start event drive begins the instance at, until it has
	trigger *Event      // what started it there, if an event did
	queued  bool        // in the engine's run queue; guarded by Engine.runMu
	ended   bool
	// hold tells tracks to park under a budget incident at their next
	// step (loopState.heldBy).
	hold atomic.Bool
	// The rest of the loop's state, which a dehydrated instance lets go
	// of (nil while it is dry).
	*loopState

	// dry is the state of a dehydrated instance, nil while it is awake;
	// waking is set once a post found it dry and set its rehydration
	// going. Both are guarded by mailMu (dehydrate.go).
	dry    *dryState
	waking bool
	// idleSince is when the loop was last idle (wall clock, Unix ns), for
	// dehydration after an idle time.
	idleSince atomic.Int64
	// dirty is set, and the instance listed in Engine.dirty, when an
	// intake message may change its state (every one but a read-only
	// command); CheckpointDirty clears it. A store writes only the
	// instances listed.
	dirty atomic.Bool
}

// loopState is the part of an instance's loop state that goes when the
// instance is dehydrated and comes back, from its document, when it is
// rehydrated (dehydrate.go); only the loop reads or writes it.
type loopState struct {
	tokens    map[int]*tokenView
	nextToken int
	joins     map[joinKey]*joinState
	orJoins   int // inclusive and complex joins holding state
	jobs      map[int64]*jobState
	incidents map[int64]*incidentState
	subs      map[int64]subRef // open subscriptions by hub id
	// condLast holds, for each open conditional subscription, whether its
	// condition held when last evaluated.
	condLast  map[int64]bool
	nextScope int
	now       int64 // clock reading for the message being handled, Unix ns
	// turn is the token whose track runs, 0 when none does; runnable
	// are the tracks waiting for their turn, and inputs the outside input
	// waiting for no track to run (turns.go).
	turn     int
	runnable []wakeup
	inputs   []report
	// With direct resumption, running is the track with the turn while
	// it has more to do, handOver what it is handed when it runs next,
	// and reports what it reported and the loop has not handled yet
	// (reportBuf backs it, so steps cost no allocation).
	running   *tokenView
	handOver  notice
	reports   []report
	reportBuf [4]report
	// work is what the instance did since it was last idle, and cause the
	// outside input it did it for, against the budgets (budget.go).
	work  work
	cause *cause
	// heldBy is the budget incident holding the instance (0: none).
	heldBy int64
	// lastNode is the element of the last record about one (a record's
	// node reference): where a budget was exceeded.
	lastNode int32
	// dryReqs are the requests to dehydrate, answered at the next idle
	// point (dehydrate.go).
	dryReqs []*command
	// comp is the state of compensations in progress (compensation.go),
	// nil until the first one.
	comp *instComp
	// released counts work finished while handling the current message.
	// It is subtracted from the quiescence count only once the message is
	// fully handled, so Settle never sees zero while state is half-written.
	released int64
}

// markDirty lists inst among the instances changed since the last
// CheckpointDirty, once.
func (inst *Instance) markDirty() {
	// Only a store drains the list (CheckpointDirty): without one, listing
	// would keep every instance ever started.
	if !inst.eng.opts.Durable || inst.dirty.Load() || !inst.dirty.CompareAndSwap(false, true) {
		return
	}
	e := inst.eng
	e.dirtyMu.Lock()
	e.dirty = append(e.dirty, inst)
	e.dirtyMu.Unlock()
}

// tokenView is the loop's record of one token: where it is and why it
// waits. It is the loop-owned position view of SRD-028: nothing else reads
// token positions.
type tokenView struct {
	id int
	// ch is a goroutine track's one-slot park channel; only the loop sends
	// or closes. track is the track the loop resumes in direct
	// resumption; the loop only ever calls its next. With goroutine
	// tracks it holds a track that started parked and has not been woken
	// yet: its goroutine starts at its first wake-up (turns.go give), so
	// tokens that wait (the inner instances of a large multi-instance
	// activity) cost no goroutine until they move.
	ch    chan notice
	track *track
	node  *model.Node
	// parked is set while the track is blocked on ch waiting for a
	// delivery; the first delivery flips it off (first delivery wins).
	parked   bool
	closed   bool
	wait     WaitReason
	jobKey   int64
	incident int64
	subs     []int64        // open hub subscriptions while parked at a catch
	locals   map[string]any // the current element's input-mapped variables
	scope    *scope         // the scope the token moves in
	// boundary are the open subscriptions of the boundary events of the
	// activity the token waits in.
	boundary []int64
	// doomed marks a token withdrawn by an interrupt: whatever it reports
	// next only makes it exit.
	doomed bool
	// atJoin is set while the token is on its way to, or waits at, a join
	// it has not entered: a join is entered when it fires, so withdrawing
	// such a token terminates no element.
	atJoin bool
	// raising is set while the token waits for the calling instances to
	// deal with an error or escalation it raised (raiseToCaller).
	raising bool
	// inner is the scope of the sub-process the token waits at.
	inner *scope
	// child is the instance the token's call activity waits for.
	child *Instance
}

type jobState struct {
	job      *Job
	token    int
	incident int64 // set while the job has no retries left
}

type incidentState struct {
	incident Incident
	token    int
	// reported is set on an incident its track reported and waits out:
	// resolving it tells the track to retry, where resolving any other
	// incident at a wait state makes the loop set up the wait again.
	reported bool
	// held are the tokens parked under a budget incident (which has no
	// token of its own).
	held []int
}

// joinState holds the tokens that arrived at a synchronising gateway and
// have not been consumed by a firing yet, queued per incoming flow.
type joinState struct {
	node    *model.Node
	scope   *scope
	arrived [][]int // per index of node.Incoming: waiting token ids, oldest first
	// fired is set on a complex gateway that fired and waits for reset.
	fired bool
}

// joinKey identifies a join's state: the same gateway in two activations
// of a sub-process joins separately.
type joinKey struct{ scope, node int }

func newInstance(e *Engine, plan *Plan, vars map[string]any) *Instance {
	return newInstanceKeyed(e, plan, vars, e.NextKey())
}

// newInstanceKeyed is newInstance with the given key, taking none from
// the engine's counter (a restore, whose instances keep theirs).
func newInstanceKeyed(e *Engine, plan *Plan, vars map[string]any, key int64) *Instance {
	inst := &Instance{
		eng:       e,
		plan:      plan,
		key:       key,
		done:      make(chan struct{}),
		state:     Active,
		history:   make([]record, 0, 3*len(plan.Process.Nodes)+6),
		final:     Completed,
		direct:    e.opts.Resumption == ResumeDirect,
		loopState: &loopState{tokens: make(map[int]*tokenView, 2)},
	}
	if !inst.direct {
		// Only a loop goroutine reads an intake and waits for a wake-up.
		inst.intake = make(chan report, intakeDepth)
		inst.wake = make(chan struct{}, 1)
	}
	inst.root = newScope(0, nil, nil, vars)
	inst.reports = inst.reportBuf[:0]
	return inst
}

// Key returns the instance key.
func (inst *Instance) Key() int64 { return inst.key }

// Plan returns the deployed process the instance runs.
func (inst *Instance) Plan() *Plan { return inst.plan }

// Done is closed when the instance has ended and all its goroutines are
// gone.
func (inst *Instance) Done() <-chan struct{} { return inst.done }

// State returns the lifecycle state.
func (inst *Instance) State() State {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	return inst.state
}

// History returns a copy of the event stream so far. While the instance
// runs the loop makes the copy; once it has ended the stream no longer
// changes and is read directly.
func (inst *Instance) History() []Event {
	select {
	case <-inst.done:
		return inst.expandHistory()
	default:
	}
	cmd := &command{op: cmdHistory}
	if err := inst.call(context.Background(), cmd); err != nil {
		return inst.expandHistory() // it ended meanwhile
	}
	return cmd.history
}

func (inst *Instance) expandHistory() []Event {
	out := make([]Event, len(inst.history))
	for i := range inst.history {
		r := &inst.history[i]
		out[i] = r.event(inst, inst.detailsOf(r), i+1)
		out[i].Variables = cloneVars(out[i].Variables)
	}
	return out
}

// Variables returns a deep copy of the process variables.
func (inst *Instance) Variables() map[string]any {
	inst.mailMu.Lock()
	root, dry := inst.root, inst.dry
	inst.mailMu.Unlock()
	if dry != nil {
		return dry.variables(inst) // decoded afresh: a copy
	}
	return cloneVars(root.visible())
}

// Tokens returns where every token is and why it waits, ordered by token
// id. A finished instance has no tokens.
func (inst *Instance) Tokens(ctx context.Context) ([]Token, error) {
	cmd := &command{op: cmdTokens}
	if err := inst.call(ctx, cmd); err != nil {
		if err == ErrInstanceEnded {
			return nil, nil
		}
		return nil, err
	}
	return cmd.tokens, nil
}

// Incidents returns the open incidents of the instance.
func (inst *Instance) Incidents() []Incident {
	cmd := &command{op: cmdIncidents}
	if err := inst.call(context.Background(), cmd); err != nil {
		return nil
	}
	return cmd.incidents
}

// Cancel terminates the instance: every token is withdrawn, its jobs are
// cancelled, and it ends Terminated.
func (inst *Instance) Cancel(ctx context.Context) error {
	return inst.call(ctx, &command{op: cmdCancel, msg: "cancelled"})
}

// Wait returns the final state once the instance has ended.
func (inst *Instance) Wait(ctx context.Context) (State, error) {
	select {
	case <-inst.done:
		return inst.State(), nil
	case <-ctx.Done():
		return inst.State(), ctx.Err()
	}
}

// Message explains a Terminated or Failed instance.
func (inst *Instance) Message() string {
	select {
	case <-inst.done:
		return inst.finalMsg // written by the loop before done was closed
	default:
		return ""
	}
}

// call hands cmd to the loop and waits for its answer. A context already
// done fails the call before the loop sees it.
func (inst *Instance) call(ctx context.Context, cmd *command) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cmd.reply = make(chan error, 1)
	// Commands go by the mailbox, like every input from outside: a post
	// wakes a dehydrated instance (dehydrate.go), and with direct
	// resumption drives it. The loop answers every command posted before
	// it ended, the last ones with ErrInstanceEnded (end).
	if !inst.post(report{kind: msgCommand, more: &reportMore{cmd: cmd}}) {
		return ErrInstanceEnded
	}
	select {
	case err := <-cmd.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// record appends a record with details to the stream. ev's element,
// token and type are taken from its fields.
func (inst *Instance) record(ev Event) {
	r := record{typ: typeCode[ev.Type], token: int32(ev.TokenID)}
	if ev.ElementID != "" {
		r.node = nodeRef(inst.plan.Process.Node(ev.ElementID))
	}
	ev.ElementID, ev.ElementType, ev.TokenID = "", "", 0
	if ev.Variables != nil || ev.Message != "" || ev.JobKey != 0 || ev.JobType != "" || ev.IncidentKey != 0 ||
		ev.Name != "" || ev.CorrelationKey != "" || ev.Due != nil {
		more := ev // copied here, so that ev itself does not escape on every call
		inst.details = append(inst.details, &more)
		r.more = int32(len(inst.details))
	}
	inst.add(r)
}

// recordNode appends a record about element n.
func (inst *Instance) recordNode(t EventType, n *model.Node, token int) {
	inst.add(record{typ: typeCode[t], node: nodeRef(n), token: int32(token)})
}

// recordStep appends one of the records written at every step.
func (inst *Instance) recordStep(code uint8, n *model.Node, f *model.Flow, token int) {
	inst.add(record{typ: code, node: nodeRef(n), flow: flowRef(f), token: int32(token)})
}

// detailsOf returns the details of record r, or nil.
func (inst *Instance) detailsOf(r *record) *Event {
	if r.more == 0 {
		return nil
	}
	return inst.details[r.more-1]
}

// recordFlow appends a flowTaken record.
func (inst *Instance) recordFlow(f *model.Flow, token int) { inst.recordStep(codeFlow, nil, f, token) }

func (inst *Instance) add(r record) {
	if inst.now == 0 {
		inst.now = inst.eng.clock.Now().UnixNano()
	}
	r.at = inst.now
	inst.history = append(inst.history, r)
	inst.work.records++
	if r.node != 0 {
		inst.lastNode = r.node
	}
	if inst.work.records > inst.eng.opts.MaxRecordsPerInput {
		inst.spend()
	}
	if inst.eng.eventLog.Load() || inst.eng.observed() {
		inst.publish(len(inst.history))
	}
}

// publish hands the seq-th record to observers. It is kept out of add so
// that add's frame stays small: the loop goroutine's stack then never needs
// to grow on the hot path.
//
//go:noinline
func (inst *Instance) publish(seq int) {
	r := &inst.history[seq-1]
	more := inst.detailsOf(r)
	if inst.eng.eventLog.Load() {
		inst.eng.logRecord(logged{inst: inst, more: more, rec: *r, seq: seq})
	}
	if inst.eng.observed() {
		ev := r.event(inst, more, seq)
		inst.eng.publish(&ev)
	}
}

// loop is the instance's single writer with goroutine tracks, run on a
// goroutine of its own. It runs until the last token is gone, then
// finalizes the instance. (With direct resumption, drive does the same on
// the caller's goroutine: drive.go.) A restored instance (restore.go) has
// no start: its tokens are parked where the state document put them.
func (inst *Instance) loop(start *model.Node, trigger *Event) {
	if start != nil {
		inst.begin(start, trigger)
	}
	for len(inst.tokens) > 0 {
		if inst.proceed() {
			continue
		}
		select {
		case m := <-inst.intake:
			inst.receive(m)
			continue
		default:
		}
		// About to block: records of the next wake-up read the clock
		// afresh. Messages handled in one run share one reading.
		inst.now = 0
		if inst.atIdle() {
			return // dehydrated, and released: the first post wakes it (wakeDry)
		}
		inst.release()
		select {
		case m := <-inst.intake:
			inst.receive(m)
		case <-inst.wake:
			inst.inputs = append(inst.inputs, inst.takeMail(false)...)
		}
	}
	inst.end()
}

// begin records the instance's start and creates its first token at
// start.
func (inst *Instance) begin(start *model.Node, trigger *Event) {
	// The record shares the root's published view, a snapshot never
	// changed (scope.go); readers of the history get copies.
	vars := inst.root.vars
	if vars != nil {
		vars = inst.root.visible()
	}
	inst.record(Event{Type: InstanceStarted, Variables: vars})
	if trigger != nil {
		trigger.ElementID = start.ID
		inst.record(*trigger)
	}
	inst.openEventSubprocesses(inst.root)
	if start.Kind != model.KindStartEvent {
		inst.beginAtCatch(start)
		return
	}
	inst.spawn(start, nil, false, inst.root)
}

// proceed does the next piece of work that needs no new input: a step of
// the track with the turn (direct resumption), the turn for the next
// runnable track, or the oldest outside input once no track runs. It
// reports false when there is none. The work it finishes is released
// when the loop next waits (release), not step by step.
func (inst *Instance) proceed() bool {
	if inst.driveDirect() {
		return true
	}
	if inst.nextTurn() {
		// A goroutine track given the turn runs on its own, and the loop
		// waits for its reports; one the loop drives runs at the next call.
		return inst.running != nil
	}
	if len(inst.inputs) == 0 {
		return false
	}
	m := inst.inputs[0]
	inst.inputs[0] = report{}
	inst.inputs = inst.inputs[1:]
	inst.safeHandle(m)
	return true
}

// end finalizes the instance once its last token has gone.
func (inst *Instance) end() {
	// Commands taken but not yet handled are answered before the instance
	// ends, so that none is both answered and released as never taken.
	for _, m := range inst.inputs {
		if m.kind == msgCommand {
			inst.safeHandle(m)
		}
	}
	for _, c := range inst.dryReqs {
		inst.answer(c, ErrInstanceEnded)
		inst.released++
	}
	inst.dryReqs = nil
	late := inst.inputs
	inst.inputs = nil
	inst.finalize()
	// Mail that arrived too late finds no token: handling drops it (and
	// hands messages back to the hub); a command still in the mailbox
	// (direct resumption posts commands) learns that the instance has
	// ended. The commands among the inputs were answered above.
	for _, m := range append(late, inst.takeMail(true)...) {
		switch {
		case m.kind != msgCommand:
			inst.safeHandle(m)
		case !m.more.cmd.answered:
			inst.answer(m.more.cmd, ErrInstanceEnded)
			inst.released++
		}
	}
	inst.release()
	inst.compact()
}

// compact lets go of the loop state a finished instance no longer needs,
// so that the finished instances the engine keeps findable cost little
// more than their history and variables.
func (inst *Instance) compact() {
	inst.tokens, inst.joins, inst.jobs, inst.incidents = nil, nil, nil, nil
	inst.subs, inst.condLast, inst.comp = nil, nil, nil
	inst.runnable, inst.inputs, inst.reports = nil, nil, nil
	inst.running, inst.cause = nil, nil
}

// receive takes one message from the intake: a track's report is handled
// at once; a command waits with the other outside input until no track
// runs.
func (inst *Instance) receive(m report) {
	if !isTrackReport(m) {
		inst.inputs = append(inst.inputs, m)
		return
	}
	if m.token == inst.turn && endsTurn(m.kind) {
		inst.turn = 0
	}
	inst.safeHandle(m)
}

// safeHandle handles m, turning a panic (a bug, never bad input) into a
// failed instance: the loop goes on in stopping mode until every track has
// exited, so no goroutine is left behind and Settle stays honest.
func (inst *Instance) safeHandle(m report) {
	defer func() {
		if r := recover(); r != nil {
			inst.stopAll(Failed, fmt.Sprintf("internal error: %v", r))
			if m.kind == msgCommand && !m.more.cmd.answered {
				// Answered and released as if handled: the caller
				// learns of the failure, and the count stays exact.
				inst.answer(m.more.cmd, fmt.Errorf("internal error: %v", r))
				inst.released++
			}
		}
	}()
	inst.handle(m)
	inst.afterMove(m.kind)
	if len(inst.condLast) > 0 && !inst.stopping.Load() {
		inst.recheckConditions()
	}
	inst.idle()
}

// release subtracts the work finished since the last release.
func (inst *Instance) release() {
	if inst.released != 0 {
		inst.eng.busy.add(-inst.released)
		inst.released = 0
	}
}

// spawn starts a track at n, reached through via (nil at a start event).
// The caller has already counted nothing for it: spawn counts the new
// track as running work, except for the first token, counted by Start.
func (inst *Instance) spawn(n *model.Node, via *model.Flow, count bool, sc *scope) {
	tv := inst.newToken(n, via, count, sc)
	if inst.plan.nodes[n.Index].waitsIn(sc) {
		// A token that starts at a wait state needs no turn: the loop sets
		// up its wait now, and its track is parked there, where a
		// delivery, given with the turn, finds it.
		tv.track = newTrack(inst, tv, n, via)
		inst.waitIn(tv, n)
		return
	}
	inst.ready(wakeup{kind: wakeStart, tv: tv, node: n, via: via})
}

// newToken creates a token at n, reached through via, in scope sc, and
// records its entry (a join records it when it fires); count says whether
// it is counted as running work now.
func (inst *Instance) newToken(n *model.Node, via *model.Flow, count bool, sc *scope) *tokenView {
	inst.nextToken++
	id := inst.nextToken
	tv := &tokenView{id: id, node: n, scope: sc, atJoin: inst.plan.nodes[n.Index].join}
	if !inst.direct {
		tv.ch = make(chan notice, 1)
	}
	inst.tokens[id] = tv
	sc.live++
	inst.work.tokens++
	if count {
		inst.eng.busy.add(1)
	}
	if !inst.plan.nodes[n.Index].join {
		inst.recordNode(ElementEntered, n, id)
	}
	inst.spend()
	return tv
}

// finalize records the end, publishes the final state and releases the
// instance's resources.
func (inst *Instance) finalize() {
	typ := InstanceCompleted
	switch inst.final {
	case Terminated:
		typ = InstanceTerminated
	case Failed:
		typ = InstanceFailed
	}
	inst.record(Event{Type: typ, Message: inst.finalMsg})
	inst.mu.Lock()
	inst.state = inst.final
	inst.mu.Unlock()
	inst.eng.finish(inst)
	close(inst.done)
	if inst.parent != nil {
		inst.parent.post(report{kind: evCallEnded, token: inst.parentToken, more: &reportMore{child: inst}})
	}
}

// park records that token tv is blocked waiting for a delivery, or, when
// it already is (a wait set up again), only the new reason.
func (inst *Instance) park(tv *tokenView, reason WaitReason) {
	if !tv.parked {
		tv.parked = true
		inst.released++
	}
	tv.wait = reason
	inst.endTurn(tv)
}

// notify hands notice d to a parked token. Only the first notice to a
// parked token is sent; later ones find it unparked and are dropped
// (SRD-027 FR-4). "Deliver" is kept for the hub handing an event to its
// subscriber (eventhub.Receiver), so the two hops have their own words.
func (inst *Instance) notify(tv *tokenView, d notice) bool {
	if !tv.parked || tv.closed {
		return false
	}
	tv.parked = false
	tv.wait = ""
	inst.eng.busy.add(1)
	inst.ready(wakeup{kind: wakeDeliver, tv: tv, d: d})
	return true
}

// stopAll withdraws every token, innermost element first, as an
// interrupt withdraws those of one scope: each element still entered is
// recorded terminated, with its job cancelled, now, in the loop. Parked
// tracks are woken by closing their channels (SRD-027 FR-7); running
// tracks see the stopping flag at their next step. The instance ends in
// state final once all have exited.
func (inst *Instance) stopAll(final State, why string) {
	if inst.stopping.Load() {
		return
	}
	inst.stopping.Store(true)
	inst.final = final
	inst.finalMsg = why
	inst.terminateIn(inst.root, nil)
	for _, key := range sortedKeys(inst.incidents) { // a budget incident has no token to go with
		inst.eng.unindexIncident(key)
		delete(inst.incidents, key)
	}
	inst.closeScopeSubs(inst.root)
	inst.joins = nil
	inst.orJoins = 0
}

// closeToken wakes a parked track so that it exits.
func (inst *Instance) closeToken(tv *tokenView) {
	inst.unsubscribeAll(tv)
	inst.closeBoundaries(tv)
	if tv.closed || !tv.parked {
		return
	}
	tv.closed = true
	tv.parked = false
	inst.eng.busy.add(1) // running again until it reports its exit
	inst.ready(wakeup{kind: wakeClose, tv: tv})
}

// removeToken forgets an exited token. The last token of a sub-process
// scope completes it.
func (inst *Instance) removeToken(tv *tokenView, terminated bool) {
	if terminated && tv.node != nil && !tv.atJoin {
		inst.recordNode(ElementTerminated, tv.node, tv.id)
	}
	inst.unsubscribeAll(tv)
	inst.closeBoundaries(tv)
	delete(inst.tokens, tv.id)
	inst.endTurn(tv)
	inst.released++
	sc := tv.scope
	sc.live--
	if inst.comp != nil {
		inst.tokenGone(tv, !terminated)
	}
	if sc.live == 0 && !sc.done && sc.parent != nil && !inst.stopping.Load() {
		inst.completeScope(sc)
	}
}

func sortedKeys[K int | int64, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

func (inst *Instance) openIncident(tv *tokenView, n *model.Node, jobKey int64, msg string) int64 {
	key := inst.eng.NextKey()
	if inst.incidents == nil {
		inst.incidents = make(map[int64]*incidentState)
	}
	inc := Incident{Key: key, InstanceKey: inst.key, ElementID: n.ID, JobKey: jobKey, Message: msg}
	inst.incidents[key] = &incidentState{incident: inc, token: tv.id}
	inst.eng.indexIncident(inst, inc)
	tv.incident = key
	inst.record(Event{Type: IncidentCreated, ElementID: n.ID, ElementType: n.Kind.String(), TokenID: tv.id,
		IncidentKey: key, JobKey: jobKey, Message: msg})
	return key
}

// finished reports whether the instance has ended.
func (inst *Instance) finished() bool {
	select {
	case <-inst.done:
		return true
	default:
		return false
	}
}
