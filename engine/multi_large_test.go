package engine_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// largeMI is the number of elements of the large multi-instance test.
const largeMI = 10_000

// TestMultiInstance_LargeParallel measures, natively and in both
// resumption modes, what a parallel multi-instance activity over 10,000
// elements costs while every inner instance waits for its job: the
// goroutines and heap it holds. Waiting inner instances must not hold a
// goroutine each: a track that starts parked gets its goroutine only
// when it is woken. The figures are logged (go test -v); only the
// goroutine bound is asserted. Completing every job must then collect
// all results in order.
func TestMultiInstance_LargeParallel(t *testing.T) {
	for _, mode := range []engine.Resumption{engine.ResumeGoroutines, engine.ResumeDirect} {
		name := map[engine.Resumption]string{engine.ResumeGoroutines: "goroutines", engine.ResumeDirect: "direct"}[mode]
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, engine.WithResumption(mode),
				engine.WithLimits(engine.Limits{MaxTokens: 2 * largeMI, MaxTokensPerInput: 2 * largeMI, MaxRecordsPerInput: 10 * largeMI}))
			// A cardinality rather than a collection of 10,000: every job's
			// variables would hold the collection, and listing the jobs
			// copies them all.
			deploy(t, e, miProcess(miTask("act", `<bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>= n</bpmn:loopCardinality>`+
				`<bpmn:extensionElements><zeebe:loopCharacteristics outputCollection="results" outputElement="= result"/></bpmn:extensionElements>`+
				`</bpmn:multiInstanceLoopCharacteristics>`)))
			goroutines, heap := footprint()
			began := time.Now()
			inst := start(t, e, map[string]any{"n": largeMI})
			started := time.Since(began)
			g, h := footprint()
			jobs := e.Jobs(engine.JobFilter{Type: "w"})
			require.Len(t, jobs, largeMI)
			t.Logf("%s: %d inner instances waiting: +%d goroutines, +%.1f MiB heap and stacks (%.0f bytes each); started and settled in %v",
				name, largeMI, g-goroutines, float64(h-heap)/(1<<20), float64(h-heap)/largeMI, started.Round(time.Millisecond))
			assert.Less(t, g-goroutines, 100, "waiting inner instances hold no goroutine each")

			began = time.Now()
			for _, j := range jobs {
				require.NoError(t, e.CompleteJob(ctxT(t), j.Key, map[string]any{"result": j.Variables["loopCounter"]}))
			}
			st, err := inst.Wait(ctxT(t))
			require.NoError(t, err)
			require.Equal(t, engine.Completed, st)
			t.Logf("%s: %d jobs completed in %v", name, largeMI, time.Since(began).Round(time.Millisecond))
			results := inst.Variables()["results"].([]any)
			require.Len(t, results, largeMI)
			for i, r := range results {
				if r != float64(i+1) {
					t.Fatalf("results[%d] = %v", i, r)
				}
			}
		})
	}
}

// footprint returns the goroutines running and the memory live on the
// heap and on goroutine stacks, after a collection.
func footprint() (goroutines int, memory uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc + ms.StackInuse
}
