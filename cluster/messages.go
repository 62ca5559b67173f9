package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/dispatch"
	"github.com/flowtrack/flowtrack/internal/partitioned"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Message subscriptions across partitions, as Zeebe has them (see the
// package doc, Messages). Partition A, whose instance waits for a
// message whose correlation key belongs to partition B, registers the
// wait in the cluster's subscription bucket under s.<B>.<A>.…; B watches
// its entries and, when it holds a message for the wait (published now,
// or buffered earlier), asks A to correlate it to exactly that instance.

// subsBucket holds the open remote subscriptions (s.<B>.<A>.<instance>.<hash>)
// and the correlations under way (i.<B>.<hash>).
func subsBucket(cluster string) string { return "flowtrack_" + cluster + "_msgsubs" }

// doneBucket holds, for DoneTTL, the correlations a partition made on a
// correlate request (c.<A>.<instance>.<hash of the correlation id>), so
// that the same request sent again is answered "correlated" and not
// given to another instance.
func doneBucket(cluster string) string { return "flowtrack_" + cluster + "_msgdone" }

// DoneTTL is how long a partition remembers a correlation it made on a
// correlate request, longer than any retry of that request (a retry
// comes within ForwardTimeout, or from a new owner of the message's
// partition finishing a correlation under way, within a lease TTL).
const DoneTTL = 10 * time.Minute

// msgSubject is a partition's subject for the message protocol: publish
// (publish_message routed to the key's partition) and correlate (a
// message for one instance of the partition).
func msgSubject(cluster string, p int, what string) string {
	return "flowtrack." + cluster + ".msg." + strconv.Itoa(p) + "." + what
}

// remoteSub is an open message wait of an instance of partition
// Partition for a correlation key of another partition.
type remoteSub struct {
	Partition      int    `json:"partition"`
	InstanceKey    int64  `json:"instanceKey"`
	ProcessID      string `json:"processId"`
	Name           string `json:"name"`
	CorrelationKey string `json:"correlationKey"`
}

func hash64(parts ...string) string {
	h := fnv.New64a()
	for _, s := range parts {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// subKey is the bucket key of s held for partition owner.
func subKey(owner int, s remoteSub) string {
	return fmt.Sprintf("s.%d.%d.%d.%s", owner, s.Partition, s.InstanceKey, hash64(s.ProcessID, s.Name, s.CorrelationKey))
}

// correlateRequest asks a partition to correlate a message to one of its
// instances. ID identifies the correlation: the same ID sent again is
// answered as the first time.
type correlateRequest struct {
	InstanceKey    int64          `json:"instanceKey"`
	Name           string         `json:"name"`
	CorrelationKey string         `json:"correlationKey"`
	Variables      map[string]any `json:"variables,omitempty"`
	ID             string         `json:"id"`
}

// correlateResponse is the answer: whether the instance took the message,
// and then where it stands once settled (publish_message answers it).
// Error is set when the partition could not tell (its engine refused).
type correlateResponse struct {
	Correlated bool `json:"correlated"`
	// Instance is where the instance stands, with its activatable jobs,
	// when Correlated; only its key and state now when the request was
	// answered before (no state once the partition no longer holds the
	// instance). Absent from the answers of nodes before it: the asker
	// then knows the key only.
	Instance *wire.CompleteJobResult `json:"instance,omitempty"`
	Error    string                  `json:"error,omitempty"`
}

// intent is a correlation under way on the message's partition, written
// before the correlate request is sent and deleted once it is answered,
// so that a new owner of the partition finishes it.
type intent struct {
	Sub       remoteSub      `json:"sub"`
	Variables map[string]any `json:"variables,omitempty"`
	ID        string         `json:"id"`
}

// messages is a partition's side of the protocol: the waits it registers
// at other partitions (outbox) and the waits other partitions registered
// at it (index).
type messages struct {
	p    *Partition
	subs jetstream.KeyValue
	done jetstream.KeyValue

	// The outbox: the bucket keys of the waits registered, kept equal to
	// the engine's open remote waits by reconcile.
	kick chan struct{}
	have map[string]bool
	// tracked are the instances with waits registered elsewhere, or just
	// opened: only their events kick a reconcile pass.
	trackMu sync.Mutex
	tracked map[int64]bool
	// fresh are the instances that opened such a wait since the current
	// pass began: the pass keeps tracking them.
	fresh map[int64]bool

	// The index: waits of other partitions for this partition's keys,
	// by name and key, oldest first.
	mu    sync.Mutex
	index map[[2]string][]indexed

	// stripes serialize the correlations of one name and key.
	stripes [64]sync.Mutex

	subsc []*nats.Subscription
	// watcher is the watch of the waits registered at the partition,
	// made again when it ends (watch); watchClosed is set by close.
	watchMu     sync.Mutex
	watcher     jetstream.KeyWatcher
	watchClosed bool
	stop        chan struct{}
	// ctx ends when the partition closes: requests under way give up (a
	// correlation's intent stays for the next owner).
	ctx    context.Context
	cancel context.CancelFunc
	// What retryLoop does next (later).
	retryMu      sync.Mutex
	retryDrains  map[[3]string]bool
	retryIntents bool
	// gate orders the requests' start against close.
	gate   sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

type indexed struct {
	key string
	sub remoteSub
}

// startMessages starts the partition's side of the protocol: it loads the
// waits registered at it and finishes the correlations a previous owner
// left under way, reconciles the waits it registered elsewhere with its
// engine, and answers publish and correlate requests.
func (p *Partition) startMessages(ctx context.Context) error {
	n := p.n
	m := &messages{p: p, subs: n.subs, done: n.corr, kick: make(chan struct{}, 1), have: map[string]bool{}, tracked: map[int64]bool{}, fresh: map[int64]bool{},
		index: map[[2]string][]indexed{}, retryDrains: map[[3]string]bool{}, stop: make(chan struct{})}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	p.msgs = m
	w, entries, err := m.loadWatch(ctx)
	if err != nil {
		return fmt.Errorf("partition %d: %w", p.id, err)
	}
	m.watcher = w
	for _, e := range entries {
		m.apply(e)
	}
	lister, err := m.subs.ListKeysFiltered(ctx, "s.*."+strconv.Itoa(p.id)+".>")
	if err != nil {
		return fmt.Errorf("partition %d: list the waits it registered: %w", p.id, err)
	}
	for k := range lister.Keys() {
		m.have[k] = true
	}
	for _, what := range []string{"publish", "correlate"} {
		handler := m.answerPublish
		if what == "correlate" {
			handler = m.answerCorrelate
		}
		s, err := n.nc.Subscribe(msgSubject(n.cfg.Cluster, p.id, what), func(msg *nats.Msg) {
			m.gate.Lock()
			if m.closed {
				m.gate.Unlock()
				n.respond(msg, errorResponse(wire.CodeClosed, "the partition is closing")) // sent again to its next owner
				return
			}
			m.wg.Add(1)
			m.gate.Unlock()
			go func() { defer m.wg.Done(); handler(msg) }()
		})
		if err != nil {
			return fmt.Errorf("partition %d: subscribe to %s: %w", p.id, msgSubject(n.cfg.Cluster, p.id, what), err)
		}
		m.subsc = append(m.subsc, s)
	}
	m.wg.Add(3)
	go m.watch()
	go m.reconcileLoop()
	go m.retryLoop()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.finishIntents()
		// A previous owner may have buffered a message and died before it
		// offered it to the registered waits (the publisher, publishing it
		// again, is told it is a duplicate): every registered wait is
		// offered the buffered messages of its process once.
		for _, d := range m.registered() {
			m.drain(d[0], d[1], d[2])
		}
	}()
	m.kickNow()
	return nil
}

// registered returns the name, key and process of the registered waits,
// each once.
func (m *messages) registered() [][3]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[[3]string]bool{}
	var out [][3]string
	for _, list := range m.index {
		for _, x := range list {
			d := [3]string{x.sub.Name, x.sub.CorrelationKey, x.sub.ProcessID}
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// close stops the protocol's goroutines and handlers.
func (m *messages) close() {
	for _, s := range m.subsc {
		_ = s.Unsubscribe()
	}
	m.gate.Lock()
	m.closed = true
	m.gate.Unlock()
	close(m.stop)
	m.cancel()
	m.watchMu.Lock()
	m.watchClosed = true
	if m.watcher != nil {
		_ = m.watcher.Stop()
	}
	m.watchMu.Unlock()
	m.wg.Wait()
}

// kickNow asks for a reconcile pass.
func (m *messages) kickNow() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// onEvent kicks a reconcile pass on the events that open a wait for
// another partition's key, and on those that may close one (an element
// left or terminated, a correlation, the instance's end) of the instances
// holding such waits: other instances cost a map lookup.
func (m *messages) onEvent(ev engine.Event) {
	switch ev.Type {
	case engine.MessageSubscribed:
		if MessagePartition(ev.CorrelationKey, m.p.n.parts) == m.p.id {
			return
		}
		m.trackMu.Lock()
		m.tracked[ev.InstanceKey] = true
		m.fresh[ev.InstanceKey] = true
		m.trackMu.Unlock()
	case engine.MessageCorrelated, engine.ElementLeft, engine.ElementTerminated,
		engine.InstanceCompleted, engine.InstanceTerminated, engine.InstanceFailed:
		m.trackMu.Lock()
		tracked := m.tracked[ev.InstanceKey]
		m.trackMu.Unlock()
		if !tracked {
			return
		}
	default:
		return
	}
	m.kickNow()
}

// reconcileLoop keeps the waits registered at other partitions equal to
// the engine's open waits for their keys, one pass per kick; a pass that
// fails is tried again.
func (m *messages) reconcileLoop() {
	defer m.wg.Done()
	var retry <-chan time.Time
	for {
		select {
		case <-m.stop:
			return
		case <-m.kick:
		case <-retry:
		}
		retry = nil
		if err := m.reconcile(); err != nil {
			m.p.n.logf("partition %d: register its message waits at their partitions: %v; trying again", m.p.id, err)
			retry = time.After(100 * time.Millisecond)
		}
	}
}

// reconcile registers the engine's open waits for other partitions' keys
// that are not yet, and deletes the registrations of waits that closed
// (correlated, interrupted, cancelled, ended). Open and close are puts
// and deletes of one key per wait: idempotent, so a new owner of the
// partition just runs a pass.
func (m *messages) reconcile() error {
	n := m.p.n
	m.trackMu.Lock()
	m.fresh = map[int64]bool{}
	m.trackMu.Unlock()
	want := map[string]remoteSub{}
	for _, s := range partitioned.MessageSubscriptions(m.p.Engine()) {
		owner := MessagePartition(s.CorrelationKey, n.parts)
		if owner == m.p.id {
			continue
		}
		rs := remoteSub{Partition: m.p.id, InstanceKey: s.InstanceKey, ProcessID: s.ProcessID, Name: s.Name, CorrelationKey: s.CorrelationKey}
		want[subKey(owner, rs)] = rs
	}
	ctx, cancel := context.WithTimeout(m.ctx, 10*time.Second)
	defer cancel()
	for k, rs := range want {
		if m.have[k] {
			continue
		}
		data, _ := json.Marshal(rs)
		if _, err := m.subs.Put(ctx, k, data); err != nil {
			return fmt.Errorf("open %s: %w", k, err)
		}
		m.have[k] = true
	}
	for k := range m.have {
		if _, ok := want[k]; ok {
			continue
		}
		if err := m.subs.Delete(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("close %s: %w", k, err)
		}
		delete(m.have, k)
	}
	// Instances without waits elsewhere any more stop kicking passes,
	// unless they opened one during this pass.
	m.trackMu.Lock()
	insts := m.fresh
	for _, rs := range want {
		insts[rs.InstanceKey] = true
	}
	m.tracked, m.fresh = insts, map[int64]bool{}
	m.trackMu.Unlock()
	return nil
}

// watch keeps the index equal to the waits registered at the partition,
// and offers each new wait the buffered messages that match it. A watch
// that ends while the partition is open (its consumer lost, on a busy
// machine or a server's restart, and not made again by the client) is
// made again, and the index set to what it then holds: messages keep
// reaching the waits of other partitions.
func (m *messages) watch() {
	defer m.wg.Done()
	m.watchMu.Lock()
	w := m.watcher
	m.watchMu.Unlock()
	for {
		select {
		case <-m.stop:
			return
		case e, ok := <-w.Updates():
			if !ok {
				select {
				case <-m.stop:
					return
				default:
				}
				m.p.n.logf("partition %d: the watch of the waits registered at it ended: watching again", m.p.id)
				if w = m.rewatch(); w == nil {
					return
				}
				continue
			}
			if e == nil {
				continue
			}
			if rs, added := m.apply(e); added {
				m.offerLater(rs)
			}
		}
	}
}

// offerLater offers a newly registered wait the buffered messages that
// match it, on a goroutine of its own.
func (m *messages) offerLater(rs remoteSub) {
	m.wg.Add(1)
	go func() { defer m.wg.Done(); m.drain(rs.Name, rs.CorrelationKey, rs.ProcessID) }()
}

// loadWatch watches the waits registered at the partition and returns
// the watch with its initial values. The watch lives as long as the
// partition, not ctx: close stops it.
func (m *messages) loadWatch(ctx context.Context) (jetstream.KeyWatcher, []jetstream.KeyValueEntry, error) {
	w, err := m.subs.Watch(context.Background(), "s."+strconv.Itoa(m.p.id)+".>")
	if err != nil {
		return nil, nil, fmt.Errorf("watch the waits registered at it: %w", err)
	}
	var entries []jetstream.KeyValueEntry
	// The initial values end with a nil entry.
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, nil, errors.New("the watch of the waits registered at it ended while loading them")
			}
			if e == nil {
				return w, entries, nil
			}
			entries = append(entries, e)
		case <-ctx.Done():
			_ = w.Stop()
			return nil, nil, fmt.Errorf("load the waits registered at it: %w", ctx.Err())
		}
	}
}

// rewatch makes the watch again, trying until it is made or the
// partition closes (nil then), and sets the index to its initial
// values: waits gone meanwhile leave it, new ones are offered the
// buffered messages.
func (m *messages) rewatch() jetstream.KeyWatcher {
	for {
		w, entries, err := m.loadWatch(m.ctx)
		if err == nil {
			m.watchMu.Lock()
			if m.watchClosed {
				m.watchMu.Unlock()
				_ = w.Stop()
				return nil
			}
			m.watcher = w
			m.watchMu.Unlock()
			live := map[string]bool{}
			for _, e := range entries {
				if e.Operation() == jetstream.KeyValuePut {
					live[e.Key()] = true
				}
			}
			m.mu.Lock()
			for mk, list := range m.index {
				list = slices.DeleteFunc(list, func(x indexed) bool { return !live[x.key] })
				if len(list) == 0 {
					delete(m.index, mk)
				} else {
					m.index[mk] = list
				}
			}
			m.mu.Unlock()
			for _, e := range entries {
				if rs, added := m.apply(e); added {
					m.offerLater(rs)
				}
			}
			return w
		}
		m.p.n.logf("partition %d: %v; trying again", m.p.id, err)
		select {
		case <-m.stop:
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// apply applies one change of the bucket to the index; it reports a wait
// newly registered.
func (m *messages) apply(e jetstream.KeyValueEntry) (remoteSub, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.Operation() != jetstream.KeyValuePut {
		for mk, list := range m.index {
			if i := slices.IndexFunc(list, func(x indexed) bool { return x.key == e.Key() }); i >= 0 {
				list = slices.Delete(list, i, i+1)
				if len(list) == 0 {
					delete(m.index, mk)
				} else {
					m.index[mk] = list
				}
				break
			}
		}
		return remoteSub{}, false
	}
	var rs remoteSub
	if json.Unmarshal(e.Value(), &rs) != nil {
		m.p.n.logf("partition %d: unreadable wait %s in %s: ignored", m.p.id, e.Key(), subsBucket(m.p.n.cfg.Cluster))
		return rs, false
	}
	mk := [2]string{rs.Name, rs.CorrelationKey}
	if slices.ContainsFunc(m.index[mk], func(x indexed) bool { return x.key == e.Key() }) {
		return rs, false // registered again by a new owner of its partition: keeps its place
	}
	m.index[mk] = append(m.index[mk], indexed{key: e.Key(), sub: rs})
	return rs, true
}

// candidates returns the registered waits for name and key, oldest first.
func (m *messages) candidates(name, key string) []remoteSub {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.index[[2]string{name, key}]
	out := make([]remoteSub, len(list))
	for i, x := range list {
		out[i] = x.sub
	}
	return out
}

// stripe returns the lock of name and key.
func (m *messages) stripe(name, key string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(key))
	return &m.stripes[h.Sum32()%uint32(len(m.stripes))]
}

// answerPublish answers publish_message routed to the partition (see
// publish), as one engine does (wire.MessageResult): the instances the
// message was correlated to, here then on other partitions, then those it
// started, each where it stands once settled. The message is published
// once publish returns: a settling cut short (the request's time is up,
// the partition closes) answers where the instances stand then, not an
// error a caller would publish it again for.
func (m *messages) answerPublish(msg *nats.Msg) {
	var req wire.MessageRequest
	if err := json.Unmarshal(msg.Data, &req); err != nil {
		m.p.n.respond(msg, errorResponse(wire.CodeBadRequest, "publish_message: "+err.Error()))
		return
	}
	if req.TTLMs < 0 {
		m.p.n.respond(msg, errorResponse(wire.CodeBadRequest, fmt.Sprintf("publish_message: field \"ttlMs\" must not be negative, got %v", req.TTLMs)))
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, ForwardTimeout)
	defer cancel()
	pub, remote, err := m.publish(ctx, req)
	if err != nil {
		m.p.n.respond(msg, errorResponse(wire.CodeOf(err), err.Error()))
		return
	}
	eng := m.p.Engine()
	var res wire.MessageResult
	if len(pub.Correlated)+len(remote)+len(pub.Started) > 0 {
		// The remote instances were settled by their partitions.
		if err := eng.Settle(ctx); err != nil {
			m.p.n.logf("partition %d: settle after publishing message %q: %v; answered unsettled", m.p.id, req.Name, err)
		}
		for _, inst := range pub.Correlated {
			res.Instances = append(res.Instances, dispatch.Reached(eng, inst))
		}
		res.Instances = append(res.Instances, remote...)
		for _, inst := range pub.Started {
			res.Instances = append(res.Instances, dispatch.Reached(eng, inst))
		}
	}
	out, _ := json.Marshal(res)
	m.p.n.respond(msg, okResponse(out, nil))
}

// publish publishes a message on the partition: the engine correlates it
// to its own instances (and starts instances by message start events, and
// buffers it), then it goes to the oldest wait registered at the
// partition of every other process, as long as one takes it. It returns
// what the engine did, and where the instances on other partitions that
// took it stand, in the order of their processes' oldest waits.
func (m *messages) publish(ctx context.Context, req wire.MessageRequest) (engine.Publication, []wire.CompleteJobResult, error) {
	mu := m.stripe(req.Name, req.CorrelationKey)
	mu.Lock()
	defer mu.Unlock()
	em := engine.Message{Name: req.Name, CorrelationKey: req.CorrelationKey, Variables: req.Variables,
		TTL: time.Duration(req.TTLMs * float64(time.Millisecond)), MessageID: req.MessageID}
	pub, err := partitioned.PublishMessageServed(ctx, m.p.Engine(), em)
	if err != nil {
		return pub, nil, err
	}
	var remote []wire.CompleteJobResult
	for _, pid := range processes(m.candidates(req.Name, req.CorrelationKey)) {
		if pub.Served[pid] {
			continue // at most one instance per process: a wait of B's took it
		}
		var took *wire.CompleteJobResult
		if em.TTL > 0 {
			took = m.offerBuffered(ctx, req.Name, req.CorrelationKey, pid)
		} else {
			id := req.MessageID
			if id == "" {
				id = nonce()
			}
			if took, err = m.offer(ctx, req.Name, req.CorrelationKey, pid, req.Variables, id); err != nil && !errors.Is(err, errNotSent) {
				m.later(nil) // the outcome is unknown: its intent is finished later
			}
			// A message without TTL whose correlation could not be written
			// is not kept anywhere: it is logged, as one published while no
			// wait is open.
		}
		if took != nil {
			remote = append(remote, *took)
		}
	}
	return pub, remote, nil
}

// processes lists the processes of subs, in the order of their oldest
// wait.
func processes(subs []remoteSub) []string {
	var out []string
	for _, s := range subs {
		if !slices.Contains(out, s.ProcessID) {
			out = append(out, s.ProcessID)
		}
	}
	return out
}

// drain offers the buffered messages for name and key to the registered
// waits of process pid, until none is left or no wait takes one.
func (m *messages) drain(name, key, pid string) {
	ctx, cancel := context.WithTimeout(m.ctx, ForwardTimeout)
	defer cancel()
	mu := m.stripe(name, key)
	mu.Lock()
	defer mu.Unlock()
	for m.offerBuffered(ctx, name, key, pid) != nil {
	}
}

// offerBuffered claims the oldest buffered message for name and key that
// process pid has not had, and offers it to pid's registered waits; it
// returns where the instance that took it stands, nil if none did. The
// correlation's intent is written before
// the claim is committed, so that an owner dying in between leaves either
// no claim or an intent its next owner finishes. Called with the stripe
// held.
func (m *messages) offerBuffered(ctx context.Context, name, key, pid string) *wire.CompleteJobResult {
	var first *remoteSub
	for _, s := range m.candidates(name, key) {
		if s.ProcessID == pid {
			first = &s
			break
		}
	}
	if first == nil {
		return nil
	}
	b, ok := partitioned.ClaimBufferedMessage(m.p.Engine(), name, key, pid)
	if !ok {
		return nil
	}
	id := b.MessageID()
	if id == "" {
		id = nonce()
	}
	in := intent{Sub: *first, Variables: b.Variables(), ID: id}
	ikey, err := m.writeIntent(ctx, in)
	if err == nil {
		if err = b.Commit(ctx); err != nil {
			m.later(nil) // the claim may be committed: the intent decides
			return nil
		}
		var took *wire.CompleteJobResult
		took, err = m.finish(ctx, ikey, in)
		if err != nil {
			m.later(nil) // the outcome is unknown: the intent stays, and the claim with it
			return nil
		}
		if took != nil {
			return took
		}
		// That wait is gone: the next ones.
		took, err = m.offer(ctx, name, key, pid, in.Variables, id)
		switch {
		case took != nil:
			return took
		case err != nil && !errors.Is(err, errNotSent):
			m.later(nil)
			return nil
		}
	}
	if err := b.Release(ctx); err != nil {
		m.p.n.logf("partition %d: hand message %q back to the buffer: %v", m.p.id, name, err)
	}
	if err != nil { // not sent: offered again shortly
		m.later(&[3]string{name, key, pid})
	}
	return nil
}

// intentSweep is how often a partition lists its correlations under way
// again (retryLoop).
const intentSweep = 10 * time.Second

// errNotSent is a correlation not asked for: its intent could not be
// written.
var errNotSent = errors.New("the correlation under way could not be written, so it was not sent")

// later asks retryLoop to offer the buffered messages for name, key and
// process again (drain non-nil), or to finish the correlations under way.
func (m *messages) later(drain *[3]string) {
	m.retryMu.Lock()
	defer m.retryMu.Unlock()
	if drain != nil {
		m.retryDrains[*drain] = true
	} else {
		m.retryIntents = true
	}
}

// retryLoop finishes, a little later, what failed on the way: correlations
// whose outcome was unknown (their intents) and buffered messages that
// could not be offered. A partition that opens finishes its intents
// anyway; this covers an owner that stays. Every intentSweep it lists
// the intents again whatever happened: the listing at open may come from
// a bucket replica behind its leader and miss an intent a dead owner
// wrote just before it died. Finishing an intent twice is harmless (the
// wait's partition answers a repeated request the same way).
func (m *messages) retryLoop() {
	defer m.wg.Done()
	const every = 250 * time.Millisecond
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-m.stop:
			return
		case <-tick.C:
		}
		m.retryMu.Lock()
		drains, intents := m.retryDrains, m.retryIntents || n%int(intentSweep/every) == 0
		m.retryDrains, m.retryIntents = map[[3]string]bool{}, false
		m.retryMu.Unlock()
		if intents {
			m.finishIntents()
		}
		for d := range drains {
			m.drain(d[0], d[1], d[2])
		}
	}
}

// offer correlates a message to the oldest registered wait of process pid
// that takes it, each asked in turn; it returns where the instance that
// took it stands (nil if none did), or an error when the outcome is
// unknown (the intent stays for the next owner). Called with the stripe
// held.
func (m *messages) offer(ctx context.Context, name, key, pid string, vars map[string]any, id string) (*wire.CompleteJobResult, error) {
	for _, s := range m.candidates(name, key) {
		if s.ProcessID != pid {
			continue
		}
		took, err := m.correlate(ctx, intent{Sub: s, Variables: vars, ID: id})
		if err != nil {
			if !errors.Is(err, errNotSent) {
				m.p.n.logf("partition %d: correlate message %q to instance %d of partition %d: %v", m.p.id, name, s.InstanceKey, s.Partition, err)
			}
			return nil, err
		}
		if took != nil {
			return took, nil
		}
	}
	return nil, nil
}

// correlate writes the intent, asks the wait's partition to correlate
// the message and deletes the intent once answered.
func (m *messages) correlate(ctx context.Context, in intent) (*wire.CompleteJobResult, error) {
	ikey, err := m.writeIntent(ctx, in)
	if err != nil {
		return nil, err
	}
	return m.finish(ctx, ikey, in)
}

// writeIntent writes a correlation under way; errNotSent if it cannot.
func (m *messages) writeIntent(ctx context.Context, in intent) (string, error) {
	ikey := "i." + strconv.Itoa(m.p.id) + "." + hash64(in.ID, strconv.FormatInt(in.Sub.InstanceKey, 10))
	data, _ := json.Marshal(in)
	if _, err := m.subs.Put(ctx, ikey, data); err != nil {
		m.p.n.logf("partition %d: write the correlation under way %s, so it is not sent: %v", m.p.id, ikey, err)
		return "", fmt.Errorf("%w: %w", errNotSent, err)
	}
	return ikey, nil
}

// finish asks the wait's partition and deletes the intent once answered.
func (m *messages) finish(ctx context.Context, ikey string, in intent) (*wire.CompleteJobResult, error) {
	took, err := m.ask(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := m.subs.Delete(ctx, ikey); err != nil {
		m.p.n.logf("partition %d: delete the correlation under way %s: %v", m.p.id, ikey, err)
	}
	return took, nil
}

// askAttempt bounds one attempt of a correlate request: a request to an
// owner that just died can get no answer at all (its interest lingers in
// NATS for a moment) rather than no responders, and the request is
// idempotent, so it is sent again.
const askAttempt = 2 * time.Second

// ask sends a correlate request to the wait's partition, again while it
// has no owner or does not answer, until ctx ends. It returns where the
// instance stands if it took the message, nil if it did not.
func (m *messages) ask(ctx context.Context, in intent) (*wire.CompleteJobResult, error) {
	body, _ := json.Marshal(correlateRequest{InstanceKey: in.Sub.InstanceKey, Name: in.Sub.Name,
		CorrelationKey: in.Sub.CorrelationKey, Variables: in.Variables, ID: in.ID})
	var out []byte
	for {
		actx, cancel := context.WithTimeout(ctx, askAttempt)
		var err error
		out, err = m.p.n.router.request(actx, msgSubject(m.p.n.cfg.Cluster, in.Sub.Partition, "correlate"), body)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, err
		}
	}
	var resp correlateResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("partition %d answered %q: %w", in.Sub.Partition, out, err)
	}
	switch {
	case resp.Error != "":
		return nil, fmt.Errorf("partition %d: %s", in.Sub.Partition, resp.Error)
	case !resp.Correlated:
		return nil, nil
	case resp.Instance == nil: // a node before answers carried the instance
		return &wire.CompleteJobResult{InstanceKey: in.Sub.InstanceKey}, nil
	}
	return resp.Instance, nil
}

// finishIntents finishes the correlations a previous owner of the
// partition left under way, read from the subscription bucket's leader
// (leaderIntents), so that an intent written just before the owner died
// is seen by the next one when it opens the partition: each is asked again (the wait's partition
// answers a repeated request as the first time); a message the wait no
// longer takes is offered to the other waits of its process.
func (m *messages) finishIntents() {
	ctx, cancel := context.WithTimeout(m.ctx, ForwardTimeout)
	defer cancel()
	intents, err := m.leaderIntents(ctx)
	if err != nil {
		m.p.n.logf("partition %d: list the correlations under way: %v", m.p.id, err)
		m.later(nil)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(intents)) {
		in := intents[k]
		mu := m.stripe(in.Sub.Name, in.Sub.CorrelationKey)
		mu.Lock()
		took, err := m.ask(ctx, in)
		if err == nil && took == nil {
			// The wait is gone: the next wait of the process. The intent
			// stays until that one is written (or none is left).
			_, err = m.offer(ctx, in.Sub.Name, in.Sub.CorrelationKey, in.Sub.ProcessID, in.Variables, in.ID)
		}
		if err != nil {
			m.later(nil) // still unknown, or not sent: again later
		} else {
			_ = m.subs.Delete(ctx, k)
		}
		mu.Unlock()
	}
}

// Values of a correlation's entry in the done bucket.
const (
	// corrPending is written before the engine is asked: a request sent
	// again that finds it knows an earlier attempt may have correlated.
	corrPending = "pending"
	// corrDone is written once the engine correlated.
	corrDone = "done"
)

// answerCorrelate answers a correlate request for an instance of the
// partition, the same way however often it is sent: a request answered
// yes before (same id, same instance) is answered yes again; otherwise the
// engine correlates the message to the instance's open wait, if it still
// has it. The entry is written pending before the engine is asked, so
// that a request sent again after this owner died between the engine's
// commit and the entry's completion looks at the instance's history
// instead of answering no (which would give the message to another
// instance of the process). A yes carries where the instance stands once
// settled (publish_message's answer lists it); a yes answered again from
// the entry, where it stands now.
func (m *messages) answerCorrelate(msg *nats.Msg) {
	respond := func(r correlateResponse) {
		out, _ := json.Marshal(r)
		m.p.n.respond(msg, out)
	}
	retry := func(what string, err error) {
		m.p.n.respond(msg, errorResponse(wire.CodeClosed, "correlate: "+what+": "+err.Error())) // sent again by the asker
	}
	var req correlateRequest
	if err := json.Unmarshal(msg.Data, &req); err != nil {
		respond(correlateResponse{Error: "correlate: " + err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, ForwardTimeout)
	defer cancel()
	dkey := "c." + strconv.Itoa(m.p.id) + "." + strconv.FormatInt(req.InstanceKey, 10) + "." + hash64(req.ID)
	eng := m.p.Engine()
	earlier := false
	switch e, err := m.done.Get(ctx, dkey); {
	case err == nil && string(e.Value()) == corrDone:
		res := dispatch.Progress(eng, req.InstanceKey)
		respond(correlateResponse{Correlated: true, Instance: &res})
		return
	case err == nil:
		earlier = true
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		retry("read the correlations made", err)
		return
	default:
		// Created, not put: a bucket's reads may be served by a replica
		// behind its leader, and a record the read missed must not be
		// overwritten as if the request were new. The leader refuses the
		// create, and the instance's history decides as for a pending
		// record.
		_, err := m.done.Create(ctx, dkey, []byte(corrPending))
		switch {
		case errors.Is(err, jetstream.ErrKeyExists):
			earlier = true
		case err != nil:
			retry("write the correlation under way", err)
			return
		}
	}
	// The instance at hand, so that its state is known even once the
	// message ended it and it is no longer retained.
	inst, held := eng.Instance(req.InstanceKey)
	ok, err := partitioned.CorrelateMessageTo(ctx, eng, req.InstanceKey, engine.Message{Name: req.Name, CorrelationKey: req.CorrelationKey, Variables: req.Variables})
	if err != nil {
		if errors.Is(err, engine.ErrClosed) || errors.Is(err, ErrFenced) || errors.Is(err, engine.ErrNotAcknowledged) {
			retry("the engine", err) // not taken, or taken by an engine that is reopened from its store
			return
		}
		respond(correlateResponse{Error: err.Error()})
		return
	}
	if !ok && earlier {
		ok = m.correlatedBefore(ctx, req)
	}
	if ok {
		if _, err := m.done.Put(ctx, dkey, []byte(corrDone)); err != nil {
			m.p.n.logf("partition %d: remember correlation %s: %v", m.p.id, dkey, err)
		}
	} else if err := m.done.Delete(ctx, dkey); err != nil {
		m.p.n.logf("partition %d: forget correlation %s: %v", m.p.id, dkey, err)
	}
	m.kickNow()
	if !ok {
		respond(correlateResponse{})
		return
	}
	// Where the instance stands once settled, as publish_message answers
	// on one engine; the settling is bounded so that the answer comes
	// before the asker sends the request again (it would be answered from
	// the entry): past the bound, where it stands then.
	sctx, scancel := context.WithTimeout(ctx, askAttempt/2)
	if err := eng.Settle(sctx); err != nil {
		m.p.n.logf("partition %d: settle after correlating message %q to instance %d: %v; answered unsettled", m.p.id, req.Name, req.InstanceKey, err)
	}
	scancel()
	res := dispatch.Progress(eng, req.InstanceKey)
	if held {
		res = dispatch.Reached(eng, inst)
	}
	respond(correlateResponse{Correlated: true, Instance: &res})
}

// correlatedBefore reports whether the instance's history holds a
// correlation of req's message (name, key and variables): an earlier
// attempt of the same request that committed before its owner died.
func (m *messages) correlatedBefore(ctx context.Context, req correlateRequest) bool {
	inst, ok := m.p.Engine().Instance(req.InstanceKey)
	if !ok {
		return false
	}
	h, err := inst.History(ctx)
	if err != nil {
		return false
	}
	want, _ := json.Marshal(req.Variables)
	for _, ev := range h {
		if ev.Type != engine.MessageCorrelated || ev.Name != req.Name || ev.CorrelationKey != req.CorrelationKey {
			continue
		}
		if got, _ := json.Marshal(ev.Variables); string(got) == string(want) {
			return true
		}
	}
	return false
}

// nonce identifies a correlation of a message without a message id.
func nonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
