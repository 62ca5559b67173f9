// Package monitor is what an operator watches of a flowtrack server:
// Prometheus metrics at /metrics and the health checks /healthz (alive)
// and /readyz (ready to serve) for a container orchestrator's probes.
// docs/observability.md lists the metrics and their meanings.
//
// The metrics come from Prometheus' own Go client
// (github.com/prometheus/client_golang). Most are read when Prometheus
// scrapes, not counted as the engine runs: the engine's counts from its
// event stream (engine/tally, fed by the observer the server already has
// for its NATS event subjects), what it holds open (Engine.Metrics), the
// cluster's partition ownership and the NATS server's own figures. Only
// command and store commit latencies are recorded as they happen, as
// histogram observations (a few atomic adds each).
//
// A Monitor belongs to one process (a single server, or one cluster node
// with the partitions it owns); server.Config.Monitor and
// cluster.Config.Monitor hand it to them. Its methods are safe for
// concurrent use.
package monitor

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/tally"
	"github.com/flowtrack/flowtrack/internal/dispatch"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Monitor gathers one process's metrics and readiness checks. New makes
// one; Handler serves them.
type Monitor struct {
	reg *prometheus.Registry

	commandSeconds *prometheus.HistogramVec
	commandErrors  *prometheus.CounterVec
	commitSeconds  prometheus.Histogram
	commitBytes    prometheus.Counter
	commitErrors   prometheus.Counter
	leaseRenewals  *prometheus.CounterVec

	ops map[string]bool // the operations named in labels; others are "other"

	mu        sync.Mutex
	engines   map[int]*Engine
	checks    map[string]func() error
	nc        *nats.Conn
	ns        *natsserver.Server
	ownership func() (owned []int, partitions int)
}

// New returns a Monitor with the Go runtime's and the process's standard
// collectors registered beside flowtrack's.
func New() *Monitor {
	m := &Monitor{reg: prometheus.NewRegistry(), engines: map[int]*Engine{}, checks: map[string]func() error{}, ops: map[string]bool{}}
	for _, op := range dispatch.Operations() {
		m.ops[op] = true
	}
	m.commandSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flowtrack_command_duration_seconds",
		Help:    "Time to answer one operation request (NATS or REST through NATS), commit included, by operation.",
		Buckets: latencyBuckets,
	}, []string{"operation"})
	m.commandErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flowtrack_command_errors_total",
		Help: "Operation requests answered with an error, by operation.",
	}, []string{"operation"})
	m.commitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "flowtrack_store_commit_duration_seconds",
		Help:    "Time of one store commit (a group of commands made durable together).",
		Buckets: latencyBuckets,
	})
	m.commitBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flowtrack_store_commit_bytes_total",
		Help: "Bytes of documents and history written by store commits.",
	})
	m.commitErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "flowtrack_store_commit_errors_total",
		Help: "Store commits that failed.",
	})
	m.leaseRenewals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flowtrack_lease_renewals_total",
		Help: "Partition lease renewals by this node, by result (ok, failed).",
	}, []string{"result"})
	m.leaseRenewals.WithLabelValues("ok")
	m.leaseRenewals.WithLabelValues("failed")
	m.reg.MustRegister(m.commandSeconds, m.commandErrors, m.commitSeconds, m.commitBytes, m.commitErrors, m.leaseRenewals,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		engineCollector{m}, natsCollector{m})
	return m
}

// latencyBuckets span a fast in-memory call to a commit waiting on a
// slow disk or a JetStream election, in seconds.
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Registry returns the Prometheus registry, for a host that adds metrics
// of its own or serves them elsewhere.
func (m *Monitor) Registry() *prometheus.Registry { return m.reg }

// Engine is an engine a Monitor reports on: its partition, the engine and
// the Tally its observer feeds.
type Engine struct {
	m         *Monitor
	partition int
	eng       *engine.Engine
	// Tally counts the engine's records; the server feeds it from its
	// event observer and adds the activations and publications it makes.
	Tally *tally.Tally
}

// AddEngine reports on eng as partition (1 for a single server). The
// caller feeds the returned Engine's Tally from its observer of eng and
// calls Remove when it closes eng. A second engine on the same partition
// replaces the first.
func (m *Monitor) AddEngine(partition int, eng *engine.Engine) *Engine {
	e := &Engine{m: m, partition: partition, eng: eng, Tally: tally.New()}
	m.mu.Lock()
	m.engines[partition] = e
	m.mu.Unlock()
	return e
}

// Remove stops reporting on the engine (its partition's series vanish
// from the next scrape).
func (e *Engine) Remove() {
	e.m.mu.Lock()
	if e.m.engines[e.partition] == e {
		delete(e.m.engines, e.partition)
	}
	e.m.mu.Unlock()
}

// Command records one answered operation request that took d; ok is
// whether it succeeded. An operation the wire contract does not name is
// recorded as "other", so that a client cannot grow the label set.
func (m *Monitor) Command(op string, d time.Duration, ok bool) {
	if !m.ops[op] {
		op = "other"
	}
	m.commandSeconds.WithLabelValues(op).Observe(d.Seconds())
	if !ok {
		m.commandErrors.WithLabelValues(op).Inc()
	}
}

// LeaseRenewed records one partition lease renewal by this node and
// whether it succeeded.
func (m *Monitor) LeaseRenewed(ok bool) {
	if ok {
		m.leaseRenewals.WithLabelValues("ok").Inc()
	} else {
		m.leaseRenewals.WithLabelValues("failed").Inc()
	}
}

// SetOwnership makes the Monitor report the cluster's partitions: fn
// returns the partitions this node serves now and the cluster's partition
// count. A cluster node sets it; without it the process is a single
// server owning its one partition.
func (m *Monitor) SetOwnership(fn func() (owned []int, partitions int)) {
	m.mu.Lock()
	m.ownership = fn
	m.mu.Unlock()
}

// SetNATS makes the Monitor report the NATS connection (connected, its
// traffic) and, when ns is not nil, the embedded NATS server's own
// figures. Readiness then requires the connection to be connected.
func (m *Monitor) SetNATS(nc *nats.Conn, ns *natsserver.Server) {
	m.mu.Lock()
	m.nc, m.ns = nc, ns
	m.mu.Unlock()
	m.AddCheck("nats", func() error {
		if !nc.IsConnected() {
			return fmt.Errorf("NATS connection %s", strings.ToLower(nc.Status().String()))
		}
		return nil
	})
}

// AddCheck adds (or, by name, replaces) a readiness check: /readyz
// answers 200 only while every check returns nil.
func (m *Monitor) AddCheck(name string, fn func() error) {
	m.mu.Lock()
	m.checks[name] = fn
	m.mu.Unlock()
}

// Ready returns nil when the process is ready to serve: at least one
// engine open on its store (a cluster node: at least one partition
// owned) and every check passing; otherwise an error naming what is not.
func (m *Monitor) Ready() error {
	m.mu.Lock()
	engines := len(m.engines)
	names := make([]string, 0, len(m.checks))
	for name := range m.checks {
		names = append(names, name)
	}
	sort.Strings(names)
	checks := make([]func() error, len(names))
	for i, name := range names {
		checks[i] = m.checks[name]
	}
	m.mu.Unlock()
	var errs []error
	if engines == 0 {
		errs = append(errs, errors.New("engine: no engine open (a cluster node: no partition owned)"))
	}
	for i, fn := range checks {
		if err := fn(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", names[i], err))
		}
	}
	return errors.Join(errs...)
}

// Handler serves /metrics (the Prometheus text format, or OpenMetrics
// when asked), /healthz (200 while the process answers) and /readyz (200
// when Ready, 503 with the reasons otherwise).
func (m *Monitor) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := m.Ready(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(err.Error() + "\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// Paths are the paths Handler serves, for a listener that mounts it
// beside another API.
var Paths = []string{"/metrics", "/healthz", "/readyz"}

// snapshot returns the engines reported on, by partition.
func (m *Monitor) snapshot() []*Engine {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Engine, 0, len(m.engines))
	for _, e := range m.engines {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *Engine) int { return a.partition - b.partition })
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
