package cluster

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/partitioned"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
)

const waitForM = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:message id="M" name="m"><bpmn:extensionElements><zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>
  <bpmn:process id="keyed" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="done"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="done"/>
  </bpmn:process>
</bpmn:definitions>`

// oneNode starts a one-partition cluster of one node on a NATS server
// of its own, and waits until the node serves its partition.
func oneNode(t *testing.T, cluster string) (*Node, *nats.Conn) {
	t.Helper()
	ns, err := server.StartNATS(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL(), nats.ReconnectBufSize(-1))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	n, err := Start(ctx, nc, Config{Cluster: cluster, Node: "a", Partitions: 1, LeaseTTL: testtime.Scale(2 * time.Second)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Close(context.Background()) })
	require.Eventually(t, func() bool { return n.Partition(1) != nil }, testtime.Scale(10*time.Second), 10*time.Millisecond)
	return n, nc
}

// keyedPartition is oneNode's partition with waitForM deployed.
func keyedPartition(t *testing.T, cluster string) (*Partition, *nats.Conn) {
	t.Helper()
	n, nc := oneNode(t, cluster)
	p := n.Partition(1)
	_, err := p.Engine().Deploy("keyed.bpmn", []byte(waitForM))
	require.NoError(t, err)
	return p, nc
}

// A correlate request is answered the same way however often it is sent:
// yes again after a yes, with the instance correlated once; and a request
// sent again after its first attempt committed but died before recording
// its yes (a pending entry) finds the correlation in the instance's
// history and answers yes, instead of no, which would give the message to
// another instance of the process.
func TestCorrelateIdempotent(t *testing.T) {
	p, nc := keyedPartition(t, "idem")
	eng := p.Engine()
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	first, err := eng.Start(ctx, "keyed", map[string]any{"key": "k"})
	require.NoError(t, err)
	second, err := eng.Start(ctx, "keyed", map[string]any{"key": "k"})
	require.NoError(t, err)
	require.NoError(t, eng.Settle(ctx))

	ask := func(inst int64, id string, num int) correlateResponse {
		body, _ := json.Marshal(correlateRequest{InstanceKey: inst, Name: "m", CorrelationKey: "k", Variables: map[string]any{"n": num}, ID: id})
		out, err := nc.RequestWithContext(ctx, msgSubject("idem", 1, "correlate"), body)
		require.NoError(t, err)
		var resp correlateResponse
		require.NoError(t, json.Unmarshal(out.Data, &resp), "%s", out.Data)
		return resp
	}
	correlations := func(inst *engine.Instance) int {
		h, err := inst.History(ctx)
		require.NoError(t, err)
		c := 0
		for _, ev := range h {
			if ev.Type == engine.MessageCorrelated {
				c++
			}
		}
		return c
	}
	// A yes says where the instance stands once settled: the message
	// ended it. Answered again from the done entry, where it stands now.
	for _, what := range []string{"the request", "the same request again"} {
		resp := ask(first.Key(), "r1", 1)
		assert.True(t, resp.Correlated, what)
		assert.Equal(t, &wire.CompleteJobResult{InstanceKey: first.Key(), State: engine.Completed}, resp.Instance, what)
	}
	no := ask(first.Key(), "r2", 5)
	assert.False(t, no.Correlated, "another message: the wait is gone")
	assert.Nil(t, no.Instance)
	require.NoError(t, eng.Settle(ctx))
	assert.Equal(t, 1, correlations(first))
	assert.Equal(t, 1.0, first.Variables()["n"])

	// The first attempt of r3 committed and died before recording its yes.
	ok, err := partitioned.CorrelateMessageTo(ctx, eng, second.Key(), engine.Message{Name: "m", CorrelationKey: "k", Variables: map[string]any{"n": 3}})
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, eng.Settle(ctx))
	dkey := "c.1." + strconv.FormatInt(second.Key(), 10) + "." + hash64("r3")
	_, err = p.msgs.done.Put(ctx, dkey, []byte(corrPending))
	require.NoError(t, err)
	found := ask(second.Key(), "r3", 3)
	assert.True(t, found.Correlated, "found in the history")
	assert.Equal(t, &wire.CompleteJobResult{InstanceKey: second.Key(), State: engine.Completed}, found.Instance)
	e, err := p.msgs.done.Get(ctx, dkey)
	require.NoError(t, err)
	assert.Equal(t, corrDone, string(e.Value()))
	assert.Equal(t, 1, correlations(second))
	// Without a pending entry, a gone wait is a no.
	assert.False(t, ask(second.Key(), "r4", 3).Correlated)
}

// An answer of a node from before answers carried the instance still
// reads as a yes, for the instance the request named (its key only); an
// answer with the instance is taken as is, and a no is nil.
func TestAskOlderAnswer(t *testing.T) {
	n, nc := oneNode(t, "older")
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	m := n.Partition(1).msgs

	// Partition 7 is played by a responder answering as told.
	answer := make(chan string, 1)
	sub, err := nc.Subscribe(msgSubject("older", 7, "correlate"), func(msg *nats.Msg) { _ = msg.Respond([]byte(<-answer)) })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	in := intent{Sub: remoteSub{Partition: 7, InstanceKey: 42, ProcessID: "keyed", Name: "m", CorrelationKey: "k"}, ID: "x"}
	for _, c := range []struct {
		answer string
		want   *wire.CompleteJobResult
	}{
		{`{"correlated":true}`, &wire.CompleteJobResult{InstanceKey: 42}},
		{`{"correlated":true,"instance":{"instanceKey":42,"state":"active","jobs":[{"key":9,"type":"next","instanceKey":42}]}}`,
			&wire.CompleteJobResult{InstanceKey: 42, State: engine.Active, Jobs: []engine.Job{{Key: 9, Type: "next", InstanceKey: 42}}}},
		{`{"correlated":false}`, nil},
	} {
		answer <- c.answer
		got, err := m.ask(ctx, in)
		require.NoError(t, err, c.answer)
		assert.Equal(t, c.want, got, c.answer)
	}
}

// A correlation under way that a partition's listing at open missed (a
// bucket replica behind its leader) is finished by the sweep that lists
// the intents again while the owner stays.
func TestIntentSweep(t *testing.T) {
	p, _ := keyedPartition(t, "sweep")
	eng := p.Engine()
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	inst, err := eng.Start(ctx, "keyed", map[string]any{"key": "k"})
	require.NoError(t, err)
	require.NoError(t, eng.Settle(ctx))
	// Written after the partition opened, as a dead owner's intent an
	// open's listing did not see.
	_, err = p.msgs.writeIntent(ctx, intent{Sub: remoteSub{Partition: 1, InstanceKey: inst.Key(), ProcessID: "keyed", Name: "m", CorrelationKey: "k"},
		Variables: map[string]any{"n": 7}, ID: "swept"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return inst.State() == engine.Completed }, 3*intentSweep, 20*time.Millisecond,
		"the intent is finished by a sweep")
	require.InDelta(t, 7, inst.Variables()["n"], 0)
}

// TestWatchMadeAgain: when the watch of the waits registered at a
// partition ends while the partition is open, it is made again: a wait
// registered afterwards still reaches the partition's index, and one
// deleted meanwhile leaves it.
func TestWatchMadeAgain(t *testing.T) {
	p, _ := keyedPartition(t, "rewatch")
	m := p.msgs
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	put := func(key string, rs remoteSub) {
		data, _ := json.Marshal(rs)
		_, err := m.subs.Put(ctx, key, data)
		require.NoError(t, err)
	}
	gone := remoteSub{Partition: 2, InstanceKey: 7, ProcessID: "keyed", Name: "m", CorrelationKey: "gone"}
	put(subKey(1, gone), gone)
	require.Eventually(t, func() bool { return len(m.candidates("m", "gone")) == 1 }, testtime.Scale(10*time.Second), 10*time.Millisecond)

	m.watchMu.Lock()
	old := m.watcher
	m.watchMu.Unlock()
	require.NoError(t, old.Stop()) // as a consumer lost for good ends it
	require.NoError(t, m.subs.Delete(ctx, subKey(1, gone)))
	later := remoteSub{Partition: 2, InstanceKey: 8, ProcessID: "keyed", Name: "m", CorrelationKey: "later"}
	put(subKey(1, later), later)
	require.Eventually(t, func() bool {
		return len(m.candidates("m", "later")) == 1 && len(m.candidates("m", "gone")) == 0
	}, testtime.Scale(10*time.Second), 10*time.Millisecond, "the watch was not made again")
}
