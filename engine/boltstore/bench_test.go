package boltstore_test

import (
	"context"
	"path/filepath"
	goruntime "runtime"
	"sync/atomic"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/boltstore"
	"github.com/flowtrack/flowtrack/engine/clock"
)

type countStore struct {
	*boltstore.Store
	n atomic.Int64
}

func (c *countStore) Commit(ctx context.Context, b *engine.StoreBatch) error {
	c.n.Add(1)
	return c.Store.Commit(ctx, b)
}

// benchXML runs one job: start, service task "work", end.
const benchXML = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="work"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:endEvent id="done"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="work"/>
    <bpmn:sequenceFlow id="f2" sourceRef="work" targetRef="done"/>
  </bpmn:process>
</bpmn:definitions>`

// BenchmarkStore measures commands per second in memory and on a store
// with and without sync, one caller at a time and with 16 callers (whose
// commands share commits). park: a start whose instance parks at its job
// (one instance written per command); job: a start and the completion of
// its job (the instance is written, then deleted). inst/commit says how
// many instances' commands shared a commit.
func BenchmarkStore(b *testing.B) {
	for _, store := range []string{"memory", "nosync", "sync"} {
		for _, work := range []string{"park", "job"} {
			for _, callers := range []int{1, 16} {
				name := store + "/" + work + "/seq"
				if callers > 1 {
					name = store + "/" + work + "/par16"
				}
				b.Run(name, func(b *testing.B) { benchStore(b, store, work, callers) })
			}
		}
	}
}

func benchStore(b *testing.B, store, work string, callers int) {
	ctx := context.Background()
	opts := []engine.Option{engine.WithClock(clock.NewVirtual(clock.Epoch))}
	if store != "memory" {
		s, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"), &boltstore.Options{NoSync: store == "nosync"})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		cs := &countStore{Store: s}
		opts = append(opts, engine.WithStore(cs))
		defer func() { b.ReportMetric(float64(b.N)/float64(cs.n.Load()), "inst/commit") }()
	}
	e, err := engine.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := e.Deploy("p.bpmn", []byte(benchXML)); err != nil {
		b.Fatal(err)
	}
	one := func() {
		inst, err := e.Start(ctx, "p", nil)
		if err != nil {
			b.Fatal(err)
		}
		if work == "park" {
			return
		}
		var jobs []engine.Job
		for jobs = e.Jobs(engine.JobFilter{InstanceKey: inst.Key()}); len(jobs) == 0; jobs = e.Jobs(engine.JobFilter{InstanceKey: inst.Key()}) {
			goruntime.Gosched() // in memory the start returns before the job exists
		}
		if err := e.CompleteJob(ctx, jobs[0].Key, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	if callers == 1 {
		for range b.N {
			one()
		}
	} else {
		b.SetParallelism(callers / goruntime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one()
			}
		})
	}
}
