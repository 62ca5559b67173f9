package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
)

// Store keeps an engine's state durable (WithStore). It holds the state
// document of engine/STATE.md cut in pieces, so that a command rewrites
// only what it changed: one engine-level document (clock, key counter,
// timer start events), the message buffer (rewritten only by the commits
// that change it), the deployments (appended, never
// rewritten), and per live instance, by instance key, its document
// without history and its history in chunks (appended, never
// rewritten).
//
// engine/boltstore is the embedded implementation (one local file),
// engine/jetstore keeps the state in a NATS JetStream stream, and
// engine/storetest is the conformance suite both run: a new Store runs it
// too. A Store is used by one engine at a time; the engine calls Commit
// from one goroutine, never concurrently with itself.
type Store interface {
	// Load returns everything the store holds; an empty store returns a
	// StoreState with a nil Engine.
	Load(ctx context.Context) (*StoreState, error)
	// Instance returns one instance's document and history, or an error
	// wrapping ErrUnknownInstance when the store holds none by that key.
	// It may run while a Commit does (the engine reads an instance back
	// while it commits others) and returns what the last commit that
	// wrote the instance wrote.
	Instance(ctx context.Context, key int64) (*StoredInstance, error)
	// Commit applies b atomically, whatever its size (a Restore commits
	// every instance at once): after a crash the store holds all of it
	// or none of it. Unless the store was opened without syncing, it is
	// on stable storage when Commit returns. A batch without Engine is
	// refused with ErrNoEngineDocument, and one whose context has ended
	// with the context's error; neither writes anything.
	Commit(ctx context.Context, b *StoreBatch) error
}

// StoreState is what a Store holds.
type StoreState struct {
	// Engine is the engine-level document; nil when the store is empty.
	Engine []byte
	// Messages is the message buffer (a JSON array, STATE.md hub.messages);
	// nil when the store holds it in Engine, as stores written before it
	// had a piece of its own do.
	Messages []byte
	// Deployments are the deployment documents, in the order committed.
	Deployments [][]byte
	// Instances are the live instances by key.
	Instances map[int64]*StoredInstance
	// Finished are the documents of the finished instances still
	// findable (WithRetainFinished), oldest first.
	Finished [][]byte
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
	// Messages, when not nil, replaces the message buffer (StoreState).
	Messages []byte
	// Deployments are appended after those committed before.
	Deployments [][]byte
	// Put writes instance documents (without history) by key; History
	// appends a chunk to instances' histories, by key. Delete removes
	// the documents and histories of instances that have finished.
	Put     map[int64][]byte
	History map[int64]HistoryChunk
	Delete  []int64
	// Finished adds the documents of instances that have finished and
	// stay findable, oldest first (they are deleted from the live ones);
	// Evict removes those of finished instances no longer findable.
	Finished []FinishedInstance
	Evict    []int64
}

// FinishedInstance is the document of a finished instance (STATE.md,
// finished).
type FinishedInstance struct {
	Key int64
	Doc []byte
}

// storeKeyGap is how far past the stored key counter an engine opened
// from its store (New with WithStore) hands out keys, unless the engine
// before it closed cleanly. Keys handed out but never committed (an
// instance or job a query or an event showed before a crash, or before
// the store was lost) are gone from the store; the next engine on it must
// not give them to something else, for a caller that saw one would then
// act on the wrong instance or job. A command hands out a few keys and
// every acknowledged command is committed, so no engine runs 2^20 keys
// ahead of its store; the gap is committed before the engine takes a
// command, and 2^43 keys of a partition (WithKeySpace) last 8 million
// openings after crashes.
const storeKeyGap = 1 << 20

// closedMark is the member Close's last commit adds to the store's engine
// document: everything the engine handed out is in the store, so the next
// engine needs no key gap. The first commit of the next engine, before it
// takes a command, writes the document without it.
const closedMark = "closedCleanly"

// markClosed adds closedMark to an engine document.
func markClosed(doc []byte) []byte {
	if len(doc) < 2 || doc[0] != '{' {
		return doc
	}
	mark := `{"` + closedMark + `":true`
	if doc[1] != '}' {
		mark += ","
	}
	return append([]byte(mark), doc[1:]...)
}

// closedCleanly reports whether an engine document carries closedMark.
func closedCleanly(doc []byte) bool {
	var d map[string]json.RawMessage
	return json.Unmarshal(doc, &d) == nil && string(d[closedMark]) == "true"
}

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
// share the cost of a sync. What changes without a command (timers firing
// on a clock other than clock.Virtual, timers that fell due while no
// engine ran) is committed as soon as it has settled, sharing commits
// with commands the same way; an error of such a commit goes to the
// error handler (WithErrorHandler).
//
// A command that returns an error wrapping ErrNotAcknowledged was taken,
// as in Zeebe a command that was written but whose response was lost: it
// took effect in the engine, which goes on from it, and it is not known to
// be durable. It is never applied twice and never dropped: the commit it
// waited for, or the next one that succeeds (after the next command, the
// next timer, or Close), writes it; only a crash before that loses it.
// The caller must not simply give it again (a second Start starts a second
// instance; a second CompleteJob finds no job): Start and Deploy return
// their result beside the error so that it can tell. Commands refused
// with ErrClosed were not taken. Close returns the error of its commit.
//
// Keys handed out but never committed (an instance or a job that a query
// or an event showed before a crash) are never handed out again: an
// engine opened from a store that holds state counts its keys on from
// 2^20 past the stored key counter, unless the engine before it closed
// cleanly (Close's commit marks the store so), and commits that before it
// takes a command. Once a commit fails with ErrStoreLost, commands are refused
// with ErrClosed.
//
// The engine does not close s; close it after the engine. A commit
// settles the engine without waiting for observers (Subscribe) to catch
// up, so an observer may give commands from inside its callback as it may
// without a store.
//
// # Why
//
// Writing after the command settles, rather than logging commands, needs
// no replay on open (STATE.md: restore is not a replay), and writing only
// the instances whose state changed keeps a commit proportional to the
// work the commands did, not to the engine's size.
func WithStore(s Store) Option { return func(cfg *config) { cfg.store = s } }

// documentOf puts what a store holds together into one state document,
// and counts the history records of each instance.
func documentOf(st *StoreState) ([]byte, map[int64]int, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(st.Engine, &doc); err != nil {
		return nil, nil, fmt.Errorf("%w: the store's engine document: %v", ErrBadState, err)
	}
	delete(doc, closedMark) // the store's, not the state's (storeKeyGap)
	if st.Messages != nil {
		var hub map[string]json.RawMessage
		if err := json.Unmarshal(doc["hub"], &hub); err != nil {
			return nil, nil, fmt.Errorf("%w: the store's engine document, hub: %v", ErrBadState, err)
		}
		if hub == nil {
			hub = map[string]json.RawMessage{}
		}
		hub["messages"] = st.Messages
		raw, err := json.Marshal(hub)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: the store's message buffer: %v", ErrBadState, err)
		}
		doc["hub"] = raw
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
	finished := make([]json.RawMessage, len(st.Finished))
	for i, raw := range st.Finished {
		finished[i] = raw
	}
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
	if len(finished) > 0 {
		if doc["finished"], err = json.Marshal(finished); err != nil {
			return nil, nil, fmt.Errorf("%w: the store's finished instances: %v", ErrBadState, err)
		}
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
