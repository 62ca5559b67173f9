package rest

import (
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
)

// play applies a run of one instance's events, numbering them.
func play(p *projection, instance int64, evs ...engine.Event) {
	for i, ev := range evs {
		ev.Seq, ev.InstanceKey, ev.ProcessID = uint64(i+1), instance, "p"
		if ev.Time.IsZero() {
			ev.Time = time.Unix(int64(i), 0)
		}
		p.apply(ev)
	}
}

func TestProjection_InstancesElementsIncidentsTasks(t *testing.T) {
	p := newProjection(10)
	wake := p.wake()
	play(p, 7,
		engine.Event{Type: engine.InstanceStarted},
		engine.Event{Type: engine.ElementEntered, ElementID: "review", ElementType: "userTask", TokenID: 1},
		engine.Event{Type: engine.JobCreated, ElementID: "review", ElementType: "userTask", TokenID: 1, JobKey: 70},
		engine.Event{Type: engine.IncidentCreated, ElementID: "review", TokenID: 1, IncidentKey: 71, JobKey: 70, Message: "no retries"},
	)
	select {
	case <-wake:
	default:
		t.Fatal("an event did not wake the long polls")
	}
	inst, ok := p.instance(7)
	if !ok || inst.state != "ACTIVE" || inst.incidents != 1 {
		t.Fatalf("instance: %+v", inst)
	}
	el, ok := p.element(elementKey(7, 2))
	if !ok || el.elementID != "review" || el.incidentKey != 71 || el.state != "ACTIVE" {
		t.Fatalf("element: %+v", el)
	}
	if got := p.jobElement(70); got != el.key {
		t.Fatalf("the job's element instance is %q, want %q", got, el.key)
	}
	if !p.assign(70, "ada") || p.assign(99, "x") {
		t.Fatal("assign: a known task refused or an unknown one taken")
	}
	play(p, 7, // the rest of the run: only entering reads its number
		engine.Event{Type: engine.IncidentResolved, IncidentKey: 71},
		engine.Event{Type: engine.JobCompleted, JobKey: 70},
		engine.Event{Type: engine.ElementLeft, ElementID: "review", TokenID: 1},
		engine.Event{Type: engine.InstanceCompleted},
	)
	inst, _ = p.instance(7)
	el, _ = p.element(elementKey(7, 2))
	tasks := p.taskRows()
	if inst.state != "COMPLETED" || inst.incidents != 0 || el.state != "COMPLETED" || el.incidentKey != 0 {
		t.Fatalf("after the run: instance %+v, element %+v", inst, el)
	}
	if len(tasks) != 1 || tasks[0].state != "COMPLETED" || tasks[0].assignee != "ada" {
		t.Fatalf("tasks: %+v", tasks)
	}
	if p.jobElement(70) != "" {
		t.Fatal("a completed job's element instance is still kept")
	}
	if in := p.incidentRows(); len(in) != 1 || in[0].state != "RESOLVED" {
		t.Fatalf("incidents: %+v", in)
	}
}

func TestProjection_EvictsOldestFinished(t *testing.T) {
	p := newProjection(2)
	for k := int64(1); k <= 4; k++ {
		play(p, k, engine.Event{Type: engine.InstanceStarted},
			engine.Event{Type: engine.ElementEntered, ElementID: "s", TokenID: 1},
			engine.Event{Type: engine.InstanceTerminated})
	}
	play(p, 5, engine.Event{Type: engine.InstanceStarted})
	var keys []int64
	for _, r := range p.instanceRows() {
		keys = append(keys, r.key)
	}
	if len(keys) != 3 {
		t.Fatalf("kept %v, want the 2 newest finished and the active one", keys)
	}
	for _, gone := range []int64{1, 2} {
		if _, ok := p.instance(gone); ok {
			t.Errorf("instance %d was not evicted", gone)
		}
		if _, ok := p.element(elementKey(gone, 2)); ok {
			t.Errorf("instance %d's element was not evicted", gone)
		}
	}
	if r, _ := p.instance(3); r.state != "TERMINATED" {
		t.Errorf("instance 3: %+v", r)
	}
}
