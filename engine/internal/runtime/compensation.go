package runtime

import (
	"fmt"
	"slices"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Compensation (BPMN 2.0 §10.6) and transactions (§10.7).
//
// Every activity instance that completes and can be compensated (it has
// a compensation boundary event, or is a sub-process or multi-instance
// activity with such activities inside) leaves a compRecord in the scope
// it ran in, in order of completion. A sub-process's record holds the
// records of its content and a snapshot of its variables; a multi-instance
// activity's holds one record per completed inner instance, with its
// locals. A compensation throw or end event takes the records of its scope
// (all of them, or those of its activityRef), so each completed instance
// is compensated once, and runs them in reverse order of completion, one
// at a time: for each, the compensation boundary event is recorded entered
// and left, and a token starts at its handler; when the handler's token
// ends the next record runs. A record with content runs its content's
// records, latest first, in a scope revived from the snapshot (flagged
// revived: no token waits at it, and its compRun closes it); a sub-process
// with a compensation event sub-process runs that instead, in the revived
// scope, where a compensation throw finds the content's records. The
// throwing token waits for all of it (waitForCompletion, the default) or
// goes on at once.
//
// A cancel end event cancels the nearest enclosing transaction: the
// event is left, everything running in the transaction is withdrawn, the
// transaction's records are compensated as above, inside the transaction's
// scope (first those of the sub-processes that were still running in it,
// as their content), and then the transaction is terminated and its token goes on at
// its cancel boundary event.
//
// Why one handler at a time: the spec compensates a sub-process's content
// in reverse order of completion; Zeebe starts all handlers at once in no
// specified order. One at a time, latest first, satisfies both (RATIONALE:
// "Why are compensation handlers run one at a time, latest first?").

// compPlan is what a node needs for compensation and transactions; nil on
// nodes that take no part.
type compPlan struct {
	// compensable: completing the activity leaves a record.
	compensable bool
	// handler is the activity's compensation handler, boundary the
	// compensation boundary event associating it.
	handler, boundary *model.Node
	// throw marks a compensation throw or end event, which compensates
	// activity (nil: every record of its scope) and waits for the end of
	// the compensation when wait is set.
	throw    bool
	activity *model.Node
	wait     bool
	// eventSub is, on a sub-process, the start event of its compensation
	// event sub-process, which compensates it instead of its content.
	eventSub *model.Node
	// cancel marks a cancel end event; cancelBoundary is, on a
	// transaction, its cancel boundary event.
	cancel         bool
	cancelBoundary *model.Node
}

// throws reports whether a token at the node parks for the loop to throw
// compensation or cancel.
func (cp *compPlan) throws() bool { return cp != nil && (cp.throw || cp.cancel) }

// compileCompensation compiles node n's part in compensation; Validate
// has checked the model.
func compileCompensation(p *model.Process, n *model.Node) *compPlan {
	cp := &compPlan{}
	if n.Kind.IsActivity() && !n.TriggeredByEvent && !n.ForCompensation {
		cp.compensable = model.Compensable(n)
		for _, b := range n.Boundaries {
			switch {
			case b.HasEvent(model.EventCompensation) && b.Compensation != nil:
				cp.handler, cp.boundary = b.Compensation, b
			case b.HasEvent(model.EventCancel):
				cp.cancelBoundary = b
			}
		}
		cp.eventSub = model.CompensationStart(n)
	}
	if (n.Kind == model.KindEndEvent || n.Kind == model.KindIntermediateThrowEvent) && len(n.Events) == 1 {
		switch d := n.Events[0]; d.Kind {
		case model.EventCompensation:
			cp.throw, cp.wait = true, d.WaitForCompletion
			if d.Activity != "" {
				cp.activity = p.Node(d.Activity)
			}
		case model.EventCancel:
			cp.cancel = true
		}
	}
	if *cp == (compPlan{}) {
		return nil
	}
	return cp
}

// compRecord is one completed activity instance that can be compensated.
type compRecord struct {
	node *model.Node
	// vars are the variables of the scope its handler or content runs in:
	// a sub-process's own at completion, an inner instance's locals; nil
	// when the handler runs in the scope the activity ran in.
	vars map[string]any
	// content marks a record compensated through inner, the records of
	// what completed inside it, in order of completion; eventSub one
	// compensated by its compensation event sub-process, which may
	// compensate inner in turn; without either, the record runs the
	// activity's handler.
	content  bool
	eventSub bool
	inner    []*compRecord
}

// instComp is an instance's state of compensation: the compensations in
// progress by id and the last id given, and, by token id, what the scope
// of the sub-process or multi-instance body a token leaves left to
// compensate (inner, vars), until the loop records its completion. Most
// instances never compensate, and pay one nil pointer for it.
type instComp struct {
	runs    map[int]*compRun
	nextRun int
	left    map[int]*compRecord
}

// state returns the instance's compensation state, making it.
func (inst *Instance) compState() *instComp {
	if inst.comp == nil {
		inst.comp = &instComp{runs: map[int]*compRun{}, left: map[int]*compRecord{}}
	}
	return inst.comp
}

// compRuns returns the compensations in progress, by id (nil: none).
func (inst *Instance) compRuns() map[int]*compRun {
	if inst.comp == nil {
		return nil
	}
	return inst.comp.runs
}

// takeLeft returns and forgets what token tv's scope left to compensate.
func (inst *Instance) takeLeft(tv *tokenView) *compRecord {
	if inst.comp == nil {
		return nil
	}
	r := inst.comp.left[tv.id]
	delete(inst.comp.left, tv.id)
	return r
}

// records returns the records of the scope.
func (s *scope) records() []*compRecord {
	if s.compensable == nil {
		return nil
	}
	return *s.compensable
}

// setRecords replaces the records of the scope.
func (s *scope) setRecords(rs []*compRecord) {
	switch {
	case len(rs) == 0:
		s.compensable = nil
	case s.compensable == nil:
		s.compensable = &rs
	default:
		*s.compensable = rs
	}
}

// compRun is one compensation in progress: the records it has still to
// run, in order, in scope sc.
type compRun struct {
	id    int
	scope *scope
	// pending are the records to run, next first.
	pending []*compRecord
	// handler is the token of the handler running now, child the run of
	// the content of the record running now; both 0 between records.
	handler, child int
	// parent is the run this one compensates the content of a record
	// for (0: none); revived says that this run's scope was revived for
	// it, so it closes the scope when done; eventSub that it waits for the
	// compensation event sub-process running in its scope.
	parent   int
	revived  bool
	eventSub bool
	// token waits at the throw event for the end of the compensation
	// (0: none). For a cancellation, owner is the token waiting at the
	// transaction, and cancel its cancel boundary event.
	token  int
	owner  int
	cancel *model.Node
}

// completedActivity leaves a record for activity n, which tv completed,
// in tv's scope, if n can be compensated. What the scope of a sub-process
// or the body of a multi-instance activity recorded came with tv from
// completeScope or completeBody (instComp.left).
func (inst *Instance) completedActivity(tv *tokenView, n *model.Node) {
	np := &inst.plan.nodes[n.Index]
	if !np.comp.leavesRecord() {
		return // the common case: nothing to record, and nothing left
	}
	var inner []*compRecord
	var vars map[string]any
	if left := inst.takeLeft(tv); left != nil {
		inner, vars = left.inner, left.vars
	}
	if tv.scope.instanceOf(n) {
		return
	}
	rec := &compRecord{node: n}
	switch {
	case np.multi == nil && np.comp.handler == nil && np.comp.eventSub != nil:
		rec.eventSub, rec.vars, rec.inner = true, vars, inner
	case np.multi == nil && np.comp.handler != nil && isTask(n):
		rec.vars = vars // its input-mapped locals, if any (keepLocals)
	case np.multi != nil || np.comp.handler == nil:
		// A multi-instance body holds its instances' records; a
		// sub-process without a handler of its own is compensated by
		// its content.
		if len(inner) == 0 {
			return
		}
		rec.content, rec.inner = true, inner
		if np.multi == nil {
			rec.vars = vars
		}
	}
	tv.scope.setRecords(append(tv.scope.records(), rec))
}

// keepLocals keeps the input-mapped locals of task n, which tv is
// completing, for n's compensation handler, which runs with them over
// the scope's variables: the handler undoes that task instance, so it
// sees what the instance saw, as a multi-instance inner instance's
// handler sees its locals. They wait with tv (instComp.left, in the
// checkpoint) until completedActivity puts them in n's record.
func (inst *Instance) keepLocals(tv *tokenView, n *model.Node) {
	np := &inst.plan.nodes[n.Index]
	if len(tv.locals) == 0 || np.multi != nil || !isTask(n) || !np.comp.leavesRecord() || np.comp.handler == nil {
		return
	}
	inst.compState().left[tv.id] = &compRecord{vars: cloneVars(tv.locals)}
}

// isTask reports whether n is a task, the activities whose input
// mappings become the token's locals.
func isTask(n *model.Node) bool { return n.Kind >= model.KindTask && n.Kind <= model.KindScriptTask }

// leavesRecord reports whether completing the plan's activity leaves a
// record.
func (cp *compPlan) leavesRecord() bool { return cp != nil && cp.compensable }

// instanceCompleted leaves the record of inner instance sc of
// multi-instance activity n, whose token tv is done with its work, in the
// body: its locals (and a sub-process's own variables over them), and,
// for a sub-process without a handler, its content or its compensation
// event sub-process.
func (inst *Instance) instanceCompleted(tv *tokenView, sc *scope, n *model.Node) {
	cp := inst.plan.nodes[n.Index].comp
	if !cp.leavesRecord() {
		return
	}
	rec := &compRecord{node: n, vars: cloneVars(sc.vars)}
	var inner []*compRecord
	if left := inst.takeLeft(tv); left != nil {
		inner = left.inner
		if len(left.vars) > 0 && rec.vars == nil {
			rec.vars = make(map[string]any, len(left.vars))
		}
		for k, v := range left.vars {
			rec.vars[k] = v
		}
	}
	switch {
	case cp.handler != nil:
	case cp.eventSub != nil:
		rec.eventSub, rec.inner = true, inner
	case len(inner) == 0:
		return
	default:
		rec.content, rec.inner = true, inner
	}
	sc.parent.setRecords(append(sc.parent.records(), rec))
}

// keepCompensable hands the records of scope sc, which completes, to tv,
// the token leaving its activity, with a snapshot of its variables.
func (inst *Instance) keepCompensable(tv *tokenView, sc *scope) {
	if sc.compensable == nil && (sc.node == nil || inst.plan.nodes[sc.node.Index].comp == nil || inst.plan.nodes[sc.node.Index].comp.eventSub == nil) {
		return
	}
	inst.compState().left[tv.id] = &compRecord{inner: sc.records(), vars: cloneVars(sc.vars)}
	sc.compensable = nil
}

// compensationScope is the scope a compensation thrown in sc compensates:
// sc, or, in an event sub-process, the scope the event sub-process is in.
func compensationScope(sc *scope) *scope {
	for sc.parent != nil && sc.node != nil && sc.node.TriggeredByEvent {
		sc = sc.parent
	}
	return sc
}

// takeRecords removes from sc the records to compensate, latest first:
// all of them, or those of activity when it is set.
func takeRecords(sc *scope, activity *model.Node) []*compRecord {
	var out, keep []*compRecord
	for _, r := range sc.records() {
		if activity == nil || r.node == activity {
			out = append(out, r)
		} else {
			keep = append(keep, r)
		}
	}
	sc.setRecords(keep)
	slices.Reverse(out)
	return out
}

// throwCompensation applies the compensation throw or end event n that
// tv, parked there, has reached.
func (inst *Instance) throwCompensation(tv *tokenView, n *model.Node) {
	cp := inst.plan.nodes[n.Index].comp
	if cp.cancel {
		inst.cancelTransaction(tv, n)
		return
	}
	sc := compensationScope(tv.scope)
	run := inst.newRun(sc, takeRecords(sc, cp.activity))
	if cp.wait {
		run.token = tv.id
	} else {
		inst.notify(tv, notice{kind: resume})
	}
	inst.advance(run)
}

// cancelTransaction applies cancel end event n, reached by tv: the
// nearest enclosing transaction is cancelled.
func (inst *Instance) cancelTransaction(tv *tokenView, n *model.Node) {
	tx := tv.scope
	for tx.parent != nil && (tx.revived || !tx.node.Transaction) {
		tx = tx.parent
	}
	owner := inst.tokens[tx.token]
	if tx.parent == nil || owner == nil {
		// Validate puts every cancel end event in a transaction; only a
		// handler compensating a completed transaction's content runs
		// one outside a running transaction.
		tv.wait = WaitIncident
		inst.openIncident(tv, n, 0, fmt.Sprintf("cancel end event %s: no running transaction to cancel (it runs in a compensation of a completed one)", n.ID))
		return
	}
	inst.recordNode(ElementLeft, n, tv.id)
	tv.node = nil // left: withdrawing it terminates no element
	// What completed inside the sub-processes still running in the
	// transaction is its completed work too: taken before they are
	// withdrawn, it is compensated first, as the sub-process, still
	// running, is later than anything that completed beside it.
	records := append(runningRecords(tx), takeRecords(tx, nil)...)
	inst.terminateIn(tx, nil)
	inst.closeScopeSubs(tx)
	tx.interrupted = true
	tx.live++ // the cancellation holds the transaction open while it compensates
	run := inst.newRun(tx, records)
	run.owner, run.cancel = owner.id, inst.plan.nodes[tx.node.Index].comp.cancelBoundary
	inst.advance(run)
}

// runningRecords returns, latest first, a content record for each
// sub-process still running in sc that holds records of completed
// activities, directly or in sub-processes running inside it: a
// cancelled transaction compensates all the work completed in it (BPMN
// 2.0 §10.2.2), not only what completed at its own level. Each is
// compensated like a completed sub-process's content, with the
// sub-process's variables as they are now.
func runningRecords(sc *scope) []*compRecord {
	var out []*compRecord
	for _, id := range sortedKeys(sc.children) {
		c := sc.children[id]
		if c.done || c.revived || c.node == nil {
			continue
		}
		inner := slices.Clone(c.records())
		nested := runningRecords(c)
		slices.Reverse(nested)
		inner = append(inner, nested...) // completion order, the running ones last
		if len(inner) == 0 {
			continue
		}
		out = append(out, &compRecord{node: c.node, content: true, inner: inner, vars: cloneVars(c.vars)})
	}
	slices.Reverse(out)
	return out
}

// newRun registers a compensation of records in sc.
func (inst *Instance) newRun(sc *scope, records []*compRecord) *compRun {
	cs := inst.compState()
	cs.nextRun++
	run := &compRun{id: cs.nextRun, scope: sc, pending: records}
	cs.runs[run.id] = run
	return run
}

// advance starts the next record of run, or ends the run when none is
// left.
func (inst *Instance) advance(run *compRun) {
	if len(run.pending) == 0 {
		inst.finishRun(run)
		return
	}
	r := run.pending[0]
	run.pending = run.pending[1:]
	if r.content || r.eventSub || r.vars != nil {
		// The content, the compensation event sub-process, or the handler
		// with the instance's locals, runs in a scope revived for it,
		// which holds the scope of run open.
		inst.nextScope++
		rs := newScope(inst.nextScope, r.node, run.scope, cloneVars(r.vars))
		rs.revived = true
		run.scope.live++
		var pending []*compRecord
		switch {
		case r.eventSub:
			rs.setRecords(r.inner) // what a throw in the event sub-process compensates
		case r.content:
			pending = slices.Clone(r.inner)
			slices.Reverse(pending)
		default:
			pending = []*compRecord{{node: r.node}}
		}
		child := inst.newRun(rs, pending)
		child.parent, child.revived, child.eventSub = run.id, true, r.eventSub
		run.child = child.id
		if !r.eventSub {
			inst.advance(child)
			return
		}
		for i, h := range inst.plan.eventStarts[r.node.Index] {
			if h.node == inst.plan.nodes[r.node.Index].comp.eventSub {
				inst.startEventSubprocess(rs, &inst.plan.eventStarts[r.node.Index][i], nil)
			}
		}
		return
	}
	cp := inst.plan.nodes[r.node.Index].comp
	id := inst.nextToken + 1 // the handler's token
	inst.recordNode(ElementEntered, cp.boundary, id)
	inst.recordNode(ElementLeft, cp.boundary, id)
	inst.spawn(cp.handler, nil, true, run.scope)
	run.handler = id
}

// finishRun ends run, whose records have all run: a revived scope
// closes, the run it was part of goes on, and the throwing token goes on,
// or the cancelled transaction's token leaves by its cancel boundary.
func (inst *Instance) finishRun(run *compRun) {
	delete(inst.comp.runs, run.id)
	if run.revived {
		inst.closeScopeSubs(run.scope)
		run.scope.close()
		run.scope.parent.live--
	}
	if run.parent != 0 {
		if p := inst.comp.runs[run.parent]; p != nil {
			p.child = 0
			inst.advance(p)
		}
		return
	}
	if run.cancel != nil {
		tx := run.scope
		tx.live--
		if owner := inst.tokens[run.owner]; owner != nil {
			inst.interruptActivity(owner, run.cancel)
		}
		return
	}
	if tv := inst.tokens[run.token]; run.token != 0 && tv != nil {
		inst.notify(tv, notice{kind: resume})
	}
}

// revivedDone ends the compensation waiting for the compensation event
// sub-process of revived scope sc, which has completed.
func (inst *Instance) revivedDone(sc *scope) {
	for _, id := range sortedKeys(inst.compRuns()) {
		if run := inst.comp.runs[id]; run.scope == sc && run.eventSub && run.handler == 0 && run.child == 0 {
			inst.finishRun(run)
			return
		}
	}
}

// tokenGone forgets what token tv left and, when it ran a compensation
// handler, goes on with that compensation. A handler that did not
// complete (withdrawn by an interrupt or the instance stopping) ends its
// compensation, and the compensations it was part of, there.
func (inst *Instance) tokenGone(tv *tokenView, completed bool) {
	delete(inst.comp.left, tv.id)
	var run *compRun
	for _, r := range inst.comp.runs {
		if r.handler == tv.id {
			run = r
			break
		}
	}
	if run == nil {
		return
	}
	run.handler = 0
	if completed && !tv.doomed && !inst.stopping.Load() {
		inst.advance(run)
		return
	}
	for run != nil {
		delete(inst.comp.runs, run.id)
		run = inst.comp.runs[run.parent]
	}
}

// compDocs writes records for the state document.
func compDocs(rs []*compRecord) []CompDoc {
	if len(rs) == 0 {
		return nil
	}
	out := make([]CompDoc, len(rs))
	for i, r := range rs {
		out[i] = CompDoc{Element: r.node.ID, Variables: cloneVars(r.vars), Content: r.content, EventSub: r.eventSub, Inner: compDocs(r.inner)}
	}
	return out
}

// runDocs writes the compensations in progress, by id.
func (inst *Instance) runDocs() []CompRunDoc {
	var out []CompRunDoc
	for _, id := range sortedKeys(inst.compRuns()) {
		r := inst.comp.runs[id]
		rd := CompRunDoc{ID: r.id, Scope: r.scope.id, Pending: compDocs(r.pending), Handler: r.handler, Child: r.child,
			Parent: r.parent, Revived: r.revived, EventSub: r.eventSub, Token: r.token, Owner: r.owner}
		if r.cancel != nil {
			rd.Cancel = r.cancel.ID
		}
		out = append(out, rd)
	}
	return out
}

// compRecords reads records of the state document.
func (nm names) compRecords(docs []CompDoc) ([]*compRecord, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	out := make([]*compRecord, len(docs))
	for i, d := range docs {
		n, err := nm.node(d.Element)
		if err != nil || n == nil {
			return nil, fmt.Errorf("compensation record: no activity %q", d.Element)
		}
		cp := nm.x.plan.nodes[n.Index].comp
		if !cp.leavesRecord() {
			return nil, fmt.Errorf("compensation record of %s: the activity cannot be compensated", d.Element)
		}
		inner, err := nm.compRecords(d.Inner)
		if err != nil {
			return nil, err
		}
		if !d.Content && !d.EventSub && cp.handler == nil || d.EventSub && cp.eventSub == nil {
			return nil, fmt.Errorf("compensation record of %s: the activity has no compensation handler", d.Element)
		}
		out[i] = &compRecord{node: n, vars: d.Variables, content: d.Content, eventSub: d.EventSub, inner: inner}
	}
	return out, nil
}

// runs rebuilds the compensations in progress of inst, whose scopes and
// tokens are restored.
func (nm names) runs(inst *Instance, scopes map[int]*scope, docs []CompRunDoc) error {
	handlers := map[int]bool{}
	for _, d := range docs {
		what := fmt.Sprintf("compensation %d", d.ID)
		sc := scopes[d.Scope]
		if d.ID <= 0 || inst.compRuns()[d.ID] != nil || sc == nil {
			return fmt.Errorf("%s: a repeated id or no scope %d", what, d.Scope)
		}
		pending, err := nm.compRecords(d.Pending)
		if err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
		for _, t := range []int{d.Handler, d.Token, d.Owner} {
			if t != 0 && inst.tokens[t] == nil {
				return fmt.Errorf("%s: no token %d", what, t)
			}
		}
		if d.Handler != 0 && handlers[d.Handler] {
			return fmt.Errorf("%s: token %d runs the handler of another compensation", what, d.Handler)
		}
		handlers[d.Handler] = true
		run := &compRun{id: d.ID, scope: sc, pending: pending, handler: d.Handler, child: d.Child, parent: d.Parent,
			revived: d.Revived, eventSub: d.EventSub, token: d.Token, owner: d.Owner}
		if d.Cancel != "" {
			if run.cancel, err = nm.node(d.Cancel); err != nil || run.cancel == nil || !run.cancel.HasEvent(model.EventCancel) ||
				sc.node == nil || run.cancel.AttachedTo != sc.node || inst.tokens[d.Owner] == nil {
				return fmt.Errorf("%s: %q is no cancel boundary event of its transaction, with its token", what, d.Cancel)
			}
		}
		if d.Revived && (!sc.revived || sc.parent == nil) || d.EventSub && !d.Revived {
			return fmt.Errorf("%s: revived does not match scope %d", what, d.Scope)
		}
		cs := inst.compState()
		cs.runs[d.ID] = run
		cs.nextRun = max(cs.nextRun, d.ID)
	}
	for _, run := range inst.compRuns() {
		if run.parent != 0 && inst.comp.runs[run.parent] == nil || run.child != 0 && inst.comp.runs[run.child] == nil {
			return fmt.Errorf("compensation %d: its parent %d or child %d is missing", run.id, run.parent, run.child)
		}
	}
	return nil
}

// leftDoc writes what token tv's scope left to compensate, or nil.
func (inst *Instance) leftDoc(tv *tokenView) *CompDoc {
	if inst.comp == nil || inst.comp.left[tv.id] == nil {
		return nil
	}
	l := inst.comp.left[tv.id]
	return &CompDoc{Variables: cloneVars(l.vars), Inner: compDocs(l.inner)}
}

// left reads what token tv's scope left to compensate.
func (nm names) left(inst *Instance, tv *tokenView, d *CompDoc) error {
	if d == nil {
		return nil
	}
	if d.Element != "" || d.Content || d.EventSub {
		return fmt.Errorf("left: only variables and inner records")
	}
	inner, err := nm.compRecords(d.Inner)
	if err != nil {
		return fmt.Errorf("left: %v", err)
	}
	inst.compState().left[tv.id] = &compRecord{vars: d.Variables, inner: inner}
	return nil
}
