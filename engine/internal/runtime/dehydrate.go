package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"time"
)

// Dehydration. An instance whose tokens all wait for outside input (a
// job, a message, a signal, a timer, a called instance, an incident) can
// let go of its loop state and its goroutines and be kept as its state
// document, the one a checkpoint writes (document.go), encoded
// (RATIONALE.md, "Why is a dehydrated instance its state document?").
//
// The *Instance itself stays: it is the stable receiver the hub's
// subscriptions, the job and incident indexes, called instances and
// callers, and the user's handles hold. What it keeps while dry is its
// identity (key, plan, caller), its lifecycle state, its mailbox and the
// document. Whatever reaches it (a post from the hub or another instance,
// a command) rehydrates it first: the first one to find it dry sets
// waking, under mailMu, and rebuilds the loop state from the document
// exactly as Restore does (restore.go), so the instance goes on as a
// restored one would, and as it would have without dehydration. Later
// ones only queue, so concurrent deliveries rehydrate it exactly once,
// and the loop then decides among them as it always does (first delivery
// to a parked token wins).
//
// The loop dehydrates the instance only at an idle point (no token moves,
// no input waits), and only after it made sure under mailMu that nothing
// arrived meanwhile. Every input from outside, commands included, comes
// by the mailbox, so that check covers them all.

// retire tells a parked goroutine track to send its continuation on
// notice.capture and end its goroutine: the loop keeps the track as the
// continuation of a parked token without a goroutine (tokenView.track).
const retire = capture + 1

// errBusy says that input arrived while the loop dehydrated: it stays
// awake and tries again at its next idle point.
var errBusy = errors.New("input arrived")

// dryState is what a dehydrated instance keeps of its loop state. Its
// document is read only through document. Once made, only doc changes
// (Stored): inst.dry itself is changed only by whoever rehydrates, which
// a driver reads without the lock (drive.go).
type dryState struct {
	// doc is the instance's state document (InstDoc), encoded
	// (drydoc.go); nil once a store holds exactly that document
	// (KeepDryIn), which document then reads back. Guarded by the
	// instance's mailMu.
	doc []byte
	// kids are the instances its tokens' call activities wait for, by
	// token: the document names them by key, and one may end (leaving
	// the live set) before its caller rehydrates. (The token is kept here
	// rather than read from the child, whose own rehydration writes it.)
	kids []kid
}

// kid is an instance a token's call activity waits for.
type kid struct {
	token int
	inst  *Instance
}

// Dehydrated reports whether the instance is dehydrated now.
func (inst *Instance) Dehydrated() bool {
	inst.mailMu.Lock()
	defer inst.mailMu.Unlock()
	return inst.dry != nil
}

// Dehydrate asks the loop to dehydrate the instance at its next idle
// point and waits until it has. A dehydrated instance returns at once; an
// instance that ends first returns ErrInstanceEnded.
func (inst *Instance) Dehydrate(ctx context.Context) error {
	if inst.Dehydrated() {
		return nil
	}
	return inst.call(ctx, &command{op: cmdDehydrate})
}

// Dehydrate settles the engine and dehydrates every live instance that
// is not dehydrated yet, a few at a time per processor. It returns how
// many it dehydrated.
func (e *Engine) Dehydrate(ctx context.Context) (int, error) {
	if err := e.Settle(ctx); err != nil {
		return 0, err
	}
	return e.dehydrateIdle(ctx, 0)
}

// dehydrateIdle dehydrates the live instances that are not dry and, with
// idle > 0, have been idle for at least that long.
func (e *Engine) dehydrateIdle(ctx context.Context, idle time.Duration) (int, error) {
	e.mu.Lock()
	live := make([]*Instance, 0, len(e.live))
	for _, inst := range e.live { // in no order: each is dehydrated on its own
		live = append(live, inst)
	}
	e.mu.Unlock()
	var todo []*Instance
	now := time.Now().UnixNano()
	for _, inst := range live {
		if inst.Dehydrated() {
			continue
		}
		if idle > 0 {
			at := inst.idleSince.Load()
			if at == 0 || now-at < int64(idle) {
				continue
			}
		}
		todo = append(todo, inst)
	}
	if len(todo) == 0 {
		return 0, nil
	}
	errs := make([]error, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(todo), 4*goruntime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := todo[i].Dehydrate(ctx); err != nil && !errors.Is(err, ErrInstanceEnded) {
					errs[i] = fmt.Errorf("dehydrate instance %d: %w", todo[i].key, err)
				}
			}
		}()
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	n := 0
	for i, err := range errs {
		if err == nil && todo[i].Dehydrated() {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// sweep dehydrates, every half of the idle time, the instances idle for
// at least that long, until stop is closed (Engine.Close).
func (e *Engine) sweep(idle time.Duration, stop <-chan struct{}) {
	defer close(e.swept)
	tick := time.NewTicker(max(idle/2, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), max(idle, time.Second))
			n, _ := e.dehydrateIdle(ctx, idle) // an instance busy past the timeout dehydrates at its next idle point
			cancel()
			if changed := e.dryChanged.Load(); n > 0 && changed != nil {
				(*changed)()
			}
		}
	}
}

// atIdle is called by the loop at an idle point. It dehydrates the
// instance when the engine's policy or a request wants it, answers the
// requests, and reports whether the instance is now dry: the loop then
// stops running it.
func (inst *Instance) atIdle() bool {
	if inst.eng.opts.DehydrateAfter > 0 {
		inst.idleSince.Store(time.Now().UnixNano())
	}
	eager := inst.eng.opts.Dehydrate && inst.eng.opts.DehydrateAfter == 0
	if !eager && len(inst.dryReqs) == 0 || !inst.still() {
		return false
	}
	reqs := inst.dryReqs
	inst.dryReqs = nil // before: once dry, another loop may run it
	err := inst.dehydrate()
	if errors.Is(err, errBusy) {
		inst.dryReqs = reqs // they wait for the next idle point
		return false
	}
	for _, c := range reqs {
		inst.answer(c, err)
	}
	// Released last: Settle returns only once the instance is dry.
	inst.eng.busy.add(-int64(len(reqs)))
	return err == nil
}

// still reports whether no token of the instance moves and no input
// waits, and it is not ending.
func (inst *Instance) still() bool {
	return !inst.stopping.Load() && !inst.moving() && len(inst.inputs) == 0 && inst.running == nil && len(inst.reports) == 0
}

// dehydrate replaces the loop state of the idle instance by its state
// document and ends its tracks' goroutines. The loop calls it; when it
// returns nil the instance is dry and the loop must not touch it again.
func (inst *Instance) dehydrate() error {
	if !inst.still() {
		return fmt.Errorf("dehydrate instance %d: %w", inst.key, ErrNotSettled)
	}
	if !inst.direct {
		// Parked goroutine tracks hand over their continuations and end;
		// the loop keeps them as it keeps a track that started parked.
		for _, id := range sortedKeys(inst.tokens) {
			tv := inst.tokens[id]
			if tv.track != nil || !tv.parked || tv.closed {
				continue
			}
			reply := make(chan track, 1)
			tv.ch <- notice{kind: retire, capture: reply} // never blocks: the slot is empty while the track is parked
			t := <-reply
			tv.track = &t
		}
	}
	doc, err := inst.checkpoint(inst.plan.names(), 0)
	if err != nil {
		return err
	}
	data, err := encodeDry(doc)
	if err != nil {
		return fmt.Errorf("dehydrate instance %d: %w", inst.key, err)
	}
	var kids []kid
	for _, id := range sortedKeys(inst.tokens) {
		if c := inst.tokens[id].child; c != nil {
			kids = append(kids, kid{id, c})
		}
	}
	inst.mailMu.Lock()
	if len(inst.mail) > 0 {
		inst.mailMu.Unlock()
		return errBusy // its post has signalled wake: the loop goes on
	}
	released := inst.released
	inst.dry = &dryState{doc: data, kids: kids}
	inst.intake, inst.wake = nil, nil
	inst.root = nil
	inst.history, inst.details = nil, nil
	inst.loopState = nil
	inst.mailMu.Unlock()
	if inst.eng.dryStore.Load() != nil {
		// The next commit writes it, after which its document lives
		// only in the store (Stored).
		inst.markDirty()
	}
	// Released once dry, so that Settle returns only then.
	inst.eng.busy.add(-released)
	return nil
}

// DryReader reads the state document of the live instance key (InstDoc,
// with its whole history, as JSON) from the store the engine commits to.
type DryReader func(key int64) ([]byte, error)

// KeepDryIn makes the documents of dehydrated instances live in the
// store read reads from, rather than in memory: once a commit has
// written a dry instance (Stored), it keeps only its *Instance and read
// brings its document back when something reaches it. changed is
// called after the idle sweep (an idle time) dehydrated instances, which
// no command's commit would write soon. The engine's store calls it when
// it attaches.
//
// # Why
//
// Dry in memory, an instance still costs its compressed document (about
// 1 KB for a message catch); the store holds that same document after a
// commit, so a second copy in memory only bounds by RAM how many
// instances can wait, which is what dehydration is for.
func (e *Engine) KeepDryIn(read DryReader, changed func()) {
	e.dryChanged.Store(&changed)
	e.dryStore.Store(&read)
}

// Stored tells the engine that d, from CheckpointDirty, is in the store:
// a dehydrated instance it wrote that has not changed since lets go of its
// document, which the store now holds as it is (KeepDryIn).
func (e *Engine) Stored(d *Dirty) {
	if e.dryStore.Load() == nil {
		return
	}
	for _, inst := range d.taken {
		inst.mailMu.Lock()
		// Not dirty: nothing reached it since its document was taken
		// (the loop lists it before it handles any input), so the
		// store holds its state; not waking: no rehydration reads it.
		if dry := inst.dry; dry != nil && dry.doc != nil && !inst.waking && !inst.dirty.Load() && !inst.mailClosed {
			dry.doc = nil
		}
		inst.mailMu.Unlock()
	}
}

// wakeDry is a goroutine-track instance's loop after a post found it
// dry: it rehydrates the instance and runs its loop.
func (inst *Instance) wakeDry() {
	inst.rehydrate()
	inst.loop(nil, nil)
}

// rehydrate rebuilds the loop state of a dry instance from its document,
// as Restore does, and takes its mail. It runs on the goroutine that then
// runs the loop (wakeDry) or drives the instance (drive).
func (inst *Instance) rehydrate() {
	inst.mailMu.Lock()
	dry := inst.dry
	inst.mailMu.Unlock()
	root, err := inst.load(dry)
	inst.mailMu.Lock()
	defer inst.mailMu.Unlock()
	if err != nil {
		// The document is the engine's own: failing to read it is a bug,
		// or the store that holds it failed (KeepDryIn). The instance
		// fails rather than hang with its input, and takes
		// its jobs and incidents out of the engine's indexes.
		inst.tokens = map[int]*tokenView{}
		root = newScope(0, nil, nil, nil)
		inst.final, inst.finalMsg = Failed, fmt.Sprintf("internal error: rehydrating: %v", err)
		e := inst.eng
		e.mu.Lock()
		for key, owner := range e.jobs {
			if owner == inst {
				delete(e.jobs, key)
				delete(e.jobRecs, key)
			}
		}
		for key, owner := range e.incidents {
			if owner.inst == inst {
				delete(e.incidents, key)
			}
		}
		e.mu.Unlock()
	}
	inst.root = root
	if !inst.direct {
		inst.intake = make(chan report, intakeDepth)
		inst.wake = make(chan struct{}, 1)
	}
	inst.dry, inst.waking = nil, false
	inst.inputs = append(inst.inputs, inst.mail...)
	inst.mail = nil
}

// load rebuilds the loop state of inst from dry and returns its process
// scope, which the caller publishes under mailMu.
func (inst *Instance) load(dry *dryState) (*scope, error) {
	inst.loopState = &loopState{}
	inst.reports = inst.reportBuf[:0]
	inst.final, inst.finalMsg = Completed, ""
	d, err := dry.document(inst)
	if err != nil {
		return nil, err
	}
	inst.tokens = make(map[int]*tokenView, len(d.Tokens))
	rs := &restorer{e: inst.eng, plans: map[int64]*planIndex{inst.plan.Key: inst.plan.names()}}
	nm := names{inst.plan.names()}
	scopes, err := rs.history(inst, nm, d)
	if err != nil {
		return nil, err
	}
	if err := rs.parked(inst, nm, scopes, d); err != nil {
		return nil, err
	}
	for _, k := range dry.kids {
		if tv := inst.tokens[k.token]; tv != nil {
			tv.child = k.inst
		}
	}
	// The engine's job index holds the job records the instance had: they
	// are replaced, never changed (failJob), so the instance takes them
	// back rather than keep copies.
	e := inst.eng
	e.mu.Lock()
	for key, js := range inst.jobs {
		if rec := e.jobRecs[key]; rec != nil {
			js.job = rec
		}
	}
	e.mu.Unlock()
	return scopes[0], nil
}

// dryDoc returns the state document of the instance if it is dry, as a
// checkpoint writes it (its history from the record at index from),
// without waking it; ok is false if it is awake.
func (inst *Instance) dryDoc(from int) (d InstDoc, ok bool, err error) {
	inst.mailMu.Lock()
	dry := inst.dry
	inst.mailMu.Unlock()
	if dry == nil {
		return d, false, nil
	}
	if d, err = dry.document(inst); err != nil {
		return d, true, fmt.Errorf("checkpoint: instance %d: reading its dehydrated state: %w", inst.key, err)
	}
	if from < 0 || from > len(d.History) {
		return d, true, fmt.Errorf("checkpoint: instance %d: history from record %d of %d", inst.key, from, len(d.History))
	}
	d.History = d.History[from:]
	return d, true, nil
}

// document returns the state document of inst, dry as dry says: from
// memory, or from the store that holds it.
func (dry *dryState) document(inst *Instance) (InstDoc, error) {
	var d InstDoc
	inst.mailMu.Lock()
	doc := dry.doc
	inst.mailMu.Unlock()
	if doc == nil {
		read := inst.eng.dryStore.Load()
		if read == nil {
			return d, fmt.Errorf("instance %d: its dehydrated state is in a store the engine no longer reads", inst.key)
		}
		raw, err := (*read)(inst.key)
		if err != nil {
			return d, fmt.Errorf("instance %d: reading its dehydrated state from the store: %w", inst.key, err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&d); err != nil {
			return d, fmt.Errorf("instance %d: its dehydrated state in the store: %w", inst.key, err)
		}
		if d.Key != inst.key {
			return d, fmt.Errorf("instance %d: the store holds instance %d in its place", inst.key, d.Key)
		}
		return d, d.exactNumbers()
	}
	if err := decodeDry(doc, &d); err != nil {
		return d, err
	}
	// A dry instance keeps every digit of its decimals, as a restore does.
	return d, d.exactNumbers()
}

// variables returns a copy of the process variables of a dry instance,
// read from its document.
func (dry *dryState) variables(inst *Instance) map[string]any {
	d, err := dry.document(inst)
	if err != nil {
		return nil
	}
	for _, s := range d.Scopes {
		if s.ID == 0 {
			if s.Variables == nil {
				return map[string]any{}
			}
			return s.Variables
		}
	}
	return map[string]any{}
}
