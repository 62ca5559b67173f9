package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/flowtrack/flowtrack/bench/workload"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// DryResult is the JSON line of a dehydration run.
type DryResult struct {
	Kind           string  `json:"kind"` // "dry"
	Host           string  `json:"host"` // "native"
	Resumption     string  `json:"resumption"`
	Parked         int     `json:"parked"`
	ParkSeconds    float64 `json:"park_seconds"`     // to start, park and dehydrate them all
	BytesPerParked float64 `json:"bytes_per_parked"` // Go heap + stacks per dehydrated instance
	HeapPerParked  float64 `json:"heap_bytes_per_parked"`
	StackPerParked float64 `json:"stack_bytes_per_parked"`
	RSSParkedMB    float64 `json:"rss_parked_mb"`
	LiveP50us      float64 `json:"live_p50_us"` // publish to completed, a live (hydrated) instance
	LiveP99us      float64 `json:"live_p99_us"`
	DryP50us       float64 `json:"dry_p50_us"` // the same for a dehydrated one
	DryP99us       float64 `json:"dry_p99_us"`
	DrainPerSec    float64 `json:"drain_per_s"`
	Completed      int     `json:"completed"`
	GoroutinesLeft int     `json:"goroutines_leaked"`
	OK             bool    `json:"ok"`
	Error          string  `json:"error,omitempty"`
}

// dryBatch is how many instances are parked before they are dehydrated,
// which bounds the memory they take awake.
const dryBatch = 10_000

// dry parks n instances of the message workload on their catch event and
// dehydrates them (Engine.Dehydrate after every batch), measures memory
// per dehydrated instance, then correlation latency on instances kept
// awake and on dehydrated ones, with all n waiting; then correlates all
// and checks that every one completed and no goroutine is left.
func dry(dirs workload.Dirs, n int, mode string) DryResult {
	res := DryResult{Kind: "dry", Host: "native", Resumption: mode, Parked: n}
	if err := dryRun(dirs, n, mode, &res); err != nil {
		res.Error = err.Error()
		return res
	}
	res.OK = res.GoroutinesLeft <= 0
	if !res.OK {
		res.Error = fmt.Sprintf("%d goroutines left after every instance ended and the engine closed", res.GoroutinesLeft)
	}
	return res
}

// resumptionOf reads the -resumption flag.
func resumptionOf(mode string) (engine.Resumption, error) {
	switch mode {
	case "goroutines":
		return engine.ResumeGoroutines, nil
	case "direct":
		return engine.ResumeDirect, nil
	}
	return 0, fmt.Errorf("resumption %q: want goroutines or direct", mode)
}

func dryRun(dirs workload.Dirs, n int, mode string, res *DryResult) error {
	ctx := context.Background()
	r, err := resumptionOf(mode)
	if err != nil {
		return err
	}
	w, _ := workload.Find("message")
	xml, err := dirs.XML(w)
	if err != nil {
		return err
	}
	baseG := runtime.NumGoroutine()
	e, err := engine.New(engine.WithClock(clock.NewVirtual(clock.Epoch)), engine.WithResumption(r))
	if err != nil {
		return err
	}
	defer e.Close(ctx)
	if _, err := e.Deploy(w.File, xml); err != nil {
		return err
	}
	insts := make([]*engine.Instance, 0, n+samples)
	start := func(upto int) error {
		for i := len(insts); i < upto; i++ {
			inst, err := e.Start(ctx, "message", map[string]any{"key": fmt.Sprintf("s%d", i)})
			if err != nil {
				return err
			}
			insts = append(insts, inst)
		}
		return e.Settle(ctx)
	}
	finish := func(inst *engine.Instance) error {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		st, err := inst.Wait(wctx)
		if err != nil {
			return err
		}
		if st != engine.Completed {
			return fmt.Errorf("instance %d ended %s", inst.Key(), st)
		}
		return nil
	}
	done := make([]bool, n+samples)
	correlate := func(i int) (time.Duration, error) {
		t0 := time.Now()
		if err := e.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: fmt.Sprintf("s%d", i)}); err != nil {
			return 0, err
		}
		if err := finish(insts[i]); err != nil {
			return 0, err
		}
		done[i] = true
		res.Completed++
		return time.Since(t0), nil
	}
	pct := func(l []time.Duration, p float64) float64 {
		return float64(l[min(len(l)-1, int(p*float64(len(l))))]) / 1e3
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore := workload.RSSMB()
	t0 := time.Now()
	for len(insts) < n {
		if err := start(min(n, len(insts)+dryBatch)); err != nil {
			return err
		}
		if _, err := e.Dehydrate(ctx); err != nil {
			return err
		}
	}
	res.ParkSeconds = time.Since(t0).Seconds()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	inUse := func(m *runtime.MemStats) float64 { return float64(m.HeapInuse + m.StackInuse) }
	res.BytesPerParked = (inUse(&after) - inUse(&before)) / float64(n)
	res.HeapPerParked = (float64(after.HeapInuse) - float64(before.HeapInuse)) / float64(n)
	res.StackPerParked = (float64(after.StackInuse) - float64(before.StackInuse)) / float64(n)
	res.RSSParkedMB = workload.RSSMB() - rssBefore
	for i := range insts {
		if !insts[i].Dehydrated() {
			return fmt.Errorf("instance %d is not dehydrated", insts[i].Key())
		}
	}

	// Live: instances started now stay awake (the engine dehydrates only
	// when told to). Dehydrated: sampled across the whole key range.
	runtime.GC()
	if err := start(n + samples); err != nil {
		return err
	}
	// One of each in turn, so that the machine's load weighs on both alike.
	var live, dried []time.Duration
	for k := range samples {
		l, err := correlate(n + k)
		if err != nil {
			return err
		}
		live = append(live, l)
		if l, err = correlate(k * (n / samples)); err != nil {
			return err
		}
		dried = append(dried, l)
	}
	slices.Sort(live)
	slices.Sort(dried)
	res.LiveP50us, res.LiveP99us = pct(live, 0.5), pct(live, 0.99)
	res.DryP50us, res.DryP99us = pct(dried, 0.5), pct(dried, 0.99)

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
		if err := finish(inst); err != nil {
			return err
		}
		res.Completed++
	}
	res.DrainPerSec = float64(rest) / time.Since(t0).Seconds()
	if want := len(insts); res.Completed != want {
		return fmt.Errorf("%d of %d instances completed", res.Completed, want)
	}
	if err := e.Close(ctx); err != nil {
		return err
	}
	for range 100 {
		if res.GoroutinesLeft = runtime.NumGoroutine() - baseG; res.GoroutinesLeft <= 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}
