package workload

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// InFlight is how many instances the concurrent mode keeps running at once.
const InFlight = 100

// Target is a host the measurement loop drives: the native engine or the
// wasm module in wazero.
type Target interface {
	Session
	// Deploy deploys a BPMN document on every engine of the target.
	Deploy(name string, xml []byte) error
	// Start starts an instance for worker (a target with several engines
	// spreads workers over them; sequential runs use worker 0).
	Start(worker int, process string, vars map[string]any) (Ref, error)
	// Finish waits for the instance to end and fails unless it completed.
	Finish(ref Ref) error
	// Advance moves the virtual clock of every engine forward by d.
	Advance(d time.Duration) error
	// Close releases the target and checks it is left clean.
	Close() error
}

// Mode is sequential (one instance at a time) or concurrent (InFlight at
// once).
type Mode string

// Modes.
const (
	Seq  Mode = "seq"
	Conc Mode = "conc"
)

// Result is one JSON line of the results: a workload measured on a host in
// a mode.
type Result struct {
	Kind     string  `json:"kind"` // "throughput"
	Host     string  `json:"host"`
	Workload string  `json:"workload"`
	Mode     Mode    `json:"mode"`
	N        int     `json:"n"`    // instances per measured run
	Runs     int     `json:"runs"` // measured runs (after one warm-up)
	Median   float64 `json:"ips_median"`
	Min      float64 `json:"ips_min"`
	Max      float64 `json:"ips_max"`
	P50us    float64 `json:"p50_us"`
	P99us    float64 `json:"p99_us"`
	// Allocs and Bytes per instance, Go heap only (for the wazero host:
	// the host side, not the module's linear memory). -1: unknown.
	Allocs  float64 `json:"allocs_per_instance"`
	Bytes   float64 `json:"bytes_per_instance"`
	PeakRSS float64 `json:"peak_rss_mb"` // process peak RSS during the measured runs
	// CPUus is the process's CPU time (user and system, every thread) per
	// instance during the measured runs: unlike the rates it hardly moves
	// when other work shares the machine.
	CPUus float64 `json:"cpu_us_per_instance"`
	OK    bool    `json:"ok"` // every instance completed
	Error string  `json:"error,omitempty"`
}

// Options tune Measure.
type Options struct {
	Runs      int           // measured runs (default 5)
	RunTime   time.Duration // target duration of one run, to pick N (default 300ms)
	MinN      int           // default 200
	MaxN      int           // default 50,000
	WarmupN   int           // instances of the warm-up run (default 200)
	FixedN    int           // if set, N without calibration
	KeyOffset int           // first instance number, so that keys never repeat
}

func (o *Options) defaults() {
	if o.Runs <= 0 {
		o.Runs = 5
	}
	if o.RunTime <= 0 {
		o.RunTime = 300 * time.Millisecond
	}
	if o.MinN <= 0 {
		o.MinN = 200
	}
	if o.MaxN <= 0 {
		o.MaxN = 50_000
	}
	if o.WarmupN <= 0 {
		o.WarmupN = 200
	}
}

// Measure runs w on t in mode: one warm-up run that also picks N so a run
// takes about opts.RunTime, then opts.Runs measured runs. Times never fail
// it; an instance that does not complete does.
func Measure(host string, t Target, w Workload, mode Mode, opts Options) Result {
	opts.defaults()
	res := Result{Kind: "throughput", Host: host, Workload: w.Name, Mode: mode, Allocs: -1, Bytes: -1}
	next := opts.KeyOffset
	warm := opts.WarmupN
	if opts.FixedN > 0 {
		warm = min(warm, opts.FixedN)
	}
	d, _, err := run(t, w, mode, warm, next)
	next += warm
	if err != nil {
		res.Error = "warm-up: " + err.Error()
		return res
	}
	n := opts.FixedN
	if n == 0 {
		rate := float64(warm) / d.Seconds()
		n = int(rate * opts.RunTime.Seconds())
		n = max(opts.MinN, min(opts.MaxN, n/InFlight*InFlight))
	}
	res.N, res.Runs = n, opts.Runs
	ResetPeakRSS()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	var rates []float64
	var lats []time.Duration
	for range opts.Runs {
		d, l, err := run(t, w, mode, n, next)
		next += n
		if err != nil {
			res.Error = err.Error()
			return res
		}
		rates = append(rates, float64(n)/d.Seconds())
		lats = append(lats, l...)
	}
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&after)
	total := float64(n * opts.Runs)
	res.CPUus = us(cpu) / total
	res.Allocs = float64(after.Mallocs-before.Mallocs) / total
	res.Bytes = float64(after.TotalAlloc-before.TotalAlloc) / total
	res.PeakRSS = PeakRSSMB()
	slices.Sort(rates)
	res.Median, res.Min, res.Max = rates[len(rates)/2], rates[0], rates[len(rates)-1]
	slices.Sort(lats)
	res.P50us = us(percentile(lats, 0.50))
	res.P99us = us(percentile(lats, 0.99))
	res.OK = true
	return res
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(len(sorted)-1, i))]
}

// run plays n instances numbered from first and returns the wall time and
// each instance's latency (start to completion).
func run(t Target, w Workload, mode Mode, n, first int) (time.Duration, []time.Duration, error) {
	lats := make([]time.Duration, n)
	begin := time.Now()
	var err error
	switch {
	case mode == Seq:
		for j := range n {
			t0 := time.Now()
			if err = playOne(t, w, 0, first+j, true); err != nil {
				break
			}
			lats[j] = time.Since(t0)
		}
	case w.Advance == 0:
		err = pool(n, func(worker, j int) error {
			t0 := time.Now()
			if err := playOne(t, w, worker, first+j, false); err != nil {
				return err
			}
			lats[j] = time.Since(t0)
			return nil
		})
	default:
		err = batches(t, w, n, first, lats)
	}
	return time.Since(begin), lats, err
}

// playOne starts instance i, plays its script and waits for its end. With
// advance set it also moves the clock once the instance waits on its timer.
func playOne(t Target, w Workload, worker, i int, advance bool) error {
	var vars map[string]any
	if w.Vars != nil {
		vars = w.Vars(i)
	}
	ref, err := t.Start(worker, w.Process, vars)
	if err != nil {
		return fmt.Errorf("start %s #%d: %w", w.Process, i, err)
	}
	if w.Script != nil {
		if err := w.Script(t, ref, i); err != nil {
			return fmt.Errorf("%s #%d: %w", w.Name, i, err)
		}
	}
	if advance && w.Advance > 0 {
		if err := t.AwaitWaiting(ref, "timer"); err != nil {
			return err
		}
		if err := t.Advance(w.Advance); err != nil {
			return err
		}
	}
	if err := t.Finish(ref); err != nil {
		return fmt.Errorf("%s #%d: %w", w.Name, i, err)
	}
	return nil
}

// pool runs fn for j in [0, n) on InFlight workers.
func pool(n int, fn func(worker, j int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for worker := range min(InFlight, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1) - 1)
				if j >= n {
					return
				}
				if err := fn(worker, j); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					next.Store(int64(n)) // stop the others
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// batches plays a timer workload InFlight instances at a time: start them
// all, wait until all wait on their timer, advance the clock once, wait for
// them all to complete.
func batches(t Target, w Workload, n, first int, lats []time.Duration) error {
	starts := make([]time.Time, n)
	refs := make([]Ref, n)
	for lo := 0; lo < n; lo += InFlight {
		hi := min(n, lo+InFlight)
		err := pool(hi-lo, func(worker, k int) error {
			j := lo + k
			starts[j] = time.Now()
			var vars map[string]any
			if w.Vars != nil {
				vars = w.Vars(first + j)
			}
			ref, err := t.Start(worker, w.Process, vars)
			if err != nil {
				return err
			}
			refs[j] = ref
			return t.AwaitWaiting(ref, "timer")
		})
		if err != nil {
			return err
		}
		if err := t.Advance(w.Advance); err != nil {
			return err
		}
		err = pool(hi-lo, func(_, k int) error {
			j := lo + k
			if err := t.Finish(refs[j]); err != nil {
				return fmt.Errorf("%s #%d: %w", w.Name, first+j, err)
			}
			lats[j] = time.Since(starts[j])
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// cpuTime returns the CPU time the process has used, or 0 where the
// system does not say.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ResetPeakRSS resets the kernel's peak-RSS mark of this process (Linux;
// elsewhere PeakRSSMB then reports the peak since start).
func ResetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// PeakRSSMB returns the process's peak resident set size in MB (VmHWM), or
// -1 where /proc is missing.
func PeakRSSMB() float64 { return procStatusMB("VmHWM:") }

// RSSMB returns the current resident set size in MB, or -1.
func RSSMB() float64 { return procStatusMB("VmRSS:") }

func procStatusMB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return -1
			}
			return kb / 1024
		}
	}
	return -1
}

// ErrNotCompleted is returned by Finish for an instance that ended other
// than completed (or did not end).
var ErrNotCompleted = errors.New("instance did not complete")
