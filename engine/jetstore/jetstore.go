// Package jetstore is an engine.Store on NATS JetStream: an engine's state
// in one stream, so that it survives the process (and, with replicas, the
// machine) and a server (flowtrack serve) restarts where it was. Open it
// on a NATS connection to a system with JetStream and hand it to
// engine.WithStore.
//
// The stream (FLOWTRACK_STORE_<name>) holds the pieces of the state
// document of engine/STATE.md on the subjects under flowtrack.store.<name>:
// "engine" (the engine-level document), "messages" (the message buffer,
// written by the commits that change it), "dep.<index>" (the deployments, by
// their index in commit order), "doc.<key>" (a live instance's document
// without history), "hist.<key>.<from>" (its history chunks, by the index
// of the chunk's first record) and "fin.<key>" (a finished instance still
// findable; stream order is oldest first). Every subject holds one value,
// rolled up (Nats-Rollup: sub), so a commit written again after a failure
// whose outcome is unknown (an acknowledgement lost: the engine writes the
// commit again) rewrites what the first attempt wrote rather than adding
// it twice. A document larger than a NATS message (max_payload, 1 MB by
// default) is written in parts, the first rolling up and the others right
// after it marked Flowtrack-Op: more; a history chunk is cut at record
// boundaries instead. Deleting an instance or evicting a finished one
// writes a marker (header Flowtrack-Op: del); once it is written the store
// purges the marker and the instance's history, and Load ignores history
// left without a document by a crash in between (keys are never reused).
//
// A commit lands whole: after a crash a reopened store holds all of it or
// none of it. Of up to 8 messages (a command that moved an instance or
// two) on a stream of one replica, it is written as one record: a message on "commit" holding the
// messages (frames of subject, op, from and data), which makes the commit
// happen; then the messages are written where they go, one by one, and
// the record is purged. Of up to 1,000 (JetStream's limit on an atomic
// batch), it is one atomic batch. Of more, the frames are packed into
// messages staged on "stage.<id>", and the record names the id and the
// count of packs (headers Flowtrack-Commit, Flowtrack-Parts); the messages
// are then written where they go in atomic batches of 1,000, and the
// record and the packs purged. The record is the one pointer that flips:
// Open purges packs without a record (the commit did not happen) and
// rolls a record forward (the commit happened), writing its messages
// where they go again, which rewrites what a crash left half written
// (every piece rolls up its subject). A commit that failed after its
// record leaves the store unsettled: the next Commit or Load settles it
// first. A record costs a sync per message but no batch, which a
// one-replica file stream stages in a file store of its own
// (BenchmarkCommit); a replicated stream stages a batch in memory, and
// there one batch costs less (1 to 3 ms for 1 to 21 messages on three
// local servers, against 6 to 12 ms for a record of 1 to 7).
//
// A store opened with Options.TakeOver holds the stream: Open writes an
// owner marker (subject "owner", rolled up) before it settles or loads
// anything, and every message the store publishes (a record, a staged
// pack, an applied piece, the first of an atomic batch) carries
// JetStream's expected last subject sequence of that marker. A store that
// opened the stream earlier is refused by the server from then on
// (ErrSuperseded), however late its writes reach the stream: a commit
// whose record or batch landed before the new owner's marker is the new
// owner's to settle and load, and one that did not is not in the stream.
//
// Every read (Load, Instance, settling a commit) is served by the
// stream's leader: on a replicated stream a follower may lag behind it (a
// server restarted a moment ago catches up from the others), and a load
// there would miss acknowledged commits.
//
// It is a native package: the WebAssembly module does not import it.
package jetstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Headers of the stream's messages.
const (
	headerFrom   = "Flowtrack-From"
	headerOp     = "Flowtrack-Op"
	headerCommit = "Flowtrack-Commit" // a staged commit's id, on its record
	headerParts  = "Flowtrack-Parts"  // how many packs it staged
	opDelete     = "del"
	opMore       = "more"
)

// Subjects, after the prefix, of a commit's record.
const (
	subjectRecord = "commit" // the record of the commit being applied
	subjectStage  = "stage"  // stage.<id>: the packs of a commit larger than a message
)

// maxBatch is the most messages one JetStream atomic batch may hold (the
// server's default limit).
const maxBatch = 1000

// Options configure Open. The zero value (or nil) is a store named
// "default" with one replica.
type Options struct {
	// Name tells stores apart on one NATS system: letters, digits, "_"
	// and "-".
	Name string
	// Replicas is the stream's replication factor (1 on a single server;
	// 3 in a cluster, so a commit survives the loss of a server).
	Replicas int
	// Timeout bounds one request to JetStream; the default is 10 seconds.
	Timeout time.Duration
	// Wait bounds how long Open, Commit, Load, Instance and Deployments
	// wait out JetStream's transient states (a leader election, peers
	// still joining, a reconnecting connection: package jswait) when
	// their context has no earlier deadline; the default is one minute.
	// An engine commits with a context without deadline, so this is
	// how long a commit may wait for a cluster to elect its leader.
	Wait time.Duration
	// TakeOver makes the store the stream's only writer: Open writes an
	// owner marker, and the commits of every store that opened the
	// stream before are refused from then on (ErrSuperseded). The
	// default (false) writes no marker and checks none, for tools that
	// only read, and for tests that stand in for one engine retrying
	// with a second store.
	TakeOver bool
}

// Store is an engine.Store in one JetStream stream. An engine commits to
// it from one goroutine, and may read one instance (Instance) beside a
// commit; a stream is used by one engine at a time.
type Store struct {
	nc *nats.Conn
	js jetstream.JetStream
	// replicated is set for a stream of more than one replica.
	replicated bool
	stream     jetstream.Stream
	prefix     string
	timeout    time.Duration
	wait       time.Duration
	// deps counts the deployments committed (-1: not known yet): a
	// deployment's subject is its index, so that a commit written again
	// after a failure rewrites it rather than adding it twice.
	deps int
	// unsettled is set while a commit through a record may be left half
	// staged or half applied (it failed): the next Commit or Load settles
	// it first, as Open does.
	unsettled bool
	// fault, set by tests only, is called before each step of a commit
	// through a record and of settling one; an error stops the commit
	// there, as a crash would.
	fault func(step string) error
	// owner is the stream sequence of the owner marker this store wrote
	// (Options.TakeOver), which every commit expects to be the last on
	// the marker's subject; 0 without TakeOver.
	owner uint64
}

var _ engine.Store = (*Store)(nil)

// ErrBadRecord is wrapped by the error of Open (and of Commit and Load
// after a commit failed) when the stream's commit record cannot be rolled
// forward: its frames are cut short, or it names staged packs the stream
// does not hold (another writer purged them, or the stream was edited).
var ErrBadRecord = api.ErrBadRecord

// ErrSuperseded is returned by Commit of a store opened with
// Options.TakeOver once another store has taken the stream over (opened
// it with TakeOver since): the server refused the commit (nothing of it
// is in the stream) or, for a commit whose record landed first, the rest
// of its writes (the new owner rolled the record forward when it
// opened). The engine's state in memory is no longer the stream's, so it
// must be dropped; the stream is the new owner's. It wraps
// engine.ErrStoreLost: the engine takes no command after it.
var ErrSuperseded = api.ErrSuperseded

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Open creates the store's stream if it does not exist (or updates its
// replicas) and returns the store once the stream is usable: it has the
// replicas asked for and a leader. nc is the connection js was made on.
// While the cluster cannot place or elect it yet (its servers still
// joining, an election under way) Open waits, until ctx ends or
// Options.Wait passed; the error then says what was missing ("3 replicas
// asked for, 2 placed", "no stream leader").
//
// Open settles what a crash in a commit left: it rolls a commit whose
// record is written forward and purges the staged packs of one whose
// record is not.
//
// # Errors
//
// An invalid name; JetStream's error (no JetStream on the server, a
// replica count the cluster cannot place); ErrBadRecord.
func Open(ctx context.Context, nc *nats.Conn, opts *Options) (*Store, error) {
	return open(ctx, nc, opts, nil)
}

func open(ctx context.Context, nc *nats.Conn, opts *Options, fault func(string) error) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "default"
	}
	if !validName.MatchString(o.Name) {
		return nil, fmt.Errorf("jetstore: name %q: only letters, digits, \"_\" and \"-\" are allowed", o.Name)
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Wait <= 0 {
		o.Wait = time.Minute
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstore: %w", err)
	}
	s := &Store{nc: nc, js: js, replicated: o.Replicas > 1, prefix: "flowtrack.store." + o.Name + ".", timeout: o.Timeout, wait: o.Wait, deps: -1, fault: fault}
	ctx, cancel := jswait.Bound(ctx, o.Wait)
	defer cancel()
	cfg := jetstream.StreamConfig{
		Name:               "FLOWTRACK_STORE_" + o.Name,
		Description:        "flowtrack engine state (engine/jetstore)",
		Subjects:           []string{s.prefix + ">"},
		Storage:            jetstream.FileStorage,
		Replicas:           o.Replicas,
		AllowRollup:        true,
		AllowAtomicPublish: true,
		AllowDirect:        true,
	}
	err = jswait.Do(ctx, func(ctx context.Context) error {
		sctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		var err error
		s.stream, err = js.CreateOrUpdateStream(sctx, cfg)
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == errNoPeers {
			return fmt.Errorf("%d replicas asked for, fewer peers known: %w", o.Replicas, err)
		}
		if err != nil {
			return err
		}
		return s.usable(sctx, o.Replicas)
	})
	if err != nil {
		return nil, fmt.Errorf("jetstore: stream for store %q: %w", o.Name, err)
	}
	if o.TakeOver {
		err := jswait.Do(ctx, func(ctx context.Context) error {
			m := nats.NewMsg(s.prefix + subjectOwner)
			m.Data = []byte(nuid.Next())
			m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
			pctx, cancel := context.WithTimeout(ctx, o.Timeout)
			defer cancel()
			ack, err := js.PublishMsg(pctx, m)
			if err != nil {
				return err
			}
			// A try whose answer was lost wrote a marker too: this
			// one, later, is the one every commit expects.
			s.owner = ack.Sequence
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("jetstore: store %q: write the owner marker: %w", o.Name, err)
		}
	}
	if err := jswait.Do(ctx, s.settle); err != nil {
		return nil, fmt.Errorf("jetstore: open store %q: %w", o.Name, err)
	}
	return s, nil
}

// errNoPeers is JetStream's error code for a stream it cannot place: fewer
// servers than its replicas (they may still be joining).
const errNoPeers = 10005

// usable checks that the stream has a leader and the replicas asked for
// placed; otherwise it returns a transient error saying what is missing.
// A follower still catching up is not waited for: reads go to the leader
// (read), and writes need a majority only.
func (s *Store) usable(ctx context.Context, replicas int) error {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return err
	}
	if info.Cluster == nil {
		return nil // a server outside a cluster
	}
	if info.Cluster.Leader == "" {
		return jswait.Again(errors.New("no stream leader"))
	}
	placed := 1 + len(info.Cluster.Replicas)
	if placed < replicas {
		return jswait.Again(fmt.Errorf("%d replicas asked for, %d placed", replicas, placed))
	}
	return nil
}

// bound returns ctx with the store's Wait as its deadline, unless it has
// an earlier one: how long a call waits out transient states.
func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return jswait.Bound(ctx, s.wait)
}

// subjectOwner is the subject, under the store's prefix, of the owner
// marker a store opened with Options.TakeOver writes.
const subjectOwner = "owner"

// guard makes m, a message the store publishes (the first of an atomic
// batch), conditional on the store still holding the stream
// (Options.TakeOver): the server refuses it, and with it the whole batch,
// once another store's owner marker follows this store's.
func (s *Store) guard(m *nats.Msg) {
	if s.owner == 0 {
		return
	}
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(s.owner, 10))
	// The sequence checked is the marker subject's, not m's own.
	m.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, s.prefix+subjectOwner)
}

// wrongLastSequence reports whether code is JetStream's error code for an
// expected last (subject) sequence that does not match: 10071, or 10164
// on a replicated stream.
func wrongLastSequence(code jetstream.ErrorCode) bool {
	return code == jetstream.JSErrCodeStreamWrongLastSequence || code == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// Load returns everything the stream holds, waiting out JetStream's
// transient states (see Options.Wait).
func (s *Store) Load(ctx context.Context) (st *engine.StoreState, err error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	err = jswait.Do(ctx, func(ctx context.Context) error {
		st, err = s.load(ctx)
		return err
	})
	return st, err
}

func (s *Store) load(ctx context.Context) (*engine.StoreState, error) {
	if s.unsettled {
		if err := s.settle(ctx); err != nil {
			return nil, fmt.Errorf("jetstore: load: %w", err)
		}
	}
	st := &engine.StoreState{Instances: map[int64]*engine.StoredInstance{}}
	type fin struct {
		seq uint64
		doc []byte
	}
	finished := map[int64]fin{}
	deployments := map[int64][]byte{}
	history := map[int64][]engine.HistoryChunk{}
	err := s.read(ctx, s.prefix+">", func(m jetstream.Msg, seq uint64) error {
		kind, key, err := s.parse(m.Subject())
		if err != nil {
			return err
		}
		op := m.Headers().Get(headerOp)
		del, more := op == opDelete, op == opMore
		switch kind {
		case subjectStage, subjectRecord:
			// settled by Open: what is left belongs to a commit
			// of another store on the stream, still running
		case "engine":
			if more {
				st.Engine = append(st.Engine, m.Data()...)
			} else {
				st.Engine = m.Data()
			}
		case "messages":
			if more {
				st.Messages = append(st.Messages, m.Data()...)
			} else {
				st.Messages = m.Data()
			}
		case "dep":
			if more {
				deployments[key] = append(deployments[key], m.Data()...)
			} else {
				deployments[key] = m.Data()
			}
		case "doc":
			switch si := st.Instances[key]; {
			case del:
				delete(st.Instances, key)
			case more && si != nil:
				si.Doc = append(si.Doc, m.Data()...)
			default:
				st.Instances[key] = &engine.StoredInstance{Doc: m.Data()}
			}
		case "hist":
			c, err := chunkOf(m, key)
			if err != nil {
				return err
			}
			history[key] = append(history[key], c)
		case "fin":
			switch f, ok := finished[key]; {
			case del:
				delete(finished, key)
			case more && ok:
				finished[key] = fin{f.seq, append(f.doc, m.Data()...)}
			default:
				finished[key] = fin{seq, m.Data()}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("jetstore: load: %w", err)
	}
	for _, i := range sortedKeys(deployments) {
		if i != int64(len(st.Deployments)) {
			return nil, fmt.Errorf("jetstore: load: deployment %d follows %d deployments", i, len(st.Deployments))
		}
		st.Deployments = append(st.Deployments, deployments[i])
	}
	s.deps = len(st.Deployments)
	for key, si := range st.Instances {
		si.History = sortedChunks(history[key]) // history without a document is a crash's leftover
	}
	fins := make([]fin, 0, len(finished))
	for _, f := range finished {
		fins = append(fins, f)
	}
	slices.SortFunc(fins, func(a, b fin) int { return cmp.Compare(a.seq, b.seq) })
	for _, f := range fins {
		st.Finished = append(st.Finished, f.doc)
	}
	return st, nil
}

// Instance returns the document and history of one instance, waiting
// out JetStream's transient states (see Options.Wait).
func (s *Store) Instance(ctx context.Context, key int64) (si *engine.StoredInstance, err error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	err = jswait.Do(ctx, func(ctx context.Context) error {
		si, err = s.instance(ctx, key)
		return err
	})
	return si, err
}

func (s *Store) instance(ctx context.Context, key int64) (*engine.StoredInstance, error) {
	// The subject holds the document's parts since its last rollup.
	var doc []byte
	deleted := false
	err := s.read(ctx, s.subject("doc", key), func(m jetstream.Msg, _ uint64) error {
		switch m.Headers().Get(headerOp) {
		case opMore:
			doc = append(doc, m.Data()...)
		case opDelete:
			doc, deleted = nil, true
		default:
			doc, deleted = m.Data(), false
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("jetstore: instance %d: %w", key, err)
	case doc == nil || deleted:
		return nil, fmt.Errorf("jetstore: instance %d: %w", key, engine.ErrUnknownInstance)
	}
	si := &engine.StoredInstance{Doc: doc}
	err = s.read(ctx, s.subject("hist", key)+".*", func(m jetstream.Msg, _ uint64) error {
		c, err := chunkOf(m, key)
		si.History = append(si.History, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("jetstore: instance %d: %w", key, err)
	}
	si.History = sortedChunks(si.History)
	return si, nil
}

// Commit writes b through a record that holds it when it is a few
// messages on a stream of one replica, as one atomic batch when it is up
// to maxBatch, and through a record naming staged packs when it is more
// (see the package documentation).
//
// A commit waits out JetStream's transient states (a leader election, a
// reconnecting connection) until ctx ends or Options.Wait passed, trying
// again. A try whose outcome is unknown (its acknowledgement lost) is
// harmless to write again: every piece rolls up its subject and a
// deployment keeps its index, so the second try rewrites what the first
// wrote and nothing is doubled.
func (s *Store) Commit(ctx context.Context, b *engine.StoreBatch) error {
	if b.Engine == nil {
		return engine.ErrNoEngineDocument
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jetstore: commit: %w", err)
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	return jswait.Do(ctx, func(ctx context.Context) error { return s.commit(ctx, b) })
}

func (s *Store) commit(ctx context.Context, b *engine.StoreBatch) error {
	if s.unsettled {
		if err := s.settle(ctx); err != nil {
			return fmt.Errorf("jetstore: commit: %w", err)
		}
	}
	var msgs []*nats.Msg
	add := func(subject string, data []byte, hdr ...string) {
		m := nats.NewMsg(subject)
		m.Data = data
		for i := 0; i+1 < len(hdr); i += 2 {
			m.Header.Set(hdr[i], hdr[i+1])
		}
		msgs = append(msgs, m)
	}
	// put writes a document in parts a message can carry: the first
	// with hdr, the others marked as its continuation.
	limit := s.maxData()
	put := func(subject string, data []byte, hdr ...string) {
		for first := true; first || len(data) > 0; first = false {
			n := min(len(data), limit)
			if first {
				add(subject, data[:n], hdr...)
			} else {
				add(subject, data[:n], headerOp, opMore)
			}
			data = data[n:]
		}
	}
	rollup := []string{jetstream.MsgRollup, jetstream.MsgRollupSubject}
	deleted := append([]string{headerOp, opDelete}, rollup...)
	if s.deps < 0 { // a Commit before any Load (the engine loads first)
		n, err := s.Deployments(ctx)
		if err != nil {
			return fmt.Errorf("jetstore: commit: %w", err)
		}
		s.deps = n
	}
	for i, d := range b.Deployments {
		put(s.subject("dep", int64(s.deps+i)), d, rollup...)
	}
	for _, key := range sortedKeys(b.Put) {
		put(s.subject("doc", key), b.Put[key], rollup...)
	}
	for _, key := range sortedKeys(b.History) {
		chunks, err := s.split(b.History[key])
		if err != nil {
			return fmt.Errorf("jetstore: commit: history of instance %d: %w", key, err)
		}
		for _, c := range chunks {
			add(s.subject("hist", key)+"."+strconv.Itoa(c.From), c.Records, headerFrom, strconv.Itoa(c.From), jetstream.MsgRollup, jetstream.MsgRollupSubject)
		}
	}
	for _, f := range b.Finished {
		put(s.subject("fin", f.Key), f.Doc, rollup...)
	}
	for _, key := range b.Evict {
		add(s.subject("fin", key), nil, deleted...)
	}
	for _, key := range b.Delete {
		add(s.subject("doc", key), nil, deleted...)
	}
	if b.Messages != nil {
		put(s.prefix+"messages", b.Messages, rollup...)
	}
	put(s.prefix+"engine", b.Engine, rollup...)
	if len(msgs) <= maxBatch && (len(msgs) > shortRun || s.replicated) {
		// One atomic batch: cheaper than a record and its messages past
		// shortRun, and on a replicated stream, which stages a batch in
		// memory, always.
		if err := s.publishBatch(ctx, msgs); err != nil {
			return fmt.Errorf("jetstore: commit: %w", err)
		}
		// A tidy that fails leaves the commit to be written again, with
		// its deployments at the same indexes.
		if err := s.tidy(ctx, msgs); err != nil {
			return fmt.Errorf("jetstore: commit: %w", err)
		}
		s.deps += len(b.Deployments)
		return nil
	}
	if err := s.write(ctx, msgs); err != nil {
		return fmt.Errorf("jetstore: commit of %d messages: %w", len(msgs), err)
	}
	s.deps += len(b.Deployments)
	return nil
}

// tidy purges what the delete markers among msgs, once written, delete:
// the markers and a deleted instance's history. A crash before it leaves
// data Load ignores.
func (s *Store) tidy(ctx context.Context, msgs []*nats.Msg) error {
	for _, m := range msgs {
		if m.Header.Get(headerOp) != opDelete {
			continue
		}
		kind, key, err := s.parse(m.Subject)
		if err != nil {
			return err
		}
		if kind == "doc" {
			if err := s.purge(ctx, s.subject("hist", key)+".>"); err != nil {
				return fmt.Errorf("history of instance %d: %w", key, err)
			}
		}
		if err := s.purge(ctx, m.Subject); err != nil {
			return fmt.Errorf("%s of instance %d: %w", kind, key, err)
		}
	}
	return nil
}

// write commits msgs: it packs them in records (frames: subject, op,
// from, data) of at most a message's size; a commit of one pack carries it
// in its record, a larger one publishes the packs on stage.<id> first and
// names them in the record. The record, one message, is the commit; apply
// then writes the messages where they go. Any error leaves the store
// unsettled: the next Commit or Load settles it first.
func (s *Store) write(ctx context.Context, msgs []*nats.Msg) error {
	s.unsettled = true
	packs := s.pack(msgs)
	rec := nats.NewMsg(s.prefix + subjectRecord)
	rec.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	if len(packs) == 1 {
		rec.Data = packs[0]
	} else {
		id := nuid.Next()
		staged := make([]*nats.Msg, len(packs))
		for i, p := range packs {
			staged[i] = nats.NewMsg(s.prefix + subjectStage + "." + id)
			staged[i].Data = p
		}
		for i, part := range batches(staged) {
			if err := s.step(fmt.Sprintf("stage %d", i+1)); err != nil {
				return err
			}
			if err := s.publish(ctx, part); err != nil {
				return fmt.Errorf("staging: %w", err)
			}
		}
		rec.Header.Set(headerCommit, id)
		rec.Header.Set(headerParts, strconv.Itoa(len(packs)))
	}
	if err := s.step("record"); err != nil {
		return err
	}
	if err := s.publish(ctx, []*nats.Msg{rec}); err != nil {
		return fmt.Errorf("commit record: %w", err)
	}
	return s.apply(ctx, msgs, len(packs) > 1)
}

// pack encodes msgs in frames, cut in packs a message can carry.
func (s *Store) pack(msgs []*nats.Msg) [][]byte {
	limit := s.maxData()
	var packs [][]byte
	var cur []byte
	for _, m := range msgs {
		n := len(m.Subject) + len(m.Data) + 64
		if len(cur) > 0 && len(cur)+n > limit {
			packs, cur = append(packs, cur), nil
		}
		for _, field := range []string{strings.TrimPrefix(m.Subject, s.prefix), m.Header.Get(headerOp), m.Header.Get(headerFrom)} {
			cur = binary.AppendUvarint(cur, uint64(len(field)))
			cur = append(cur, field...)
		}
		cur = binary.AppendUvarint(cur, uint64(len(m.Data)))
		cur = append(cur, m.Data...)
	}
	return append(packs, cur)
}

// unpack decodes the frames of a pack into the messages they stand for.
func (s *Store) unpack(pack []byte, msgs []*nats.Msg) ([]*nats.Msg, error) {
	field := func() ([]byte, error) {
		n, w := binary.Uvarint(pack)
		if w <= 0 || uint64(len(pack)-w) < n {
			return nil, fmt.Errorf("%w: a frame is cut short", ErrBadRecord)
		}
		f := pack[w : w+int(n)]
		pack = pack[w+int(n):]
		return f, nil
	}
	for len(pack) > 0 {
		var fs [4][]byte
		for i := range fs {
			f, err := field()
			if err != nil {
				return nil, err
			}
			fs[i] = f
		}
		m := nats.NewMsg(s.prefix + string(fs[0]))
		if kind, _, err := s.parse(m.Subject); err != nil || kind == subjectRecord || kind == subjectStage || kind == subjectOwner {
			return nil, fmt.Errorf("%w: a frame for subject %q", ErrBadRecord, fs[0])
		}
		m.Data = fs[3]
		if op := string(fs[1]); op != "" {
			m.Header.Set(headerOp, op)
		}
		if from := string(fs[2]); from != "" {
			m.Header.Set(headerFrom, from)
		}
		if string(fs[1]) != opMore {
			m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// apply writes the messages of a commit whose record is written where
// they go, tidies up after them, and purges the record and then, if the
// commit was staged, its packs. Written again after a crash it rewrites
// the same pieces: each rolls up its subject, and the "more" parts of a
// document follow their first part.
func (s *Store) apply(ctx context.Context, msgs []*nats.Msg, staged bool) error {
	for i, part := range batches(msgs) {
		if err := s.step(fmt.Sprintf("apply %d", i+1)); err != nil {
			return err
		}
		if err := s.publish(ctx, part); err != nil {
			return fmt.Errorf("applying: %w", err)
		}
	}
	if err := s.step("tidy"); err != nil {
		return err
	}
	if err := s.tidy(ctx, msgs); err != nil {
		return err
	}
	if err := s.step("purge record"); err != nil {
		return err
	}
	if err := s.purge(ctx, s.prefix+subjectRecord); err != nil {
		return fmt.Errorf("commit record: %w", err)
	}
	if staged {
		if err := s.dropStaged(ctx); err != nil {
			return err
		}
	}
	s.unsettled = false
	return nil
}

// dropStaged purges every staged pack.
func (s *Store) dropStaged(ctx context.Context) error {
	if err := s.step("purge staged"); err != nil {
		return err
	}
	if err := s.purge(ctx, s.prefix+subjectStage+".>"); err != nil {
		return fmt.Errorf("staged packs: %w", err)
	}
	return nil
}

// settle finishes what a commit left: with a record it applies the
// messages the record holds or names (the commit happened); without one
// it purges staged packs (it did not).
func (s *Store) settle(ctx context.Context) error {
	var rec jetstream.Msg
	err := s.read(ctx, s.prefix+subjectRecord, func(m jetstream.Msg, _ uint64) error {
		rec = m
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit record: %w", err)
	}
	if rec == nil {
		staged, err := s.count(ctx, s.prefix+subjectStage+".>")
		if err != nil {
			return fmt.Errorf("staged packs: %w", err)
		}
		if staged > 0 {
			if err := s.dropStaged(ctx); err != nil {
				return err
			}
		}
		s.unsettled = false
		return nil
	}
	id := rec.Headers().Get(headerCommit)
	if id == "" {
		msgs, err := s.unpack(rec.Data(), nil)
		if err != nil {
			return fmt.Errorf("commit record: %w", err)
		}
		s.unsettled = true
		return s.apply(ctx, msgs, false)
	}
	parts, err := strconv.Atoi(rec.Headers().Get(headerParts))
	if err != nil {
		return fmt.Errorf("%w: commit %s: %s %q", ErrBadRecord, id, headerParts, rec.Headers().Get(headerParts))
	}
	var msgs []*nats.Msg
	packs := 0
	err = s.read(ctx, s.prefix+subjectStage+"."+id, func(m jetstream.Msg, _ uint64) error {
		packs++
		msgs, err = s.unpack(m.Data(), msgs)
		return err
	})
	if err != nil {
		return fmt.Errorf("staged commit %s: %w", id, err)
	}
	if packs != parts {
		return fmt.Errorf("%w: commit %s names %d staged packs, the stream holds %d", ErrBadRecord, id, parts, packs)
	}
	s.unsettled = true
	if err := s.apply(ctx, msgs, true); err != nil {
		return fmt.Errorf("staged commit %s: %w", id, err)
	}
	return nil
}

// step calls the test's fault hook, if any, before a step of a commit or
// of settling one.
func (s *Store) step(name string) error {
	if s.fault == nil {
		return nil
	}
	return s.fault(name)
}

// batches cuts msgs into runs of at most maxBatch.
func batches(msgs []*nats.Msg) [][]*nats.Msg {
	var out [][]*nats.Msg
	for len(msgs) > 0 {
		n := min(len(msgs), maxBatch)
		out = append(out, msgs[:n])
		msgs = msgs[n:]
	}
	return out
}

// maxData is the most data one message of the store may carry: the
// server's max_payload, less room for the headers.
func (s *Store) maxData() int { return int(s.nc.MaxPayload()) - 1024 }

// split cuts a history chunk larger than a message may carry into chunks
// that fit, at record boundaries.
func (s *Store) split(c engine.HistoryChunk) ([]engine.HistoryChunk, error) {
	limit := s.maxData()
	if len(c.Records) <= limit {
		return []engine.HistoryChunk{c}, nil
	}
	var records []json.RawMessage
	if err := json.Unmarshal(c.Records, &records); err != nil {
		return nil, fmt.Errorf("records from %d: %w", c.From, err)
	}
	var out []engine.HistoryChunk
	from, n, buf := c.From, 0, []byte{'['}
	for _, r := range records {
		if n > 0 && len(buf)+len(r)+2 > limit {
			out = append(out, engine.HistoryChunk{From: from, Records: append(buf, ']')})
			from, n, buf = from+n, 0, []byte{'['}
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf, n = append(buf, r...), n+1
	}
	return append(out, engine.HistoryChunk{From: from, Records: append(buf, ']')}), nil
}

// publish publishes msgs in order and waits for their acknowledgement.
// They need not be atomic together (a commit's record is what makes it
// happen), so a short run goes as plain publishes, one after the other,
// and a longer one as an atomic batch: with the server syncing every
// write, a publish costs about a sync (0.3 to 1 ms here) and a batch of up
// to 1,000 a file store of its own (15 to 35 ms) but one sync
// (BenchmarkCommit).
func (s *Store) publish(ctx context.Context, msgs []*nats.Msg) error {
	if len(msgs) > shortRun {
		return s.publishBatch(ctx, msgs)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	for _, m := range msgs {
		s.guard(m)
		if _, err := s.js.PublishMsg(ctx, m); err != nil {
			var apiErr *jetstream.APIError
			if errors.As(err, &apiErr) && wrongLastSequence(apiErr.ErrorCode) && s.owner != 0 {
				return fmt.Errorf("publish on %s: %w: %w", m.Subject, ErrSuperseded, err)
			}
			return fmt.Errorf("publish on %s: %w", m.Subject, err)
		}
	}
	return nil
}

// shortRun is the most messages publish sends one by one, and the most a
// commit writes through a record that holds them: past it, one atomic
// batch is cheaper than one sync per message.
const shortRun = 8

// publishBatch publishes msgs as one JetStream atomic batch and waits for
// the acknowledgement of its commit.
func (s *Store) publishBatch(ctx context.Context, msgs []*nats.Msg) error {
	id := nuid.Next()
	s.guard(msgs[0])
	for i, m := range msgs {
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		if i < len(msgs)-1 {
			if err := s.nc.PublishMsg(m); err != nil {
				return err
			}
		}
	}
	last := msgs[len(msgs)-1]
	last.Header.Set("Nats-Batch-Commit", "1")
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	reply, err := s.nc.RequestMsgWithContext(ctx, last)
	if err != nil {
		return err
	}
	var ack struct {
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
		Count int `json:"count"`
	}
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return fmt.Errorf("batch acknowledgement %q: %w", reply.Data, err)
	}
	if ack.Error != nil && wrongLastSequence(jetstream.ErrorCode(ack.Error.ErrCode)) && s.owner != 0 {
		return fmt.Errorf("batch of %d messages refused: %s: %w", len(msgs), ack.Error.Description, ErrSuperseded)
	}
	if ack.Error != nil {
		// An API error, so that a transient one (a stream offline for
		// a moment) is waited out.
		return fmt.Errorf("batch of %d messages refused: %w", len(msgs),
			&jetstream.APIError{Code: ack.Error.Code, ErrorCode: jetstream.ErrorCode(ack.Error.ErrCode), Description: ack.Error.Description})
	}
	if ack.Count != len(msgs) {
		return fmt.Errorf("batch of %d messages acknowledged with %d", len(msgs), ack.Count)
	}
	return nil
}

func (s *Store) purge(ctx context.Context, subject string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.stream.Purge(ctx, jetstream.WithPurgeSubject(subject))
}

// read calls fn on every message of the stream on subject (a filter), in
// stream order, as the stream's leader holds them.
//
// A reader that delivers nothing at all within the store's timeout is
// made again, up to readTries times: a server that restarted a moment ago
// can leave a new consumer's pull requests unanswered for seconds (seen
// after a follower's restart), while a new one is served at once. Once a
// message reached fn a read is not started over.
func (s *Store) read(ctx context.Context, subject string, fn func(m jetstream.Msg, seq uint64) error) error {
	for try := 1; ; try++ {
		delivered, err := s.readOnce(ctx, subject, fn)
		if err == nil || delivered || try == readTries || !errors.Is(err, nats.ErrTimeout) || ctx.Err() != nil {
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted) {
				// Its server restarted: a new reader, on the next try.
				err = jswait.Again(err)
			}
			return err
		}
	}
}

// readTries bounds how often read makes a reader that delivers nothing.
const readTries = 3

// readOnce is one attempt of read; it reports whether fn was called.
func (s *Store) readOnce(ctx context.Context, subject string, fn func(m jetstream.Msg, seq uint64) error) (bool, error) {
	cons, n, err := s.reader(ctx, subject)
	if err != nil || n == 0 {
		return false, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		_ = s.stream.DeleteConsumer(dctx, cons.CachedInfo().Name) // else it goes after readerIdle
	}()
	// Pulled many at a time: one request per message made a load of
	// 3,000 messages take seconds.
	it, err := cons.Messages(jetstream.PullMaxMessages(readAhead))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", subject, err)
	}
	defer it.Stop()
	for read := 0; ; read++ {
		m, err := it.Next(jetstream.NextMaxWait(s.timeout))
		if err != nil {
			return read > 0, fmt.Errorf("read %s: message %d of %d: %w", subject, read+1, n, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return true, err
		}
		if err := fn(m, meta.Sequence.Stream); err != nil {
			return true, err
		}
		if meta.NumPending == 0 {
			return true, nil
		}
		if err := ctx.Err(); err != nil {
			return true, err
		}
	}
}

// reader returns a consumer of the messages on subject placed on the
// stream's leader, and how many messages the leader holds there (none:
// no consumer).
//
// A consumer of one replica, as a reader is, lands on a server of the
// stream's chosen at random, and a follower may lag behind the leader: a
// server restarted a moment ago may still be catching up, and a read
// there would miss commits that were acknowledged, or see pieces a later
// purge removed. So a reader placed elsewhere is deleted and made again,
// until it lands on the leader (with three replicas, one try in three).
// The reader is an ordinary consumer rather than an ordered one, which
// would move itself to another server, unchecked, after a missed
// heartbeat.
func (s *Store) reader(ctx context.Context, subject string) (jetstream.Consumer, uint64, error) {
	for range readerTries {
		ictx, cancel := context.WithTimeout(ctx, s.timeout)
		info, err := s.stream.Info(ictx, jetstream.WithSubjectFilter(subject))
		cancel()
		if err != nil {
			return nil, 0, err
		}
		n := subjectCount(info, subject)
		if n == 0 {
			return nil, 0, nil
		}
		cctx, cancel := context.WithTimeout(ctx, s.timeout)
		cons, err := s.stream.CreateConsumer(cctx, jetstream.ConsumerConfig{
			FilterSubjects:    []string{subject},
			AckPolicy:         jetstream.AckNonePolicy,
			MemoryStorage:     true,
			Replicas:          1,
			InactiveThreshold: readerIdle,
		})
		cancel()
		if err != nil {
			return nil, 0, err
		}
		ci := cons.CachedInfo()
		// A stream without followers (one replica, or a server outside a
		// cluster) has every reader on its leader.
		if info.Cluster == nil || len(info.Cluster.Replicas) == 0 || (ci.Cluster != nil && ci.Cluster.Leader == info.Cluster.Leader) {
			return cons, n, nil
		}
		dctx, cancel := context.WithTimeout(ctx, s.timeout)
		err = s.stream.DeleteConsumer(dctx, ci.Name)
		cancel()
		if err != nil {
			return nil, 0, err
		}
	}
	return nil, 0, jswait.Again(fmt.Errorf("no reader of %s landed on the stream's leader in %d tries", subject, readerTries))
}

// readerTries bounds how often reader makes a consumer again: with three
// replicas, (2/3)^30 of reads (5 in a million) find no reader on the
// leader and fail, as a read the server refuses does.
const readerTries = 30

// readerIdle is how long a reader left behind (its store's process died
// during a read) outlives its last use on the server.
const readerIdle = 30 * time.Second

// readAhead is how many messages read asks the server for at once.
const readAhead = 512

// count is how many messages the stream holds on subject (a filter).
func (s *Store) count(ctx context.Context, subject string) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	info, err := s.stream.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0, err
	}
	return subjectCount(info, subject), nil
}

// subjectCount is how many messages info (filtered on subject) counts.
func subjectCount(info *jetstream.StreamInfo, subject string) uint64 {
	if !strings.ContainsAny(subject, "*>") {
		return info.State.Subjects[subject]
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}

// sortedChunks orders an instance's history chunks by their first record.
func sortedChunks(cs []engine.HistoryChunk) []engine.HistoryChunk {
	slices.SortFunc(cs, func(a, b engine.HistoryChunk) int { return cmp.Compare(a.From, b.From) })
	return cs
}

func (s *Store) subject(kind string, key int64) string {
	return s.prefix + kind + "." + strconv.FormatInt(key, 10)
}

// parse splits a subject of the stream into its kind and instance key.
func (s *Store) parse(subject string) (string, int64, error) {
	rest, ok := strings.CutPrefix(subject, s.prefix)
	if !ok {
		return "", 0, fmt.Errorf("subject %q is not the store's", subject)
	}
	kind, k, keyed := strings.Cut(rest, ".")
	switch {
	case !keyed && (kind == "engine" || kind == "messages" || kind == subjectRecord || kind == subjectOwner):
		return kind, 0, nil
	case keyed && kind == subjectStage:
		return kind, 0, nil // stage.<id>
	case keyed && (kind == "dep" || kind == "doc" || kind == "hist" || kind == "fin"):
		if kind == "hist" {
			k, _, _ = strings.Cut(k, ".") // hist.<key>.<from>
		}
		key, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return "", 0, fmt.Errorf("subject %q: instance key: %w", subject, err)
		}
		return kind, key, nil
	}
	return "", 0, fmt.Errorf("subject %q is not one the store writes", subject)
}

func chunkOf(m jetstream.Msg, key int64) (engine.HistoryChunk, error) {
	from, err := strconv.Atoi(m.Headers().Get(headerFrom))
	if err != nil {
		return engine.HistoryChunk{}, fmt.Errorf("history of instance %d: header %s: %w", key, headerFrom, err)
	}
	return engine.HistoryChunk{From: from, Records: m.Data()}, nil
}

func sortedKeys[V any](m map[int64]V) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
