package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// Store keeps an engine's state durable (WithStore). It holds the state
// document of engine/STATE.md cut in pieces, so that a command rewrites
// only what it changed: one engine-level document (clock, key counter,
// message buffer, timer start events), the deployments (appended, never
// rewritten), and per live instance, by instance key, its document
// without history and its history in chunks (appended, never
// rewritten).
//
// engine/boltstore is the embedded implementation (one local file). A
// Store is used by one engine at a time; the engine calls Commit from one
// goroutine, never concurrently with itself.
type Store interface {
	// Load returns everything the store holds; an empty store returns a
	// StoreState with a nil Engine.
	Load(ctx context.Context) (*StoreState, error)
	// Instance returns one instance's document and history, or an error
	// wrapping ErrUnknownInstance when the store holds none by that key.
	Instance(ctx context.Context, key int64) (*StoredInstance, error)
	// Commit applies b atomically: after a crash the store holds all of
	// it or none of it. Unless the store was opened without syncing, it
	// is on stable storage when Commit returns.
	Commit(ctx context.Context, b *StoreBatch) error
}

// StoreState is what a Store holds.
type StoreState struct {
	// Engine is the engine-level document; nil when the store is empty.
	Engine []byte
	// Deployments are the deployment documents, in the order committed.
	Deployments [][]byte
	// Instances are the instances by key.
	Instances map[int64]*StoredInstance
}

// StoredInstance is one instance as a Store holds it.
type StoredInstance struct {
	// Doc is the instance's document (STATE.md, Instance) without its
	// history.
	Doc []byte
	// History is its history, in chunks in record order.
	History []HistoryChunk
}

// HistoryChunk is a run of an instance's history records.
type HistoryChunk struct {
	// From is the index in the history of the chunk's first record.
	From int
	// Records is a JSON array of records (STATE.md, Instance, history).
	Records []byte
}

// StoreBatch is what one commit writes: the state changed by the commands
// it makes durable.
type StoreBatch struct {
	// Engine replaces the engine-level document.
	Engine []byte
	// Deployments are appended after those committed before.
	Deployments [][]byte
	// Put writes instance documents (without history) by key; History
	// appends a chunk to instances' histories, by key. Delete removes
	// the documents and histories of instances that have finished.
	Put     map[int64][]byte
	History map[int64]HistoryChunk
	Delete  []int64
}

// ErrStoreNotEmpty is returned by Restore given WithStore with a store that
// already holds state: New opens such a store.
var ErrStoreNotEmpty = errors.New("flowtrack: the store already holds an engine's state")

// WithStore makes the engine durable in s. New with a store that holds
// state resumes it: every instance goes on where it was (as Restore does,
// so the clock rules of Restore apply), and on the real clock timers that
// fell due while no engine ran fire at once, in due order. A store that is
// empty gets the new engine's state.
//
// A command (Deploy, Start, CompleteJob, FailJob, ThrowError,
// PublishMessage, BroadcastSignal, Advance, AdvanceTo, ResolveIncident,
// Instance.Cancel) that returns without error has been made durable: the
// engine settles after it and commits what changed. Commands that run at
// the same time share one commit (group commit), so concurrent callers
// share the cost of a sync. A command whose commit fails returns the
// store's error (wrapped): it was taken by the engine but is not known to
// be durable, and the next commit writes it again. What changes without a command (timers firing
// on the real clock) is committed with the next command, or by Close.
//
// The engine does not close s; close it after the engine. Observers
// (Subscribe) must not give the engine input from inside their callback
// (start a goroutine for that): a commit waits for the engine, observers
// included, to settle, and the command would wait for the commit.
//
// # Why
//
// Writing after the command settles, rather than logging commands, needs
// no replay on open (STATE.md: restore is not a replay), and writing only
// the instances whose state changed keeps a commit proportional to the
// work the commands did, not to the engine's size.
func WithStore(s Store) Option { return func(cfg *config) { cfg.store = s } }

// durability commits the engine's state to its store after commands.
type durability struct {
	store Store
	// gate is held for reading by commands while they give the engine
	// input, and for writing by a commit while it takes its snapshot: a
	// snapshot never sees a command half given.
	gate sync.RWMutex

	mu      sync.Mutex
	pending []chan error // the commands waiting for the next commit
	closed  bool
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}

	// The committer's own: what the store holds.
	stored  map[int64]int // the instances by key: their history records
	deploys int           // deployments written
}

// durably runs command apply under the store's rules: when it returns
// without error, what it did has been committed. Without a store it only
// runs apply.
func (e *Engine) durably(ctx context.Context, apply func() error) error {
	d := e.dur
	if d == nil {
		return apply()
	}
	d.gate.RLock()
	err := apply()
	d.gate.RUnlock()
	if err != nil {
		return err
	}
	return d.await(ctx)
}

// await waits for a commit whose snapshot is taken after now.
func (d *durability) await(ctx context.Context) error {
	ch := make(chan error, 1)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return fmt.Errorf("commit: %w", ErrClosed)
	}
	d.pending = append(d.pending, ch)
	d.mu.Unlock()
	select {
	case d.kick <- struct{}{}:
	default: // a kick is already waiting
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("commit: the command was taken but is not known to be durable: %w", ctx.Err())
	}
}

// attach starts committing e's state to s. stored holds the instances s
// holds and how many history records of each, deploys how many
// deployments.
func (e *Engine) attach(s Store, stored map[int64]int, deploys int) {
	if stored == nil {
		stored = map[int64]int{}
	}
	d := &durability{store: s, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		stored: stored, deploys: deploys}
	e.dur = d
	go d.run(e)
}

// run is the committer: it takes the waiting commands, commits once for
// all of them, and answers them. Commands arriving during a commit wait
// for the next one, which is how several share one sync.
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
		batch := d.pending
		d.pending = nil
		d.mu.Unlock()
		if len(batch) == 0 {
			d.gate.Unlock()
			continue
		}
		b, w, taken, err := d.snapshot(e)
		d.gate.Unlock()
		if err == nil {
			if err = d.store.Commit(context.Background(), b); err != nil {
				err = fmt.Errorf("commit: %w", err)
				e.rt.Redirty(taken) // the next commit writes them
			} else {
				d.committed(b, w)
			}
		}
		for _, ch := range batch {
			ch <- err
		}
	}
}

// snapshot settles the engine and writes what changed since the last
// commit. The caller holds the gate, so no command gives input meanwhile;
// a timer firing on the real clock may still move an instance, and the
// snapshot is then taken again.
func (d *durability) snapshot(e *Engine) (b *StoreBatch, w *written, taken []*runtime.Instance, err error) {
	for {
		doc, ended, taken, err := e.rt.CheckpointDirty(context.Background(), func(key int64) int { return d.stored[key] })
		if errors.Is(err, ErrNotSettled) {
			continue // a timer fired meanwhile: take it again
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("commit: %w", err)
		}
		b, w, err := d.batchOf(doc, ended)
		if err != nil {
			e.rt.Redirty(taken)
			return nil, nil, nil, err
		}
		return b, w, taken, nil
	}
}

// batchOf cuts doc into what the store does not hold yet.
func (d *durability) batchOf(doc *runtime.Document, ended []int64) (*StoreBatch, *written, error) {
	b := &StoreBatch{Put: make(map[int64][]byte, len(doc.Live)), History: make(map[int64]HistoryChunk, len(doc.Live))}
	w := &written{deploys: len(doc.Deploys), records: make(map[int64]int, len(doc.Live))}
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
	for _, key := range ended {
		if _, ok := d.stored[key]; ok {
			b.Delete = append(b.Delete, key)
		}
	}
	doc.Deploys, doc.Live = nil, nil
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
}

// written is what a batch adds to what the store holds, besides its
// pieces: the deployments in all, and the history records of each
// instance written.
type written struct {
	deploys int
	records map[int64]int
}

// close commits what changed without a command and stops the committer.
func (d *durability) close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.mu.Unlock()
	err := d.await(context.Background())
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	close(d.stop)
	<-d.done
	return err
}

// documentOf puts what a store holds together into one state document,
// and counts the history records of each instance.
func documentOf(st *StoreState) ([]byte, map[int64]int, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(st.Engine, &doc); err != nil {
		return nil, nil, fmt.Errorf("%w: the store's engine document: %v", ErrBadState, err)
	}
	deploys := make([]json.RawMessage, len(st.Deployments))
	for i, raw := range st.Deployments {
		deploys[i] = raw
	}
	keys := make([]int64, 0, len(st.Instances))
	for k := range st.Instances {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	insts := make([]json.RawMessage, len(keys))
	counts := make(map[int64]int, len(keys))
	for i, k := range keys {
		raw, n, err := instanceDocument(k, st.Instances[k])
		if err != nil {
			return nil, nil, err
		}
		insts[i], counts[k] = raw, n
	}
	var err error
	if doc["deployments"], err = json.Marshal(deploys); err != nil {
		return nil, nil, fmt.Errorf("%w: the store's deployments: %v", ErrBadState, err)
	}
	if doc["instances"], err = json.Marshal(insts); err != nil {
		return nil, nil, fmt.Errorf("%w: the store's instances: %v", ErrBadState, err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	return raw, counts, nil
}

// instanceDocument puts a stored instance's document and history chunks
// together into its document (STATE.md, Instance), and counts its
// history records.
func instanceDocument(key int64, si *StoredInstance) ([]byte, int, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(si.Doc, &doc); err != nil {
		return nil, 0, fmt.Errorf("%w: the store's instance %d: %v", ErrBadState, key, err)
	}
	history := []json.RawMessage{}
	for _, c := range si.History {
		if c.From != len(history) {
			return nil, 0, fmt.Errorf("%w: the store's instance %d: a history chunk starts at record %d, after %d records", ErrBadState, key, c.From, len(history))
		}
		var records []json.RawMessage
		if err := json.Unmarshal(c.Records, &records); err != nil {
			return nil, 0, fmt.Errorf("%w: the store's instance %d: history from record %d: %v", ErrBadState, key, c.From, err)
		}
		history = append(history, records...)
	}
	var err error
	if doc["history"], err = json.Marshal(history); err != nil {
		return nil, 0, fmt.Errorf("%w: the store's instance %d: %v", ErrBadState, key, err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: the store's instance %d: %v", ErrBadState, key, err)
	}
	return raw, len(history), nil
}
