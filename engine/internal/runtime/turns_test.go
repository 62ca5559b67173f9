package runtime

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// fullTrace renders an instance's whole history as "type element token"
// lines.
func fullTrace(inst *Instance) []string {
	var out []string
	for _, ev := range inst.History() {
		out = append(out, fmt.Sprintf("%s %s %d", ev.Type, ev.ElementID, ev.TokenID))
	}
	return out
}

// TestTurns_OrderIsTheRule pins the order rule of turns.go on a fork of
// three branches of different lengths joined again: each token runs until
// it waits (here: arrives at the join), and the fork's other branches take
// their turns in flow order. Goroutine scheduling must not change one line,
// so the same history comes out of every one of many runs.
func TestTurns_OrderIsTheRule(t *testing.T) {
	plan := newGraph(t, "order").node("s:startEvent", "fork:parallelGateway", "a1:task", "a2:task", "b1:task", "c1:task", "c2:task", "c3:task",
		"join:parallelGateway", "end:endEvent").
		flow("s>fork", "fork>a1", "fork>b1", "fork>c1", "a1>a2", "a2>join", "b1>join", "c1>c2", "c2>c3", "c3>join", "join>end").
		plan(CompileOptions{})
	want := []string{
		"instanceStarted  0",
		"elementEntered s 1", "elementLeft s 1", "flowTaken s_fork 1", "elementEntered fork 1", "elementLeft fork 1",
		// The fork's token goes on along its first flow; the other branches
		// are entered at once and wait for their turns.
		"flowTaken fork_a1 1", "elementEntered a1 1",
		"flowTaken fork_b1 2", "elementEntered b1 2",
		"flowTaken fork_c1 3", "elementEntered c1 3",
		"elementLeft a1 1", "flowTaken a1_a2 1", "elementEntered a2 1", "elementLeft a2 1", "flowTaken a2_join 1",
		"elementLeft b1 2", "flowTaken b1_join 2",
		"elementLeft c1 3", "flowTaken c1_c2 3", "elementEntered c2 3", "elementLeft c2 3", "flowTaken c2_c3 3",
		"elementEntered c3 3", "elementLeft c3 3", "flowTaken c3_join 3",
		// The last arrival fires the join; its token goes on.
		"tokenMerged join 1", "tokenMerged join 2", "elementEntered join 3", "elementLeft join 3",
		"flowTaken join_end 3", "elementEntered end 3", "elementLeft end 3",
		"instanceCompleted  0",
	}
	e := testEngine(t)
	for i := range 200 {
		inst := run(t, e, plan, nil)
		st, _ := inst.Wait(ctxT(t))
		require.Equal(t, Completed, st)
		require.Equal(t, want, fullTrace(inst), "run %d", i+1)
	}
}
