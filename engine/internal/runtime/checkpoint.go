package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sort"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// deployment is the source of one successful deployment, kept for
// checkpoints: a restore deploys it again.
type deployment struct {
	name   string
	source []byte
	plans  []*Plan
	// at is the key counter when it was recorded, which orders a
	// deployment without plans (a DMN model) among the others.
	at int64
	// id is the deployment the document came with (NewDeployment).
	id int64
}

// order is where the deployment goes in a checkpoint: by its first
// process key, or for a DMN model by the keys given before it.
func (d *deployment) order() int64 {
	if len(d.plans) > 0 {
		return d.plans[0].Key
	}
	return d.at
}

// Deployed records the source of a document of deployment id whose
// plans Install registered, so that checkpoints can carry it.
func (e *Engine) Deployed(name string, source []byte, plans []*Plan, id int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deployments = append(e.deployments, deployment{name: name, source: append([]byte(nil), source...), plans: plans, at: e.keys.Load(), id: id})
}

// Checkpoint settles the engine and returns its state document. It must
// not run concurrently with calls that give the engine input: a state is
// written as of one settled moment.
func (e *Engine) Checkpoint(ctx context.Context) (*Document, error) {
	return e.checkpoint(ctx, nil, nil, nil, nil)
}

// CheckpointInstance settles the engine and returns the state document of
// one live instance: the deployments, the clock, the instance and the
// instances its call activities called, and those that called it, up to
// the top one (a call tree moves whole). The engine's message buffer,
// timer start events and finished instances are left out, so restoring
// the document makes an engine that holds only that tree.
func (e *Engine) CheckpointInstance(ctx context.Context, key int64) (*Document, error) {
	return e.checkpoint(ctx, &key, nil, nil, nil)
}

// Dirty is what changed since the last CheckpointDirty.
type Dirty struct {
	// Doc is the engine-level state (clock, key counter, deployments,
	// message buffer, timer start events), with in Live the live
	// instances changed, and in Finished those that have finished and
	// are still findable, oldest first. Doc.Hub.Messages is left out
	// when MessagesSame: the buffer has not changed since the call that
	// returned MessageGen as given.
	Doc          *Document
	MessagesSame bool
	MessageGen   uint64
	// Ended lists the keys of the instances changed that are no longer
	// live; Evicted those of finished instances no longer findable.
	Ended, Evicted []int64
	// taken are the instances taken off the dirty list.
	taken []*Instance
}

// CheckpointDirty settles the engine, observers left out, and returns what a store writes
// after a batch of commands: what changed since the last call. A live
// instance's History holds only its records from stored(key) on, the
// ones a store that holds the first stored(key) lacks. A caller that
// fails to store the result gives it back with Redirty. The message
// buffer is written unless it is as it was at messagesSince (the
// MessageGen of an earlier result; zero for none).
func (e *Engine) CheckpointDirty(ctx context.Context, stored func(key int64) int, messagesSince uint64) (*Dirty, error) {
	d := &Dirty{}
	var finished []InstDoc
	gen := messagesSince // checkpoint sets it to the buffer's count now
	msgs := &gen
	doc, err := e.checkpoint(ctx, nil, stored, msgs, func() []*Instance {
		e.dirtyMu.Lock()
		d.taken = e.dirty
		e.dirty = nil
		for _, inst := range d.taken {
			inst.dirty.Store(false) // before its document: a later change lists it again
		}
		e.dirtyMu.Unlock()
		sort.Slice(d.taken, func(i, j int) bool { return d.taken[i].key < d.taken[j].key })
		var live []*Instance
		ended := map[int64]bool{}
		e.mu.Lock()
		for _, inst := range d.taken {
			if e.live[inst.key] == inst {
				live = append(live, inst)
			} else {
				d.Ended = append(d.Ended, inst.key)
				ended[inst.key] = true
			}
		}
		d.Evicted, e.evicted = e.evicted, nil
		var retained []*Instance
		for i := range e.finished {
			if inst := e.finished[(e.finNext+i)%len(e.finished)]; inst != nil && ended[inst.key] {
				retained = append(retained, inst)
			}
		}
		e.mu.Unlock()
		for _, inst := range retained {
			finished = append(finished, inst.finishedDoc())
		}
		return live
	})
	if err == nil {
		// An instance that moved while the documents were taken (a timer
		// on the real clock) may have changed another one already
		// written, as a called instance ending changes its caller: the
		// documents would not be one settled moment.
		e.dirtyMu.Lock()
		if len(e.dirty) > 0 {
			err = fmt.Errorf("checkpoint: %d instances moved meanwhile: %w", len(e.dirty), ErrNotSettled)
		}
		e.dirtyMu.Unlock()
	}
	if err != nil {
		e.Redirty(d)
		return nil, err
	}
	doc.Finished = finished
	d.Doc = doc
	d.MessageGen = *msgs
	d.MessagesSame = d.MessageGen == messagesSince
	return d, nil
}

// Redirty gives back what CheckpointDirty returned, for the next call to
// return again.
func (e *Engine) Redirty(d *Dirty) {
	for _, inst := range d.taken {
		inst.markDirty()
	}
	if len(d.Evicted) > 0 {
		e.mu.Lock()
		e.evicted = append(d.Evicted, e.evicted...)
		e.mu.Unlock()
	}
}

// MarkAllDirty lists every instance, live or still findable finished, as
// changed, for a store that holds none of them yet.
func (e *Engine) MarkAllDirty() {
	e.mu.Lock()
	all := make([]*Instance, 0, len(e.live)+len(e.byKey))
	for _, inst := range e.live {
		all = append(all, inst)
	}
	for _, inst := range e.byKey {
		all = append(all, inst)
	}
	e.mu.Unlock()
	for _, inst := range all {
		inst.markDirty()
	}
}

// checkpoint writes the engine's state: with only, the call tree of that
// instance; with pick, the live instances it returns, called once the
// engine has settled, their history from the record from(key) returns;
// else every live instance and the finished ones. With messages (a
// store's commit), the buffer is written only if it changed since
// *messages, which is set to the buffer's count of changes.
func (e *Engine) checkpoint(ctx context.Context, only *int64, from func(int64) int, messages *uint64, pick func() []*Instance) (*Document, error) {
	settle := e.Settle
	if pick != nil {
		settle = e.settleWork // a store's commit: observers need not have caught up
	}
	if err := settle(ctx); err != nil {
		return nil, err
	}
	_, virtual := e.clock.(*clock.Virtual)
	doc := &Document{Format: StateFormat, Version: StateVersion, Clock: ClockDoc{Now: e.clock.Now().UTC(), Virtual: virtual}}

	e.mu.Lock()
	deps := append([]deployment(nil), e.deployments...)
	var finished []*Instance
	for i := range e.finished {
		if inst := e.finished[(e.finNext+i)%len(e.finished)]; inst != nil {
			finished = append(finished, inst)
		}
	}
	timerStarts := make(map[int64]bool)
	for _, ids := range e.timerStarts {
		for _, id := range ids {
			timerStarts[id] = true
		}
	}
	e.mu.Unlock()

	sort.SliceStable(deps, func(i, j int) bool { return deps[i].order() < deps[j].order() })
	indexes := map[*Plan]*planIndex{}
	for _, d := range deps {
		dd := Deploy{Name: d.name, Source: string(d.source), Deployment: d.id}
		for _, p := range d.plans {
			dd.Processes = append(dd.Processes, ProcessDoc{ID: p.Process.ID, Key: p.Key, Version: p.Version})
			indexes[p] = indexPlan(p)
		}
		doc.Deploys = append(doc.Deploys, dd)
	}

	if only != nil {
		tree, err := e.treeDocs(ctx, *only, indexes)
		if err != nil {
			return nil, err
		}
		doc.Live = tree
		hub := e.hub.State()
		doc.Hub.LastSubscription = hub.LastID
		e.markGone(doc, hub)
		doc.LastKey = e.keys.Load()
		return doc, nil
	}
	var insts []*Instance
	if pick != nil {
		insts = pick()
	} else {
		insts = e.Instances()
	}
	live, err := e.instanceDocs(ctx, insts, indexes, from)
	if err != nil {
		return nil, err
	}
	doc.Live = live
	for _, inst := range finished {
		if pick != nil {
			break // a store keeps live instances only
		}
		doc.Finished = append(doc.Finished, inst.finishedDoc())
	}

	var hub eventhub.State
	if pick != nil {
		// Only the subscriptions written matter: looking them up costs
		// what the commands changed, not what the engine holds.
		var ids []int64
		for id := range timerStarts {
			ids = append(ids, id)
		}
		for i := range doc.Live {
			for _, sd := range doc.Live[i].Subs {
				ids = append(ids, sd.ID)
			}
		}
		var since uint64
		if messages != nil {
			since = *messages
		}
		hub = e.hub.StateOf(ids, since)
		if messages != nil {
			*messages = hub.MessageGen
		}
	} else {
		hub = e.hub.State()
	}
	doc.Hub.LastSubscription = hub.LastID
	for _, m := range hub.Messages {
		doc.Hub.Messages = append(doc.Hub.Messages, MessageDoc{Name: m.Name, CorrelationKey: m.Key, MessageID: m.ID,
			Variables: cloneVars(m.Variables), Expires: m.Expires.UTC(), Correlated: m.Correlated})
	}
	for _, s := range hub.Subs {
		r, ok := s.R.(*timerStart)
		if !ok || !timerStarts[s.ID] {
			continue
		}
		doc.Hub.TimerStarts = append(doc.Hub.TimerStarts, TimerDoc{Sub: s.ID, ProcessKey: r.target.plan.Key, Element: r.target.node.ID,
			Due: s.Due.UTC(), Period: Duration(r.period), Left: r.left})
	}
	e.markGone(doc, hub)
	doc.LastKey = e.keys.Load()
	return doc, nil
}

// markGone marks the instances' subscriptions the hub no longer holds.
func (e *Engine) markGone(doc *Document, hub eventhub.State) {
	open := make(map[int64]bool, len(hub.Subs))
	for _, s := range hub.Subs {
		open[s.ID] = true
	}
	for i := range doc.Live {
		for j := range doc.Live[i].Subs {
			sd := &doc.Live[i].Subs[j]
			sd.Gone = sd.Kind != kindConditional && !open[sd.ID]
		}
	}
}

// treeDocs writes the call tree of live instance key, from its top
// caller down, callers before the instances they called.
func (e *Engine) treeDocs(ctx context.Context, key int64, indexes map[*Plan]*planIndex) ([]InstDoc, error) {
	e.mu.Lock()
	inst := e.live[key]
	e.mu.Unlock()
	if inst == nil {
		return nil, fmt.Errorf("checkpoint: instance %d: %w", key, ErrUnknownInstance)
	}
	for inst.parent != nil { // set before the instance started, never changed
		inst = inst.parent
	}
	var out []InstDoc
	for queue := []*Instance{inst}; len(queue) > 0; queue = queue[1:] {
		docs, err := e.instanceDocs(ctx, queue[:1], indexes, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, docs[0])
		for _, td := range docs[0].Tokens {
			if td.Child == 0 {
				continue
			}
			e.mu.Lock()
			child := e.live[td.Child]
			e.mu.Unlock()
			if child == nil {
				return nil, fmt.Errorf("checkpoint: instance %d called by %d ended meanwhile: %w", td.Child, docs[0].Key, ErrNotSettled)
			}
			queue = append(queue, child)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// instanceDocs asks each instance's loop for its state. The loops write
// theirs side by side, a few at a time per processor, so a checkpoint of
// many instances takes their work divided by the processors, not the sum
// of their round trips.
func (e *Engine) instanceDocs(ctx context.Context, insts []*Instance, indexes map[*Plan]*planIndex, from func(int64) int) ([]InstDoc, error) {
	if len(insts) == 0 {
		return nil, nil // written as null, like every absent list
	}
	docs := make([]InstDoc, len(insts))
	errs := make([]error, len(insts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(insts), 4*goruntime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				inst := insts[i]
				cmd := &command{op: cmdCheckpoint, index: indexes[inst.plan]}
				if from != nil {
					cmd.from = from(inst.key)
				}
				if d, ok, err := inst.dryDoc(cmd.from); ok {
					// Dehydrated: its document is the one its loop wrote,
					// and nothing has changed it since; it stays dry.
					docs[i], errs[i] = d, err
					continue
				}
				switch err := inst.call(ctx, cmd); {
				case errors.Is(err, ErrInstanceEnded):
					errs[i] = fmt.Errorf("checkpoint: instance %d ended meanwhile: %w", inst.key, ErrNotSettled)
				case err != nil:
					errs[i] = fmt.Errorf("checkpoint: instance %d: %w", inst.key, err)
				default:
					docs[i] = *cmd.doc
				}
			}
		}()
	}
	for i := range insts {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return docs, nil
}

// planIndex names a plan's catches and handlers both ways, for writing
// and reading subscriptions.
type planIndex struct {
	plan     *Plan
	catchOf  map[*catchSpec]catchRef
	handlers map[string]*handlerSpec
	flows    map[string]*model.Flow
}

// catchRef names a catch: the node whose catches it is one of and its
// index there.
type catchRef struct {
	node  *model.Node
	index int
}

func indexPlan(p *Plan) *planIndex {
	x := &planIndex{plan: p, catchOf: map[*catchSpec]catchRef{}, handlers: map[string]*handlerSpec{}, flows: map[string]*model.Flow{}}
	for i := range p.nodes {
		np := &p.nodes[i]
		for j := range np.catches {
			x.catchOf[&np.catches[j]] = catchRef{np.node, j}
		}
		for j := range np.boundaries {
			x.handlers[np.boundaries[j].node.ID] = &np.boundaries[j]
		}
	}
	for _, hs := range p.eventStarts {
		for j := range hs {
			x.handlers[hs[j].node.ID] = &hs[j]
		}
	}
	for _, f := range p.Process.Flows {
		x.flows[f.ID] = f
	}
	return x
}

// capture asks a parked goroutine track for a copy of itself, its
// continuation, which it sends on notice.capture; it stays parked.
const capture = exit + 1

// Subscription kinds as the document names them.
const (
	kindMessage     = "message"
	kindSignal      = "signal"
	kindTimer       = "timer"
	kindConditional = "conditional"
)

func subKind(k model.EventKind) string {
	switch k {
	case model.EventMessage:
		return kindMessage
	case model.EventSignal:
		return kindSignal
	case model.EventConditional:
		return kindConditional
	}
	return kindTimer
}

// Wait points and report kinds as the document names them.
var (
	waitPointNames = map[waitPoint]string{
		atWaitState: "waitState", atHeld: "held", atStepBudget: "stepBudget", atJoin: "join", atRaise: "raise",
		atThrow: "throw", atLeave: "leave", atLoopCond: "loopCondition", atLoopBudget: "loopBudget",
		atLoopJob: "loopJob", atLoopThrow: "loopThrow", atCompleting: "completing", atStarted: "started",
		atChoice: "choice",
	}
	reportNames = map[reportKind]string{evArrive: "arrive", evRaise: "raise", evThrow: "throw", evJob: "job", evIncident: "incident",
		evInnerDone: "innerDone", evChoice: "choice"}
)

// checkpoint writes the instance's state, its history from the record at
// index from; the loop calls it, with no track running.
func (inst *Instance) checkpoint(x *planIndex, from int) (*InstDoc, error) {
	if from < 0 || from > len(inst.history) {
		return nil, fmt.Errorf("checkpoint: instance %d: history from record %d of %d", inst.key, from, len(inst.history))
	}
	if inst.stopping.Load() || inst.moving() || len(inst.inputs) > 0 || inst.running != nil || len(inst.reports) > 0 {
		return nil, fmt.Errorf("checkpoint: instance %d is moving: %w", inst.key, ErrNotSettled)
	}
	d := &InstDoc{
		Key: inst.key, ProcessKey: inst.plan.Key, Process: inst.plan.Process.ID, State: Active, StartKey: inst.startKey,
		ParentToken: inst.parentToken, Depth: inst.depth, NextToken: inst.nextToken, NextScope: inst.nextScope, HeldBy: inst.heldBy,
	}
	if inst.parent != nil {
		d.Parent = inst.parent.key
	}
	if inst.lastNode != 0 {
		d.LastElement = inst.plan.Process.Nodes[inst.lastNode-1].ID
	}
	scopes := map[int]*scope{}
	var collect func(*scope)
	collect = func(s *scope) {
		if s == nil || scopes[s.id] != nil {
			return
		}
		scopes[s.id] = s
		collect(s.parent)
		for _, c := range s.children {
			collect(c)
		}
	}
	collect(inst.root)
	for _, id := range sortedKeys(inst.tokens) {
		tv := inst.tokens[id]
		if !tv.parked || tv.closed || tv.doomed {
			return nil, fmt.Errorf("checkpoint: instance %d token %d is not parked: %w", inst.key, id, ErrNotSettled)
		}
		collect(tv.scope)
		collect(tv.inner)
		td, err := inst.tokenDoc(tv)
		if err != nil {
			return nil, err
		}
		d.Tokens = append(d.Tokens, td)
	}
	for _, js := range inst.joins {
		collect(js.scope)
		jd := JoinDoc{Scope: js.scope.id, Element: js.node.ID, Arrived: make([][]int, len(js.arrived)), Fired: js.fired}
		for i, q := range js.arrived {
			jd.Arrived[i] = append([]int{}, q...)
		}
		d.Joins = append(d.Joins, jd)
	}
	sort.Slice(d.Joins, func(i, j int) bool {
		a, b := d.Joins[i], d.Joins[j]
		return a.Scope < b.Scope || a.Scope == b.Scope && a.Element < b.Element
	})
	for _, id := range sortedKeys(inst.subs) {
		ref := inst.subs[id]
		collect(ref.scope)
		sd := SubDoc{ID: id, Kind: subKind(ref.spec.def.Kind), Token: ref.token, Left: ref.left, Period: Duration(ref.period), Key: ref.key, Held: inst.condLast[id]}
		if !ref.due.IsZero() {
			sd.Due = timeOf(ref.due)
		}
		if ref.handler != nil {
			sd.Handler = ref.handler.node.ID
		} else {
			c, ok := x.catchOf[ref.spec]
			if !ok {
				return nil, fmt.Errorf("checkpoint: instance %d subscription %d: its catch is not in the plan", inst.key, id)
			}
			sd.Catch, sd.Index = c.node.ID, c.index
		}
		if ref.scope != nil {
			sd.Scope = &ref.scope.id
		}
		d.Subs = append(d.Subs, sd)
	}
	for _, id := range sortedKeys(scopes) {
		s := scopes[id]
		sd := ScopeDoc{ID: s.id, Parent: -1, Variables: cloneVars(s.vars), Token: s.token, Live: s.live,
			Subs: append([]int64(nil), s.subs...), Interrupted: s.interrupted, Done: s.done}
		if s.node != nil {
			sd.Element = s.node.ID
		}
		sd.Inner, sd.Index = s.inner, s.index
		sd.Compensable, sd.Revived = compDocs(s.records()), s.revived
		if b := s.multi; b != nil {
			sd.Multi = &MultiDoc{Items: append([]any(nil), b.items...), Count: b.count, Started: b.started,
				Active: b.active, Completed: b.completed, Results: append([]any(nil), b.results...), Met: b.met,
				ThrownOne: b.thrownOne}
		}
		if a := s.adhoc; a != nil {
			sd.AdHoc = &AdHocDoc{Met: a.met}
			for _, n := range a.pending {
				sd.AdHoc.Pending = append(sd.AdHoc.Pending, n.ID)
			}
		}
		if s.parent != nil {
			sd.Parent = s.parent.id
			sd.Detached = s.parent.children[s.id] != s
		}
		d.Scopes = append(d.Scopes, sd)
	}
	for _, key := range sortedKeys(inst.jobs) {
		js := inst.jobs[key]
		d.Jobs = append(d.Jobs, JobDoc{Job: cloneJob(js.job), Token: js.token, Incident: js.incident})
	}
	for _, key := range sortedKeys(inst.incidents) {
		is := inst.incidents[key]
		d.Incidents = append(d.Incidents, IncidentDoc{Incident: is.incident, Token: is.token, Reported: is.reported, Held: append([]int(nil), is.held...)})
	}
	d.Compensations = inst.runDocs()
	d.History = inst.historyDoc(from)
	return d, nil
}

// tokenDoc writes token tv with its track's continuation. A goroutine
// track is asked for it over its channel, where it waits parked: only the
// track may read its own state, and its answer is a copy.
func (inst *Instance) tokenDoc(tv *tokenView) (TokenDoc, error) {
	td := TokenDoc{ID: tv.id, Scope: tv.scope.id, Wait: tv.wait, Job: tv.jobKey, Incident: tv.incident,
		Subs: append([]int64(nil), tv.subs...), Boundary: append([]int64(nil), tv.boundary...), Locals: cloneVars(tv.locals),
		AtJoin: tv.atJoin, Raising: tv.raising}
	if tv.node != nil {
		td.Element = tv.node.ID
	}
	if tv.inner != nil {
		td.Inner = tv.inner.id
	}
	if tv.child != nil {
		td.Child = tv.child.key
	}
	td.Left = inst.leftDoc(tv)
	var t track
	switch {
	case tv.track != nil:
		// Resumed directly, or a goroutine track that started parked and
		// has had no goroutine yet: either way the loop holds it.
		t = *tv.track
	case inst.direct:
		return td, fmt.Errorf("checkpoint: instance %d token %d has no track", inst.key, tv.id)
	default:
		reply := make(chan track, 1)
		tv.ch <- notice{kind: capture, capture: reply} // never blocks: the slot is empty while the track is parked
		t = <-reply
	}
	name, ok := waitPointNames[t.at]
	if !ok {
		return td, fmt.Errorf("checkpoint: instance %d token %d: its track is not parked: %w", inst.key, tv.id, ErrNotSettled)
	}
	td.Track = TrackDoc{Element: t.node.ID, At: name, Iteration: t.iter}
	if t.via != nil {
		td.Track.Flow = t.via.ID
	}
	if t.report.kind != 0 {
		r := &ReportDoc{Kind: reportNames[t.report.kind]}
		if r.Kind == "" {
			return td, fmt.Errorf("checkpoint: instance %d token %d parked with report kind %d, which has no name", inst.key, tv.id, t.report.kind)
		}
		if t.report.node != nil {
			r.Element = t.report.node.ID
		}
		if t.report.flow != nil {
			r.Flow = t.report.flow.ID
		}
		td.Track.Report = r
	}
	return td, nil
}

// historyDoc writes the instance's records from the one at index from.
func (inst *Instance) historyDoc(from int) []RecordDoc {
	out := make([]RecordDoc, len(inst.history)-from)
	for i := range out {
		r := &inst.history[from+i]
		rd := RecordDoc{At: time.Unix(0, r.at).UTC(), Type: eventTypes[r.typ], Token: int(r.token)}
		if n := r.element(inst.plan.Process); n != nil {
			rd.Element = n.ID
		}
		if r.flow != 0 {
			rd.Flow = inst.plan.Process.Flows[r.flow-1].ID
		}
		if m := inst.detailsOf(r); m != nil {
			if m.Variables != nil {
				v := cloneVars(m.Variables)
				rd.Variables = &v
			}
			rd.Message, rd.JobKey, rd.JobType, rd.IncidentKey = m.Message, m.JobKey, m.JobType, m.IncidentKey
			rd.Name, rd.CorrelationKey, rd.Due = m.Name, m.CorrelationKey, m.Due
		}
		out[i] = rd
	}
	return out
}

// finishedDoc writes a finished instance: what stays readable of it.
func (inst *Instance) finishedDoc() InstDoc {
	return InstDoc{
		Key: inst.key, ProcessKey: inst.plan.Key, Process: inst.plan.Process.ID, State: inst.State(), Message: inst.finalMsg,
		Scopes:  []ScopeDoc{{ID: 0, Parent: -1, Variables: cloneVars(inst.root.vars), Live: inst.root.live}},
		History: inst.historyDoc(0),
	}
}
