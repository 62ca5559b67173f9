package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// complexPlan: a parallel split into three job branches a, b, c joined by a
// complex gateway with the given activation condition.
func complexPlan(t *testing.T, activation string) *Plan {
	g := newGraph(t, "complex").node("s:startEvent", "split:parallelGateway", "a:serviceTask", "b:serviceTask", "c:serviceTask",
		"join:complexGateway", "after:task", "end:endEvent").
		flow("s>split", "split>a", "split>b", "split>c", "a>join", "b>join", "c>join", "join>after", "after>end")
	g.nodes["join"].ActivationCondition = model.Expression{Text: activation}
	return g.plan(CompileOptions{})
}

func completeJobAt(t *testing.T, e *Engine, element string) {
	t.Helper()
	jobs := e.Jobs(JobFilter{ElementID: element})
	require.Len(t, jobs, 1, element)
	require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, nil))
	require.NoError(t, e.Settle(ctxT(t)))
}

func TestComplexGateway_FiresOnRuleThenAbsorbsTheRest(t *testing.T) {
	e := testEngine(t)
	inst := run(t, e, complexPlan(t, "activationCount >= 2"), nil)
	completeJobAt(t, e, "a")
	assert.NotContains(t, left(inst), "join", "one of three: the rule is not met yet")
	completeJobAt(t, e, "b")
	assert.Contains(t, left(inst), "after", "two of three: the join fires and the token goes on")
	completeJobAt(t, e, "c")
	st, _ := inst.Wait(ctxT(t))
	require.Equal(t, Completed, st)
	fired := 0
	for _, id := range left(inst) {
		if id == "after" {
			fired++
		}
	}
	assert.Equal(t, 1, fired, "the late token of the same activation is consumed without firing again")
}

func TestComplexGateway_AbortsWhenRuleCanNoLongerHold(t *testing.T) {
	e := testEngine(t)
	inst := run(t, e, complexPlan(t, "activationCount >= 4"), nil)
	for _, el := range []string{"a", "b", "c"} {
		completeJobAt(t, e, el)
	}
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Terminated, st, "an unsatisfiable rule terminates, it never completes")
	assert.Contains(t, inst.Message(), "can no longer become true")
	assert.Empty(t, e.Jobs(JobFilter{}))
}

func TestComplexGateway_WithoutRuleWaitsLikeAnInclusiveJoin(t *testing.T) {
	e := testEngine(t)
	inst := run(t, e, complexPlan(t, ""), nil)
	completeJobAt(t, e, "a")
	completeJobAt(t, e, "b")
	assert.NotContains(t, left(inst), "join")
	completeJobAt(t, e, "c")
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Completed, st)
}

// TestComplexGateway_Stress runs the fire-then-absorb path many times; the
// tokens race onto the join, so a spurious abort or a double fire would show.
func TestComplexGateway_Stress(t *testing.T) {
	e := testEngine(t)
	plan := newGraph(t, "cx").node("s:startEvent", "split:parallelGateway", "a:task", "b:task", "c:task",
		"join:complexGateway", "end:endEvent").
		flow("s>split", "split>a", "split>b", "split>c", "a>join", "b>join", "c>join", "join>end")
	plan.nodes["join"].ActivationCondition = model.Expression{Text: "activationCount >= 1"}
	p := plan.plan(CompileOptions{})
	for i := range 300 {
		inst, err := e.Start(p, nil)
		require.NoError(t, err)
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, Completed, st, "round %d: %s", i, inst.Message())
		ends := 0
		for _, id := range left(inst) {
			if id == "end" {
				ends++
			}
		}
		require.Equal(t, 1, ends, "round %d", i)
	}
}

// SRD-028 T-2: joinPositions is a pure function of the loop-owned maps.
func TestJoinPositions_T2_Pure(t *testing.T) {
	join := &model.Node{ID: "join", Index: 5}
	a := &model.Node{ID: "a", Index: 1}
	b := &model.Node{ID: "b", Index: 2}
	for _, tc := range []struct {
		name      string
		position  map[int]*model.Node
		parked    map[int]bool
		occupied  map[int]bool
		inTransit bool
	}{
		{"empty", map[int]*model.Node{}, nil, map[int]bool{}, false},
		{"on the join, not parked: in transit", map[int]*model.Node{1: join}, nil, map[int]bool{}, true},
		{"on the join and parked: arrived", map[int]*model.Node{1: join}, map[int]bool{1: true}, map[int]bool{}, false},
		{"elsewhere: occupied", map[int]*model.Node{1: a, 2: b}, nil, map[int]bool{1: true, 2: true}, false},
		{"mixed", map[int]*model.Node{1: a, 2: join, 3: join}, map[int]bool{3: true}, map[int]bool{1: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			occupied, inTransit := joinPositions(join, tc.position, tc.parked)
			assert.Equal(t, tc.occupied, occupied)
			assert.Equal(t, tc.inTransit, inTransit)
		})
	}
}

// loopOnly builds an instance whose loop state is driven directly through
// handle, without goroutines: the loop's view must follow reports alone.
func loopOnly(t *testing.T, plan *Plan) (*Instance, *tokenView) {
	// These tests watch the channel protocol of goroutine tracks.
	e := NewEngine(Options{Clock: clock.NewVirtual(clock.Epoch), Resumption: ResumeGoroutines})
	t.Cleanup(func() { require.NoError(t, e.Close(ctxT(t))) })
	inst := newInstance(e, plan, nil)
	tv := &tokenView{id: 1, ch: make(chan notice, 1), node: plan.Process.Node("s"), scope: inst.root}
	inst.tokens[1] = tv
	inst.nextToken = 1
	e.busy.add(1) // the token counts as running, as Start would count it
	t.Cleanup(func() { e.busy.add(-e.busy.n.Load()) })
	return inst, tv
}

// SRD-028 T-1: every move report updates the loop-owned position.
func TestLoopView_T1_MoveUpdatesPosition(t *testing.T) {
	plan := newGraph(t, "moves").node("s:startEvent", "a:task", "b:task", "end:endEvent").
		flow("s>a", "a>b", "b>end").plan(CompileOptions{})
	inst, tv := loopOnly(t, plan)
	p := plan.Process
	inst.handle(report{kind: evMoved, token: 1, node: p.Node("s"), flow: p.Node("s").Outgoing[0]})
	assert.Equal(t, "a", tv.node.ID)
	inst.handle(report{kind: evMoved, token: 1, node: p.Node("a"), flow: p.Node("a").Outgoing[0]})
	assert.Equal(t, "b", tv.node.ID)
	assert.Equal(t, map[int]*model.Node{1: p.Node("b")}, inst.positions(inst.root))
}

// SRD-028 T-8: an arrival reported while the instance stops records
// nothing and wakes the track to exit.
func TestLoopView_T8_ArrivalWhileStopping(t *testing.T) {
	plan := orDiamond(t, "inclusiveGateway")
	inst, tv := loopOnly(t, plan)
	join := plan.Process.Node("join")
	inst.stopping.Store(true)
	inst.handle(report{kind: evArrive, token: 1, node: join, flow: join.Incoming[0]})
	assert.Empty(t, inst.joins, "nothing is recorded at the join")
	_, open := <-tv.ch
	assert.False(t, open, "the track is told to exit")
}

// SRD-028 T-9, the merge race: two tokens arrive at a parallel join; the
// second arrival fires it, the first is merged away while its track is
// still parked. The merged track's report (its exit, sent after it reads
// the merge) must only forget the token: never record it terminated, nor
// touch the join or the survivor. Since tokens take turns (turns.go), the
// merged track has the turn first, so the survivor is set going only once
// that report is in; a report from a token the loop no longer knows is
// dropped.
func TestLoopView_T9_ReportOfMergedTokenIsDropped(t *testing.T) {
	plan := newGraph(t, "race").node("s:startEvent", "fork:parallelGateway", "a:task", "b:task",
		"join:parallelGateway", "end:endEvent").
		flow("s>fork", "fork>a", "fork>b", "a>join", "b>join", "join>end").plan(CompileOptions{})
	inst, first := loopOnly(t, plan)
	p := plan.Process
	join := p.Node("join")
	first.node = p.Node("a")
	second := &tokenView{id: 2, ch: make(chan notice, 1), node: p.Node("b"), scope: inst.root}
	inst.tokens[2] = second
	inst.nextToken = 2
	inst.root.live = 2
	inst.eng.busy.add(1)

	// receive is what the loop does with a track's report.
	inst.receive(report{kind: evMoved, token: 1, node: p.Node("a"), flow: join.Incoming[0]})
	inst.receive(report{kind: evArrive, token: 1, node: join, flow: join.Incoming[0]})
	inst.receive(report{kind: evMoved, token: 2, node: p.Node("b"), flow: join.Incoming[1]})
	inst.receive(report{kind: evArrive, token: 2, node: join, flow: join.Incoming[1]})
	require.Equal(t, notice{kind: merged}, <-first.ch, "the first arrival is merged away")
	assert.Empty(t, second.ch, "the survivor waits for its turn")
	assert.Empty(t, inst.joins, "the join fired and holds nothing")

	before := len(inst.history)
	inst.receive(report{kind: evExited, token: 1})
	assert.NotContains(t, inst.tokens, 1, "the merged token is forgotten")
	assert.Equal(t, before, len(inst.history), "nothing is recorded for it: it was merged, not terminated")
	require.True(t, inst.nextTurn())
	require.Equal(t, notice{kind: resume}, <-second.ch, "then the survivor goes on")
	inst.receive(report{kind: evMoved, token: 2, node: join, flow: join.Outgoing[0]})
	assert.Equal(t, "end", second.node.ID, "the survivor is untouched")
	assert.Equal(t, 1, inst.root.live)
	assert.NotPanics(t, func() { inst.receive(report{kind: evExited, token: 1}) }, "a second report finds no token")
	assert.Equal(t, 1, inst.root.live)
	merges := 0
	for _, ev := range inst.expandHistory() {
		if ev.Type == TokenMerged {
			merges++
			assert.Equal(t, 1, ev.TokenID)
		}
	}
	assert.Equal(t, 1, merges)
}
