package runtime

import (
	"fmt"
	"sort"
	"time"

	"github.com/flowtrack/flowtrack/engine/internal/eventhub"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Parse reads the BPMN source of a deployment into definitions that
// passed the model checks; the engine package supplies it, since the
// runtime does not read XML.
type Parse func(name string, source []byte) (*model.Definitions, error)

// Restore fills e, a fresh engine nothing has used yet, with the state of
// doc: deployments, the hub, and every instance with its tokens parked
// where they were. It is not a replay: nothing in the history happens
// again. On error e holds part of the state and must be closed unused.
func (e *Engine) Restore(doc *Document, parse Parse, opts CompileOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrBadState, r) // a document that breaks an invariant the checks below missed
		}
	}()
	if doc.Format != StateFormat {
		return fmt.Errorf("%w: format %q, want %q", ErrBadState, doc.Format, StateFormat)
	}
	if doc.Version < 1 || doc.Version > StateVersion {
		return fmt.Errorf("%w: version %d; this engine reads versions 1 to %d", ErrBadState, doc.Version, StateVersion)
	}
	if err := doc.exactNumbers(); err != nil {
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	rs := &restorer{e: e, plans: map[int64]*planIndex{}, live: map[int64]*Instance{}}
	ids, inferred, last := deploymentIDs(doc.Deploys)
	for i, d := range doc.Deploys {
		if err := rs.deploy(d, ids[i], inferred[i], parse, opts); err != nil {
			return fmt.Errorf("%w: deployment %d (%s): %v", ErrBadState, i+1, d.Name, err)
		}
	}
	e.deploySeq.Store(last)
	if err := e.checkDocument(doc, func(k int64) *Plan {
		if x := rs.plans[k]; x != nil {
			return x.plan
		}
		return nil
	}); err != nil {
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	// Timer start events are scheduled from the document, not anew.
	e.mu.Lock()
	for id, subs := range e.timerStarts {
		for _, sub := range subs {
			e.hub.Unsubscribe(sub)
		}
		delete(e.timerStarts, id)
	}
	e.mu.Unlock()

	var insts []*Instance
	for _, d := range doc.Live {
		inst, err := rs.instance(d)
		if err != nil {
			return fmt.Errorf("%w: instance %d: %v", ErrBadState, d.Key, err)
		}
		if rs.live[inst.key] != nil {
			return fmt.Errorf("%w: instance %d appears twice", ErrBadState, d.Key)
		}
		rs.live[inst.key] = inst
		insts = append(insts, inst)
	}
	if err := rs.link(doc.Live); err != nil {
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	var finished []*Instance
	for _, d := range doc.Finished {
		inst, err := rs.finished(d)
		if err != nil {
			return fmt.Errorf("%w: finished instance %d: %v", ErrBadState, d.Key, err)
		}
		finished = append(finished, inst)
	}
	if doc.LastKey < rs.maxKey {
		return fmt.Errorf("%w: lastKey %d is below key %d in use", ErrBadState, doc.LastKey, rs.maxKey)
	}
	if p := e.opts.Partition; doc.LastKey != 0 && PartitionOf(doc.LastKey) != p {
		return fmt.Errorf("%w: lastKey %d is a key of partition %d, not of the engine's key space (partition %d)", ErrBadState, doc.LastKey, PartitionOf(doc.LastKey), p)
	}
	// Keys go on from the document's before any timer can fire: on the
	// real clock an overdue timer start fires, starting an instance, as
	// soon as the hub holds it.
	e.keys.Store(max(doc.LastKey, keyBase(e.opts.Partition)))
	hub, err := rs.hub(doc)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if err := e.hub.Restore(hub); err != nil {
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	for _, inst := range finished {
		e.finish(inst)
	}
	return e.adopt(insts)
}

// adopt indexes the jobs, incidents and message starts of restored
// instances in the engine and sets them going, then arms the hub's
// timers, every receiver being in place.
func (e *Engine) adopt(insts []*Instance) error {
	e.mu.Lock()
	for _, inst := range insts {
		for key, js := range inst.jobs {
			if js.incident == 0 {
				e.jobs[key] = inst
				e.indexJob(js.job)
			}
		}
		for key, is := range inst.incidents {
			e.incidents[key] = incidentEntry{inst: inst, incident: is.incident}
		}
		if inst.startKey != "" {
			e.keyedStarts[[2]string{inst.plan.Process.ID, inst.startKey}]++
		}
	}
	e.mu.Unlock()
	for _, inst := range insts {
		// Every restored track is parked: the loop keeps it, and runs
		// it when first woken (give).
		if err := e.resume(inst); err != nil {
			return err
		}
	}
	e.hub.Arm()
	return nil
}

// restorer holds what a restore has built so far.
type restorer struct {
	e      *Engine
	plans  map[int64]*planIndex // by plan key
	live   map[int64]*Instance
	maxKey int64
	// order are the live instances built, in the document's order.
	order []*Instance
}

func (rs *restorer) key(k int64) {
	rs.maxKey = max(rs.maxKey, k)
}

// deploymentIDs returns the deployment of each of deploys, whether it
// was inferred, and the greatest. A document written before version 3
// has none: each of its documents is taken as a deployment of its own,
// numbered after those the document names, in order, and marked
// inferred (a business rule task's binding "deployment" then takes the
// newest version deployed up to its process: see Plan.DeploymentInferred).
func deploymentIDs(deploys []Deploy) (ids []int64, inferred []bool, last int64) {
	for _, d := range deploys {
		last = max(last, d.Deployment)
	}
	ids = make([]int64, len(deploys))
	inferred = make([]bool, len(deploys))
	for i, d := range deploys {
		ids[i] = d.Deployment
		if ids[i] <= 0 {
			last++
			ids[i], inferred[i] = last, true
		}
	}
	return ids, inferred, last
}

// deploy installs one deployment of the document under its own keys and
// versions, as part of deployment id.
func (rs *restorer) deploy(d Deploy, id int64, inferred bool, parse Parse, opts CompileOptions) error {
	defs, err := parse(d.Name, []byte(d.Source))
	if err != nil {
		return err
	}
	if defs.DMN != nil {
		if len(d.Processes) != 0 {
			return fmt.Errorf("the source is a DMN model, the document lists %d processes", len(d.Processes))
		}
		set, err := rs.e.CompileDecisions(defs.DMN, opts)
		if err != nil {
			return err
		}
		if _, err := rs.e.InstallDecisions(d.Name, id, defs.DMN, set); err != nil {
			return err
		}
		// Ordered right after the deployment before it, as it was when
		// the document was written (the key counter is not restored yet).
		rs.e.mu.Lock()
		var at int64
		if n := len(rs.e.deployments); n > 0 {
			at = rs.e.deployments[n-1].order()
		}
		rs.e.deployments = append(rs.e.deployments, deployment{name: d.Name, source: []byte(d.Source), at: at, id: id})
		rs.e.mu.Unlock()
		return nil
	}
	var plans []*Plan
	for _, p := range defs.Processes {
		if !p.Executable {
			continue
		}
		plan, err := Compile(p, opts)
		if err != nil {
			return err
		}
		plans = append(plans, plan)
	}
	if len(plans) != len(d.Processes) {
		return fmt.Errorf("the source has %d executable processes, the document lists %d", len(plans), len(d.Processes))
	}
	e := rs.e
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, plan := range plans {
		pd := d.Processes[i]
		if pd.ID != plan.Process.ID {
			return fmt.Errorf("process %d is %q in the source, %q in the document", i+1, plan.Process.ID, pd.ID)
		}
		if want := len(e.plans[pd.ID]) + 1; pd.Version != want {
			return fmt.Errorf("process %s: version %d, want %d", pd.ID, pd.Version, want)
		}
		if pd.Key <= 0 || rs.plans[pd.Key] != nil {
			return fmt.Errorf("process %s: key %d is not a fresh positive key", pd.ID, pd.Key)
		}
		rs.key(pd.Key)
		plan.Key, plan.Version = pd.Key, pd.Version
		plan.Deployment, plan.DeploymentInferred = id, inferred
		e.plans[pd.ID] = append(e.plans[pd.ID], plan)
		e.registerStarts(plan)
		rs.plans[pd.Key] = indexPlan(plan)
	}
	e.deployments = append(e.deployments, deployment{name: d.Name, source: []byte(d.Source), plans: plans, id: id})
	return nil
}

// names resolves the element and flow names of one plan.
type names struct {
	x *planIndex
}

func (n names) node(id string) (*model.Node, error) {
	if id == "" {
		return nil, nil
	}
	if nd := n.x.plan.Process.Node(id); nd != nil {
		return nd, nil
	}
	return nil, fmt.Errorf("no element %q in process %s", id, n.x.plan.Process.ID)
}

func (n names) flow(id string) (*model.Flow, error) {
	if id == "" {
		return nil, nil
	}
	if f := n.x.flows[id]; f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("no sequence flow %q in process %s", id, n.x.plan.Process.ID)
}

// shell makes the instance d describes, with its history and scopes.
func (rs *restorer) shell(d InstDoc) (*Instance, names, map[int]*scope, error) {
	x := rs.plans[d.ProcessKey]
	if x == nil || x.plan.Process.ID != d.Process {
		return nil, names{}, nil, fmt.Errorf("process %s with key %d is not deployed", d.Process, d.ProcessKey)
	}
	nm := names{x}
	if d.Key <= 0 {
		return nil, nm, nil, fmt.Errorf("key %d is not positive", d.Key)
	}
	rs.key(d.Key)
	inst := newInstanceKeyed(rs.e, x.plan, nil, d.Key)
	scopes, err := rs.history(inst, nm, d)
	if err != nil {
		return nil, nm, nil, err
	}
	inst.root = scopes[0]
	return inst, nm, scopes, nil
}

// history rebuilds the scopes and the history of d into inst, and
// returns the scopes by id; it leaves inst.root to the caller.
func (rs *restorer) history(inst *Instance, nm names, d InstDoc) (map[int]*scope, error) {
	scopes, err := rs.scopes(inst, nm, d.Scopes)
	if err != nil {
		return nil, err
	}
	inst.history = make([]record, 0, len(d.History))
	inst.details = nil
	for i, rd := range d.History {
		r, more, err := nm.record(rd)
		if err != nil {
			return nil, fmt.Errorf("history record %d: %v", i+1, err)
		}
		if more != nil {
			inst.details = append(inst.details, more)
			r.more = int32(len(inst.details))
		}
		inst.history = append(inst.history, r)
	}
	return scopes, nil
}

// record rebuilds one history record and, for a rarer record, its
// details.
func (nm names) record(rd RecordDoc) (record, *Event, error) {
	code, ok := typeCode[rd.Type]
	if !ok {
		return record{}, nil, fmt.Errorf("unknown event type %q", rd.Type)
	}
	r := record{at: rd.At.UnixNano(), typ: code, token: int32(rd.Token)}
	n, err := nm.node(rd.Element)
	if err != nil {
		return r, nil, err
	}
	f, err := nm.flow(rd.Flow)
	if err != nil {
		return r, nil, err
	}
	r.node, r.flow = nodeRef(n), flowRef(f)
	more := Event{Type: rd.Type, Message: rd.Message, JobKey: rd.JobKey, JobType: rd.JobType, IncidentKey: rd.IncidentKey,
		Name: rd.Name, CorrelationKey: rd.CorrelationKey, Due: rd.Due}
	if rd.Variables != nil {
		more.Variables = *rd.Variables
		if more.Variables == nil {
			more.Variables = map[string]any{}
		}
	}
	if more.Variables != nil || more.Message != "" || more.JobKey != 0 || more.JobType != "" || more.IncidentKey != 0 ||
		more.Name != "" || more.CorrelationKey != "" || more.Due != nil {
		return r, &more, nil
	}
	return r, nil, nil
}

// scopes builds the scope tree of an instance; scope 0 is the process.
func (rs *restorer) scopes(inst *Instance, nm names, docs []ScopeDoc) (map[int]*scope, error) {
	out := make(map[int]*scope, len(docs))
	sorted := append([]ScopeDoc(nil), docs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	for _, sd := range sorted {
		if out[sd.ID] != nil {
			return nil, fmt.Errorf("scope %d appears twice", sd.ID)
		}
		n, err := nm.node(sd.Element)
		if err != nil {
			return nil, fmt.Errorf("scope %d: %v", sd.ID, err)
		}
		s := &scope{id: sd.ID, node: n, vars: sd.Variables, token: sd.Token, live: sd.Live,
			subs: append([]int64(nil), sd.Subs...), interrupted: sd.Interrupted, done: sd.Done,
			inner: sd.Inner, index: sd.Index, revived: sd.Revived}
		records, err := nm.compRecords(sd.Compensable)
		if err != nil {
			return nil, fmt.Errorf("scope %d: %v", sd.ID, err)
		}
		s.setRecords(records)
		multi := n != nil && inst.plan.nodes[n.Index].multi != nil
		if m := sd.Multi; m != nil && multi {
			s.multi = &multiBody{spec: inst.plan.nodes[n.Index].multi, items: m.Items, count: m.Count, started: m.Started,
				active: m.Active, completed: m.Completed, results: m.Results, met: m.Met,
				thrownOne: m.ThrownOne}
		}
		if sd.AdHoc != nil {
			if s.adhoc, err = adHocOf(inst, nm, n, sd); err != nil {
				return nil, err
			}
		}
		switch {
		case sd.ID == 0:
			if sd.Parent != -1 || n != nil || sd.Multi != nil || sd.Inner || sd.AdHoc != nil {
				return nil, fmt.Errorf("scope 0 is the process scope: it has no parent and no element")
			}
		case (sd.Multi != nil || sd.Inner) && !multi:
			return nil, fmt.Errorf("scope %d: element %q is no multi-instance activity", sd.ID, sd.Element)
		case n == nil || (n.Kind != model.KindSubProcess && !multi && !sd.Revived):
			return nil, fmt.Errorf("scope %d: element %q is no sub-process", sd.ID, sd.Element)
		case sd.Parent < 0 || sd.Parent >= sd.ID || out[sd.Parent] == nil:
			return nil, fmt.Errorf("scope %d: parent %d is not an earlier scope", sd.ID, sd.Parent)
		default:
			s.parent = out[sd.Parent]
			if !sd.Detached {
				if s.parent.children == nil {
					s.parent.children = make(map[int]*scope)
				}
				s.parent.children[s.id] = s
			}
		}
		out[sd.ID] = s
	}
	if out[0] == nil {
		return nil, fmt.Errorf("no process scope (id 0)")
	}
	for _, sd := range sorted {
		out[sd.ID].publish()
	}
	return out, nil
}

// instance rebuilds a live instance with its tokens parked.
func (rs *restorer) instance(d InstDoc) (*Instance, error) {
	if d.State != Active {
		return nil, fmt.Errorf("a live instance is %q, not active", d.State)
	}
	inst, nm, scopes, err := rs.shell(d)
	if err != nil {
		return nil, err
	}
	if err := rs.parked(inst, nm, scopes, d); err != nil {
		return nil, err
	}
	return inst, nil
}

// parked rebuilds the loop state of live instance d into inst, whose
// scopes and history are rebuilt already: tokens parked with their
// tracks, joins, jobs, incidents and subscriptions.
func (rs *restorer) parked(inst *Instance, nm names, scopes map[int]*scope, d InstDoc) error {
	scopeOf := func(id int, what string) (*scope, error) {
		if s := scopes[id]; s != nil {
			return s, nil
		}
		return nil, fmt.Errorf("%s: no scope %d", what, id)
	}
	inst.startKey, inst.parentToken, inst.depth = d.StartKey, d.ParentToken, d.Depth
	inst.nextToken, inst.nextScope, inst.heldBy = d.NextToken, d.NextScope, d.HeldBy
	inst.hold.Store(d.HeldBy != 0)
	last, err := nm.node(d.LastElement)
	if err != nil {
		return err
	}
	inst.lastNode = nodeRef(last)
	for _, td := range d.Tokens {
		if td.ID <= 0 || td.ID > d.NextToken || inst.tokens[td.ID] != nil {
			return fmt.Errorf("token %d: not a fresh id up to nextToken %d", td.ID, d.NextToken)
		}
		what := fmt.Sprintf("token %d", td.ID)
		tv := &tokenView{id: td.ID, parked: true, wait: td.Wait, jobKey: td.Job, incident: td.Incident,
			subs: append([]int64(nil), td.Subs...), boundary: append([]int64(nil), td.Boundary...), locals: td.Locals, atJoin: td.AtJoin,
			raising: td.Raising}
		if tv.node, err = nm.node(td.Element); err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
		if tv.scope, err = scopeOf(td.Scope, what); err != nil {
			return err
		}
		if td.Inner != 0 {
			if tv.inner, err = scopeOf(td.Inner, what); err != nil {
				return err
			}
		}
		if !inst.direct {
			tv.ch = make(chan notice, 1)
		}
		if tv.track, err = nm.track(inst, tv, td.Track); err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
		inst.tokens[td.ID] = tv
		if err := nm.left(inst, tv, td.Left); err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
	}
	for _, s := range scopes {
		if s.parent != nil && !s.done && !s.node.TriggeredByEvent && !s.revived && inst.tokens[s.token] == nil {
			return fmt.Errorf("scope %d: no token %d waits at its sub-process", s.id, s.token)
		}
	}
	if err := nm.runs(inst, scopes, d.Compensations); err != nil {
		return err
	}
	for _, jd := range d.Joins {
		sc, err := scopeOf(jd.Scope, "join "+jd.Element)
		if err != nil {
			return err
		}
		n, err := nm.node(jd.Element)
		if err != nil || n == nil || !inst.plan.nodes[n.Index].join || len(jd.Arrived) != len(n.Incoming) {
			return fmt.Errorf("join %q: not a join with %d incoming flows", jd.Element, len(jd.Arrived))
		}
		if inst.joins == nil {
			inst.joins = make(map[joinKey]*joinState)
		}
		js := &joinState{node: n, scope: sc, arrived: make([][]int, len(n.Incoming)), fired: jd.Fired}
		for i, q := range jd.Arrived {
			for _, id := range q {
				if inst.tokens[id] == nil {
					return fmt.Errorf("join %q: no token %d", jd.Element, id)
				}
			}
			js.arrived[i] = append([]int(nil), q...)
		}
		inst.joins[joinKey{sc.id, n.Index}] = js
		if np := &inst.plan.nodes[n.Index]; np.inclusive || np.complex {
			inst.orJoins++
		}
	}
	for _, jd := range d.Jobs {
		if jd.Job.Key <= 0 || inst.jobs[jd.Job.Key] != nil || inst.tokens[jd.Token] == nil {
			return fmt.Errorf("job %d: a repeated key or no token %d", jd.Job.Key, jd.Token)
		}
		rs.key(jd.Job.Key)
		rs.key(jd.Job.Activation)
		job := cloneJob(&jd.Job)
		if inst.jobs == nil {
			inst.jobs = make(map[int64]*jobState)
		}
		inst.jobs[job.Key] = &jobState{job: &job, token: jd.Token, incident: jd.Incident}
	}
	for _, id := range d.Incidents {
		k := id.Incident.Key
		if k <= 0 || inst.incidents[k] != nil || (id.Token != 0 && inst.tokens[id.Token] == nil) {
			return fmt.Errorf("incident %d: a repeated key or no token %d", k, id.Token)
		}
		rs.key(k)
		if inst.incidents == nil {
			inst.incidents = make(map[int64]*incidentState)
		}
		inst.incidents[k] = &incidentState{incident: id.Incident, token: id.Token, reported: id.Reported, held: append([]int(nil), id.Held...)}
	}
	for _, sd := range d.Subs {
		ref, err := nm.sub(inst, scopes, sd)
		if err != nil {
			return fmt.Errorf("subscription %d: %v", sd.ID, err)
		}
		if inst.subs == nil {
			inst.subs = make(map[int64]subRef)
		}
		if _, dup := inst.subs[sd.ID]; dup {
			return fmt.Errorf("subscription %d appears twice", sd.ID)
		}
		inst.subs[sd.ID] = ref
		if sd.Kind == kindConditional {
			rs.key(sd.ID) // conditions are numbered by engine keys
			if inst.condLast == nil {
				inst.condLast = make(map[int64]bool)
			}
			inst.condLast[sd.ID] = sd.Held
		}
	}
	return nil
}

// track rebuilds the continuation of token tv, parked.
func (nm names) track(inst *Instance, tv *tokenView, td TrackDoc) (*track, error) {
	t := &track{inst: inst, id: tv.id, ch: tv.ch, scope: tv.scope, iter: td.Iteration}
	var err error
	if t.node, err = nm.node(td.Element); err != nil {
		return nil, err
	}
	if t.node == nil {
		return nil, fmt.Errorf("the track has no element")
	}
	if t.via, err = nm.flow(td.Flow); err != nil {
		return nil, err
	}
	for w, name := range waitPointNames {
		if name == td.At {
			t.at = w
		}
	}
	if t.at == atNothing {
		return nil, fmt.Errorf("wait point %q is not one a parked track can be at", td.At)
	}
	if r := td.Report; r != nil {
		for k, name := range reportNames {
			if name == r.Kind {
				t.report.kind = k
			}
		}
		if t.report.kind == 0 {
			return nil, fmt.Errorf("report kind %q is unknown", r.Kind)
		}
		if t.report.node, err = nm.node(r.Element); err != nil {
			return nil, err
		}
		if t.report.flow, err = nm.flow(r.Flow); err != nil {
			return nil, err
		}
		if t.report.kind == evArrive && (t.report.node == nil || t.report.flow == nil || t.report.flow.Target != t.report.node) {
			return nil, fmt.Errorf("an arrival report needs a join and one of its incoming flows")
		}
	}
	return t, nil
}

// sub rebuilds an open subscription.
func (nm names) sub(inst *Instance, scopes map[int]*scope, sd SubDoc) (subRef, error) {
	ref := subRef{token: sd.Token, left: sd.Left, period: time.Duration(sd.Period), key: sd.Key}
	if sd.Due != nil {
		ref.due = *sd.Due
	}
	if sd.Scope != nil {
		if ref.scope = scopes[*sd.Scope]; ref.scope == nil {
			return ref, fmt.Errorf("no scope %d", *sd.Scope)
		}
	}
	if sd.Handler != "" {
		h := nm.x.handlers[sd.Handler]
		if h == nil || h.spec == nil {
			return ref, fmt.Errorf("%q is no boundary event or event sub-process start with a subscription", sd.Handler)
		}
		ref.handler, ref.spec = h, h.spec
	} else {
		n, err := nm.node(sd.Catch)
		if err != nil {
			return ref, err
		}
		if n == nil || sd.Index < 0 || sd.Index >= len(inst.plan.nodes[n.Index].catches) {
			return ref, fmt.Errorf("element %q has no catch %d", sd.Catch, sd.Index)
		}
		ref.spec = &inst.plan.nodes[n.Index].catches[sd.Index]
	}
	if subKind(ref.spec.def.Kind) != sd.Kind {
		return ref, fmt.Errorf("kind %q, but its event is a %s", sd.Kind, subKind(ref.spec.def.Kind))
	}
	if sd.Token != 0 && inst.tokens[sd.Token] == nil {
		return ref, fmt.Errorf("no token %d", sd.Token)
	}
	return ref, nil
}

// link connects calling and called instances.
func (rs *restorer) link(docs []InstDoc) error {
	for _, d := range docs {
		inst := rs.live[d.Key]
		if d.Parent != 0 {
			p := rs.live[d.Parent]
			if p == nil || p.tokens[d.ParentToken] == nil {
				return fmt.Errorf("instance %d: its caller %d token %d is not live", d.Key, d.Parent, d.ParentToken)
			}
			inst.parent = p
		}
	}
	for _, d := range docs {
		inst := rs.live[d.Key]
		for _, td := range d.Tokens {
			if td.Child == 0 {
				continue
			}
			c := rs.live[td.Child]
			if c == nil || c.parent != inst || c.parentToken != td.ID {
				return fmt.Errorf("instance %d token %d: called instance %d is not live or not called by it", d.Key, td.ID, td.Child)
			}
			inst.tokens[td.ID].child = c
		}
	}
	return nil
}

// finished rebuilds a finished instance: its history, state and variables.
func (rs *restorer) finished(d InstDoc) (*Instance, error) {
	if !d.State.Final() {
		return nil, fmt.Errorf("a finished instance is %q", d.State)
	}
	inst, _, _, err := rs.shell(d)
	if err != nil {
		return nil, err
	}
	inst.state, inst.final, inst.finalMsg = d.State, d.State, d.Message
	inst.mailClosed = true
	close(inst.done)
	return inst, nil
}

// hub gathers the hub's state: the subscriptions of the instances (bar
// conditions, which are the instances' own, and those gone from the hub),
// the timer start events and the message buffer.
func (rs *restorer) hub(doc *Document) (eventhub.State, error) {
	e := rs.e
	st := eventhub.State{LastID: doc.Hub.LastSubscription, Subs: rs.subscriptions(doc.Live)}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, td := range doc.Hub.TimerStarts {
		if e.opts.NoTimerSignalStarts {
			break // another engine starts these instances (Options)
		}
		x := rs.plans[td.ProcessKey]
		if x == nil {
			return st, fmt.Errorf("timer start %d: no process with key %d", td.Sub, td.ProcessKey)
		}
		n := x.plan.Process.Node(td.Element)
		if n == nil || x.plan.nodes[n.Index].startCatch == nil || x.plan.nodes[n.Index].startCatch.timer == nil {
			return st, fmt.Errorf("timer start %d: %q is no timer start event of %s", td.Sub, td.Element, x.plan.Process.ID)
		}
		r := &timerStart{eng: e, target: startTarget{plan: x.plan, node: n}, period: time.Duration(td.Period), left: td.Left}
		st.Subs = append(st.Subs, eventhub.Subscription{ID: td.Sub, Kind: eventhub.Timer, Due: td.Due, R: r})
		id := x.plan.Process.ID
		e.timerStarts[id] = append(e.timerStarts[id], td.Sub)
	}
	for _, m := range doc.Hub.Messages {
		st.Messages = append(st.Messages, eventhub.Buffered{Name: m.Name, Key: m.CorrelationKey, ID: m.MessageID,
			Variables: m.Variables, Expires: m.Expires, Correlated: m.Correlated})
	}
	return st, nil
}

// subscriptions returns the hub subscriptions of the restored instances
// docs describe, bar conditions (the instances' own) and those gone from
// the hub.
func (rs *restorer) subscriptions(docs []InstDoc) []eventhub.Subscription {
	var subs []eventhub.Subscription
	for _, d := range docs {
		inst := rs.live[d.Key]
		for _, sd := range d.Subs {
			if sd.Gone || sd.Kind == kindConditional {
				continue
			}
			ref := inst.subs[sd.ID]
			s := eventhub.Subscription{ID: sd.ID, Due: ref.due}
			switch sd.Kind {
			case kindMessage:
				s.Kind, s.Name, s.Key, s.Def, s.R = eventhub.Message, ref.spec.name(), ref.key, inst.plan.Process.ID, inst
			case kindSignal:
				s.Kind, s.Name, s.R = eventhub.Signal, ref.spec.name(), trackReceiver{inst, ref.token}
			default:
				s.Kind, s.R = eventhub.Timer, trackReceiver{inst, ref.token}
			}
			subs = append(subs, s)
		}
	}
	return subs
}

// exactNumbers brings every value the document holds to the engine's
// value model in place: a document decoded with json.Decoder.UseNumber
// holds every number as a json.Number, and Normalize keeps as json.Number
// only those no float64 holds, so that a restored instance sees the same
// values, with every digit, as the one checkpointed.
func (doc *Document) exactNumbers() error {
	for i := range doc.Hub.Messages {
		if err := numbersIn(doc.Hub.Messages[i].Variables); err != nil {
			return fmt.Errorf("message %q: %w", doc.Hub.Messages[i].Name, err)
		}
	}
	for _, insts := range [][]InstDoc{doc.Live, doc.Finished} {
		for i := range insts {
			if err := insts[i].exactNumbers(); err != nil {
				return fmt.Errorf("instance %d: %w", insts[i].Key, err)
			}
		}
	}
	return nil
}

// exactNumbers is Document.exactNumbers for one instance.
func (d *InstDoc) exactNumbers() error {
	for i := range d.Scopes {
		sd := &d.Scopes[i]
		if err := numbersIn(sd.Variables); err != nil {
			return fmt.Errorf("scope %d: %w", sd.ID, err)
		}
		if sd.Multi != nil {
			for _, list := range [][]any{sd.Multi.Items, sd.Multi.Results} {
				for j, v := range list {
					n, err := normalizeValue(v, 1)
					if err != nil {
						return fmt.Errorf("scope %d: multi-instance [%d]: %w", sd.ID, j, err)
					}
					list[j] = n
				}
			}
		}
	}
	for i := range d.Tokens {
		if err := numbersIn(d.Tokens[i].Locals); err != nil {
			return fmt.Errorf("token %d: %w", d.Tokens[i].ID, err)
		}
	}
	for i := range d.Jobs {
		if err := numbersIn(d.Jobs[i].Job.Variables); err != nil {
			return fmt.Errorf("job %d: %w", d.Jobs[i].Job.Key, err)
		}
	}
	for i := range d.History {
		if v := d.History[i].Variables; v != nil {
			if err := numbersIn(*v); err != nil {
				return fmt.Errorf("history record %d: %w", i+1, err)
			}
		}
	}
	return nil
}

// numbersIn normalizes every variable of vars in place.
func numbersIn(vars map[string]any) error {
	for k, v := range vars {
		n, err := normalizeValue(v, 1)
		if err != nil {
			return fmt.Errorf("variable %q: %w", k, err)
		}
		vars[k] = n
	}
	return nil
}
