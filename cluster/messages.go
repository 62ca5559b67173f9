package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine"
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

// correlateResponse is the answer: whether the instance took the message.
// Error is set when the partition could not tell (its engine refused).
type correlateResponse struct {
	Correlated bool   `json:"correlated"`
	Error      string `json:"error,omitempty"`
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

	subsc   []*nats.Subscription
	watcher jetstream.KeyWatcher
	stop    chan struct{}
	// ctx ends when the partition closes: requests under way give up (a
	// correlation's intent stays for the next owner).
	ctx    context.Context
	cancel context.CancelFunc
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
		index: map[[2]string][]indexed{}, stop: make(chan struct{})}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	p.msgs = m
	// The watcher lives as long as the partition, not ctx: close stops it.
	w, err := m.subs.Watch(context.Background(), "s."+strconv.Itoa(p.id)+".>")
	if err != nil {
		return fmt.Errorf("partition %d: watch the waits registered at it: %w", p.id, err)
	}
	m.watcher = w
	// The initial values end with a nil entry.
loaded:
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("partition %d: the watch of the waits registered at it ended while loading them", p.id)
			}
			if e == nil {
				break loaded
			}
			m.apply(e)
		case <-ctx.Done():
			_ = w.Stop()
			return fmt.Errorf("partition %d: load the waits registered at it: %w", p.id, ctx.Err())
		}
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
				_ = msg.Respond(errorResponse(wire.CodeClosed, "the partition is closing")) // sent again to its next owner
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
	m.wg.Add(2)
	go m.watch()
	go m.reconcileLoop()
	m.wg.Add(1)
	go func() { defer m.wg.Done(); m.finishIntents() }()
	m.kickNow()
	return nil
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
	if m.watcher != nil {
		_ = m.watcher.Stop()
	}
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
	for _, s := range m.p.Engine().MessageSubscriptions() {
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
// and offers each new wait the buffered messages that match it.
func (m *messages) watch() {
	defer m.wg.Done()
	for {
		select {
		case <-m.stop:
			return
		case e, ok := <-m.watcher.Updates():
			if !ok {
				select {
				case <-m.stop:
				default:
					m.p.n.logf("partition %d: the watch of the waits registered at it ended: messages reach only its own waits until it is opened again", m.p.id)
				}
				return
			}
			if e == nil {
				continue
			}
			if rs, added := m.apply(e); added {
				m.wg.Add(1)
				go func() { defer m.wg.Done(); m.drain(rs.Name, rs.CorrelationKey, rs.ProcessID) }()
			}
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

// answerPublish answers publish_message routed to the partition: the
// engine correlates the message to its own instances (and starts
// instances by message start events, and buffers it), then the message
// goes to the oldest wait registered at the partition of every other
// process, as long as one takes it.
func (m *messages) answerPublish(msg *nats.Msg) {
	var req wire.MessageRequest
	if err := json.Unmarshal(msg.Data, &req); err != nil {
		_ = msg.Respond(errorResponse(wire.CodeBadRequest, "publish_message: "+err.Error()))
		return
	}
	if req.TTLMs < 0 {
		_ = msg.Respond(errorResponse(wire.CodeBadRequest, fmt.Sprintf("publish_message: field \"ttlMs\" must not be negative, got %v", req.TTLMs)))
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, ForwardTimeout)
	defer cancel()
	mu := m.stripe(req.Name, req.CorrelationKey)
	mu.Lock()
	defer mu.Unlock()
	em := engine.Message{Name: req.Name, CorrelationKey: req.CorrelationKey, Variables: req.Variables,
		TTL: time.Duration(req.TTLMs * float64(time.Millisecond)), MessageID: req.MessageID}
	served, err := m.p.Engine().PublishMessageServed(ctx, em)
	if err != nil {
		_ = msg.Respond(errorResponse(wire.CodeOf(err), err.Error()))
		return
	}
	for _, pid := range processes(m.candidates(req.Name, req.CorrelationKey)) {
		if served[pid] {
			continue // at most one instance per process: a wait of B's took it
		}
		if em.TTL > 0 {
			m.offerBuffered(ctx, req.Name, req.CorrelationKey, pid)
			continue
		}
		id := req.MessageID
		if id == "" {
			id = nonce()
		}
		_, _ = m.offer(ctx, req.Name, req.CorrelationKey, pid, req.Variables, id) // an error is logged; its intent stays
	}
	_ = msg.Respond(okResponse(json.RawMessage("null"), nil))
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
	for m.offerBuffered(ctx, name, key, pid) {
	}
}

// offerBuffered claims the oldest buffered message for name and key that
// process pid has not had, and offers it to pid's registered waits; it
// reports whether one took it. Called with the stripe held.
func (m *messages) offerBuffered(ctx context.Context, name, key, pid string) bool {
	eng := m.p.Engine()
	b, ok, err := eng.ClaimBufferedMessage(ctx, name, key, pid)
	if err != nil || !ok {
		return false
	}
	id := b.MessageID()
	if id == "" {
		id = nonce()
	}
	took, err := m.offer(ctx, name, key, pid, b.Variables(), id)
	if took || err != nil {
		// Taken, or the outcome is unknown: the correlation's intent stays
		// for the partition's next owner, and the claim with it.
		return took
	}
	if err := b.Release(ctx); err != nil {
		m.p.n.logf("partition %d: hand message %q back to the buffer: %v", m.p.id, name, err)
	}
	return false
}

// offer correlates a message to the oldest registered wait of process pid
// that takes it, each asked in turn; it reports whether one did, or an
// error when the outcome is unknown (the intent stays for the next
// owner). Called with the stripe held.
func (m *messages) offer(ctx context.Context, name, key, pid string, vars map[string]any, id string) (bool, error) {
	for _, s := range m.candidates(name, key) {
		if s.ProcessID != pid {
			continue
		}
		took, err := m.correlate(ctx, intent{Sub: s, Variables: vars, ID: id})
		if err != nil {
			m.p.n.logf("partition %d: correlate message %q to instance %d of partition %d: %v", m.p.id, name, s.InstanceKey, s.Partition, err)
			return false, err
		}
		if took {
			return true, nil
		}
	}
	return false, nil
}

// correlate writes the intent, asks the wait's partition to correlate
// the message and deletes the intent once answered.
func (m *messages) correlate(ctx context.Context, in intent) (bool, error) {
	ikey := "i." + strconv.Itoa(m.p.id) + "." + hash64(in.ID, strconv.FormatInt(in.Sub.InstanceKey, 10))
	data, _ := json.Marshal(in)
	if _, err := m.subs.Put(ctx, ikey, data); err != nil {
		// Not asked: the wait is treated as not taking it (a buffered
		// message goes back to the buffer, for the next publication or
		// registration of its key).
		m.p.n.logf("partition %d: write the correlation under way %s, so it is not sent: %v", m.p.id, ikey, err)
		return false, nil
	}
	took, err := m.ask(ctx, in)
	if err != nil {
		return false, err
	}
	if err := m.subs.Delete(ctx, ikey); err != nil {
		m.p.n.logf("partition %d: delete the correlation under way %s: %v", m.p.id, ikey, err)
	}
	return took, nil
}

// ask sends a correlate request to the wait's partition, again while it
// has no owner, until ctx ends.
func (m *messages) ask(ctx context.Context, in intent) (bool, error) {
	body, _ := json.Marshal(correlateRequest{InstanceKey: in.Sub.InstanceKey, Name: in.Sub.Name,
		CorrelationKey: in.Sub.CorrelationKey, Variables: in.Variables, ID: in.ID})
	out, err := m.p.n.router.request(ctx, msgSubject(m.p.n.cfg.Cluster, in.Sub.Partition, "correlate"), body)
	if err != nil {
		return false, err
	}
	var resp correlateResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return false, fmt.Errorf("partition %d answered %q: %w", in.Sub.Partition, out, err)
	}
	if resp.Error != "" {
		return false, fmt.Errorf("partition %d: %s", in.Sub.Partition, resp.Error)
	}
	return resp.Correlated, nil
}

// finishIntents finishes the correlations a previous owner of the
// partition left under way: each is asked again (the wait's partition
// answers a repeated request as the first time); a message the wait no
// longer takes is offered to the other waits of its process.
func (m *messages) finishIntents() {
	ctx, cancel := context.WithTimeout(m.ctx, ForwardTimeout)
	defer cancel()
	lister, err := m.subs.ListKeysFiltered(ctx, "i."+strconv.Itoa(m.p.id)+".*")
	if err != nil {
		m.p.n.logf("partition %d: list the correlations under way: %v", m.p.id, err)
		return
	}
	for k := range lister.Keys() {
		e, err := m.subs.Get(ctx, k)
		if err != nil {
			continue
		}
		var in intent
		if json.Unmarshal(e.Value(), &in) != nil {
			continue
		}
		mu := m.stripe(in.Sub.Name, in.Sub.CorrelationKey)
		mu.Lock()
		took, err := m.ask(ctx, in)
		if err == nil {
			_ = m.subs.Delete(ctx, k)
			if !took {
				_, _ = m.offer(ctx, in.Sub.Name, in.Sub.CorrelationKey, in.Sub.ProcessID, in.Variables, in.ID) // an error is logged; its intent stays
			}
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
// instance of the process).
func (m *messages) answerCorrelate(msg *nats.Msg) {
	respond := func(r correlateResponse) {
		out, _ := json.Marshal(r)
		_ = msg.Respond(out)
	}
	retry := func(what string, err error) {
		_ = msg.Respond(errorResponse(wire.CodeClosed, "correlate: "+what+": "+err.Error())) // sent again by the asker
	}
	var req correlateRequest
	if err := json.Unmarshal(msg.Data, &req); err != nil {
		respond(correlateResponse{Error: "correlate: " + err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, ForwardTimeout)
	defer cancel()
	dkey := "c." + strconv.Itoa(m.p.id) + "." + strconv.FormatInt(req.InstanceKey, 10) + "." + hash64(req.ID)
	earlier := false
	switch e, err := m.done.Get(ctx, dkey); {
	case err == nil && string(e.Value()) == corrDone:
		respond(correlateResponse{Correlated: true})
		return
	case err == nil:
		earlier = true
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		retry("read the correlations made", err)
		return
	default:
		if _, err := m.done.Put(ctx, dkey, []byte(corrPending)); err != nil {
			retry("write the correlation under way", err)
			return
		}
	}
	eng := m.p.Engine()
	ok, err := eng.CorrelateMessageTo(ctx, req.InstanceKey, engine.Message{Name: req.Name, CorrelationKey: req.CorrelationKey, Variables: req.Variables})
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
	respond(correlateResponse{Correlated: ok})
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
