package runtime

import (
	"fmt"
	"time"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// MaxKey is the highest key an engine hands out, 2^53 - 1: every key is
// exact as a JavaScript number (the SDK, JSON readers).
const MaxKey = 1<<53 - 1

// keyHeadroom is how many keys a restored document must leave the
// engine in its key space past its lastKey: a lastKey at the very end
// would make the next key fall outside it (past 2^53 - 1, or into the
// next partition's keys). An engine reopened from its store moves its
// counter 2^20 on, so the room is far more than that.
const keyHeadroom = 1 << 32

// keySpaceEnd is the last key of the engine's key space: its partition's
// last, or for an engine without one the last key of partition 0.
func (e *Engine) keySpaceEnd() int64 { return min(keyBase(e.opts.Partition+1)-1, MaxKey) }

// counterAfter returns where the key counter moves to take doc: its
// lastKey when that lies in the engine's key space; otherwise (a document
// from a partitioned engine restored into one without partitions) the
// counter needs to pass only the document's keys in the engine's space.
func (e *Engine) counterAfter(doc *Document) int64 {
	lo, hi := keyBase(e.opts.Partition), e.keySpaceEnd()
	if doc.LastKey > lo && doc.LastKey <= hi {
		return doc.LastKey
	}
	var top int64
	for _, d := range doc.Live {
		if d.Key > lo && d.Key <= hi {
			top = max(top, d.Key)
		}
	}
	return top
}

// checkDocument checks what Restore and RestoreInstance take from doc
// before either changes anything: the key bounds (lastKey at or above
// every key of the document, every key from 1 to MaxKey, in the engine's
// key space when it has one), keys unique, call trees acyclic and
// consistent, tokens only where a token can wait and at most
// opts.MaxTokens of them in an instance, and every timer in the clock's
// range. The element-level checks (every name resolves, scopes, joins)
// are the restorer's, which runs next on the same document. planOf
// returns the plan the instances of a process key of the document run,
// or nil when it is not known yet.
func (e *Engine) checkDocument(doc *Document, planOf func(int64) *Plan) error {
	if err := e.checkKeys(doc); err != nil {
		return err
	}
	if err := checkCalls(doc.Live); err != nil {
		return err
	}
	for i := range doc.Live {
		d := &doc.Live[i]
		if err := e.checkTokens(d, doc.Live, planOf(d.ProcessKey)); err != nil {
			return fmt.Errorf("instance %d: %v", d.Key, err)
		}
		for _, sd := range d.Subs {
			if sd.Due != nil {
				if err := checkTimer(*sd.Due, time.Duration(sd.Period), sd.Left); err != nil {
					return fmt.Errorf("instance %d: subscription %d: %v", d.Key, sd.ID, err)
				}
			}
		}
	}
	for _, td := range doc.Hub.TimerStarts {
		if err := checkTimer(td.Due, time.Duration(td.Period), td.Left); err != nil {
			return fmt.Errorf("timer start event %s: %v", td.Element, err)
		}
	}
	return nil
}

// checkKeys checks the key bounds and that the keys naming things (plan
// versions, instances, open jobs and their activations, open incidents,
// conditions) are unique.
func (e *Engine) checkKeys(doc *Document) error {
	if doc.LastKey < 0 || doc.LastKey > MaxKey {
		return fmt.Errorf("lastKey %d is outside 0 to %d", doc.LastKey, int64(MaxKey))
	}
	if c := e.counterAfter(doc); c > e.keySpaceEnd()-keyHeadroom {
		return fmt.Errorf("lastKey %d leaves fewer than %d keys before the end of the engine's key space (%d)", c, keyHeadroom, e.keySpaceEnd())
	}
	p := e.opts.Partition
	seen := map[int64]string{}
	check := func(k int64, what string, unique bool) error {
		switch {
		case k <= 0 || k > MaxKey:
			return fmt.Errorf("%s: key %d is outside 1 to %d", what, k, int64(MaxKey))
		case k > doc.LastKey:
			return fmt.Errorf("lastKey %d is below key %d of %s", doc.LastKey, k, what)
		case p != 0 && PartitionOf(k) != p:
			return fmt.Errorf("%s: key %d is a key of partition %d, not of the engine's key space (partition %d)", what, k, PartitionOf(k), p)
		}
		if unique {
			if other, dup := seen[k]; dup {
				return fmt.Errorf("%s: key %d is also %s's", what, k, other)
			}
			seen[k] = what
		}
		return nil
	}
	opt := func(k int64, what string, unique bool) error {
		if k == 0 {
			return nil
		}
		return check(k, what, unique)
	}
	for _, d := range doc.Deploys {
		for _, pd := range d.Processes {
			if err := check(pd.Key, "process "+pd.ID, true); err != nil {
				return err
			}
		}
	}
	docs := append(append([]InstDoc(nil), doc.Live...), doc.Finished...)
	for _, d := range docs {
		if err := check(d.Key, fmt.Sprintf("instance %d", d.Key), true); err != nil {
			return err
		}
	}
	for _, d := range docs {
		what := fmt.Sprintf("instance %d", d.Key)
		if err := opt(d.Parent, what+" caller", false); err != nil {
			return err
		}
		if err := opt(d.HeldBy, what+" hold", false); err != nil {
			return err
		}
		for _, jd := range d.Jobs {
			if err := check(jd.Job.Key, fmt.Sprintf("%s job", what), true); err != nil {
				return err
			}
			if err := opt(jd.Job.Activation, fmt.Sprintf("%s job %d activation", what, jd.Job.Key), true); err != nil {
				return err
			}
			if err := opt(jd.Incident, fmt.Sprintf("%s job %d incident", what, jd.Job.Key), false); err != nil {
				return err
			}
		}
		for _, id := range d.Incidents {
			if err := check(id.Incident.Key, what+" incident", true); err != nil {
				return err
			}
			if err := opt(id.Incident.JobKey, fmt.Sprintf("%s incident %d job", what, id.Incident.Key), false); err != nil {
				return err
			}
		}
		for _, sd := range d.Subs {
			if sd.Kind == kindConditional {
				if err := check(sd.ID, what+" condition", true); err != nil {
					return err
				}
			}
		}
		for i, r := range d.History {
			if err := opt(r.JobKey, fmt.Sprintf("%s history record %d job", what, i+1), false); err != nil {
				return err
			}
			if err := opt(r.IncidentKey, fmt.Sprintf("%s history record %d incident", what, i+1), false); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCalls checks the call trees of the live instances: a caller is
// an instance of the document, the token it names waits for that very
// instance, and following callers always ends at a top instance, so
// that nothing walking a tree (CheckpointInstance, export) loops.
func checkCalls(live []InstDoc) error {
	byKey := make(map[int64]*InstDoc, len(live))
	for i := range live {
		byKey[live[i].Key] = &live[i]
	}
	for i := range live {
		d := &live[i]
		if d.Parent == 0 {
			continue
		}
		caller := byKey[d.Parent]
		if caller == nil {
			continue // the restorer reports a caller missing from the document
		}
		ok := false
		for _, td := range caller.Tokens {
			if td.ID == d.ParentToken && td.Child == d.Key {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("instance %d: its caller %d has no token %d waiting for it", d.Key, d.Parent, d.ParentToken)
		}
		steps := 0
		for cur := d; cur.Parent != 0; cur = byKey[cur.Parent] {
			if byKey[cur.Parent] == nil {
				break
			}
			if steps++; steps > len(live) {
				return fmt.Errorf("instance %d: its callers call each other in a cycle", d.Key)
			}
		}
	}
	for i := range live {
		d := &live[i]
		for _, td := range d.Tokens {
			if td.Child == 0 {
				continue
			}
			if c := byKey[td.Child]; c != nil && (c.Parent != d.Key || c.ParentToken != td.ID) {
				return fmt.Errorf("instance %d: token %d waits for instance %d, which another caller called", d.Key, td.ID, td.Child)
			}
		}
	}
	return nil
}

// checkTokens checks that each token of d waits where a token can wait,
// for something the document holds, and that d has at most MaxTokens.
func (e *Engine) checkTokens(d *InstDoc, live []InstDoc, plan *Plan) error {
	if n := len(d.Tokens); n > e.opts.MaxTokens {
		return fmt.Errorf("%d tokens, above the engine's limit of %d live tokens in an instance", n, e.opts.MaxTokens)
	}
	jobs := map[int64]int{}
	for _, jd := range d.Jobs {
		jobs[jd.Job.Key] = jd.Token
	}
	incidents := map[int]bool{}
	incidentKeys := map[int64]bool{}
	for _, id := range d.Incidents {
		incidents[id.Token] = true
		incidentKeys[id.Incident.Key] = true
		for _, h := range id.Held {
			incidents[h] = true
		}
	}
	for _, jd := range d.Jobs {
		if jd.Incident != 0 {
			incidents[jd.Token] = true
			incidentKeys[jd.Incident] = true
		}
	}
	subs := map[int]bool{}
	for _, sd := range d.Subs {
		subs[sd.Token] = true
	}
	joined := map[int]string{}
	for _, jd := range d.Joins {
		for _, q := range jd.Arrived {
			for _, id := range q {
				joined[id] = jd.Element
			}
		}
	}
	called := map[int]bool{}
	for _, c := range live {
		if c.Parent == d.Key {
			called[c.ParentToken] = true
		}
	}
	for _, td := range d.Tokens {
		bad := ""
		switch td.Wait {
		case WaitJob:
			if tok, ok := jobs[td.Job]; td.Job == 0 || !ok || tok != td.ID {
				bad = fmt.Sprintf("waits for job %d, which the document does not hold for it", td.Job)
			}
		case WaitIncident:
			if !incidents[td.ID] && !incidentKeys[td.Incident] {
				bad = "waits on an incident the document does not hold"
			}
		case WaitJoin:
			if !td.AtJoin || joined[td.ID] != td.Element || td.Element == "" {
				bad = fmt.Sprintf("waits at join %q, which has not seen it arrive", td.Element)
			}
		case WaitCall:
			if td.Child == 0 || !called[td.ID] {
				bad = fmt.Sprintf("waits for called instance %d, which the document does not hold", td.Child)
			}
		case WaitMessage, WaitSignal, WaitTimer:
			if !subs[td.ID] && len(td.Subs) == 0 {
				bad = fmt.Sprintf("waits for a %s with no subscription", td.Wait)
			}
		case WaitEvent, WaitScope, WaitChoice:
		default:
			bad = fmt.Sprintf("wait reason %q is unknown", td.Wait)
		}
		if bad == "" {
			bad = waitsAtKind(plan, td)
		}
		if bad != "" {
			return fmt.Errorf("token %d at %q: %s", td.ID, td.Element, bad)
		}
	}
	return nil
}

// waitsAtKind checks the kind of element a token of plan waits at. An
// end event never subscribes, joins or calls: it holds a token for its
// job (a message end event), on an incident, while it raises an error or
// escalation to its callers, and, a compensation end event, while the
// compensation runs. A converging gateway holds a token only as
// arrived, or on an incident. It returns what is wrong, or "".
func waitsAtKind(plan *Plan, td TokenDoc) string {
	if plan == nil || td.Element == "" {
		return "" // the restorer reports what does not resolve
	}
	n := plan.Process.Node(td.Element)
	if n == nil {
		return ""
	}
	if td.Wait == WaitChoice && n.Kind != model.KindExclusiveGateway && n.Kind != model.KindInclusiveGateway {
		return fmt.Sprintf("only an exclusive or inclusive gateway holds a token waiting for %q", td.Wait)
	}
	switch n.Kind {
	case model.KindEndEvent:
		switch td.Wait {
		case WaitJob, WaitIncident:
			return ""
		case WaitEvent, WaitScope:
			if td.Raising || n.HasEvent(model.EventCompensation) {
				return ""
			}
		}
		return fmt.Sprintf("an end event holds no token waiting for %q", td.Wait)
	case model.KindParallelGateway, model.KindInclusiveGateway, model.KindComplexGateway:
		if plan.nodes[n.Index].join && td.Wait != WaitJoin && td.Wait != WaitIncident {
			return fmt.Sprintf("a join holds no token waiting for %q", td.Wait)
		}
	}
	return ""
}

// checkTimer checks that a timer falls due inside the clock's range, and
// so do its repetitions: a period not negative, firings left not below
// -1 (unbounded), and the last repetition before clock.Max.
func checkTimer(due time.Time, period time.Duration, left int) error {
	if err := clock.CheckRange(due); err != nil {
		return fmt.Errorf("timer due: %w", err)
	}
	if period < 0 {
		return fmt.Errorf("timer period %s is negative", period)
	}
	if left < -1 {
		return fmt.Errorf("timer firings left %d is below -1", left)
	}
	if left > 1 && period > 0 {
		if room := clock.Max.Sub(due); time.Duration(left-1) > room/period {
			return fmt.Errorf("timer: the last of %d repetitions, every %s from %s, falls after %s: %w",
				left, period, due.UTC().Format(time.RFC3339Nano), clock.Max.Format(time.RFC3339Nano), clock.ErrOutOfRange)
		}
	}
	return nil
}
