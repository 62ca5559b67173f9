package engine

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/clock"
)

// jobXML waits on one job of type "work".
const jobXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="work"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="done"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="work"/>
    <bpmn:sequenceFlow id="f2" sourceRef="work" targetRef="done"/>
  </bpmn:process>
</bpmn:definitions>`

// memStore is a Store in memory that counts commits and can hold a commit
// or fail it.
type memStore struct {
	mu       sync.Mutex
	st       StoreState
	finished []FinishedInstance
	commits  int
	fail     error
	// hold, when set, makes the next Commit signal held and wait for
	// release.
	hold          bool
	held, release chan struct{}
	// committed, when set, gets a value after each commit written.
	committed chan struct{}
}

func newMemStore() *memStore {
	return &memStore{st: StoreState{Instances: map[int64]*StoredInstance{}}}
}

func (m *memStore) Load(context.Context) (*StoreState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := StoreState{Engine: m.st.Engine, Messages: m.st.Messages, Deployments: append([][]byte(nil), m.st.Deployments...), Instances: map[int64]*StoredInstance{}}
	for k, v := range m.st.Instances {
		st.Instances[k] = &StoredInstance{Doc: v.Doc, History: append([]HistoryChunk(nil), v.History...)}
	}
	for _, f := range m.finished {
		st.Finished = append(st.Finished, f.Doc)
	}
	return &st, nil
}

func (m *memStore) Instance(_ context.Context, key int64) (*StoredInstance, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if si, ok := m.st.Instances[key]; ok {
		return &StoredInstance{Doc: si.Doc, History: append([]HistoryChunk(nil), si.History...)}, nil
	}
	return nil, ErrUnknownInstance
}

func (m *memStore) Commit(_ context.Context, b *StoreBatch) error {
	m.mu.Lock()
	if m.hold {
		m.hold = false
		m.mu.Unlock()
		m.held <- struct{}{}
		<-m.release
		m.mu.Lock()
	}
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.commits++
	m.st.Engine = b.Engine
	if b.Messages != nil {
		m.st.Messages = b.Messages
	}
	m.st.Deployments = append(m.st.Deployments, b.Deployments...)
	for k, v := range b.Put {
		si := m.st.Instances[k]
		if si == nil {
			si = &StoredInstance{}
			m.st.Instances[k] = si
		}
		si.Doc = v
	}
	for k, c := range b.History {
		m.st.Instances[k].History = append(m.st.Instances[k].History, c)
	}
	for _, k := range b.Delete {
		delete(m.st.Instances, k)
	}
	m.finished = append(m.finished, b.Finished...)
	for _, k := range b.Evict {
		m.finished = slices.DeleteFunc(m.finished, func(f FinishedInstance) bool { return f.Key == k })
	}
	if m.committed != nil {
		select {
		case m.committed <- struct{}{}:
		default: // the test has a wake-up waiting already
		}
	}
	return nil
}

// crashCopy returns a store holding what m holds now, as a process that
// crashed at this moment would find it.
func (m *memStore) crashCopy() *memStore {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := newMemStore()
	c.st.Engine, c.st.Messages = m.st.Engine, m.st.Messages
	c.st.Deployments = append(c.st.Deployments, m.st.Deployments...)
	for k, v := range m.st.Instances {
		c.st.Instances[k] = &StoredInstance{Doc: v.Doc, History: append([]HistoryChunk(nil), v.History...)}
	}
	c.finished = append(c.finished, m.finished...)
	return c
}

func (m *memStore) engineDoc() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.Engine
}

func (m *memStore) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.commits
}

// TestRestore_WithStore: Restore fills an empty store, which New then
// resumes; it refuses a store that holds state.
func TestRestore_WithStore(t *testing.T) {
	ctx := context.Background()
	e, err := New(WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close(ctx)) }()
	_, err = e.Deploy("p.bpmn", []byte(jobXML))
	require.NoError(t, err)
	inst, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	doc, err := e.Checkpoint(ctx)
	require.NoError(t, err)

	m := newMemStore()
	r, err := Restore(doc, WithStore(m))
	require.NoError(t, err)
	require.NoError(t, r.Close(ctx))
	si, err := m.Instance(ctx, inst.Key())
	require.NoError(t, err)
	require.Contains(t, string(si.Doc), `"processKey"`)
	require.Len(t, si.History, 1, "the restored history, in one chunk")
	require.Contains(t, string(si.History[0].Records), `"instanceStarted"`)

	_, err = Restore(doc, WithStore(m))
	require.ErrorIs(t, err, ErrStoreNotEmpty)

	again, err := New(WithStore(m))
	require.NoError(t, err)
	defer func() { require.NoError(t, again.Close(ctx)) }()
	jobs := again.Jobs(JobFilter{InstanceKey: inst.Key()})
	require.Len(t, jobs, 1)
	require.NoError(t, again.CompleteJob(ctx, jobs[0].Key, nil))
	st, err := m.Load(ctx)
	require.NoError(t, err)
	require.Empty(t, st.Instances, "a finished instance leaves the store")
}

// loopXML waits on a job "work" again and again.
const loopXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="loop" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:exclusiveGateway id="m"/>
    <bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="work"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="m"/>
    <bpmn:sequenceFlow id="f2" sourceRef="m" targetRef="work"/>
    <bpmn:sequenceFlow id="f3" sourceRef="work" targetRef="m"/>
  </bpmn:process>
</bpmn:definitions>`

// TestWithStore_HistoryAppended: a commit appends the records written
// since the last one, not the instance's whole history, and a reopen puts
// the chunks back together.
func TestWithStore_HistoryAppended(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	e, err := New(WithStore(m), WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	_, err = e.Deploy("loop.bpmn", []byte(loopXML))
	require.NoError(t, err)
	inst, err := e.Start(ctx, "loop", nil)
	require.NoError(t, err)
	for range 20 {
		jobs := e.Jobs(JobFilter{InstanceKey: inst.Key()})
		require.Len(t, jobs, 1)
		require.NoError(t, e.CompleteJob(ctx, jobs[0].Key, nil))
	}
	want, err := inst.History(ctx)
	require.NoError(t, err)
	require.NoError(t, e.Close(ctx))

	si, err := m.Instance(ctx, inst.Key())
	require.NoError(t, err)
	require.Len(t, si.History, 21, "one chunk per command")
	next := 0
	for _, c := range si.History {
		require.Equal(t, next, c.From, "chunks follow each other")
		var records []json.RawMessage
		require.NoError(t, json.Unmarshal(c.Records, &records))
		require.Less(t, len(records), 10, "a chunk holds what one command wrote")
		next += len(records)
	}
	require.Equal(t, len(want), next)

	r, err := New(WithStore(m))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close(ctx)) }()
	again, ok := r.Instance(inst.Key())
	require.True(t, ok)
	got, err := again.History(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got)
}
