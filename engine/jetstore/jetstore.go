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
// boundaries instead. A commit is one atomic batch (JetStream atomic batch
// publish): after a crash the stream holds all of it or none of it.
// Deleting an instance or evicting a finished one writes a marker (header
// Flowtrack-Op: del) in the batch; after the batch the store purges the
// marker and the instance's history, and Load ignores history left
// without a document by a crash in between (keys are never reused).
//
// A store opened with Options.TakeOver holds the stream: Open writes an
// owner marker (subject "owner", rolled up) before anything is loaded,
// and every commit of the store carries JetStream's expected last
// subject sequence of that marker. A store that opened the stream
// earlier is refused by the server from then on (ErrSuperseded), however
// late its commit reaches the stream: a commit lands before the new
// owner's marker (and the new owner loads it) or not at all.
//
// It is a native package: the WebAssembly module does not import it.
package jetstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Headers of the stream's messages.
const (
	headerFrom = "Flowtrack-From"
	headerOp   = "Flowtrack-Op"
	opDelete   = "del"
	opMore     = "more"
)

// MaxBatch is the most messages one commit may write: JetStream's default
// limit on an atomic batch. A commit writes one message per deployment,
// changed instance, history chunk, finished, evicted and deleted instance,
// plus one.
const MaxBatch = 1000

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
	// TakeOver makes the store the stream's only writer: Open writes an
	// owner marker, and the commits of every store that opened the
	// stream before are refused from then on (ErrSuperseded). The
	// default (false) writes no marker and checks none, for tools that
	// only read, and for tests that stand in for one engine retrying
	// with a second store.
	TakeOver bool
}

// Store is an engine.Store in one JetStream stream. An engine commits to
// it from one goroutine; a stream is used by one engine at a time.
type Store struct {
	nc      *nats.Conn
	stream  jetstream.Stream
	prefix  string
	timeout time.Duration
	// deps counts the deployments committed (-1: not known yet): a
	// deployment's subject is its index, so that a commit written again
	// after a failure rewrites it rather than adding it twice.
	deps int
	// owner is the stream sequence of the owner marker this store wrote
	// (Options.TakeOver), which every commit expects to be the last on
	// the marker's subject; 0 without TakeOver.
	owner uint64
}

var _ engine.Store = (*Store)(nil)

// ErrNoEngineDocument is returned by Commit for a batch without the
// engine-level document, which every commit carries.
var ErrNoEngineDocument = errors.New("a store commit must carry the engine document")

// ErrSuperseded is returned by Commit of a store opened with
// Options.TakeOver once another store has taken the stream over (opened
// it with TakeOver since): the server refused the commit, and nothing of
// it is in the stream. The engine's state in memory is then ahead of the
// stream, so it must be dropped and opened again from the store.
var ErrSuperseded = errors.New("jetstore: the stream was taken over by another store")

// ErrBatchTooLarge is returned by Commit for a batch of more than
// MaxBatch messages.
var ErrBatchTooLarge = errors.New("a store commit exceeds JetStream's atomic batch limit")

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Open creates the store's stream if it does not exist (or updates its
// replicas) and returns the store. nc is the connection js was made on.
//
// # Errors
//
// An invalid name; JetStream's error (no JetStream on the server, a
// replica count the cluster cannot place).
func Open(ctx context.Context, nc *nats.Conn, opts *Options) (*Store, error) {
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
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstore: %w", err)
	}
	s := &Store{nc: nc, prefix: "flowtrack.store." + o.Name + ".", timeout: o.Timeout, deps: -1}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	s.stream, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:               "FLOWTRACK_STORE_" + o.Name,
		Description:        "flowtrack engine state (engine/jetstore)",
		Subjects:           []string{s.prefix + ">"},
		Storage:            jetstream.FileStorage,
		Replicas:           o.Replicas,
		AllowRollup:        true,
		AllowAtomicPublish: true,
		AllowDirect:        true,
	})
	if err != nil {
		return nil, fmt.Errorf("jetstore: stream for store %q: %w", o.Name, err)
	}
	if o.TakeOver {
		m := nats.NewMsg(s.prefix + subjectOwner)
		m.Data = []byte(nuid.Next())
		m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			return nil, fmt.Errorf("jetstore: store %q: write the owner marker: %w", o.Name, err)
		}
		s.owner = ack.Sequence
	}
	return s, nil
}

// subjectOwner is the subject, under the store's prefix, of the owner
// marker a store opened with Options.TakeOver writes.
const subjectOwner = "owner"

// guard makes m, the first message a commit publishes, conditional on
// the store still holding the stream (Options.TakeOver): the server
// refuses it, and with it the whole batch, once another store's owner
// marker follows this store's.
func (s *Store) guard(m *nats.Msg) {
	if s.owner == 0 {
		return
	}
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(s.owner, 10))
	// The sequence checked is the marker subject's, not m's own.
	m.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, s.prefix+subjectOwner)
}

// errWrongLastSequence is JetStream's error code for an expected last
// (subject) sequence that does not match.
const errWrongLastSequence = 10071

// Load returns everything the stream holds.
func (s *Store) Load(ctx context.Context) (*engine.StoreState, error) {
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

// Instance returns the document and history of one instance.
func (s *Store) Instance(ctx context.Context, key int64) (*engine.StoredInstance, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
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

// Commit writes b as one atomic batch.
func (s *Store) Commit(ctx context.Context, b *engine.StoreBatch) error {
	if b.Engine == nil {
		return ErrNoEngineDocument
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
	if s.deps < 0 {
		if err := s.countDeployments(ctx); err != nil {
			return fmt.Errorf("jetstore: commit: %w", err)
		}
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
	put(s.prefix+"engine", b.Engine, rollup...) // last: it carries the commit
	if len(msgs) > MaxBatch {
		return fmt.Errorf("jetstore: commit: %d messages: %w (%d)", len(msgs), ErrBatchTooLarge, MaxBatch)
	}
	if err := s.publishBatch(ctx, msgs); err != nil {
		return fmt.Errorf("jetstore: commit: %w", err)
	}
	s.deps += len(b.Deployments)
	// Tidy up what the batch deleted: the markers and the history. A
	// crash before this leaves data Load ignores.
	for _, key := range b.Delete {
		if err := s.purge(ctx, s.subject("hist", key)+".>"); err != nil {
			return fmt.Errorf("jetstore: commit: history of instance %d: %w", key, err)
		}
		if err := s.purge(ctx, s.subject("doc", key)); err != nil {
			return fmt.Errorf("jetstore: commit: instance %d: %w", key, err)
		}
	}
	for _, key := range b.Evict {
		if err := s.purge(ctx, s.subject("fin", key)); err != nil {
			return fmt.Errorf("jetstore: commit: finished instance %d: %w", key, err)
		}
	}
	return nil
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
	if ack.Error != nil && ack.Error.ErrCode == errWrongLastSequence && s.owner != 0 {
		return fmt.Errorf("batch of %d messages refused: %s: %w", len(msgs), ack.Error.Description, ErrSuperseded)
	}
	if ack.Error != nil {
		return fmt.Errorf("batch of %d messages refused: %s (error %d)", len(msgs), ack.Error.Description, ack.Error.ErrCode)
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
// stream order.
func (s *Store) read(ctx context.Context, subject string, fn func(m jetstream.Msg, seq uint64) error) error {
	ictx, cancel := context.WithTimeout(ctx, s.timeout)
	info, err := s.stream.Info(ictx, jetstream.WithSubjectFilter(subject))
	cancel()
	if err != nil {
		return err
	}
	if n := subjectCount(info, subject); n == 0 {
		return nil
	}
	cons, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return err
	}
	for {
		m, err := cons.Next(jetstream.FetchMaxWait(s.timeout))
		if err != nil {
			return err
		}
		meta, err := m.Metadata()
		if err != nil {
			return err
		}
		if err := fn(m, meta.Sequence.Stream); err != nil {
			return err
		}
		if meta.NumPending == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
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

// countDeployments sets deps from the stream, for a Commit before any
// Load (the engine loads first).
func (s *Store) countDeployments(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	info, err := s.stream.Info(ctx, jetstream.WithSubjectFilter(s.prefix+"dep.*"))
	if err != nil {
		return fmt.Errorf("count the deployments: %w", err)
	}
	s.deps = len(info.State.Subjects)
	return nil
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
	case !keyed && (kind == "engine" || kind == "messages" || kind == subjectOwner):
		return kind, 0, nil
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
