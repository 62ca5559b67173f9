package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/internal/dispatch"
	"github.com/flowtrack/flowtrack/internal/reply"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server/monitor"
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
	// OnError is told what the server could not send: an answer that
	// failed to publish (the requester then hears nothing and waits out
	// its timeout), one too large for a requester that takes no chunks
	// (it was answered TOO_LARGE), an event that could not be published.
	// Default: ignored.
	OnError func(error)
	// Clock, when set, is the engine's clock instead of the real one (the
	// REST API's controlled clock, server/rest.Clock). It must read real
	// time until told otherwise: the store's timers and job deadlines
	// are instants.
	Clock clock.Clock
	// Access, when set, checks every request against its caller's role
	// (the NATS server shares the caller's identity with the request,
	// NetConfig); a refused request is answered PERMISSION_DENIED. Nil
	// checks nothing: every caller that reaches the subjects may do
	// everything.
	Access *Access
	// Monitor, when set, gets the server's metrics (server/monitor): its
	// engine as partition Partition (1 for a single server) counted from
	// the event observer the server has anyway, every request's latency
	// and outcome, and every store commit. Nil measures nothing.
	Monitor *monitor.Monitor
	// Logger, when set, gets the server's log (log/slog): incidents and
	// failed instances at level Warn, every event at Debug (when the
	// logger's handler has Debug on), and the job queues' trouble
	// (unless Jobs.OnError is set), each line with the cluster, the
	// partition, and the process, instance, element and job keys that
	// apply. Nil logs nothing.
	Logger *slog.Logger
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
	onError func(error)
	running sync.WaitGroup
	sub     *nats.Subscription
	unsub   func() error
	jobs    *Jobs
	access  *Access

	// Observability (docs/observability.md).
	partition int // Config.Partition
	mon       *monitor.Monitor
	monEng    *monitor.Engine // nil without a Monitor
	log       *slog.Logger    // nil without Config.Logger
	debug     bool            // log has Debug on: every event is logged
}

// MaxInFlight bounds the operations a server runs at once; further
// requests wait in the NATS subscription's buffer.
const MaxInFlight = 64

var validCluster = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ErrBadCluster is returned by New for a cluster name that cannot be a
// subject token.
var ErrBadCluster = api.ErrBadCluster

// ErrClusterServed is returned by New when another server already answers
// for the cluster on the NATS system: two servers on one store would
// overwrite each other's state.
var ErrClusterServed = api.ErrClusterServed

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
	if cfg.Monitor != nil {
		store = cfg.Monitor.Store(store)
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
	s := &Server{nc: nc, prefix: subject, eng: eng, mod: dispatch.NewServed(eng, clk), slots: make(chan struct{}, MaxInFlight), serving: cfg.Serving, access: cfg.Access, onError: cfg.OnError}
	if s.onError == nil {
		s.onError = func(error) {}
	}
	// Observers run on the engine's goroutines: Publish only buffers, so
	// it gives the engine no input and does not wait for it.
	s.cluster = cfg.Cluster
	s.partition = cfg.Partition
	if cfg.Monitor != nil {
		s.mon, s.monEng = cfg.Monitor, cfg.Monitor.AddEngine(max(cfg.Partition, 1), eng)
		s.mod.OnActivated(s.monEng.Tally.AddJobsActivated)
		onActivated := cfg.Jobs.Activated
		cfg.Jobs.Activated = func(typ string, n int) {
			s.monEng.Tally.AddJobsActivated(typ, n)
			if onActivated != nil {
				onActivated(typ, n)
			}
		}
	}
	if s.log = serverLogger(cfg); s.log != nil {
		s.debug = s.log.Enabled(ctx, slog.LevelDebug)
		if cfg.Jobs.OnError == nil {
			log := s.log
			cfg.Jobs.OnError = func(err error) { log.Warn("job queue", "err", err) }
		}
	}
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
		s.respond(m, "", closedResponse)
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
	start := time.Now()
	span := s.startSpan(m, op)
	var out []byte
	if s.access != nil {
		if err := s.access.Check(m.Header, op, m.Data, s.jobType); err != nil {
			out = DeniedResponse(err)
		}
	}
	switch {
	case out != nil: // refused
	case dispatch.Concurrent(op):
		s.mu.RLock()
		out = s.mod.Call(op, m.Data) // after Close, the engine answers CLOSED
		s.mu.RUnlock()
	default:
		s.mu.Lock()
		out = s.mod.Call(op, m.Data)
		s.mu.Unlock()
	}
	if s.mon != nil {
		s.measure(op, start, out)
	}
	endSpan(span, out)
	s.respond(m, op, out)
}

// respond answers m with out (package reply: in chunks to a requester
// that takes them, TOO_LARGE to one that does not), telling OnError what
// could not be sent.
func (s *Server) respond(m *nats.Msg, op string, out []byte) {
	if err := reply.Respond(s.nc, m, out, nil, TooLarge); err != nil {
		s.onError(fmt.Errorf("server: answer %s: %w", op, err))
	}
}

// jobType is the type of the engine's job key, for Access.
func (s *Server) jobType(key int64) (string, bool) {
	j, ok := s.eng.Job(key)
	return j.Type, ok
}

// TooLarge is the answer to a requester that takes no chunks when the
// answer is size bytes and a message carries max: TOO_LARGE.
func TooLarge(size, max int) []byte {
	out, _ := json.Marshal(wire.Response[any]{Error: &wire.Error{Code: wire.CodeTooLarge,
		Message: fmt.Sprintf("the answer is %d bytes and a NATS message carries %d: ask for a page (jobs: limit, afterKey), or use a client that takes chunked answers (package client, the SDK)", size, max)},
		Events: []engine.Event{}, Now: time.Now()})
	return out
}

// okPrefix starts every successful response envelope (wire.Response).
var okPrefix = []byte(`{"ok":true`)

// measure records one answered request with the Monitor, and the
// messages and signals it published, which the event stream does not
// carry.
func (s *Server) measure(op string, start time.Time, out []byte) {
	ok := bytes.HasPrefix(out, okPrefix)
	s.mon.Command(op, time.Since(start), ok)
	if ok {
		switch op {
		case "publish_message":
			s.monEng.Tally.AddMessagesPublished(1)
		case "broadcast_signal":
			s.monEng.Tally.AddSignalsBroadcast(1)
		}
	}
}

// publish sends one event to its instance's subject (and counts it, with
// a Monitor).
func (s *Server) publish(ev engine.Event) {
	if s.monEng != nil {
		s.monEng.Tally.Observe(ev)
	}
	if s.log != nil {
		s.logEvent(ev)
	}
	buf, err := wire.AppendEvent(make([]byte, 0, 192), &ev)
	if err != nil {
		return // only variables JSON cannot carry fail, and the engine holds none
	}
	if err := s.nc.Publish(wire.EventSubject(s.cluster, ev.InstanceKey), buf); err != nil {
		s.onError(fmt.Errorf("server: publish event %d of instance %d: %w", ev.Seq, ev.InstanceKey, err))
	}
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
	if s.monEng != nil {
		s.monEng.Remove() // not ready, and no series, from here on
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
