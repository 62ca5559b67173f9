package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// workJobXML waits on one job of type "work" and ends.
const workJobXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:serviceTask id="task"><bpmn:extensionElements><zeebe:taskDefinition type="work" retries="3"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="task"/>
    <bpmn:sequenceFlow id="f2" sourceRef="task" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>`

// TestEngine_ActivateJobs runs the job-worker operations through the
// module: activation with a timeout on the virtual clock, a stale
// completion refused, a retry back-off, retries updated under an incident.
func TestEngine_ActivateJobs(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "job.bpmn", []byte(workJobXML))
	require.NoError(t, err)
	k1, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	_, err = e.Start(ctx, "p", nil)
	require.NoError(t, err)

	first, err := e.ActivateJobs(ctx, "work", "w1", time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, first, 1)
	require.Equal(t, k1, first[0].InstanceKey)
	require.Equal(t, "w1", first[0].Worker)
	require.Equal(t, e.Now().Add(time.Minute), *first[0].Deadline)
	second, err := e.ActivateJobs(ctx, "work", "w2", time.Minute, 5)
	require.NoError(t, err)
	require.Len(t, second, 1)
	require.NotEqual(t, first[0].Key, second[0].Key)

	require.NoError(t, e.Advance(ctx, time.Minute))
	again, err := e.ActivateJobs(ctx, "work", "w3", time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, again, 1)
	require.Equal(t, first[0].Key, again[0].Key, "timed out: activatable again")
	err = e.CompleteJob(ctx, first[0].Key, nil, engine.JobActivation(first[0].Activation))
	require.ErrorIs(t, err, engine.ErrStaleActivation)

	// Back-off: failed with retries left, passed over for 10 s.
	require.NoError(t, e.FailJob(ctx, again[0].Key, 2, "busy", engine.JobActivation(again[0].Activation), engine.RetryBackoff(10*time.Second)))
	require.NoError(t, e.Advance(ctx, time.Minute)) // second's activation times out too
	got, err := e.ActivateJobs(ctx, "work", "w4", time.Minute, 5)
	require.NoError(t, err)
	require.Len(t, got, 2, "the back-off ended within the minute")

	// Retries under an incident wait for its resolution.
	require.NoError(t, e.FailJob(ctx, got[0].Key, 0, "broken"))
	require.NoError(t, e.UpdateJobRetries(ctx, got[0].Key, 5))
	incs, err := e.Incidents(ctx)
	require.NoError(t, err)
	require.Len(t, incs, 1)
	require.NoError(t, e.ResolveIncident(ctx, incs[0].Key))
	jobs, err := e.Jobs(ctx, engine.JobFilter{Type: "work"})
	require.NoError(t, err)
	require.Equal(t, 5, jobs[0].Retries)

	_, err = e.ActivateJobs(ctx, "work", "w", 0, 1)
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
	require.ErrorIs(t, e.UpdateJobRetries(ctx, 424242, 1), engine.ErrUnknownJob)
}

// TestEngine_HandleJobs: the Go worker drives the module's jobs, failing
// the first attempt of each and completing the second.
func TestEngine_HandleJobs(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "job.bpmn", []byte(workJobXML))
	require.NoError(t, err)
	var keys []int64
	for range 4 {
		k, err := e.Start(ctx, "p", nil)
		require.NoError(t, err)
		keys = append(keys, k)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	left := make(chan int64, len(keys))
	handler := func(_ context.Context, j engine.Job) (map[string]any, error) {
		if j.ErrorMessage == "" {
			return nil, errors.New("first attempt")
		}
		left <- j.InstanceKey
		return map[string]any{"after": j.ErrorMessage}, nil
	}
	done := make(chan error, 1)
	go func() {
		done <- e.HandleJobs(wctx, "work", handler, engine.WorkerOptions{Concurrency: 2, PollInterval: time.Millisecond})
	}()
	for range keys {
		<-left
	}
	cancel()
	require.NoError(t, <-done)
	for _, k := range keys {
		state, err := e.State(ctx, k)
		require.NoError(t, err)
		require.Equal(t, engine.Completed, state)
		vars, err := e.Variables(ctx, k)
		require.NoError(t, err)
		require.Equal(t, "first attempt", vars["after"])
	}
}

// TestEngine_Metrics reads the metrics through the module.
func TestEngine_Metrics(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "job.bpmn", []byte(workJobXML))
	require.NoError(t, err)
	k1, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	_, err = e.Start(ctx, "p", nil)
	require.NoError(t, err)
	require.NoError(t, e.Advance(ctx, 4*time.Second))
	jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: k1})
	require.NoError(t, err)
	require.NoError(t, e.CompleteJob(ctx, jobs[0].Key, nil))

	m, err := e.Metrics(ctx)
	require.NoError(t, err)
	require.Equal(t, engine.Stats{Instances: 1, Jobs: 1}, m.Open)
	require.Equal(t, map[string]int{"work": 1}, m.JobsByType)
	require.NotNil(t, m.OldestJob)
	require.Equal(t, 4000.0, m.OldestJob.WaitingMs)
	require.Equal(t, []engine.ProcessMetrics{{ProcessID: "p", Active: 1, Completed: 1, MeanLatencyMs: 4000, MaxLatencyMs: 4000}}, m.Processes)
}

// TestEngine_Definitions lists versions, reads a version's document and
// starts an older version through the module.
func TestEngine_Definitions(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	v2 := strings.ReplaceAll(workJobXML, `type="work"`, `type="work2"`)
	_, err := e.Deploy(ctx, "v1.bpmn", []byte(workJobXML))
	require.NoError(t, err)
	_, err = e.Deploy(ctx, "v2.bpmn", []byte(v2))
	require.NoError(t, err)
	defs, err := e.Definitions(ctx)
	require.NoError(t, err)
	require.Len(t, defs, 2)
	require.Equal(t, engine.Definition{ProcessID: "p", Key: defs[0].Key, Version: 1, Resource: "v1.bpmn"}, defs[0])
	require.True(t, defs[1].Latest)
	name, xml, err := e.DefinitionXML(ctx, "p", 1)
	require.NoError(t, err)
	require.Equal(t, "v1.bpmn", name)
	require.Equal(t, workJobXML, string(xml))

	old, err := e.StartVersion(ctx, "p", 1, nil)
	require.NoError(t, err)
	_, err = e.Start(ctx, "p", nil)
	require.NoError(t, err)
	jobs, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: old.Key})
	require.NoError(t, err)
	require.Equal(t, "work", jobs[0].Type, "the old version's job type")
	_, err = e.StartVersion(ctx, "p", 9, nil)
	require.ErrorIs(t, err, engine.ErrUnknownProcess)
}

// TestEngine_NextDeadline_JobTimes: the module's nextDeadline names when an
// activation times out or a back-off ends, so a host in real time wakes
// when the job is activatable again.
func TestEngine_NextDeadline_JobTimes(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	_, err := e.Deploy(ctx, "job.bpmn", []byte(workJobXML))
	require.NoError(t, err)
	_, err = e.Start(ctx, "p", nil)
	require.NoError(t, err)
	_, pending := e.NextDeadline()
	require.False(t, pending, "a job nobody holds is activatable now")

	jobs, err := e.ActivateJobs(ctx, "work", "w", time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	due, pending := e.NextDeadline()
	require.True(t, pending)
	require.True(t, jobs[0].Deadline.Equal(due), "the activation deadline")

	require.NoError(t, e.FailJob(ctx, jobs[0].Key, 2, "busy", engine.JobActivation(jobs[0].Activation), engine.RetryBackoff(10*time.Second)))
	due, pending = e.NextDeadline()
	require.True(t, pending)
	require.True(t, e.Now().Add(10*time.Second).Equal(due), "the back-off end")
	require.NoError(t, e.AdvanceTo(ctx, due))
	_, pending = e.NextDeadline()
	require.False(t, pending, "a passed back-off is no deadline")
}
