package rest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
)

// projection keeps what searches read from the cluster's event
// subjects: the process instances, element instances, incidents and user
// tasks seen since it started (package doc, Searches). Its methods are
// safe for concurrent use; events arrive on one NATS goroutine.
type projection struct {
	sub *nats.Subscription

	mu        sync.Mutex
	instances map[int64]*instanceRow
	finished  []int64 // finished instances, oldest first, for eviction
	max       int
	elements  map[string]*elementRow // by element instance key
	open      map[openKey]string     // open element instances
	jobElem   map[int64]string       // job key → its element instance
	incidents map[int64]*incidentRow
	tasks     map[int64]*taskRow // user tasks by job key
	changed   chan struct{}      // closed and replaced on every event (long polls)
}

// openKey names an element instance while it is open.
type openKey struct {
	instance int64
	token    int
	element  string
}

type instanceRow struct {
	key       int64
	processID string
	start     time.Time
	end       time.Time
	state     string
	incidents int
	defKey    int64 // 0: unknown, the latest version is reported
	version   int
	elements  []string // its element instance keys, in order
}

type elementRow struct {
	key         string
	instance    int64
	elementID   string
	elementType string
	token       int
	start, end  time.Time
	state       string
	incidentKey int64
}

type incidentRow struct {
	key, instance, job int64
	elementID, element string
	message            string
	created            time.Time
	state              string
}

type taskRow struct {
	key, instance int64
	elementID     string
	element       string
	created, done time.Time
	state         string
	assignee      string
}

// startProjection subscribes to every event of cluster.
func startProjection(nc *nats.Conn, cluster string, max int) (*projection, error) {
	p := newProjection(max)
	sub, err := nc.Subscribe(wire.AllEventsSubject(cluster), func(m *nats.Msg) {
		var ev engine.Event
		if json.Unmarshal(m.Data, &ev) == nil {
			p.apply(ev)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe to the events of cluster %q: %w", cluster, err)
	}
	// Events may come fast: the subscription buffers up to 1M of them.
	_ = sub.SetPendingLimits(1<<20, 1<<30)
	if err := nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("subscribe to the events of cluster %q: %w", cluster, err)
	}
	p.sub = sub
	return p, nil
}

// newProjection returns an empty projection keeping max finished
// instances.
func newProjection(max int) *projection {
	return &projection{instances: map[int64]*instanceRow{}, max: max, elements: map[string]*elementRow{},
		open: map[openKey]string{}, jobElem: map[int64]string{}, incidents: map[int64]*incidentRow{},
		tasks: map[int64]*taskRow{}, changed: make(chan struct{})}
}

func (p *projection) close() error { return p.sub.Unsubscribe() }

// elementKey is the key of the element instance an instance's event seq
// entered: the instance's key followed by seq in 7 digits, so that it is
// the same on every node and tells its instance.
func elementKey(instance int64, seq uint64) string {
	return strconv.FormatInt(instance, 10) + fmt.Sprintf("%07d", seq%10_000_000)
}

// wake returns a channel closed at the next event.
func (p *projection) wake() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// apply folds one event into the projection.
func (p *projection) apply(ev engine.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.changed)
	p.changed = make(chan struct{})
	inst := p.instances[ev.InstanceKey]
	if inst == nil {
		inst = &instanceRow{key: ev.InstanceKey, processID: ev.ProcessID, start: ev.Time, state: "ACTIVE"}
		p.instances[ev.InstanceKey] = inst
	}
	switch ev.Type {
	case engine.InstanceStarted:
		inst.start = ev.Time
	case engine.InstanceCompleted:
		p.finish(inst, "COMPLETED", ev.Time)
	case engine.InstanceTerminated, engine.InstanceFailed:
		p.finish(inst, "TERMINATED", ev.Time)
	case engine.ElementEntered:
		k := elementKey(ev.InstanceKey, ev.Seq)
		p.elements[k] = &elementRow{key: k, instance: ev.InstanceKey, elementID: ev.ElementID, elementType: ev.ElementType,
			token: ev.TokenID, start: ev.Time, state: "ACTIVE"}
		p.open[openKey{ev.InstanceKey, ev.TokenID, ev.ElementID}] = k
		inst.elements = append(inst.elements, k)
	case engine.ElementLeft, engine.ElementTerminated:
		ok := openKey{ev.InstanceKey, ev.TokenID, ev.ElementID}
		if e := p.elements[p.open[ok]]; e != nil {
			e.end, e.state = ev.Time, "COMPLETED"
			if ev.Type == engine.ElementTerminated {
				e.state = "TERMINATED"
			}
		}
		delete(p.open, ok)
	case engine.JobCreated:
		el := p.open[openKey{ev.InstanceKey, ev.TokenID, ev.ElementID}]
		p.jobElem[ev.JobKey] = el
		if ev.ElementType == "userTask" {
			p.tasks[ev.JobKey] = &taskRow{key: ev.JobKey, instance: ev.InstanceKey, elementID: ev.ElementID, element: el,
				created: ev.Time, state: "CREATED"}
		}
	case engine.JobCompleted:
		delete(p.jobElem, ev.JobKey) // only open jobs are activated
		if t := p.tasks[ev.JobKey]; t != nil {
			t.state, t.done = "COMPLETED", ev.Time
		}
	case engine.JobCanceled:
		delete(p.jobElem, ev.JobKey)
		if t := p.tasks[ev.JobKey]; t != nil {
			t.state, t.done = "CANCELED", ev.Time
		}
	case engine.IncidentCreated:
		el := p.open[openKey{ev.InstanceKey, ev.TokenID, ev.ElementID}]
		p.incidents[ev.IncidentKey] = &incidentRow{key: ev.IncidentKey, instance: ev.InstanceKey, job: ev.JobKey,
			elementID: ev.ElementID, element: el, message: ev.Message, created: ev.Time, state: "ACTIVE"}
		inst.incidents++
		if e := p.elements[el]; e != nil {
			e.incidentKey = ev.IncidentKey
		}
	case engine.IncidentResolved:
		if in := p.incidents[ev.IncidentKey]; in != nil && in.state == "ACTIVE" {
			in.state = "RESOLVED"
			inst.incidents--
			if e := p.elements[in.element]; e != nil && e.incidentKey == in.key {
				e.incidentKey = 0
			}
		}
	}
}

// finish marks inst finished and evicts the oldest finished instances
// beyond the bound, with their elements, incidents and tasks.
func (p *projection) finish(inst *instanceRow, state string, at time.Time) {
	if inst.state != "ACTIVE" {
		return
	}
	inst.state, inst.end = state, at
	for _, in := range p.incidents {
		if in.instance == inst.key && in.state == "ACTIVE" {
			in.state = "RESOLVED"
		}
	}
	inst.incidents = 0
	for _, k := range inst.elements {
		if e := p.elements[k]; e != nil && e.state == "ACTIVE" {
			e.state, e.end = "TERMINATED", at
		}
	}
	p.finished = append(p.finished, inst.key)
	for len(p.finished) > p.max {
		old := p.instances[p.finished[0]]
		p.finished = p.finished[1:]
		if old == nil {
			continue
		}
		delete(p.instances, old.key)
		for _, k := range old.elements {
			delete(p.elements, k)
		}
		for k, in := range p.incidents {
			if in.instance == old.key {
				delete(p.incidents, k)
			}
		}
		for k, t := range p.tasks {
			if t.instance == old.key {
				delete(p.tasks, k)
				delete(p.jobElem, k)
			}
		}
	}
}

// noteDefinition records which definition an instance was created from
// (the events name its process only).
func (p *projection) noteDefinition(instance, defKey int64, version int, processID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	inst := p.instances[instance]
	if inst == nil {
		inst = &instanceRow{key: instance, processID: processID, state: "ACTIVE", start: time.Now()}
		p.instances[instance] = inst
	}
	inst.defKey, inst.version = defKey, version
}

// snapshot copies of the rows, for a search or a get.
func (p *projection) instanceRows() []instanceRow {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]instanceRow, 0, len(p.instances))
	for _, r := range p.instances {
		out = append(out, *r)
	}
	return out
}

func (p *projection) instance(k int64) (instanceRow, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.instances[k]; r != nil {
		return *r, true
	}
	return instanceRow{}, false
}

func (p *projection) elementRows() []elementRow {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]elementRow, 0, len(p.elements))
	for _, r := range p.elements {
		out = append(out, *r)
	}
	return out
}

func (p *projection) element(k string) (elementRow, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.elements[k]; r != nil {
		return *r, true
	}
	return elementRow{}, false
}

func (p *projection) incidentRows() []incidentRow {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]incidentRow, 0, len(p.incidents))
	for _, r := range p.incidents {
		out = append(out, *r)
	}
	return out
}

func (p *projection) jobElement(job int64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.jobElem[job]
}

func (p *projection) taskRows() []taskRow {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]taskRow, 0, len(p.tasks))
	for _, r := range p.tasks {
		out = append(out, *r)
	}
	return out
}

// assign sets a user task's assignee; false when the task is unknown.
func (p *projection) assign(job int64, assignee string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tasks[job]
	if t == nil {
		return false
	}
	t.assignee = assignee
	return true
}

// keySource hands out keys for records flowtrack does not key (messages,
// signals, deployments): the time in nanoseconds, strictly increasing.
type keySource struct{ last atomic.Int64 }

func (s *keySource) next() int64 {
	for {
		last, now := s.last.Load(), time.Now().UnixNano()
		if now <= last {
			now = last + 1
		}
		if s.last.CompareAndSwap(last, now) {
			return now
		}
	}
}
