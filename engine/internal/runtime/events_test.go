package runtime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// SRD-027 T-3 / FR-5, park before register: a subscription that fires at
// once (a message buffered with a TTL correlates inside the subscribe call)
// must find its token already parked in the loop's view, or the delivery
// would be dropped as one to a token that is not waiting. The hook sees the
// delivery on the loop goroutine, inside that call, so it fails when
// subscribing is moved before parking, for every kind of wait that opens a
// message subscription.
func TestInboundDelivery_T3_ParkBeforeRegister(t *testing.T) {
	msg := &model.Message{Name: "go"}
	catch := func(id, kind string) func(g *graph) {
		return func(g *graph) {
			n := g.nodes[id]
			if kind == "boundary" {
				b := &model.Node{ID: id + "_b", Kind: model.KindBoundaryEvent, AttachedTo: n, CancelActivity: true,
					Events: []*model.EventDefinition{{Kind: model.EventMessage, Message: msg}}}
				n.Boundaries = append(n.Boundaries, b)
				g.nodes[b.ID] = b
				g.p.Nodes = append(g.p.Nodes, b)
				g.p.Top = append(g.p.Top, b)
				return
			}
			n.Events = []*model.EventDefinition{{Kind: model.EventMessage, Message: msg}}
		}
	}
	for _, tc := range []struct {
		name  string
		kind  string
		setup func(g *graph)
	}{
		{"message catch", "intermediateCatchEvent", catch("wait", "")},
		{"receive task", "receiveTask", catch("wait", "")},
		{"message boundary of a job task", "serviceTask", catch("wait", "boundary")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGraph(t, "p").node("s:startEvent", "wait:"+tc.kind, "end:endEvent")
			tc.setup(g)
			g.flow("s>wait", "wait>end")
			if g.nodes["wait_b"] != nil {
				g.flow("wait_b>end")
			}
			plan := g.plan(CompileOptions{})
			e := testEngine(t)
			deliveries, parked := 0, 0
			e.posted = func(inst *Instance, m report) {
				if m.kind != evDeliver {
					return
				}
				// Only the loop posts here in this test (the message was
				// published before the instance started), so its state
				// is read on its own goroutine.
				deliveries++
				for _, tv := range inst.tokens {
					if tv.node.ID == "wait" && tv.parked {
						parked++
					}
				}
			}
			_, err := e.PublishMessage("go", "", nil, time.Minute, "")
			require.NoError(t, err)
			inst := run(t, e, plan, nil)
			require.Equal(t, 1, deliveries, "the buffered message fired inside the subscribe call")
			assert.Equal(t, 1, parked, "the token was parked before its subscription opened")
			st, _ := inst.Wait(ctxT(t))
			assert.Equal(t, Completed, st)
		})
	}
}
