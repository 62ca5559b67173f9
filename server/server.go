package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/internal/dispatch"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
)

// Config configures New. The zero value serves cluster "default" from a
// one-replica store.
type Config struct {
	// Cluster names the cluster in subjects and its store: letters,
	// digits, "_" and "-".
	Cluster string
	// Replicas is the store stream's replication factor (jetstore).
	Replicas int
	// Engine are further engine options (limits, WithRetainFinished...).
	// The server sets the store and the real clock.
	Engine []engine.Option
	// Partition, when above 0, makes the server one partition of a
	// cluster (package cluster): its engine hands out the partition's
	// keys (engine.WithKeySpace), it serves wire.PartitionOpSubject
	// rather than wire.OpSubject, and it does not ask whether the cluster
	// is served, for the partition's lease guards its store.
	Partition int
	// Store, when set, is the engine's store instead of the jetstore
	// named after the cluster (the cluster package's fenced partition
	// stores). It stays the caller's.
	Store engine.Store
	// Prepare, when set, runs on the engine once it has opened, before
	// the server answers anything (a cluster partition applies the
	// deployments it misses); an error fails New.
	Prepare func(context.Context, *engine.Engine) error
	// Jobs configures the job queues (StartJobs); their stream has the
	// store's Replicas unless Jobs.Replicas says otherwise.
	Jobs JobsConfig
	// Serving, when set, is asked before each request whether the server
	// may still answer for its engine (a cluster partition: whether its
	// fence is open). Once it says no, the server stops taking requests:
	// it answers that one CLOSED and unsubscribes, so that a partition
	// whose lease lapsed answers no query from state its next owner has
	// moved past, even before its node has noticed and closed it.
	Serving func() bool
	// Clock, when set, is the engine's clock instead of the real one (the
	// REST API's controlled clock, server/rest.Clock). It must read real
	// time until told otherwise: the store's timers and job deadlines
	// are instants.
	Clock clock.Clock
}

// Server serves one engine over NATS. Operations that only call the engine
// (dispatch.Concurrent: start, complete_job, publish_message, queries...)
// run concurrently, up to MaxInFlight at once, so that their commits share
// syncs (the engine's group commit); the others run alone.
type Server struct {
	nc      *nats.Conn
	cluster string
	prefix  string // the operations' subject less the operation
	eng     *engine.Engine
	mod     *dispatch.Module
	mu      sync.RWMutex // held for reading by concurrent operations, for writing by the others
	slots   chan struct{}
	gate    sync.Mutex // guards closed and stopped, and running's Add against Close's Wait
	closed  bool
	stopped bool // no longer subscribed (Config.Serving said no, or Close)
	serving func() bool
	running sync.WaitGroup
	sub     *nats.Subscription
	unsub   func() error
	jobs    *Jobs
}

// MaxInFlight bounds the operations a server runs at once; further
// requests wait in the NATS subscription's buffer.
const MaxInFlight = 64

var validCluster = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ErrBadCluster is returned by New for a cluster name that cannot be a
// subject token.
var ErrBadCluster = errors.New("bad cluster name")

// ErrClusterServed is returned by New when another server already answers
// for the cluster on the NATS system: two servers on one store would
// overwrite each other's state.
var ErrClusterServed = errors.New("another flowtrack server already serves the cluster")

// New opens the cluster's store on nc (engine/jetstore, named after the
// cluster), starts the engine on the real clock from what the store
// holds (instances go on where they were; timers that fell due while no
// server ran fire at once) and starts serving. Close stops it; nc stays
// the caller's.
func New(ctx context.Context, nc *nats.Conn, cfg Config) (*Server, error) {
	if cfg.Cluster == "" {
		cfg.Cluster = "default"
	}
	if !validCluster.MatchString(cfg.Cluster) {
		return nil, fmt.Errorf("server: %w %q: only letters, digits, \"_\" and \"-\" are allowed", ErrBadCluster, cfg.Cluster)
	}
	subject := wire.OpSubject(cfg.Cluster, "")
	opts := cfg.Engine
	if cfg.Partition > 0 {
		subject = wire.PartitionOpSubject(cfg.Cluster, cfg.Partition, "")
		opts = append(opts[:len(opts):len(opts)], engine.WithKeySpace(cfg.Partition))
	} else {
		// Without a cluster's leases, this check (racy: two servers
		// starting at the same instant both pass it) is the guard.
		_, err := nc.Request(wire.OpSubject(cfg.Cluster, "now"), nil, time.Second)
		switch {
		case err == nil:
			return nil, fmt.Errorf("server: cluster %q: %w", cfg.Cluster, ErrClusterServed)
		case !errors.Is(err, nats.ErrNoResponders):
			return nil, fmt.Errorf("server: cluster %q: ask whether it is served: %w", cfg.Cluster, err)
		}
	}
	store := cfg.Store
	if store == nil {
		js, err := jetstore.Open(ctx, nc, &jetstore.Options{Name: cfg.Cluster, Replicas: cfg.Replicas})
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		store = js
	}
	var clk clock.Clock = clock.Real{}
	if cfg.Clock != nil {
		clk = cfg.Clock
	}
	eng, err := engine.New(append(opts, engine.WithClock(clk), engine.WithStore(store))...)
	if err != nil {
		return nil, fmt.Errorf("server: start the engine: %w", err)
	}
	if cfg.Prepare != nil {
		if err := cfg.Prepare(ctx, eng); err != nil {
			_ = eng.Close(ctx)
			return nil, fmt.Errorf("server: prepare the engine: %w", err)
		}
	}
	s := &Server{nc: nc, prefix: subject, eng: eng, mod: dispatch.NewServed(eng, clk), slots: make(chan struct{}, MaxInFlight), serving: cfg.Serving}
	// Observers run on the engine's goroutines: Publish only buffers, so
	// it gives the engine no input and does not wait for it.
	s.cluster = cfg.Cluster
	s.unsub = eng.Subscribe(s.publish)
	if cfg.Jobs.Replicas == 0 {
		cfg.Jobs.Replicas = cfg.Replicas
	}
	if s.jobs, err = StartJobs(ctx, eng, nc, cfg.Cluster, cfg.Jobs); err != nil {
		_ = s.Close(ctx)
		return nil, fmt.Errorf("server: %w", err)
	}
	s.sub, err = nc.Subscribe(subject+"*", s.accept)
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		_ = s.Close(ctx)
		return nil, fmt.Errorf("server: subscribe to %s*: %w", subject, err)
	}
	return s, nil
}

// Engine returns the served engine, for in-process use next to the
// server.
func (s *Server) Engine() *engine.Engine { return s.eng }

// accept runs a request on a goroutine of its own, once a slot is free,
// unless the server is closing: then it answers CLOSED.
func (s *Server) accept(m *nats.Msg) {
	s.slots <- struct{}{}
	s.gate.Lock()
	if !s.stopped && s.serving != nil && !s.serving() {
		s.stopLocked()
	}
	if s.closed || s.stopped {
		s.gate.Unlock()
		<-s.slots
		if m.Reply != "" {
			_ = m.Respond(closedResponse)
		}
		return
	}
	s.running.Add(1)
	s.gate.Unlock()
	go func() {
		defer func() { <-s.slots; s.running.Done() }()
		s.serve(m)
	}()
}

// stopLocked stops taking requests, once; the caller holds the gate.
func (s *Server) stopLocked() error {
	if s.stopped || s.sub == nil {
		return nil
	}
	s.stopped = true
	return s.sub.Unsubscribe()
}

// closedResponse answers the requests that arrive while the server closes.
var closedResponse, _ = json.Marshal(wire.Response[any]{Error: &wire.Error{Code: wire.CodeClosed, Message: "the flowtrack server is closing"}, Events: []engine.Event{}})

// serve answers one request: the last token of the subject names the
// operation, the data is its request, the reply the response envelope.
func (s *Server) serve(m *nats.Msg) {
	op := m.Subject[len(s.prefix):]
	var out []byte
	if dispatch.Concurrent(op) {
		s.mu.RLock()
		out = s.mod.Call(op, m.Data) // after Close, the engine answers CLOSED
		s.mu.RUnlock()
	} else {
		s.mu.Lock()
		out = s.mod.Call(op, m.Data)
		s.mu.Unlock()
	}
	if m.Reply != "" {
		_ = m.Respond(out) // a requester that went away has no one to tell
	}
}

// publish sends one event to its instance's subject.
func (s *Server) publish(ev engine.Event) {
	buf, err := wire.AppendEvent(make([]byte, 0, 192), &ev)
	if err != nil {
		return // only variables JSON cannot carry fail, and the engine holds none
	}
	_ = s.nc.Publish(wire.EventSubject(s.cluster, ev.InstanceKey), buf)
}

// Close stops serving and closes the engine: what it committed stays in
// the store for the next server.
func (s *Server) Close(ctx context.Context) error {
	s.gate.Lock()
	closed := s.closed
	s.closed = true
	s.gate.Unlock()
	if closed {
		return nil
	}
	var errs []error
	s.gate.Lock()
	errs = append(errs, s.stopLocked())
	s.gate.Unlock()
	s.running.Wait() // the operations under way finish before the engine closes
	if s.jobs != nil {
		errs = append(errs, s.jobs.Close())
	}
	errs = append(errs, s.eng.Close(ctx))
	if err := s.unsub(); err != nil && !errors.Is(err, engine.ErrObserverDropped) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("server: close: %w", err)
	}
	return nil
}
