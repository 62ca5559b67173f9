package tally_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/tally"
)

// straight10 is a start event, ten tasks in a row and an end event: the
// shape of the reference straight-10 workload, in a model of our own.
func straight10() []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="http://flowtrack.dev/bench">
<bpmn:process id="straight" isExecutable="true"><bpmn:startEvent id="s"/>`)
	prev := "s"
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, `<bpmn:task id="t%d"/><bpmn:sequenceFlow id="f%d" sourceRef="%s" targetRef="t%d"/>`, i, i, prev, i)
		prev = fmt.Sprintf("t%d", i)
	}
	fmt.Fprintf(&b, `<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f11" sourceRef="%s" targetRef="e"/></bpmn:process></bpmn:definitions>`, prev)
	return []byte(b.String())
}

// BenchmarkTally_Straight10 runs straight-10 instances to completion on
// the native engine, one per op, with the metrics off and on:
//
//	off             no observer at all (an embedded engine without metrics)
//	tally           a Tally subscribed on its own (tally.Subscribe)
//	observer        a no-op observer: what flowtrack serve has anyway (it
//	                publishes every record on NATS)
//	observer+tally  that observer also counting into a Tally: flowtrack
//	                serve with metrics, whose Tally rides on the observer
//
// The cost of metrics in a server is observer+tally less observer; an
// embedded engine that had no observer pays tally less off. Settle waits
// for the observer to drain, so its work is inside each op.
func BenchmarkTally_Straight10(b *testing.B) {
	xml := straight10()
	for _, mode := range []string{"off", "tally", "observer", "observer+tally"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			eng, err := engine.New()
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close(ctx)
			var tl *tally.Tally
			switch mode {
			case "tally":
				var stop func() error
				tl, stop = tally.Subscribe(eng)
				defer stop()
			case "observer":
				defer eng.Subscribe(func(engine.Event) {})()
			case "observer+tally":
				tl = tally.New()
				defer eng.Subscribe(tl.Observe)()
			}
			if _, err := eng.Deploy("straight.bpmn", xml); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				inst, err := eng.Start(ctx, "straight", nil)
				if err != nil {
					b.Fatal(err)
				}
				if st, err := inst.Wait(ctx); err != nil || st != engine.Completed {
					b.Fatalf("instance ended %s, %v", st, err)
				}
				if err := eng.Settle(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if tl != nil && tl.Counts().Processes["straight"].Completed == 0 {
				b.Fatal("the tally counted no completed instance")
			}
		})
	}
}

// BenchmarkTally_Interleaved runs one straight-10 instance in each of the
// four modes of BenchmarkTally_Straight10 per op, one after the other, and
// reports each mode's time per instance: on a machine shared with other
// work, load changes hit the four modes alike, so their differences are
// the cost of the modes, not of the moment.
func BenchmarkTally_Interleaved(b *testing.B) {
	ctx := context.Background()
	xml := straight10()
	modes := []string{"off", "tally", "observer", "observer+tally"}
	engines := make([]*engine.Engine, len(modes))
	for i, mode := range modes {
		eng, err := engine.New()
		if err != nil {
			b.Fatal(err)
		}
		defer eng.Close(ctx)
		switch mode {
		case "tally":
			_, stop := tally.Subscribe(eng)
			defer stop()
		case "observer":
			defer eng.Subscribe(func(engine.Event) {})()
		case "observer+tally":
			defer eng.Subscribe(tally.New().Observe)()
		}
		if _, err := eng.Deploy("straight.bpmn", xml); err != nil {
			b.Fatal(err)
		}
		engines[i] = eng
	}
	spent := make([]time.Duration, len(modes))
	n := 0
	for b.Loop() {
		for i, eng := range engines {
			t0 := time.Now()
			inst, err := eng.Start(ctx, "straight", nil)
			if err != nil {
				b.Fatal(err)
			}
			if st, err := inst.Wait(ctx); err != nil || st != engine.Completed {
				b.Fatalf("instance ended %s, %v", st, err)
			}
			if err := eng.Settle(ctx); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(t0)
		}
		n++
	}
	for i, mode := range modes {
		b.ReportMetric(float64(spent[i].Nanoseconds())/float64(n), mode+"-ns/inst")
	}
}
