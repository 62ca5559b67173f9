package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builder builds a process in tests without going through XML.
type builder struct {
	p *Process
}

func newBuilder(id string) *builder {
	return &builder{p: &Process{ID: id, Executable: true}}
}

// node adds a node; parent may be nil.
func (b *builder) node(id string, k Kind, parent *Node, events ...*EventDefinition) *Node {
	n := &Node{ID: id, Kind: k, Parent: parent, Events: events, CancelActivity: true}
	b.p.Nodes = append(b.p.Nodes, n)
	if parent == nil {
		b.p.Top = append(b.p.Top, n)
	} else {
		parent.Children = append(parent.Children, n)
	}
	return n
}

// flow connects two nodes, with an optional condition.
func (b *builder) flow(id string, from, to *Node, cond string) *Flow {
	f := &Flow{ID: id, Source: from, Target: to, Condition: Expression{Text: cond}}
	from.Outgoing = append(from.Outgoing, f)
	to.Incoming = append(to.Incoming, f)
	b.p.Flows = append(b.p.Flows, f)
	return f
}

// attach makes n a boundary event of a.
func attach(n, a *Node) {
	n.AttachedTo = a
	a.Boundaries = append(a.Boundaries, n)
}

func msg(m *Message) *EventDefinition { return &EventDefinition{Kind: EventMessage, Message: m} }
func timer(d string) *EventDefinition {
	return &EventDefinition{Kind: EventTimer, Timer: &Timer{Duration: Expression{Text: d}}}
}
func signal() *EventDefinition { return &EventDefinition{Kind: EventSignal, Signal: &Signal{ID: "s"}} }

// defs wraps processes, indexing them.
func defs(t *testing.T, ps ...*Process) *Definitions {
	t.Helper()
	for _, p := range ps {
		require.NoError(t, p.Index())
	}
	return &Definitions{Processes: ps}
}

// linear returns a valid start → task → end process and its nodes.
func linear(id string) (*builder, *Node, *Node, *Node) {
	b := newBuilder(id)
	s := b.node(id+"_start", KindStartEvent, nil)
	t := b.node(id+"_task", KindServiceTask, nil)
	e := b.node(id+"_end", KindEndEvent, nil)
	b.flow(id+"_f1", s, t, "")
	b.flow(id+"_f2", t, e, "")
	return b, s, t, e
}

// problems unpacks Validate's error.
func problems(t *testing.T, err error) []*Problem {
	t.Helper()
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]*Problem, 0, len(errs))
	for _, e := range errs {
		var p *Problem
		require.True(t, errors.As(e, &p), "%T is not a *Problem", e)
		out = append(out, p)
	}
	return out
}

func TestValidate_Valid(t *testing.T) {
	b, _, task, _ := linear("p")
	// A task without outgoing flows is an implicit end; a catch-all error
	// boundary (nil Error) is fine.
	extra := b.node("implicitEnd", KindTask, nil)
	bnd := b.node("catchAll", KindBoundaryEvent, nil, &EventDefinition{Kind: EventError})
	attach(bnd, task)
	b.flow("fb", bnd, extra, "")
	// A message throw without a message is allowed when a worker sends it.
	thr := b.node("throw", KindIntermediateThrowEvent, nil, &EventDefinition{Kind: EventMessage})
	thr.Job = &JobDefinition{Type: Expression{Text: "send"}}
	b.flow("ft", extra, thr, "")
	b.flow("fte", thr, b.node("end2", KindEndEvent, nil), "")
	require.NoError(t, Validate(defs(t, b.p)))
}

func TestValidate_Rules(t *testing.T) {
	tests := []struct {
		name    string
		build   func() *Process
		element string
		ruleID  string
		rule    string // a prefix of the message
	}{
		{"no start event", func() *Process {
			b := newBuilder("p")
			b.node("t", KindTask, nil)
			return b.p
		}, "p", "FT.start", "process has no start event"},
		{"only an error start at top level", func() *Process {
			b := newBuilder("p")
			s := b.node("s", KindStartEvent, nil, &EventDefinition{Kind: EventError})
			b.flow("f", s, b.node("e", KindEndEvent, nil), "")
			return b.p
		}, "p", "EXT.098", "process has no none, message, signal, timer or conditional start event"},
		{"unreachable task", func() *Process {
			b, _, _, e := linear("p")
			lone := b.node("lone", KindTask, nil)
			b.flow("fx", lone, e, "")
			return b.p
		}, "lone", "EXT.150", "not reachable from any start event"},
		{"unreachable cycle", func() *Process {
			b, _, _, _ := linear("p")
			x := b.node("x", KindTask, nil)
			y := b.node("y", KindTask, nil)
			b.flow("fxy", x, y, "")
			b.flow("fyx", y, x, "")
			return b.p
		}, "x", "FT.reachable", "not reachable from any start event"},
		{"link catch name used twice in a scope", func() *Process {
			b, _, task, e := linear("p")
			thr := b.node("throw", KindIntermediateThrowEvent, nil, &EventDefinition{Kind: EventLink, LinkName: "L"})
			b.flow("ft", task, thr, "")
			c1 := b.node("c1", KindIntermediateCatchEvent, nil, &EventDefinition{Kind: EventLink, LinkName: "L"})
			c2 := b.node("c2", KindIntermediateCatchEvent, nil, &EventDefinition{Kind: EventLink, LinkName: "L"})
			b.flow("f1", c1, e, "")
			b.flow("f2", c2, e, "")
			return b.p
		}, "c2", "FT.link-name", `link catch event "L" is defined twice in its scope (also c1)`},
		{"link without a name", func() *Process {
			b, _, task, e := linear("p")
			thr := b.node("throw", KindIntermediateThrowEvent, nil, &EventDefinition{Kind: EventLink})
			b.flow("ft", task, thr, "")
			c := b.node("c", KindIntermediateCatchEvent, nil, &EventDefinition{Kind: EventLink})
			b.flow("f1", c, e, "")
			return b.p
		}, "c", "FT.link-name", "link event has no name"},
		{"gateway without outgoing", func() *Process {
			b, _, task, _ := linear("p")
			g := b.node("g", KindExclusiveGateway, nil)
			b.flow("fg", task, g, "")
			return b.p
		}, "g", "EXT.151", "gateway has no outgoing flow"},
		{"gateway without incoming", func() *Process {
			b, s, _, e := linear("p")
			g := b.node("g", KindParallelGateway, nil)
			b.flow("fg", g, e, "")
			_ = s
			return b.p
		}, "g", "EXT.150", "gateway has no incoming flow"},
		{"exclusive unconditioned flow", func() *Process {
			b := newBuilder("p")
			s := b.node("s", KindStartEvent, nil)
			g := b.node("g", KindExclusiveGateway, nil)
			b.flow("f0", s, g, "")
			b.flow("f1", g, b.node("e1", KindEndEvent, nil), "= x > 1")
			b.flow("f2", g, b.node("e2", KindEndEvent, nil), "")
			return b.p
		}, "g", "FT.condition", "exclusive gateway: flow f2 has no condition and is not the default flow"},
		{"default not outgoing", func() *Process {
			b, _, task, _ := linear("p")
			task.Default = b.p.Flows[0]
			return b.p
		}, "p_task", "EXT.026", "default flow p_f1 is not an outgoing flow of the element"},
		{"default with condition", func() *Process {
			b := newBuilder("p")
			s := b.node("s", KindStartEvent, nil)
			g := b.node("g", KindExclusiveGateway, nil)
			b.flow("f0", s, g, "")
			b.flow("f1", g, b.node("e1", KindEndEvent, nil), "= a")
			g.Default = b.flow("f2", g, b.node("e2", KindEndEvent, nil), "= b")
			return b.p
		}, "g", "FT.default-condition", "default flow f2 must not have a condition"},
		{"default on parallel gateway", func() *Process {
			b := newBuilder("p")
			s := b.node("s", KindStartEvent, nil)
			g := b.node("g", KindParallelGateway, nil)
			b.flow("f0", s, g, "")
			g.Default = b.flow("f1", g, b.node("e1", KindEndEvent, nil), "")
			return b.p
		}, "g", "XSD.default", "default flow f1 is not allowed on a parallelGateway"},
		{"start with incoming", func() *Process {
			b, s, task, _ := linear("p")
			b.flow("back", task, s, "")
			return b.p
		}, "p_start", "EXT.096", "start event must not have incoming flows"},
		{"end with outgoing", func() *Process {
			b, _, task, e := linear("p")
			b.flow("fwd", e, task, "")
			return b.p
		}, "p_end", "EXT.104", "end event must not have outgoing flows"},
		{"boundary not on activity", func() *Process {
			b, s, _, e := linear("p")
			bnd := b.node("b", KindBoundaryEvent, nil, timer("PT1M"))
			attach(bnd, s)
			b.flow("fb", bnd, e, "")
			return b.p
		}, "b", "REF.87", "boundary event must be attached to an activity"},
		{"boundary unattached", func() *Process {
			b, _, _, e := linear("p")
			bnd := b.node("b", KindBoundaryEvent, nil, timer("PT1M"))
			b.flow("fb", bnd, e, "")
			return b.p
		}, "b", "REF.87", "boundary event must be attached to an activity"},
		{"boundary with incoming", func() *Process {
			b, _, task, e := linear("p")
			bnd := b.node("b", KindBoundaryEvent, nil, timer("PT1M"))
			attach(bnd, task)
			b.flow("fb", bnd, e, "")
			b.flow("fin", task, bnd, "")
			return b.p
		}, "b", "EXT.112", "boundary event must not have incoming flows"},
		{"boundary without outgoing", func() *Process {
			b, _, task, _ := linear("p")
			attach(b.node("b", KindBoundaryEvent, nil, timer("PT1M")), task)
			return b.p
		}, "b", "EXT.113", "boundary event needs an outgoing flow"},
		{"timer without value", func() *Process {
			b, _, task, e := linear("p")
			bnd := b.node("b", KindBoundaryEvent, nil, &EventDefinition{Kind: EventTimer, Timer: &Timer{}})
			attach(bnd, task)
			b.flow("fb", bnd, e, "")
			return b.p
		}, "b", "EXT.131", "timer event definition needs exactly one of timeDate, timeDuration or timeCycle"},
		{"timer with two values", func() *Process {
			b, _, task, e := linear("p")
			bnd := b.node("b", KindBoundaryEvent, nil, &EventDefinition{Kind: EventTimer, Timer: &Timer{Date: Expression{Text: "2030-01-01T00:00:00Z"}, Cycle: Expression{Text: "R/PT1H"}}})
			attach(bnd, task)
			b.flow("fb", bnd, e, "")
			return b.p
		}, "b", "EXT.131", "timer event definition needs exactly one of timeDate, timeDuration or timeCycle"},
		{"message catch without message", func() *Process {
			b, _, task, e := linear("p")
			c := b.node("c", KindIntermediateCatchEvent, nil, msg(nil))
			b.flow("f3", task, c, "")
			b.flow("f4", c, e, "")
			return b.p
		}, "c", "EXT.127", "message catch event needs a message"},
		{"receive task without message", func() *Process {
			b, _, task, e := linear("p")
			r := b.node("r", KindReceiveTask, nil, msg(nil))
			b.flow("f3", task, r, "")
			b.flow("f4", r, e, "")
			return b.p
		}, "r", "EXT.127", "receive task needs a message"},
		{"flow crossing a sub-process", func() *Process {
			b, _, task, _ := linear("p")
			sub := b.node("sub", KindSubProcess, nil)
			inner := b.node("inner", KindTask, sub)
			b.flow("f3", task, sub, "")
			b.flow("cross", inner, task, "")
			return b.p
		}, "cross", "EXT.152", "sequence flow cross crosses a sub-process boundary (from inner to p_task)"},
		{"intermediate catch without definition", func() *Process {
			b, _, task, e := linear("p")
			c := b.node("c", KindIntermediateCatchEvent, nil)
			b.flow("f3", task, c, "")
			b.flow("f4", c, e, "")
			return b.p
		}, "c", "EXT.148", "intermediate catch event needs an event definition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := problems(t, Validate(defs(t, tt.build())))
			require.NotEmpty(t, ps)
			assert.True(t, slices.ContainsFunc(ps, func(p *Problem) bool {
				return p.ProcessID == "p" && p.ElementID == tt.element && p.RuleID == tt.ruleID && strings.HasPrefix(p.Rule, tt.rule)
			}), "want %s %s %q, got %v", tt.element, tt.ruleID, tt.rule, ps)
		})
	}
}

// eventGateway builds start → gate, and the arms make adds.
func eventGateway(arms func(b *builder, g *Node)) *Process {
	b := newBuilder("p")
	s := b.node("s", KindStartEvent, nil)
	g := b.node("g", KindEventBasedGateway, nil)
	b.flow("f0", s, g, "")
	arms(b, g)
	return b.p
}

// arm adds gate → n → end.
func arm(b *builder, g *Node, n *Node) {
	b.flow("to_"+n.ID, g, n, "")
	b.flow("from_"+n.ID, n, b.node("end_"+n.ID, KindEndEvent, nil), "")
}

func TestValidate_EventBasedGateway(t *testing.T) {
	m := &Message{ID: "m", Name: "m"}
	tests := []struct {
		name  string
		build func(b *builder, g *Node)
		rule  string // empty: valid
	}{
		{"message and timer", func(b *builder, g *Node) {
			arm(b, g, b.node("c1", KindIntermediateCatchEvent, nil, msg(m)))
			arm(b, g, b.node("c2", KindIntermediateCatchEvent, nil, timer("PT1H")))
		}, ""},
		{"receive task, timer and signal mix", func(b *builder, g *Node) {
			arm(b, g, b.node("r", KindReceiveTask, nil, msg(m)))
			arm(b, g, b.node("c2", KindIntermediateCatchEvent, nil, timer("PT1H")))
			arm(b, g, b.node("c3", KindIntermediateCatchEvent, nil, signal()))
		}, ""},
		{"FR-6a one arm", func(b *builder, g *Node) {
			arm(b, g, b.node("c1", KindIntermediateCatchEvent, nil, msg(m)))
		}, "event-based gateway needs at least two outgoing flows"},
		{"FR-6b task arm", func(b *builder, g *Node) {
			arm(b, g, b.node("c1", KindIntermediateCatchEvent, nil, msg(m)))
			arm(b, g, b.node("t", KindTask, nil))
		}, "event-based gateway: flow to_t leads to t, which is not an intermediate message, timer or signal catch event or a receive task"},
		{"FR-6b conditional arm", func(b *builder, g *Node) {
			arm(b, g, b.node("c1", KindIntermediateCatchEvent, nil, msg(m)))
			arm(b, g, b.node("c2", KindIntermediateCatchEvent, nil, &EventDefinition{Kind: EventConditional, Condition: Expression{Text: "x"}}))
		}, "event-based gateway: flow to_c2 leads to c2, which is not an intermediate message, timer or signal catch event or a receive task"},
		{"FR-6c arm with two incoming", func(b *builder, g *Node) {
			c1 := b.node("c1", KindIntermediateCatchEvent, nil, msg(m))
			arm(b, g, c1)
			arm(b, g, b.node("c2", KindIntermediateCatchEvent, nil, timer("PT1H")))
			b.flow("extra", b.p.Top[0], c1, "")
		}, "event-based gateway: c1 must have exactly one incoming flow (from the gateway)"},
		{"FR-6d condition on arm", func(b *builder, g *Node) {
			arm(b, g, b.node("c1", KindIntermediateCatchEvent, nil, msg(m)))
			arm(b, g, b.node("c2", KindIntermediateCatchEvent, nil, timer("PT1H")))
			g.Outgoing[0].Condition = Expression{Text: "= true"}
		}, "event-based gateway: flow to_c1 must not have a condition"},
		{"FR-6e boundary on receive task", func(b *builder, g *Node) {
			r := b.node("r", KindReceiveTask, nil, msg(m))
			arm(b, g, r)
			arm(b, g, b.node("c2", KindIntermediateCatchEvent, nil, timer("PT1H")))
			bnd := b.node("bt", KindBoundaryEvent, nil, timer("PT5M"))
			attach(bnd, r)
			b.flow("fbt", bnd, b.node("ebt", KindEndEvent, nil), "")
		}, "event-based gateway: receive task r must not have boundary events"},
		{"FR-7 message catch and receive task", func(b *builder, g *Node) {
			arm(b, g, b.node("c1", KindIntermediateCatchEvent, nil, msg(m)))
			arm(b, g, b.node("r", KindReceiveTask, nil, msg(m)))
		}, "event-based gateway: message catch events and receive tasks must not be mixed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := eventGateway(tt.build)
			ps := problems(t, Validate(defs(t, p)))
			if tt.rule == "" {
				assert.Empty(t, ps)
				return
			}
			assert.True(t, slices.ContainsFunc(ps, func(p *Problem) bool {
				return p.ProcessID == "p" && p.ElementID == "g" && strings.HasPrefix(p.Rule, tt.rule) && strings.HasPrefix(p.RuleID, "EXT.1")
			}), "want %q, got %v", tt.rule, ps)
		})
	}
}

func TestCheck_Warnings(t *testing.T) {
	t.Run("unconditioned flow beside a default", func(t *testing.T) {
		b := newBuilder("p")
		s := b.node("s", KindStartEvent, nil)
		g := b.node("g", KindInclusiveGateway, nil)
		b.flow("f0", s, g, "")
		g.Default = b.flow("f1", g, b.node("e1", KindEndEvent, nil), "")
		g.Default.IsDefault = true
		b.flow("f2", g, b.node("e2", KindEndEvent, nil), "")
		errs, warnings := Check(defs(t, b.p))
		assert.Empty(t, errs)
		require.Len(t, warnings, 1)
		assert.Equal(t, "FT.unconditioned-flow", warnings[0].RuleID)
		assert.Equal(t, "g", warnings[0].ElementID)
	})
	t.Run("non-executable process beside an executable one", func(t *testing.T) {
		a, _, _, _ := linear("a")
		b, _, _, _ := linear("b")
		b.p.Executable = false
		errs, warnings := Check(defs(t, a.p, b.p))
		assert.Empty(t, errs)
		assert.Equal(t, []*Problem{{RuleID: "FT.non-executable", ProcessID: "b", ElementID: "b",
			Rule: `process is not executable and is not deployed: set isExecutable="true" if it should run`}}, warnings)
	})
	t.Run("a valid model has none", func(t *testing.T) {
		b, _, _, _ := linear("p")
		errs, warnings := Check(defs(t, b.p))
		assert.Empty(t, errs)
		assert.Empty(t, warnings)
	})
}

func TestCheck_SortedByPosition(t *testing.T) {
	b := newBuilder("p")
	b.node("z", KindExclusiveGateway, nil)
	b.node("a", KindParallelGateway, nil)
	b.p.Executable = false
	d := defs(t, b.p)
	d.Positions = map[string]Position{"z": {Line: 3, Column: 5}, "a": {Line: 7, Column: 5}}
	errs, _ := Check(d)
	got := make([]string, len(errs))
	for i, p := range errs {
		got[i] = fmt.Sprintf("%d:%d %s %s", p.Pos.Line, p.Pos.Column, p.ElementID, p.RuleID)
	}
	assert.Equal(t, []string{"3:5 z EXT.150", "3:5 z EXT.151", "7:5 a EXT.150", "7:5 a EXT.151"}, got)
}

func TestValidate_DuplicateIDsAcrossProcesses(t *testing.T) {
	a, _, _, _ := linear("a")
	b, _, _, _ := linear("b")
	b.p.Nodes[1].ID = "a_task"
	ps := problems(t, Validate(defs(t, a.p, b.p)))
	assert.Equal(t, []*Problem{{RuleID: "XSD.id", ProcessID: "b", ElementID: "a_task", Rule: "duplicate id: also used in process a; give every element its own id"}}, ps)
}

func TestValidate_Reachability(t *testing.T) {
	t.Run("event sub-process, boundary path, link and nested sub-process", func(t *testing.T) {
		b, _, task, e := linear("p")
		// Boundary path.
		bnd := b.node("b", KindBoundaryEvent, nil, timer("PT1M"))
		attach(bnd, task)
		after := b.node("afterBoundary", KindTask, nil)
		b.flow("fb", bnd, after, "")
		// Link throw → catch.
		thr := b.node("throw", KindIntermediateThrowEvent, nil, &EventDefinition{Kind: EventLink, LinkName: "L"})
		b.flow("ft", after, thr, "")
		catch := b.node("catch", KindIntermediateCatchEvent, nil, &EventDefinition{Kind: EventLink, LinkName: "L"})
		b.flow("fc", catch, e, "")
		// Event sub-process: reached from its own start.
		evsp := b.node("evsp", KindSubProcess, nil)
		evsp.TriggeredByEvent = true
		es := b.node("evspStart", KindStartEvent, evsp, msg(&Message{ID: "m"}))
		b.flow("fe", es, b.node("evspEnd", KindEndEvent, evsp), "")
		require.NoError(t, Validate(defs(t, b.p)))
	})
	t.Run("sub-process without start event runs nodes without incoming flows", func(t *testing.T) {
		b, s, _, _ := linear("p")
		sub := b.node("sub", KindSubProcess, nil)
		b.flow("fs", s, sub, "")
		b.node("inner", KindTask, sub)
		require.NoError(t, Validate(defs(t, b.p)))
	})
	t.Run("content of an unreachable sub-process is not reported twice", func(t *testing.T) {
		b, _, _, _ := linear("p")
		sub := b.node("sub", KindSubProcess, nil)
		b.node("inner", KindTask, sub)
		ps := problems(t, Validate(defs(t, b.p)))
		require.Len(t, ps, 1)
		assert.Equal(t, "sub", ps[0].ElementID)
		assert.Equal(t, "EXT.150", ps[0].RuleID)
	})
	t.Run("non-executable process is not checked for starts", func(t *testing.T) {
		b := newBuilder("p")
		b.p.Executable = false
		b.node("t", KindTask, nil)
		require.NoError(t, Validate(defs(t, b.p)))
	})
}

func TestValidate_Sorted(t *testing.T) {
	b := newBuilder("p")
	b.node("z", KindExclusiveGateway, nil)
	b.node("a", KindParallelGateway, nil)
	b.p.Executable = false
	ps := problems(t, Validate(defs(t, b.p)))
	got := make([]string, len(ps))
	for i, p := range ps {
		got[i] = p.ElementID + ": " + p.Rule
	}
	assert.Equal(t, []string{
		"a: gateway has no incoming flow: connect a flow to it",
		"a: gateway has no outgoing flow: connect it to the node that follows",
		"z: gateway has no incoming flow: connect a flow to it",
		"z: gateway has no outgoing flow: connect it to the node that follows",
	}, got)
}
