package runtime

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orDiamond: split → a, b, c (conditions on variables) → join → end; b's
// branch waits for a job so the join must wait for it.
func orDiamond(t *testing.T, split string) *Plan {
	return newGraph(t, "or").node("s:startEvent", "split:"+split, "a:task", "b:serviceTask", "c:task",
		"join:inclusiveGateway", "end:endEvent").
		flow("s>split", "split>a?= a", "split>b?= b", "split>c?= c", "a>join", "b>join", "c>join", "join>end").
		plan(CompileOptions{})
}

func TestInclusiveJoin_Diamond(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vars    map[string]any
		merged  int
		withJob bool
	}{
		{"all branches", map[string]any{"a": true, "b": true, "c": true}, 2, true},
		{"some branches", map[string]any{"a": true, "b": false, "c": true}, 1, false},
		{"one branch", map[string]any{"a": false, "b": false, "c": true}, 0, false},
		{"job branch and another", map[string]any{"a": true, "b": true, "c": false}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testEngine(t)
			inst := run(t, e, orDiamond(t, "inclusiveGateway"), tc.vars)
			if tc.withJob {
				assert.Equal(t, Active, inst.State(), "the join waits for the branch still at its job")
				toks, _ := inst.Tokens(ctxT(t))
				require.Contains(t, toks, Token{ID: 1, ElementID: "join", Waiting: WaitJoin})
				jobs := e.Jobs(JobFilter{})
				require.Len(t, jobs, 1)
				require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, nil))
			}
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, Completed, st)
			merged, joinLeft := 0, 0
			for _, ev := range inst.History() {
				if ev.Type == TokenMerged {
					merged++
				}
				if ev.Type == ElementLeft && ev.ElementID == "join" {
					joinLeft++
				}
			}
			assert.Equal(t, tc.merged, merged)
			assert.Equal(t, 1, joinLeft, "the join fires once")
		})
	}
}

func TestInclusiveJoin_BranchThatDiesReleasesTheJoin(t *testing.T) {
	e := testEngine(t)
	// b's branch may end before the join (x false): then the join must not
	// wait for it any more.
	plan := newGraph(t, "dies").node("s:startEvent", "split:parallelGateway", "a:task", "b:serviceTask",
		"x:exclusiveGateway", "dead:endEvent", "join:inclusiveGateway", "end:endEvent").
		flow("s>split", "split>a", "split>b", "a>join", "b>x", "x>join?= x", "x>dead!", "join>end").plan(CompileOptions{})
	inst := run(t, e, plan, map[string]any{"x": false})
	assert.Equal(t, Active, inst.State())
	require.NoError(t, e.CompleteJob(ctxT(t), e.Jobs(JobFilter{})[0].Key, nil))
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Completed, st)
	assert.Contains(t, left(inst), "dead")
	assert.Contains(t, left(inst), "join")
}

func TestInclusiveJoin_MixedPairs(t *testing.T) {
	for _, tc := range []struct{ split, join string }{
		{"exclusiveGateway", "inclusiveGateway"},
		{"parallelGateway", "inclusiveGateway"},
		{"inclusiveGateway", "parallelGateway"},
	} {
		t.Run(tc.split+"→"+tc.join, func(t *testing.T) {
			e := testEngine(t)
			plan := newGraph(t, "mix").node("s:startEvent", "split:"+tc.split, "a:task", "b:task", "join:"+tc.join, "end:endEvent").
				flow("s>split", "split>a?= true", "split>b?= "+fmt.Sprint(tc.split != "exclusiveGateway"), "a>join", "b>join", "join>end").
				plan(CompileOptions{})
			inst := run(t, e, plan, nil)
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, Completed, st)
			assert.Contains(t, left(inst), "join")
		})
	}
}

func TestInclusiveJoin_LoopThroughJoin(t *testing.T) {
	e := testEngine(t)
	// The token goes round join → work → back to join while n < 3.
	plan := newGraph(t, "loop").node("s:startEvent", "join:inclusiveGateway", "work:serviceTask", "again:exclusiveGateway", "end:endEvent").
		flow("s>join", "join>work", "work>again", "again>join?= n < 3", "again>end!").plan(CompileOptions{})
	inst := run(t, e, plan, map[string]any{"n": 0})
	for i := 1; i <= 3; i++ {
		jobs := e.Jobs(JobFilter{})
		require.Len(t, jobs, 1)
		require.NoError(t, e.CompleteJob(ctxT(t), jobs[0].Key, map[string]any{"n": i}))
		require.NoError(t, e.Settle(ctxT(t)))
	}
	st, _ := inst.Wait(ctxT(t))
	assert.Equal(t, Completed, st)
}

// TestInclusiveJoin_Stress repeats a diamond whose branches race onto the
// join; a token in transit onto the join must never let it fire early.
func TestInclusiveJoin_Stress(t *testing.T) {
	e := testEngine(t)
	plan := orDiamond(t, "inclusiveGateway")
	for i := range 300 {
		vars := map[string]any{"a": true, "b": false, "c": i%2 == 0}
		inst, err := e.Start(plan, vars)
		require.NoError(t, err)
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, Completed, st)
		joins := 0
		for _, ev := range inst.History() {
			if ev.Type == ElementLeft && ev.ElementID == "join" {
				joins++
			}
		}
		require.Equal(t, 1, joins, "round %d", i)
	}
}

// TestInclusiveJoin_TokenThatCanReachAFilledFlowIsNotWaitedFor: BPMN 2.0
// §13.4.3 (Table 13.3). The join holds a token on flow a>join; the token at
// slow can still reach the empty flow x>join, but it can also reach the
// filled flow a>join, so it cannot make a difference: the join fires
// without it. When it later arrives it activates the join again.
func TestInclusiveJoin_TokenThatCanReachAFilledFlowIsNotWaitedFor(t *testing.T) {
	for _, toA := range []bool{true, false} {
		t.Run(fmt.Sprint("toA=", toA), func(t *testing.T) {
			e := testEngine(t)
			plan := newGraph(t, "filled").node("s:startEvent", "fork:parallelGateway", "a:task", "slow:serviceTask",
				"x:exclusiveGateway", "join:inclusiveGateway", "after:userTask", "end:endEvent").
				flow("s>fork", "fork>a", "fork>slow", "slow>x", "x>a?= toA", "x>join!", "a>join", "join>after", "after>end").
				plan(CompileOptions{})
			inst := run(t, e, plan, map[string]any{"toA": toA})
			require.Len(t, e.Jobs(JobFilter{Type: "userTask"}), 1, "the join fired while slow still runs")
			require.NoError(t, e.CompleteJob(ctxT(t), e.Jobs(JobFilter{Type: "serviceTask"})[0].Key, nil))
			require.NoError(t, e.Settle(ctxT(t)))
			require.Len(t, e.Jobs(JobFilter{Type: "userTask"}), 2, "the late token activated the join again")
			for _, j := range e.Jobs(JobFilter{Type: "userTask"}) {
				require.NoError(t, e.CompleteJob(ctxT(t), j.Key, nil))
			}
			st, _ := inst.Wait(ctxT(t))
			assert.Equal(t, Completed, st)
		})
	}
}

// TestInclusiveWaits_Spec: the activation rule of BPMN 2.0 §13.4.3 (Table
// 13.3) as a pure function of the reach tables, the arrived tokens and the
// occupied nodes.
func TestInclusiveWaits_Spec(t *testing.T) {
	// diamond: fork → a, b → join. filled: the same, where b's token can
	// also go round to a (x chooses), so it can reach both incoming flows.
	// loop: the token after the join comes back on its second incoming flow.
	// A path that visits the join never counts, so a token can only be
	// waited for or excused by the first incoming flow it would reach.
	diamond := newGraph(t, "diamond").node("s:startEvent", "fork:parallelGateway", "a:task", "b:task",
		"join:inclusiveGateway", "end:endEvent").
		flow("s>fork", "fork>a", "fork>b", "a>join", "b>join", "join>end").plan(CompileOptions{})
	filled := newGraph(t, "filled").node("s:startEvent", "fork:parallelGateway", "a:task", "b:task",
		"x:exclusiveGateway", "join:inclusiveGateway", "end:endEvent").
		flow("s>fork", "fork>a", "fork>b", "b>x", "x>a?= toA", "x>join!", "a>join", "join>end").plan(CompileOptions{})
	loop := newGraph(t, "loop").node("s:startEvent", "join:inclusiveGateway", "work:task", "again:exclusiveGateway",
		"end:endEvent").
		flow("s>join", "join>work", "work>again", "again>join?= more", "again>end!").plan(CompileOptions{})
	for _, tc := range []struct {
		name     string
		plan     *Plan
		arrived  [][]int // per incoming flow of join, in document order
		occupied []string
		waits    bool
	}{
		{"no other token", diamond, [][]int{{1}, nil}, nil, false},
		{"a token upstream of the empty flow only", diamond, [][]int{{1}, nil}, []string{"b"}, true},
		{"a token upstream of the filled flow only", diamond, [][]int{{1}, nil}, []string{"a"}, false},
		{"a token that can reach both flows", diamond, [][]int{{1}, nil}, []string{"fork"}, false},
		{"every flow filled", diamond, [][]int{{1}, {2}}, []string{"s"}, false},
		{"a token that can also reach the filled flow", filled, [][]int{nil, {1}}, []string{"b"}, false},
		{"the same token, the other flow filled", filled, [][]int{{1}, nil}, []string{"b"}, false},
		{"tokens upstream of both flows", filled, [][]int{{1}, nil}, []string{"x", "s"}, false},
		{"one token excused, another not", diamond, [][]int{{1}, nil}, []string{"a", "b"}, true},
		{"a token on its way round the loop", loop, [][]int{{1}, nil}, []string{"work"}, true},
		{"the loop flow filled", loop, [][]int{nil, {1}}, []string{"work"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			join := tc.plan.Process.Node("join")
			occupied := map[int]bool{}
			for _, id := range tc.occupied {
				occupied[tc.plan.Process.Node(id).Index] = true
			}
			assert.Equal(t, tc.waits, inclusiveWaits(tc.plan.nodes[join.Index].reaches, tc.arrived, occupied))
		})
	}
}
