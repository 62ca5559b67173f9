package runtime

import (
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// A multi-instance activity's behavior says which events it throws as
// its inner instances complete (BPMN 2.0 §10.2.8): All (the default)
// none; None the event noneBehaviorEventRef names as each completes; One
// the event oneBehaviorEventRef names as the first completes; Complex the
// event of every complexBehaviorDefinition whose condition holds as each
// completes (it sees the instance's variables and the counters the
// completion condition sees). The event is thrown from the activity, so
// its boundary events are the first to catch it: a signal is broadcast
// (its boundary signal events, like every other catch of its name, get
// it), an escalation is raised at the activity (its escalation boundary
// events, then the enclosing scopes'). The spec's default for None and
// One without a reference, a signal carrying the activity's attributes,
// has no name any catch could wait for: flowtrack throws nothing then.

// behaviorSpec is a compiled multi-instance behavior.
type behaviorSpec struct {
	kind    string // "None", "One", "Complex"; empty for All
	event   *implicitThrow
	complex []complexThrow
}

// complexThrow is one complexBehaviorDefinition.
type complexThrow struct {
	cond  *expr.Program
	event *implicitThrow // nil: it throws nothing
}

// implicitThrow is an event a multi-instance activity throws.
type implicitThrow struct {
	kind model.EventKind
	// name is a signal's name, or an escalation's code.
	name string
}

func compileBehavior(mi *model.MultiInstance, opts CompileOptions) (behaviorSpec, error) {
	var bs behaviorSpec
	var err error
	switch mi.Behavior {
	case "", "All":
		return bs, nil
	case "None":
		bs.event, err = compileImplicitThrow(mi.NoneEvent, "noneBehaviorEventRef")
	case "One":
		bs.event, err = compileImplicitThrow(mi.OneEvent, "oneBehaviorEventRef")
	case "Complex":
		for i, cb := range mi.ComplexBehaviors {
			if cb.Condition.IsZero() {
				return bs, broke("FT.multi-instance", "complexBehaviorDefinition %d needs a condition: add one", i+1)
			}
			ct := complexThrow{}
			if ct.cond, err = expr.Compile(cb.Condition, expr.Condition, opts.Expr); err != nil {
				return bs, fmt.Errorf("complexBehaviorDefinition %d condition: %w", i+1, err)
			}
			if ct.event, err = compileImplicitThrow(cb.Event, fmt.Sprintf("complexBehaviorDefinition %d event", i+1)); err != nil {
				return bs, err
			}
			bs.complex = append(bs.complex, ct)
		}
	default:
		return bs, broke("FT.multi-instance", "multi-instance behavior %q is none of All, None, One, Complex", mi.Behavior)
	}
	bs.kind = mi.Behavior
	return bs, err
}

func compileImplicitThrow(d *model.EventDefinition, where string) (*implicitThrow, error) {
	if d == nil {
		return nil, nil
	}
	switch d.Kind {
	case model.EventSignal:
		if d.Signal == nil || d.Signal.Name == "" {
			return nil, broke("FT.multi-instance", "the signal of %s needs a name: set signalRef to a bpmn:signal with a name", where)
		}
		return &implicitThrow{kind: d.Kind, name: d.Signal.Name}, nil
	case model.EventEscalation:
		t := &implicitThrow{kind: d.Kind}
		if d.Escalation != nil {
			t.name = d.Escalation.Code
		}
		return t, nil
	}
	return nil, broke("FT.unsupported", "unsupported: %s throws a %s event: a multi-instance activity's behavior throws signals and escalations", where, d.Kind)
}

// throwBehavior throws the events the behavior of multi-instance activity
// n calls for as tv's inner instance completes; vars are what the
// completion condition saw. An interrupting catch of one of them
// withdraws tv (and the events after it are not thrown).
func (inst *Instance) throwBehavior(tv *tokenView, n *model.Node, vars map[string]any) error {
	mb := tv.scope.parent.multi
	bs := &mb.spec.behavior
	var events []*implicitThrow
	switch bs.kind {
	case "None":
		events = append(events, bs.event)
	case "One":
		if !mb.thrownOne {
			mb.thrownOne = true
			events = append(events, bs.event)
		}
	case "Complex":
		for i, ct := range bs.complex {
			ok, err := ct.cond.EvalBool(vars)
			if err != nil {
				return fmt.Errorf("multi-instance complexBehaviorDefinition %d condition: %w", i+1, err)
			}
			if ok {
				events = append(events, ct.event)
			}
		}
	}
	owner := inst.tokens[tv.scope.parent.token]
	for _, ev := range events {
		if ev == nil || tv.doomed {
			continue
		}
		switch ev.kind {
		case model.EventSignal:
			if err := inst.eng.broadcastSignal(ev.name, nil, inst.causeOf()); err != nil {
				return fmt.Errorf("signal thrown by multi-instance behavior at element %s: %w", n.ID, err)
			}
			inst.record(Event{Type: SignalBroadcast, ElementID: n.ID, TokenID: tv.id, Name: ev.name})
			for _, m := range inst.takeMail(false) {
				inst.handle(m) // its own catches get it first, as a throw event's
			}
		case model.EventEscalation:
			inst.record(Event{Type: EscalationThrown, ElementID: n.ID, TokenID: tv.id, Name: ev.name})
			if caught, _ := inst.catch(owner, n, model.EventEscalation, ev.name, "", true, nil); !caught && inst.parent != nil {
				inst.postRaise(model.EventEscalation, ev.name, "", nil, 0)
			}
		}
	}
	return nil
}
