package tally_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/tally"
)

// TestTally_Workload runs a known workload on an engine and checks every
// counter against what it did: three orders, one job failing into an
// incident, two messages correlated and one not, two timers, a cancel
// and a signal nobody catches.
func TestTally_Workload(t *testing.T) {
	ctx := context.Background()
	xml, err := os.ReadFile("testdata/shop.bpmn")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	tl, stop := tally.Subscribe(eng)
	defer stop()
	if _, err := eng.Deploy("shop.bpmn", xml); err != nil {
		t.Fatal(err)
	}
	var insts []*engine.Instance
	for _, id := range []string{"o1", "o2", "o3"} {
		inst, err := eng.Start(ctx, "shop", map[string]any{"orderId": id})
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, inst)
	}
	eng.Settle(ctx)
	jobs, err := eng.ActivateJobs(ctx, "charge", "w", time.Minute, 10)
	if err != nil || len(jobs) != 3 {
		t.Fatalf("activate: %d jobs, %v", len(jobs), err)
	}
	tl.AddJobsActivated("charge", len(jobs))
	for _, j := range jobs {
		if j.InstanceKey == insts[2].Key() {
			err = eng.FailJob(ctx, j.Key, 0, "card declined")
		} else {
			err = eng.CompleteJob(ctx, j.Key, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	eng.Settle(ctx)
	for _, key := range []string{"o1", "o2", "nobody"} {
		if err := eng.PublishMessage(ctx, engine.Message{Name: "paid", CorrelationKey: key}); err != nil {
			t.Fatal(err)
		}
		tl.AddMessagesPublished(1)
	}
	if err := eng.BroadcastSignal(ctx, "ping", nil); err != nil {
		t.Fatal(err)
	}
	tl.AddSignalsBroadcast(1)
	eng.Settle(ctx)
	if err := eng.Advance(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := insts[2].Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	eng.Settle(ctx)

	c := tl.Counts()
	if got, want := c.Processes["shop"], (tally.ProcessCounts{Started: 3, Completed: 2, Terminated: 1}); got != want {
		t.Errorf("process counts %+v, want %+v", got, want)
	}
	if got, want := c.Jobs["charge"], (tally.JobCounts{Created: 3, Activated: 3, Completed: 2, Failed: 1, Canceled: 1}); got != want {
		t.Errorf("job counts %+v, want %+v", got, want)
	}
	for typ, want := range map[string]uint64{"startEvent": 3, "serviceTask": 3, "intermediateCatchEvent": 4, "endEvent": 2} {
		if got := c.ElementsEntered[typ]; got != want {
			t.Errorf("elements entered %s: %d, want %d", typ, got, want)
		}
	}
	checks := []struct {
		name      string
		got, want uint64
	}{
		{"incidents created", c.IncidentsCreated, 1},
		{"incidents resolved", c.IncidentsResolved, 0},
		{"messages published", c.MessagesPublished, 3},
		{"messages correlated", c.MessagesCorrelated, 2},
		{"signals broadcast", c.SignalsBroadcast, 1},
		{"timers scheduled", c.TimersScheduled, 2},
		{"timers fired", c.TimersFired, 2},
		{"instanceStarted records", c.Events[engine.InstanceStarted], 3},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s: %d, want %d", ck.name, ck.got, ck.want)
		}
	}
	// Counts is a copy: changing it changes nothing in the Tally.
	c.Processes["shop"] = tally.ProcessCounts{}
	if tl.Counts().Processes["shop"].Started != 3 {
		t.Error("Counts shares its maps with the Tally")
	}
}
