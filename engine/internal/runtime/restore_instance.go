package runtime

import (
	"bytes"
	"fmt"
	"slices"
)

// DeployedSource returns the plans of the deployment named name with
// exactly source, the first such one, or nil when there is none.
func (e *Engine) DeployedSource(name string, source []byte) []*Plan {
	plans, _ := e.deployedSource(name, source)
	return plans
}

// HasDeployed reports whether a deployment of that name and source was
// made (a DMN model has no plans).
func (e *Engine) HasDeployed(name string, source []byte) bool {
	_, ok := e.deployedSource(name, source)
	return ok
}

func (e *Engine) deployedSource(name string, source []byte) ([]*Plan, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.deployments {
		if d.name == name && bytes.Equal(d.source, source) {
			return d.plans, true
		}
	}
	return nil, false
}

// RestoreInstance adds to e, an engine in use, the instances of a
// one-instance document (CheckpointInstance: one call tree), their tokens
// parked where they were, and returns the tree's top instance. plans
// gives, for each process key of the document, the plan of e that the
// instances of that process version run (the caller deploys or finds the
// document's deployments); the document's clock is not e's: its timers
// keep their absolute due times on e's clock.
//
// An instance keeps its key, its identity: one that e holds already,
// live or finished, fails with ErrKeyInUse (the instance was restored
// here before, or the engines' keys overlap), and e's key counter moves
// past the document's. Job, activation, incident and condition keys are
// handles in one engine (a worker of the other engine cannot complete a
// job here), so they are given afresh from e's counter, in the order they
// had, wherever the document names them (history included): they can
// collide with nothing. Subscription ids, which only order deliveries
// inside one hub, are given afresh the same way, after every
// subscription e holds. A message subscription does not look at e's
// message buffer, as Restore's do not: messages published from now on
// correlate.
//
// The document is checked whole before anything changes
// (checkDocument, then a dry run building its instances): on an error
// wrapping ErrBadState or ErrKeyInUse nothing is added and the key
// counter has not moved.
func (e *Engine) RestoreInstance(doc *Document, plans map[int64]*Plan) (top *Instance, err error) {
	defer func() {
		if r := recover(); r != nil {
			top, err = nil, fmt.Errorf("%w: %v", ErrBadState, r) // a document that breaks an invariant the checks missed
		}
	}()
	switch {
	case doc.Format != StateFormat:
		return nil, fmt.Errorf("%w: format %q, want %q", ErrBadState, doc.Format, StateFormat)
	case doc.Version < 1 || doc.Version > StateVersion:
		return nil, fmt.Errorf("%w: version %d; this engine reads versions 1 to %d", ErrBadState, doc.Version, StateVersion)
	case len(doc.Live) == 0:
		return nil, fmt.Errorf("%w: the document holds no live instance", ErrBadState)
	case len(doc.Finished) > 0 || len(doc.Hub.Messages) > 0 || len(doc.Hub.TimerStarts) > 0:
		return nil, fmt.Errorf("%w: a whole engine's document (finished instances, buffered messages or timer start events), not one instance's: restore it as an engine", ErrBadState)
	}
	if err := doc.exactNumbers(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if err := e.checkDocument(doc, func(k int64) *Plan { return plans[k] }); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	e.restoreMu.Lock()
	defer e.restoreMu.Unlock()
	if err := e.keysFree(doc.Live); err != nil {
		return nil, err
	}
	// A dry run on the document as it is: every instance built and
	// linked, and thrown away, before the key counter moves or keys and
	// subscriptions are given afresh, so that a refusal changes nothing.
	if _, err := e.restoreTrees(doc, plans); err != nil {
		return nil, err
	}
	target := e.counterAfter(doc)
	for cur := e.keys.Load(); cur < target && !e.keys.CompareAndSwap(cur, target); cur = e.keys.Load() {
	}
	renumberKeys(doc.Live, e.NextKey)
	renumberSubs(doc.Live, e.hub.Reserve)
	rs, err := e.restoreTrees(doc, plans)
	if err != nil {
		return nil, err
	}
	insts := rs.order
	if err := e.hub.Adopt(rs.subscriptions(doc.Live)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	for _, inst := range insts {
		inst.markDirty() // a store has none of it
		if inst.parent == nil {
			top = inst
		}
	}
	if top == nil {
		return nil, fmt.Errorf("%w: every instance has a caller", ErrBadState)
	}
	if err := e.adopt(insts); err != nil {
		return nil, err
	}
	return top, nil
}

// restoreTrees builds the live instances of doc, parked, and links their
// call trees, touching nothing of e: the caller adopts them, or drops
// them (a dry run).
func (e *Engine) restoreTrees(doc *Document, plans map[int64]*Plan) (*restorer, error) {
	rs := &restorer{e: e, plans: map[int64]*planIndex{}, live: map[int64]*Instance{}}
	for key, p := range plans {
		rs.plans[key] = p.names()
	}
	for _, d := range doc.Live {
		inst, err := rs.instance(d)
		if err != nil {
			return nil, fmt.Errorf("%w: instance %d: %v", ErrBadState, d.Key, err)
		}
		if rs.live[inst.key] != nil {
			return nil, fmt.Errorf("%w: instance %d appears twice", ErrBadState, d.Key)
		}
		rs.live[inst.key] = inst
		rs.order = append(rs.order, inst)
	}
	// A called instance whose caller is not in the document is refused:
	// it would report its end to no one, and its caller's token would
	// never go on (CheckpointInstance always writes the whole tree).
	if err := rs.link(doc.Live); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	top := 0
	for _, inst := range rs.order {
		if inst.parent == nil {
			top++
		}
	}
	if top != 1 {
		return nil, fmt.Errorf("%w: the document holds %d call trees, not one", ErrBadState, top)
	}
	return rs, nil
}

// keysFree reports an error wrapping ErrKeyInUse if an instance key of
// docs names an instance e holds, live or finished.
func (e *Engine) keysFree(docs []InstDoc) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range docs {
		if e.live[d.Key] != nil || e.byKey[d.Key] != nil {
			return fmt.Errorf("instance %d: %w", d.Key, ErrKeyInUse)
		}
	}
	return nil
}

// renumberKeys gives the job, activation, incident and condition keys of
// docs fresh keys from next, in the order of their old ones, wherever
// the documents name them. Instance keys stay.
func renumberKeys(docs []InstDoc, next func() int64) {
	var old []int64
	add := func(k int64) {
		if k != 0 {
			old = append(old, k)
		}
	}
	for _, d := range docs {
		add(d.HeldBy)
		for _, jd := range d.Jobs {
			add(jd.Job.Key)
			add(jd.Job.Activation)
			add(jd.Incident)
		}
		for _, id := range d.Incidents {
			add(id.Incident.Key)
			add(id.Incident.JobKey)
		}
		for _, sd := range d.Subs {
			if sd.Kind == kindConditional {
				add(sd.ID)
			}
		}
		for _, r := range d.History { // jobs and incidents gone since
			add(r.JobKey)
			add(r.IncidentKey)
		}
	}
	slices.Sort(old)
	old = slices.Compact(old)
	if len(old) == 0 {
		return
	}
	fresh := make(map[int64]int64, len(old))
	for _, k := range old {
		fresh[k] = next()
	}
	key := func(k *int64) {
		if n, ok := fresh[*k]; ok {
			*k = n
		}
	}
	for i := range docs {
		d := &docs[i]
		key(&d.HeldBy)
		cond := map[int64]bool{}
		for j := range d.Subs {
			if d.Subs[j].Kind == kindConditional {
				cond[d.Subs[j].ID] = true
				key(&d.Subs[j].ID)
			}
		}
		conds := func(l []int64) {
			for j := range l {
				if cond[l[j]] {
					key(&l[j])
				}
			}
		}
		for j := range d.Tokens {
			t := &d.Tokens[j]
			key(&t.Job)
			key(&t.Incident)
			conds(t.Subs)
			conds(t.Boundary)
		}
		for j := range d.Scopes {
			conds(d.Scopes[j].Subs)
		}
		for j := range d.Jobs {
			jd := &d.Jobs[j]
			key(&jd.Job.Key)
			key(&jd.Job.Activation)
			key(&jd.Incident)
		}
		for j := range d.Incidents {
			key(&d.Incidents[j].Incident.Key)
			key(&d.Incidents[j].Incident.JobKey)
		}
		for j := range d.History {
			key(&d.History[j].JobKey)
			key(&d.History[j].IncidentKey)
		}
	}
}

// renumberSubs gives the hub subscriptions of docs (every one but
// conditions, whose ids are engine keys) fresh ids from reserve, in the
// order of their old ids, wherever the documents name them.
func renumberSubs(docs []InstDoc, reserve func(n int) int64) {
	var old []int64
	for _, d := range docs {
		for _, sd := range d.Subs {
			if sd.Kind != kindConditional {
				old = append(old, sd.ID)
			}
		}
	}
	slices.Sort(old)
	old = slices.Compact(old)
	if len(old) == 0 {
		return
	}
	first := reserve(len(old))
	fresh := make(map[int64]int64, len(old))
	for i, id := range old {
		fresh[id] = first + int64(i)
	}
	ids := func(l []int64) {
		for i, id := range l {
			if n, ok := fresh[id]; ok {
				l[i] = n
			}
		}
	}
	for i := range docs {
		d := &docs[i]
		for j := range d.Subs {
			if d.Subs[j].Kind != kindConditional {
				d.Subs[j].ID = fresh[d.Subs[j].ID]
			}
		}
		for j := range d.Tokens {
			ids(d.Tokens[j].Subs)
			ids(d.Tokens[j].Boundary)
		}
		for j := range d.Scopes {
			ids(d.Scopes[j].Subs)
		}
	}
}
