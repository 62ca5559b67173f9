package cluster_test

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/wire"
)

//go:embed testdata/waits.bpmn
var waitsBPMN []byte

// keyOn returns a correlation key whose partition is p (of parts), other
// than the keys in not.
func keyOn(t testing.TB, prefix string, p, parts int) string {
	t.Helper()
	for i := range 10000 {
		k := fmt.Sprintf("%s-%d", prefix, i)
		if cluster.MessagePartition(k, parts) == p {
			return k
		}
	}
	t.Fatalf("no key of partition %d", p)
	return ""
}

// remoteWaits returns the waits registered in the cluster's subscription
// bucket.
func remoteWaits(t testing.TB, js jetstream.JetStream, name string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(5*time.Second))
	defer cancel()
	kv, err := js.KeyValue(ctx, "flowtrack_"+name+"_msgsubs")
	require.NoError(t, err)
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, "s.") {
			out = append(out, k)
		}
	}
	return out
}

// TestCluster_RemoteWaitsClosed checks that a wait registered at another
// partition is closed there when another arm ends it: an event-based
// gateway whose "stop" arm fires (its key on a third partition), and a
// receive task interrupted by its message boundary. A message for the
// closed wait then reaches no one, and a message id published again is
// refused while its message is buffered.
func TestCluster_RemoteWaitsClosed(t *testing.T) {
	nc := singleNATS(t)
	const parts = 3
	cfg := cluster.Config{Cluster: "rw", Partitions: parts, LeaseTTL: testtime.Scale(2 * time.Second)}
	startNodes(t, nc, cfg, "a")
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	cl := client.New(nc, "rw")
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	_, err = cl.Deploy(ctx, "waits.bpmn", waitsBPMN)
	require.NoError(t, err)

	// Round robin puts the instance on some partition; its two keys are
	// on the two others.
	gw, err := cl.Start(ctx, "gateway", nil) // a throwaway start to learn the rotation
	require.NoError(t, err)
	require.NoError(t, cl.Cancel(ctx, gw))
	home := engine.PartitionOf(gw)%parts + 1 // the next start's partition
	goKey := keyOn(t, "go", home%parts+1, parts)
	stopKey := keyOn(t, "stop", (home+1)%parts+1, parts)
	gw, err = cl.Start(ctx, "gateway", map[string]any{"goKey": goKey, "stopKey": stopKey})
	require.NoError(t, err)
	require.Equal(t, home, engine.PartitionOf(gw))
	requireEventually(t, func() bool { return len(remoteWaits(t, js, "rw")) == 2 }, testtime.Scale(10*time.Second), 10*time.Millisecond,
		"both arms registered at their keys' partitions")

	require.NoError(t, cl.PublishMessage(ctx, engine.Message{Name: "stop", CorrelationKey: stopKey, MessageID: "stop-1", TTL: time.Minute}))
	requireEventually(t, func() bool { return len(remoteWaits(t, js, "rw")) == 0 }, testtime.Scale(10*time.Second), 10*time.Millisecond,
		"the go arm's registration closed when the stop arm fired: %v", remoteWaits(t, js, "rw"))
	res, err := cl.Instance(ctx, gw)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, res.State)
	err = cl.PublishMessage(ctx, engine.Message{Name: "stop", CorrelationKey: stopKey, MessageID: "stop-1", TTL: time.Minute})
	require.ErrorIs(t, err, engine.ErrDuplicateMessage, "a message id is refused while its message is buffered")
	require.NoError(t, cl.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: goKey}))
	h, err := cl.History(ctx, gw)
	require.NoError(t, err)
	correlated := 0
	for _, ev := range h {
		if ev.Type == engine.MessageCorrelated {
			correlated++
			assert.Equal(t, "stop", ev.Name)
		}
	}
	assert.Equal(t, 1, correlated)

	// The boundary: the receive task waits for "pay" by goKey, its
	// boundary for "abort" by stopKey; abort interrupts it.
	home = engine.PartitionOf(gw)%parts + 1
	goKey = keyOn(t, "pay", home%parts+1, parts)
	stopKey = keyOn(t, "abort", (home+1)%parts+1, parts)
	bd, err := cl.Start(ctx, "boundary", map[string]any{"goKey": goKey, "stopKey": stopKey})
	require.NoError(t, err)
	requireEventually(t, func() bool { return len(remoteWaits(t, js, "rw")) == 2 }, testtime.Scale(10*time.Second), 10*time.Millisecond)
	require.NoError(t, cl.PublishMessage(ctx, engine.Message{Name: "abort", CorrelationKey: stopKey}))
	requireEventually(t, func() bool { return len(remoteWaits(t, js, "rw")) == 0 }, testtime.Scale(10*time.Second), 10*time.Millisecond,
		"the receive task's registration closed when its boundary interrupted it")
	res, err = cl.Instance(ctx, bd)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, res.State)
	h, err = cl.History(ctx, bd)
	require.NoError(t, err)
	var ends []string
	for _, ev := range h {
		if ev.Type == engine.ElementLeft && ev.ElementType == "endEvent" {
			ends = append(ends, ev.ElementID)
		}
	}
	assert.Equal(t, []string{"gave_up"}, ends)
}

// publishUntilTaken publishes m until the cluster answers (a request
// whose outcome is unknown, while a partition moves, is sent again: its
// message id makes that safe); it returns how many times the message id
// was refused as a duplicate.
func publishUntilTaken(t testing.TB, cl *client.Client, m engine.Message) int {
	t.Helper()
	dup, err := publishAgain(t, cl, m)
	require.NoError(t, err)
	return dup
}

// publishAgain is publishUntilTaken for any goroutine: it returns the
// last error after five attempts.
func publishAgain(t testing.TB, cl *client.Client, m engine.Message) (int, error) {
	for attempt := 1; ; attempt++ {
		ctx, cancel := reqCtx()
		err := cl.PublishMessage(ctx, m)
		cancel()
		switch {
		case err == nil:
			return 0, nil
		case errors.Is(err, engine.ErrDuplicateMessage):
			return 1, nil
		case attempt == 5:
			return 0, fmt.Errorf("publish %s: %w", m.MessageID, err)
		}
		t.Logf("publish %s, attempt %d: %v; again", m.MessageID, attempt, err)
	}
}

// TestCluster_MessagesAcrossPartitions runs instances started round robin
// over six partitions of three nodes (three NATS servers, replicas 3),
// each waiting for a keyed message whose key is mostly another
// partition's; messages are published before the waits open (buffered
// with a TTL), after, and after one member is killed midway; every
// message is published again with its id. Every instance is correlated
// exactly once with its own message, and a message for a key several
// instances of the process wait for reaches one of them.
func TestCluster_MessagesAcrossPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server cluster: make race (part of make test) runs it")
	}
	cfg := cluster.Config{Cluster: "mx", Partitions: 6, Replicas: 3, LeaseTTL: testtime.Scale(2 * time.Second)}
	tc := newTestCluster(t, 3, cfg)
	cl := tc.client()
	ctx, cancel := reqCtx()
	_, err := cl.Deploy(ctx, "keyed.bpmn", []byte(keyedWait))
	cancel()
	require.NoError(t, err)

	const n = 36
	msg := func(i int) engine.Message {
		return engine.Message{Name: "m", CorrelationKey: fmt.Sprintf("order-%d", i), TTL: time.Minute,
			MessageID: fmt.Sprintf("msg-%d", i), Variables: map[string]any{"n": i}}
	}
	for i := range n / 3 { // before the waits open: buffered
		publishUntilTaken(t, cl, msg(i))
	}
	keys := make([]int64, n)
	remote := 0
	for i := range n {
		ctx, cancel := reqCtx()
		keys[i], err = cl.Start(ctx, "keyed", map[string]any{"key": fmt.Sprintf("order-%d", i)})
		cancel()
		require.NoError(t, err)
		if engine.PartitionOf(keys[i]) != cluster.MessagePartition(fmt.Sprintf("order-%d", i), cfg.Partitions) {
			remote++
		}
	}
	// Three more instances of the process wait for one key.
	shared := make([]int64, 3)
	for j := range shared {
		ctx, cancel := reqCtx()
		shared[j], err = cl.Start(ctx, "keyed", map[string]any{"key": "shared"})
		cancel()
		require.NoError(t, err)
	}
	t.Logf("%d of %d instances wait for a key of another partition", remote, n)
	require.Greater(t, remote, n/2)
	for i := n / 3; i < 2*n/3; i++ { // after the waits opened
		publishUntilTaken(t, cl, msg(i))
	}
	for j := range shared {
		publishUntilTaken(t, cl, engine.Message{Name: "m", CorrelationKey: "shared", TTL: time.Minute,
			MessageID: fmt.Sprintf("shared-%d", j), Variables: map[string]any{"n": 100 + j}})
	}
	// The last third is published by four publishers while the member is
	// killed and its partitions move: correlations are under way when it
	// dies.
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 2*n/3 + w; i < n; i += 4 {
				_, err := publishAgain(t, cl, msg(i))
				errs <- err
			}
		})
	}
	killed := time.Now()
	tc.kill(1)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	tc.waitServed(testtime.Scale(60 * time.Second))
	served := time.Now()
	takeover := served.Sub(killed)

	state := func(key int64) (engine.State, map[string]any, int) {
		ctx, cancel := reqCtx()
		defer cancel()
		res, err := cl.Instance(ctx, key)
		require.NoError(t, err)
		h, err := cl.History(ctx, key)
		require.NoError(t, err)
		correlated := 0
		for _, ev := range h {
			if ev.Type == engine.MessageCorrelated {
				correlated++
			}
		}
		return res.State, res.Variables, correlated
	}
	var waiting []string
	correlated := until(testtime.Scale(20*time.Second), 50*time.Millisecond, func() bool {
		waiting = waiting[:0]
		for i, k := range append(keys[:n:n], shared...) {
			if s, _, _ := state(k); s != engine.Completed {
				key := "shared"
				if i < n {
					key = fmt.Sprintf("order-%d", i)
				}
				waiting = append(waiting, fmt.Sprintf("%d (partition %d, key %s of partition %d)", k, engine.PartitionOf(k), key, cluster.MessagePartition(key, cfg.Partitions)))
			}
		}
		return len(waiting) == 0
	})
	if correlated {
		// The figure #41 asks for: how long after its partition is
		// served again a waiting instance is correlated (on a loaded
		// machine, make flake's, it should stay within 5 s).
		t.Logf("every instance correlated %s after the partitions were served again", time.Since(served).Round(time.Millisecond))
	}
	if !correlated {
		js, err := jetstream.New(tc.conns[0])
		require.NoError(t, err)
		t.Fatalf("still waiting: %v; registered waits: %v", waiting, remoteWaits(t, js, cfg.Cluster))
	}
	dups := 0
	for i := range n { // every message again, with its id
		dups += publishUntilTaken(t, cl, msg(i))
	}
	t.Logf("the last messages published and the partitions served again %s after the kill; %d of %d messages published again refused as duplicates",
		takeover.Round(time.Millisecond), dups, n)
	// Every wait ended, so every registration is gone, and no correlation
	// is left under way.
	js, err := jetstream.New(tc.conns[0])
	require.NoError(t, err)
	requireEventually(t, func() bool { return len(remoteWaits(t, js, cfg.Cluster)) == 0 }, testtime.Scale(10*time.Second), 20*time.Millisecond,
		"registrations left: %v", remoteWaits(t, js, cfg.Cluster))
	kctx, kcancel := reqCtx()
	defer kcancel()
	kv, err := js.KeyValue(kctx, "flowtrack_"+cfg.Cluster+"_msgsubs")
	require.NoError(t, err)
	left, err := kv.Keys(kctx)
	if !errors.Is(err, jetstream.ErrNoKeysFound) {
		require.NoError(t, err)
	}
	assert.Empty(t, left, "correlations left under way")
	for i, k := range keys {
		_, vars, correlated := state(k)
		assert.Equal(t, float64(i), vars["n"], "instance %d received its own message", i)
		assert.Equal(t, 1, correlated, "instance %d correlated once", i)
	}
	got := map[float64]int{}
	for _, k := range shared {
		_, vars, correlated := state(k)
		assert.Equal(t, 1, correlated)
		got[vars["n"].(float64)]++
	}
	assert.Equal(t, map[float64]int{100: 1, 101: 1, 102: 1}, got, "each shared message reached one instance of the process")
	t.Logf("run took %s since the kill", time.Since(killed).Round(time.Millisecond))
}

// reachedBPMN holds two processes waiting for message "m" by their
// variable key, each with a job after the wait, and a third started by
// "m", with a job: one message reaches one instance of each.
const reachedBPMN = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:message id="M" name="m"><bpmn:extensionElements><zeebe:subscription correlationKey="= key"/></bpmn:extensionElements></bpmn:message>
  <bpmn:process id="here" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>
    <bpmn:serviceTask id="next"><bpmn:extensionElements><zeebe:taskDefinition type="here-next"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="done"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="next"/>
    <bpmn:sequenceFlow id="f3" sourceRef="next" targetRef="done"/>
  </bpmn:process>
  <bpmn:process id="there" isExecutable="true">
    <bpmn:startEvent id="start2"/>
    <bpmn:intermediateCatchEvent id="wait2"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>
    <bpmn:serviceTask id="next2"><bpmn:extensionElements><zeebe:taskDefinition type="there-next"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="done2"/>
    <bpmn:sequenceFlow id="g1" sourceRef="start2" targetRef="wait2"/>
    <bpmn:sequenceFlow id="g2" sourceRef="wait2" targetRef="next2"/>
    <bpmn:sequenceFlow id="g3" sourceRef="next2" targetRef="done2"/>
  </bpmn:process>
  <bpmn:process id="started" isExecutable="true">
    <bpmn:startEvent id="by_m"><bpmn:messageEventDefinition messageRef="M"/></bpmn:startEvent>
    <bpmn:serviceTask id="next3"><bpmn:extensionElements><zeebe:taskDefinition type="started-next"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="done3"/>
    <bpmn:sequenceFlow id="h1" sourceRef="by_m" targetRef="next3"/>
    <bpmn:sequenceFlow id="h2" sourceRef="next3" targetRef="done3"/>
  </bpmn:process>
</bpmn:definitions>`

// TestCluster_MessagesReached checks that publish_message answers, in a
// cluster as on one engine, the instances the message reached: the one
// waiting on the key's partition B, the one waiting on the other
// partition A (through its registered wait), then the one its message
// start event started on B, in that order, each with its state and next
// job. With a TTL (the buffered path) the same, and the message id
// published again is refused as a duplicate.
func TestCluster_MessagesReached(t *testing.T) {
	nc := singleNATS(t)
	const parts = 2
	cfg := cluster.Config{Cluster: "reach", Partitions: parts, LeaseTTL: testtime.Scale(2 * time.Second), BusinessKey: "home"}
	startNodes(t, nc, cfg, "a")
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	cl := client.New(nc, cfg.Cluster)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	_, err = cl.Deploy(ctx, "reached.bpmn", []byte(reachedBPMN))
	require.NoError(t, err)

	const b, a = 2, 1
	onA := keyOn(t, "home", a, parts)
	// waitOn starts an instance of process on partition home waiting for
	// key, and waits until a wait on another partition than the key's is
	// registered there.
	waitOn := func(process, home, key string) int64 {
		t.Helper()
		k, err := cl.Start(ctx, process, map[string]any{"home": home, "key": key})
		require.NoError(t, err)
		require.Equal(t, cluster.MessagePartition(home, parts), engine.PartitionOf(k))
		if engine.PartitionOf(k) != cluster.MessagePartition(key, parts) {
			requireEventually(t, func() bool {
				waits := remoteWaits(t, js, cfg.Cluster)
				return len(waits) == 1 && strings.Contains(waits[0], fmt.Sprintf(".%d.%d.", engine.PartitionOf(k), k))
			}, testtime.Scale(10*time.Second), 10*time.Millisecond, "the wait of instance %d registered at partition %d", k, b)
		}
		return k
	}
	// check asserts that r is instance key (0: any new one of partition
	// b), active, with one job of type jobType.
	check := func(r wire.CompleteJobResult, key int64, jobType string) {
		t.Helper()
		if key != 0 {
			assert.Equal(t, key, r.InstanceKey)
		} else {
			assert.Equal(t, b, engine.PartitionOf(r.InstanceKey), "started on the key's partition")
		}
		assert.Equal(t, engine.Active, r.State)
		if assert.Len(t, r.Jobs, 1, "instance %d", r.InstanceKey) {
			assert.Equal(t, jobType, r.Jobs[0].Type)
			assert.Equal(t, r.InstanceKey, r.Jobs[0].InstanceKey)
		}
	}

	key := keyOn(t, "order", b, parts)
	here := waitOn("here", key, key)
	there := waitOn("there", onA, key)
	reached, err := cl.PublishMessageReached(ctx, engine.Message{Name: "m", CorrelationKey: key})
	require.NoError(t, err)
	require.Len(t, reached, 3, "%+v", reached)
	check(reached[0], here, "here-next")
	check(reached[1], there, "there-next")
	check(reached[2], 0, "started-next")

	// With a TTL: the message is buffered and claimed for the wait on A.
	key = keyOn(t, "late", b, parts)
	there = waitOn("there", onA, key)
	msg := engine.Message{Name: "m", CorrelationKey: key, TTL: time.Minute, MessageID: "late-1"}
	reached, err = cl.PublishMessageReached(ctx, msg)
	require.NoError(t, err)
	require.Len(t, reached, 2, "%+v", reached)
	check(reached[0], there, "there-next")
	check(reached[1], 0, "started-next")
	_, err = cl.PublishMessageReached(ctx, msg)
	require.ErrorIs(t, err, engine.ErrDuplicateMessage)

	// A message nobody waits for reaches no one.
	reached, err = cl.PublishMessageReached(ctx, engine.Message{Name: "nobody", CorrelationKey: key})
	require.NoError(t, err)
	assert.Empty(t, reached)
}
