package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/flowtrack/flowtrack/bench/workload"
	"github.com/flowtrack/flowtrack/engine"
)

// ScaleResult is the JSON line of the scale run.
type ScaleResult struct {
	Kind           string  `json:"kind"` // "scale"
	Host           string  `json:"host"`
	Parked         int     `json:"parked"`
	ParkSeconds    float64 `json:"park_seconds"`     // to start and park them all
	BytesPerParked float64 `json:"bytes_per_parked"` // Go heap + stacks per parked instance
	RSSPerParked   float64 `json:"rss_bytes_per_parked"`
	HeapPerParked  float64 `json:"heap_bytes_per_parked"`  // of which Go heap in use
	StackPerParked float64 `json:"stack_bytes_per_parked"` // of which goroutine stacks
	RSSParkedMB    float64 `json:"rss_parked_mb"`          // the process's RSS with them all parked
	PeakRSSMB      float64 `json:"peak_rss_mb"`            // peak RSS from parking to the end of the drain
	Corr1kP50us    float64 `json:"corr_1k_p50_us"`         // publish to completed, 1,000 waiting
	Corr1kP99us    float64 `json:"corr_1k_p99_us"`
	Corr100kP50us  float64 `json:"corr_100k_p50_us"` // the same with all of them waiting
	Corr100kP99us  float64 `json:"corr_100k_p99_us"`
	DrainPerSec    float64 `json:"drain_per_s"` // correlating all the rest
	Completed      int     `json:"completed"`
	GoroutinesLeft int     `json:"goroutines_leaked"`
	OK             bool    `json:"ok"`
	Error          string  `json:"error,omitempty"`
}

// samples is how many correlations each latency figure is measured on.
const samples = 500

// scale parks n instances of the message workload on their catch event,
// measures memory per parked instance and correlation latency with 1,000
// and with n waiting, then correlates all and checks every one completed
// and no goroutine is left. The engine resumes tokens as r says.
func scale(dirs workload.Dirs, n int, r engine.Resumption) ScaleResult {
	res := ScaleResult{Kind: "scale", Host: "native", Parked: n}
	if err := scaleRun(dirs, n, r, &res); err != nil {
		res.Error = err.Error()
		return res
	}
	// scaleRun has checked that every instance completed.
	res.OK = res.GoroutinesLeft <= 0
	if !res.OK {
		res.Error = fmt.Sprintf("%d goroutines left after every instance ended and the engine closed", res.GoroutinesLeft)
	}
	return res
}

func scaleRun(dirs workload.Dirs, n int, r engine.Resumption, res *ScaleResult) error {
	ctx := context.Background()
	w, _ := workload.Find("message")
	xml, err := dirs.XML(w)
	if err != nil {
		return err
	}
	baseG := runtime.NumGoroutine()
	nat, err := workload.NewNative(engine.WithResumption(r))
	if err != nil {
		return err
	}
	e := nat.E
	if _, err := e.Deploy(w.File, xml); err != nil {
		return err
	}
	insts := make([]*engine.Instance, 0, n)
	park := func(upto int) error {
		for i := len(insts); i < upto; i++ {
			inst, err := e.Start(ctx, "message", map[string]any{"key": fmt.Sprintf("s%d", i)})
			if err != nil {
				return err
			}
			insts = append(insts, inst)
		}
		return e.Settle(ctx)
	}
	// correlate publishes to instances [lo, lo+count) one at a time and
	// returns the latencies from publish to completion.
	done := make([]bool, n+samples)
	correlate := func(lo, count int) ([]time.Duration, error) {
		lats := make([]time.Duration, 0, count)
		for i := lo; i < lo+count; i++ {
			t0 := time.Now()
			if err := e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: fmt.Sprintf("s%d", i)}); err != nil {
				return nil, err
			}
			if err := nat.Finish(insts[i]); err != nil {
				return nil, err
			}
			lats = append(lats, time.Since(t0))
			done[i] = true
			res.Completed++
		}
		slices.Sort(lats)
		return lats, nil
	}
	pct := func(l []time.Duration, p float64) float64 {
		return float64(l[min(len(l)-1, int(p*float64(len(l))))]) / 1e3
	}

	// 1,000 waiting (plus the samples, so that 1,000 still wait during the
	// last one).
	small := min(n, 1000+samples)
	if err := park(small); err != nil {
		return err
	}
	lats, err := correlate(0, min(samples, small))
	if err != nil {
		return err
	}
	res.Corr1kP50us, res.Corr1kP99us = pct(lats, 0.5), pct(lats, 0.99)

	// All n waiting: memory, then latency again.
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore := workload.RSSMB()
	workload.ResetPeakRSS()
	waitingBefore := len(insts) - res.Completed
	t0 := time.Now()
	if err := park(n + samples); err != nil {
		return err
	}
	res.ParkSeconds = time.Since(t0).Seconds()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	added := float64(len(insts) - res.Completed - waitingBefore)
	inUse := func(m *runtime.MemStats) float64 { return float64(m.HeapInuse + m.StackInuse) }
	res.BytesPerParked = (inUse(&after) - inUse(&before)) / added
	res.HeapPerParked = float64(after.HeapInuse-before.HeapInuse) / added
	res.StackPerParked = float64(after.StackInuse-before.StackInuse) / added
	res.RSSParkedMB = workload.RSSMB()
	res.RSSPerParked = (res.RSSParkedMB - rssBefore) * (1 << 20) / added
	res.Parked = len(insts) - res.Completed
	// Sample across the whole key range so index position does not matter.
	var sampleLats []time.Duration
	step := (len(insts) - small) / samples
	for k := range samples {
		i := small + k*step
		l, err := correlate(i, 1)
		if err != nil {
			return err
		}
		sampleLats = append(sampleLats, l...)
	}
	slices.Sort(sampleLats)
	res.Corr100kP50us, res.Corr100kP99us = pct(sampleLats, 0.5), pct(sampleLats, 0.99)

	// Correlate all the rest, publishing without waiting, then wait for all.
	t0 = time.Now()
	rest := 0
	for i := range insts {
		if done[i] {
			continue
		}
		rest++
		if err := e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: fmt.Sprintf("s%d", i)}); err != nil {
			return err
		}
	}
	for i, inst := range insts {
		if done[i] {
			continue
		}
		if err := nat.Finish(inst); err != nil {
			return err
		}
		res.Completed++
	}
	res.DrainPerSec = float64(rest) / time.Since(t0).Seconds()
	res.PeakRSSMB = workload.PeakRSSMB()
	if want := len(insts); res.Completed != want {
		return fmt.Errorf("%d of %d instances completed", res.Completed, want)
	}
	res.Parked = n // report the nominal figure; n+samples were parked at the peak
	if err := nat.Close(); err != nil {
		return err
	}
	insts = nil
	// Goroutines end right after their instance is done; give the
	// scheduler a moment before counting.
	for range 100 {
		if res.GoroutinesLeft = runtime.NumGoroutine() - baseG; res.GoroutinesLeft <= 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res.GoroutinesLeft > 0 {
		buf := make([]byte, 1<<16)
		fmt.Fprintf(os.Stderr, "scale: %d goroutines left:\n%s\n", res.GoroutinesLeft, buf[:runtime.Stack(buf, true)])
	}
	return nil
}
