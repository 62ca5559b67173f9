package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// durability commits the engine's state to its store after commands.
//
// # Lock order
//
// gate is taken before every lock of the engine's runtime: a command holds
// it for reading while it gives the engine input (with direct resumption
// the instances run on the command's goroutine, under it), the committer
// for writing while it takes its snapshot (runtime.Engine.CheckpointDirty,
// which takes the runtime's Engine.mu, dirtyMu, Instance.mailMu and the
// hub's lock). mu is a leaf, taken under the gate or alone. Nothing in the
// runtime takes either: the store's callbacks (timerFired, the dry reader)
// run with no runtime lock held. The runtime's own order is in the package
// comment of engine/internal/runtime.
//
// A command must not wait, while it holds the gate, for anything that waits
// for a commit. Settling waits for observers, which may give commands
// that wait for their commits, and those for the gate: so AdvanceTo, which
// settles after each firing, holds the gate only while it fires timers and
// moves the clock, not while it settles (durablyHeld). A commit may then
// come between two firings of one AdvanceTo: it snapshots a settled
// engine, as of the due time reached, which is a state AdvanceTo to that
// time would have left (see "Hazards" in the runtime's package comment).
type durability struct {
	store Store
	// gate is held for reading by commands while they give the engine
	// input, and for writing by a commit while it takes its snapshot: a
	// snapshot never sees a command half given.
	gate sync.RWMutex

	mu      sync.Mutex
	pending []chan error // the commands waiting for the next commit
	fired   bool         // a timer fired since the last commit
	closed  bool         // set under the gate too: no command is taken after
	lost    bool         // a commit failed with ErrStoreLost: no command is taken after
	kick    chan struct{}
	// final is the result of the last commit, Close's; set before stop
	// closes, read after done has.
	final error
	// report receives the errors of commits nobody waits for (after timers).
	report func(error)
	stop   chan struct{}
	done   chan struct{}

	// The committer's own: what the store holds.
	stored  map[int64]int // the instances by key: their history records
	deploys int           // deployments written
	msgGen  uint64        // the message buffer's count of changes written; 0 for none
}

// durably runs command apply under the store's rules: when it returns
// without error, what it did has been committed. An error wrapping
// ErrNotAcknowledged means apply took effect but its commit failed or
// was not waited for (WithStore). Without a store it only runs apply.
func (e *Engine) durably(ctx context.Context, apply func() error) error {
	d := e.dur
	if d == nil {
		return apply()
	}
	d.gate.RLock()
	d.mu.Lock()
	closed, lost := d.closed, d.lost
	d.mu.Unlock()
	switch {
	case closed:
		d.gate.RUnlock()
		return ErrClosed // not taken: Close's commit has begun
	case lost:
		d.gate.RUnlock()
		return fmt.Errorf("%w: %w", ErrClosed, ErrStoreLost) // not taken: no commit would hold it
	}
	err := apply()
	d.gate.RUnlock()
	if err != nil {
		return err
	}
	if err := d.await(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrNotAcknowledged, err)
	}
	return nil
}

// durablyHeld runs command apply as durably does, for a command that
// gives the engine input in steps and waits between them (AdvanceTo): it
// holds the gate for reading only while hold's lock is held, around each
// step, and each step is refused with ErrClosed once Close has begun (the
// steps taken before are in Close's commit).
func (e *Engine) durablyHeld(ctx context.Context, apply func(hold func() (func(), error)) error) error {
	d := e.dur
	if d == nil {
		return apply(nil)
	}
	if err := apply(d.hold); err != nil {
		return err
	}
	if err := d.await(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrNotAcknowledged, err)
	}
	return nil
}

// hold takes the gate for reading for one step of a command given in
// steps (durablyHeld), and returns its release; or, once Close has begun
// or the store is lost, ErrClosed and nothing held.
func (d *durability) hold() (func(), error) {
	d.gate.RLock()
	d.mu.Lock()
	closed, lost := d.closed, d.lost
	d.mu.Unlock()
	switch {
	case closed:
		d.gate.RUnlock()
		return nil, ErrClosed
	case lost:
		d.gate.RUnlock()
		return nil, fmt.Errorf("%w: %w", ErrClosed, ErrStoreLost)
	}
	return d.gate.RUnlock, nil
}

// await waits for a commit whose snapshot is taken after now.
func (d *durability) await(ctx context.Context) error {
	ch := make(chan error, 1)
	d.mu.Lock()
	if d.closed {
		// Close set closed after this command's input, so its commit,
		// the last one, holds it.
		d.mu.Unlock()
		<-d.done
		return d.final
	}
	d.pending = append(d.pending, ch)
	d.mu.Unlock()
	d.signal()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("commit: %w", ctx.Err())
	}
}

// timerFired has the committer commit what a timer the clock fired
// changed, with no command to wait for it.
func (d *durability) timerFired() {
	d.mu.Lock()
	d.fired = true
	d.mu.Unlock()
	d.signal()
}

// signal wakes the committer.
func (d *durability) signal() {
	select {
	case d.kick <- struct{}{}:
	default: // a kick is already waiting
	}
}

// attach starts committing e's state to s. stored holds the instances s
// holds and how many history records of each, deploys how many
// deployments.
func (e *Engine) attach(s Store, stored map[int64]int, deploys int) {
	if stored == nil {
		stored = map[int64]int{}
	}
	report := e.cfg.onError
	if report == nil {
		report = runtime.LogError
	}
	d := &durability{store: s, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		report: report, stored: stored, deploys: deploys}
	e.dur = d
	// A dehydrated instance's document lives in the store once a commit
	// has written it (runtime.Engine.KeepDryIn).
	// Instances the idle sweep dehydrates are committed as a fired timer
	// is: a change no command waits for.
	e.rt.KeepDryIn(func(key int64) ([]byte, error) {
		si, err := s.Instance(context.Background(), key)
		if err != nil {
			return nil, err
		}
		raw, _, err := instanceDocument(key, si)
		return raw, err
	}, d.timerFired)
	// A virtual clock fires timers only inside Advance and AdvanceTo,
	// commands whose commit holds what the timers did.
	if _, virtual := e.rt.Clock().(*clock.Virtual); !virtual {
		e.rt.OnTimerFired(d.timerFired)
	}
	go d.run(e)
}

// run is the committer: it takes the waiting commands, commits once for
// all of them, and answers them. Commands arriving during a commit wait
// for the next one, which is how several share one sync. Timers that
// fired share a commit the same way; when no command waits for it, its
// error goes to the error handler.
func (d *durability) run(e *Engine) {
	defer close(d.done)
	for {
		select {
		case <-d.kick:
		case <-d.stop:
			return
		}
		d.gate.Lock()
		d.mu.Lock()
		batch, fired, last := d.pending, d.fired, d.closed
		d.pending, d.fired = nil, false
		d.mu.Unlock()
		if len(batch) == 0 && !fired {
			d.gate.Unlock()
			continue
		}
		dirty, err := d.snapshot(e)
		d.gate.Unlock() // the documents are copies: encoding and syncing them holds no command back
		if err == nil {
			err = d.commit(e, dirty, last)
		}
		if errors.Is(err, ErrStoreLost) {
			d.mu.Lock()
			d.lost = true
			d.mu.Unlock()
		}
		for _, ch := range batch {
			ch <- err
		}
		if err != nil && len(batch) == 0 {
			d.report(fmt.Errorf("after a timer fired: %w (the next commit writes it again)", err))
		}
	}
}

// commit writes what changed to the store, or gives it back to the engine
// for the next commit. Close's commit, the last, marks the engine document
// closed cleanly (closedMark).
func (d *durability) commit(e *Engine, dirty *runtime.Dirty, last bool) error {
	b, w, err := d.batchOf(dirty)
	if err == nil && last {
		b.Engine = markClosed(b.Engine)
	}
	if err == nil {
		if err = d.store.Commit(context.Background(), b); err != nil {
			err = fmt.Errorf("commit: %w", err)
		}
	}
	if err != nil {
		e.rt.Redirty(dirty) // the next commit writes them
		return err
	}
	d.committed(b, w)
	e.rt.Stored(dirty)
	return nil
}

// snapshot settles the engine and writes what changed since the last
// commit. The caller holds the gate, so no command gives input meanwhile;
// a timer firing on the real clock may still move an instance, and the
// snapshot is then taken again.
func (d *durability) snapshot(e *Engine) (*runtime.Dirty, error) {
	for {
		dirty, err := e.rt.CheckpointDirty(context.Background(), func(key int64) int { return d.stored[key] }, d.msgGen)
		if errors.Is(err, ErrNotSettled) {
			continue // a timer fired meanwhile: take it again
		}
		if err != nil {
			return nil, fmt.Errorf("commit: %w", err)
		}
		return dirty, nil
	}
}

// batchOf cuts what changed into what the store does not hold yet.
func (d *durability) batchOf(dirty *runtime.Dirty) (*StoreBatch, *written, error) {
	doc := dirty.Doc
	b := &StoreBatch{Put: make(map[int64][]byte, len(doc.Live)), History: make(map[int64]HistoryChunk, len(doc.Live)), Evict: dirty.Evicted}
	w := &written{deploys: len(doc.Deploys), records: make(map[int64]int, len(doc.Live)), msgGen: dirty.MessageGen}
	if !dirty.MessagesSame {
		msgs := doc.Hub.Messages
		if msgs == nil {
			msgs = []runtime.MessageDoc{}
		}
		raw, err := json.Marshal(msgs)
		if err != nil {
			return nil, nil, fmt.Errorf("commit: message buffer: %w", err)
		}
		b.Messages = raw
		doc.Hub.Messages = nil // the engine document leaves it to its own piece
	}
	for _, dep := range doc.Deploys[d.deploys:] {
		raw, err := json.Marshal(dep)
		if err != nil {
			return nil, nil, fmt.Errorf("commit: deployment %s: %w", dep.Name, err)
		}
		b.Deployments = append(b.Deployments, raw)
	}
	for i := range doc.Live {
		inst := &doc.Live[i]
		from := d.stored[inst.Key]
		w.records[inst.Key] = from + len(inst.History)
		if len(inst.History) > 0 {
			raw, err := json.Marshal(inst.History)
			if err != nil {
				return nil, nil, fmt.Errorf("commit: instance %d history: %w", inst.Key, err)
			}
			b.History[inst.Key] = HistoryChunk{From: from, Records: raw}
			inst.History = nil
		}
		raw, err := json.Marshal(inst)
		if err != nil {
			return nil, nil, fmt.Errorf("commit: instance %d: %w", inst.Key, err)
		}
		b.Put[inst.Key] = raw
	}
	for _, key := range dirty.Ended {
		if _, ok := d.stored[key]; ok {
			b.Delete = append(b.Delete, key)
		}
	}
	for i := range doc.Finished {
		raw, err := json.Marshal(&doc.Finished[i])
		if err != nil {
			return nil, nil, fmt.Errorf("commit: finished instance %d: %w", doc.Finished[i].Key, err)
		}
		b.Finished = append(b.Finished, FinishedInstance{Key: doc.Finished[i].Key, Doc: raw})
	}
	doc.Deploys, doc.Live, doc.Finished = nil, nil, nil
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("commit: engine state: %w", err)
	}
	b.Engine = raw
	return b, w, nil
}

// committed records what the store holds after b.
func (d *durability) committed(b *StoreBatch, w *written) {
	for key, n := range w.records {
		d.stored[key] = n
	}
	for _, key := range b.Delete {
		delete(d.stored, key)
	}
	d.deploys = w.deploys
	d.msgGen = w.msgGen
}

// written is what a batch adds to what the store holds, besides its
// pieces: the deployments in all, and the history records of each
// instance written.
type written struct {
	deploys int
	records map[int64]int
	msgGen  uint64
}

// close commits what changed without a command and stops the committer.
// Commands that come after it are refused with ErrClosed; those that came
// before share its commit.
func (d *durability) close() error {
	ch := make(chan error, 1)
	d.gate.Lock() // no command is half given when closed is set
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		d.gate.Unlock()
		<-d.done // another Close commits: the engine must not stop before
		return nil
	}
	d.closed = true
	d.pending = append(d.pending, ch) // the last commit: every command taken is in it or before it
	d.mu.Unlock()
	d.gate.Unlock()
	d.signal()
	err := <-ch
	d.final = err
	close(d.stop)
	<-d.done
	return err
}
