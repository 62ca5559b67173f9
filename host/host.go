// Package host runs flowtrack's WebAssembly module (wasm/, embedded as
// flowtrack.wasm.gz) inside any Go program through wazero, behind the same
// operations as the native engine package and with the same Go types
// (engine.Event, engine.Job, engine.Token, engine.DeployError...), so that
// tests and tools can drive either one.
//
//	e, err := host.New(ctx)
//	if err != nil { ... }
//	defer e.Close(ctx)
//	e.Deploy(ctx, "order.bpmn", xml)
//	key, _ := e.Start(ctx, "order", map[string]any{"amount": 120})
//	jobs, _ := e.Jobs(ctx, engine.JobFilter{InstanceKey: key})
//	for _, job := range jobs {
//		e.CompleteJob(ctx, job.Key, map[string]any{"valid": true})
//	}
//	state, _ := e.State(ctx, key)
//
// Example (example_test.go) is the complete program, checked by go test.
//
// Every call runs inside the module until the engine settles, so a call's
// effects (and its events, see Subscribe) are complete when it returns.
// Time is virtual: it moves only through Advance and AdvanceTo; NextDeadline
// says when the next timer is due.
//
// # Why one module instance per Engine, behind a lock?
//
// A wasm instance has one linear memory and runs one call at a time, so an
// Engine serialises its calls with a lock. Independent workloads that need
// parallelism create one Engine each: all Engines of a process share one
// compiled module, so a further Engine costs only instantiation (a few
// milliseconds), not compilation.
package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/internal/value"

	"github.com/tetratelabs/wazero"
	wazeroapi "github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// ABIVersion is the wasm/ABI.md version this package speaks. New refuses a
// module that reports another.
const ABIVersion = wire.ABIVersion

// MaxRequest is the module's request size limit (16 MiB). Larger requests
// are sent anyway so that the module reports them; they fail with a
// BAD_REQUEST *Error.
const MaxRequest = wire.MaxRequest

// ErrTrapped is returned by every call on an Engine whose module trapped
// (stopped without returning: a crash, or a context cancelled mid-call).
// The module was discarded with its instances; create a new Engine.
var ErrTrapped = wire.ErrTrapped

// ErrUnknownInstance is returned by the per-instance calls for a key that
// names no live or recently finished instance (code UNKNOWN_INSTANCE).
var ErrUnknownInstance = api.ErrUnknownInstance

// ErrUnsupported is returned for operations the module's engine cannot do
// (code UNSUPPORTED).
var ErrUnsupported = wire.ErrUnsupported

// ErrBadRequest is returned when the module rejects a request (code
// BAD_REQUEST or UNKNOWN_OPERATION): malformed, oversized or inconsistent.
// It is engine.ErrInvalidArgument, which the native engine returns for
// the same mistakes.
var ErrBadRequest = api.ErrInvalidArgument

// config is what the options set; its zero value is the default.
type config struct {
	module   []byte
	cache    wazero.CompilationCache
	ownCache bool // cache (possibly nil) was chosen by WithCompilationCache
	stderr   io.Writer
	limits   api.Limits
	onError  func(error)
}

// onErrorOrDefault is the error handler: WithErrorHandler's, or logging.
func (c *config) onErrorOrDefault() func(error) {
	if c.onError != nil {
		return c.onError
	}
	return func(err error) { log.Printf("flowtrack host: %v", err) }
}

// Option configures an Engine at New.
type Option func(*config)

// WithErrorHandler sets the function that receives the errors no caller
// is there to get: a panic in an observer, as an
// *engine.ObserverPanicError (the observer contract of package engine). It
// runs on the goroutine that delivered the record and must not panic
// itself. The default logs the error with the standard log package.
func WithErrorHandler(fn func(error)) Option { return func(c *config) { c.onError = fn } }

// WithModule runs wasm instead of the embedded Module() (for example a module
// built with other flags). The module must speak ABIVersion.
func WithModule(wasm []byte) Option { return func(c *config) { c.module = wasm } }

// WithCompilationCache compiles the module in a runtime of its own that
// uses cache (nil: no cache, every New compiles from scratch, which takes
// about a second). By default all Engines of a process share one runtime
// and one compiled module, cached on disk in os.UserCacheDir()/flowtrack
// (in memory when that directory is unusable), so that only the first New
// of the first process compiles.
func WithCompilationCache(cache wazero.CompilationCache) Option {
	return func(c *config) { c.cache, c.ownCache = cache, true }
}

// WithStderr copies what the module writes to stderr (only a crash report)
// to w. Either way the end of it is kept for the error of a trap.
func WithStderr(w io.Writer) Option { return func(c *config) { c.stderr = w } }

// WithLimits sets the module engine's limits, as engine.WithLimits does
// natively (zero fields keep the defaults). New fails for a negative one.
func WithLimits(l api.Limits) Option { return func(c *config) { c.limits = l } }

// compiled is a runtime with the module compiled in it.
type compiled struct {
	rt  wazero.Runtime
	mod wazero.CompiledModule
}

var (
	sharedMu sync.Mutex
	shared   *compiled
)

// sharedRuntime returns the process-wide runtime for the embedded module.
func sharedRuntime(ctx context.Context) (*compiled, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		return shared, nil
	}
	c, err := compile(ctx, Module(), defaultCache(), false)
	if err != nil {
		return nil, err
	}
	shared = c
	return c, nil
}

// defaultCache is a disk cache under the user cache directory, or an
// in-memory one when there is no usable directory.
func defaultCache() wazero.CompilationCache {
	if dir := cacheDir(); dir != "" {
		if cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "wazero")); err == nil {
			return cache
		}
	}
	return wazero.NewCompilationCache()
}

// compile makes a compiler runtime (never the interpreter: it is ~300x
// slower) with WASI and compiles wasm in it.
//
// The runtime does not close modules when a call's context is done
// (WithCloseOnContextDone): the checks it compiles in make every call
// about twice as slow (RATIONALE.md, "Why does a cancelled host call
// abandon the module rather than stop it?"), and a call cannot block,
// since the module never sleeps and the engine bounds every loop. A call
// whose context ends returns at once instead and abandons the module to
// finish on its own (Engine.run).
func compile(ctx context.Context, wasm []byte, cache wazero.CompilationCache, closeOnDone bool) (*compiled, error) {
	cfg := wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(closeOnDone)
	if cache != nil {
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("flowtrack host: WASI: %w", err)
	}
	mod, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("flowtrack host: compile module: %w", err)
	}
	return &compiled{rt: rt, mod: mod}, nil
}

// Engine is one flowtrack module instance: one engine with its deployed
// processes, instances and virtual clock.
//
// Its methods are safe for concurrent use: a lock serialises them, so one
// wasm instance is never entered from two goroutines. Observers registered
// with Subscribe follow the observer contract of package engine; they run
// on the goroutine of a call, after the call has released the lock, so
// they may call the Engine.
//
// Every call honours its context: waiting for the lock, and while the
// module works. A call whose context ends mid-call returns the context's
// error wrapped with ErrTrapped: the module cannot be stopped mid-call, so
// it is abandoned (it finishes that call on its own goroutine and is then
// closed) and the Engine is discarded as after a trap.
//
// If the module traps, the call returns an error wrapping ErrTrapped, the
// module instance is closed, and every later call returns ErrTrapped: the
// Engine is not repaired, because the instances it ran are gone. Create a
// new Engine (cheap: the compiled module is shared).
type Engine struct {
	// lock serialises everything that touches the module. It is a
	// channel so that waiting for it honours a context (see acquire).
	lock     chan struct{}
	own      wazero.Runtime // nil when the runtime is shared
	mod      wazeroapi.Module
	fns      map[string]wazeroapi.Function
	alloc    wazeroapi.Function
	free     wazeroapi.Function
	reqPtr   uint32 // reusable request buffer in linear memory
	reqCap   uint32
	stderr   *tailBuffer
	trapped  error
	now      time.Time
	deadline *time.Time

	// transport, when not nil, runs the operations instead of mod
	// (NewWithTransport); mod is then nil.
	transport Transport

	// Observers (Subscribe, notify). obsMu guards the fields below it.
	// pending holds records in the module's order, appended while the
	// call that produced them still holds lock; delivering says a
	// goroutine is handing them out, so that they reach each observer in
	// that order and one at a time.
	onError    func(error)
	obsMu      sync.Mutex
	observers  map[int]func(api.Event)
	nextObs    int
	pending    []api.Event
	delivering bool

	// closeLater is set by a Close whose context ended while a call ran:
	// that call closes the module when it returns.
	closeLater atomic.Bool
}

// acquire takes the Engine's lock, or returns ctx's error if ctx ends
// first.
func (e *Engine) acquire(ctx context.Context) error {
	select {
	case e.lock <- struct{}{}:
		return nil
	default:
	}
	select {
	case e.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *Engine) release() { <-e.lock }

// New instantiates the module and initialises it.
func New(ctx context.Context, opts ...Option) (*Engine, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	e := &Engine{lock: make(chan struct{}, 1), stderr: &tailBuffer{max: 4096, copy: cfg.stderr}, fns: make(map[string]wazeroapi.Function, len(wire.Operations)),
		onError: cfg.onErrorOrDefault()}
	var c *compiled
	var err error
	if cfg.module == nil && !cfg.ownCache {
		c, err = sharedRuntime(ctx)
	} else {
		wasm := cfg.module
		if wasm == nil {
			wasm = Module()
		}
		c, err = compile(ctx, wasm, cfg.cache, false)
		if c != nil {
			e.own = c.rt
		}
	}
	if err != nil {
		return nil, err
	}
	mc := wazero.NewModuleConfig().WithName("").WithStartFunctions().
		WithSysWalltime().WithSysNanotime().WithStderr(e.stderr)
	e.mod, err = c.rt.InstantiateModule(ctx, c.mod, mc)
	if err != nil {
		e.closeRuntime(ctx)
		return nil, fmt.Errorf("flowtrack host: instantiate module: %w", err)
	}
	if err := e.bind(ctx); err != nil {
		e.mod.Close(ctx)
		e.closeRuntime(ctx)
		return nil, err
	}
	if err := e.configure(ctx, cfg.limits); err != nil {
		e.mod.Close(ctx)
		e.closeRuntime(ctx)
		return nil, err
	}
	return e, nil
}

// Transport runs the operations of a flowtrack module that an Engine does
// not run itself, such as the Extism plug-in build (wasm/EXTISM.md) in an
// Extism host: the Engine encodes the requests and decodes the responses,
// so its typed API, errors and events are the same whatever runs the
// module.
type Transport interface {
	// Call runs operation op on its JSON request and returns the JSON
	// response envelope (wasm/ABI.md). An error means the module failed
	// (trapped): the Engine closes the transport and is discarded.
	Call(ctx context.Context, op string, request []byte) ([]byte, error)
	// Close releases the module.
	Close(ctx context.Context) error
}

// NewWithTransport returns an Engine whose operations run through t, which
// it owns from then on (Close closes it). Of the options only WithLimits
// applies: the others choose how New runs the module itself.
func NewWithTransport(ctx context.Context, t Transport, opts ...Option) (*Engine, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	e := &Engine{lock: make(chan struct{}, 1), stderr: &tailBuffer{max: 4096}, transport: t, onError: cfg.onErrorOrDefault()}
	if err := e.configure(ctx, cfg.limits); err != nil {
		if !errors.Is(err, ErrTrapped) {
			_ = t.Close(ctx)
		}
		return nil, err
	}
	return e, nil
}

// configure sets up a new Engine's module. Nobody listens yet: the module
// need not keep or encode events until Subscribe asks for them. Engine
// options go in the same call, before anything is deployed.
// Nobody listens yet: the module need not keep or encode events until
// Subscribe asks for them. Engine options go in the same call, before
// anything is deployed.
func (e *Engine) configure(ctx context.Context, limits api.Limits) error {
	events := false
	return e.call(ctx, "configure", wire.ConfigureRequest{Events: &events, Limits: limitsOrNil(limits)}, nil)
}

// knownOperation reports whether op is an operation of the ABI.
func knownOperation(op string) bool {
	for _, o := range wire.Operations {
		if o.Name == op {
			return true
		}
	}
	return false
}

// limitsOrNil is l, or nil for the defaults, which need not be sent.
func limitsOrNil(l api.Limits) *api.Limits {
	if l == (api.Limits{}) {
		return nil
	}
	return &l
}

// setEvents tells the module whether responses should carry events.
func (e *Engine) setEvents(ctx context.Context, on bool) error {
	return e.call(ctx, "configure", wire.ConfigureRequest{Events: &on}, nil)
}

// bind initialises the reactor and caches the exports.
func (e *Engine) bind(ctx context.Context) error {
	init := e.mod.ExportedFunction("_initialize")
	if init == nil {
		return errors.New("flowtrack host: module exports no _initialize (not a reactor)")
	}
	if _, err := init.Call(ctx); err != nil {
		return fmt.Errorf("flowtrack host: _initialize: %w%s", err, e.stderr.suffix())
	}
	version := e.mod.ExportedFunction("abi_version")
	if version == nil {
		return errors.New("flowtrack host: module exports no abi_version")
	}
	res, err := version.Call(ctx)
	if err != nil {
		return fmt.Errorf("flowtrack host: abi_version: %w", err)
	}
	if v := uint32(res[0]); v != ABIVersion {
		return fmt.Errorf("flowtrack host: module speaks ABI version %d, this host speaks %d", v, ABIVersion)
	}
	e.alloc, e.free = e.mod.ExportedFunction("alloc"), e.mod.ExportedFunction("free")
	if e.alloc == nil || e.free == nil {
		return errors.New("flowtrack host: module exports no alloc/free")
	}
	for _, op := range wire.OperationNames() {
		fn := e.mod.ExportedFunction(op)
		if fn == nil {
			return fmt.Errorf("flowtrack host: module exports no operation %q", op)
		}
		e.fns[op] = fn
	}
	return nil
}

func (e *Engine) closeRuntime(ctx context.Context) {
	if e.own != nil {
		e.own.Close(ctx)
	}
}

// Close discards the module instance and everything it holds. Calls after
// Close return ErrClosed (engine.ErrClosed). Close returns when ctx ends
// even if a call is still running in the module: it then returns ctx's
// error, and that call closes the module as it returns.
func (e *Engine) Close(ctx context.Context) error {
	if err := e.acquire(ctx); err != nil {
		e.closeLater.Store(true)
		return fmt.Errorf("flowtrack host: close: a call is still running; the module closes when it returns: %w", err)
	}
	defer e.release()
	return e.closeLocked(ctx)
}

// closeLocked closes the module, if it is still open. Called with the
// lock held.
func (e *Engine) closeLocked(ctx context.Context) error {
	if e.transport != nil {
		err := e.transport.Close(ctx)
		e.transport = nil
		return err
	}
	if e.mod == nil {
		return nil
	}
	err := e.mod.Close(ctx)
	e.mod = nil
	e.closeRuntime(ctx)
	return err
}

// envelope is the module's response (wasm/ABI.md), its result still
// encoded.
type envelope = wire.Response[json.RawMessage]

// Call runs the module operation op with a JSON request and returns the raw
// JSON result. It is the escape hatch under the typed methods (and what
// tests use to send requests the typed methods cannot make). An error
// response is returned as an *Error.
func (e *Engine) Call(ctx context.Context, op string, request []byte) (json.RawMessage, error) {
	env, err := e.invoke(ctx, op, request)
	if err != nil {
		return nil, err
	}
	return env.Result, nil
}

// call marshals req, runs op and unmarshals the result into out (if not nil).
func (e *Engine) call(ctx context.Context, op string, req any, out any) error {
	data, err := encodeRequest(req)
	if err != nil {
		return fmt.Errorf("flowtrack host: %s: encode request: %w", op, err)
	}
	env, err := e.invoke(ctx, op, data)
	if err != nil {
		return err
	}
	if out != nil {
		if err := decodeResult(env.Result, out); err != nil {
			return fmt.Errorf("flowtrack host: %s: decode result: %w", op, err)
		}
	}
	return nil
}

// encodeRequest encodes a request: the hot ones by wire's appenders,
// without reflection, the others through encoding/json.
func encodeRequest(req any) ([]byte, error) {
	switch r := req.(type) {
	case wire.StartRequest:
		return wire.AppendStartRequest(make([]byte, 0, 64), r)
	case wire.MessageRequest:
		return wire.AppendMessageRequest(make([]byte, 0, 64), r)
	case wire.CompleteJobRequest:
		return wire.AppendCompleteJobRequest(make([]byte, 0, 64), r)
	case wire.InstanceRequest:
		return wire.AppendInstanceRequest(make([]byte, 0, 40), r), nil
	}
	return json.Marshal(req)
}

// decodeResult decodes a result into out keeping the digits of every
// number in variables: they are decoded as json.Number and brought to the
// engine's value model (engine.NormalizeVariables), a float64 when one
// holds the number exactly, as a native engine returns them.
func decodeResult(data []byte, out any) error {
	if !mayHoldDecimals(data) {
		return decodePlain(data, out)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return err
	}
	switch r := out.(type) {
	case *wire.InstanceResult:
		return exactNumbers(&r.Variables)
	case *wire.StartResult:
		return exactJobs(r.Jobs)
	case *wire.CompleteJobResult:
		return exactJobs(r.Jobs)
	case *[]api.Job:
		return exactJobs(*r)
	case *[]api.Event:
		return exactEvents(*r)
	}
	return nil
}

// mayHoldDecimals reports whether module output data may hold a number
// no float64 holds. The module writes a float64 in its shortest form with
// a lowercase exponent and any other number as expr.Number's text: 16
// digits or more, or an uppercase "E" exponent. Without either, every
// number has at most 15 digits and json.Unmarshal reads it exactly, with
// no decoder's buffer copy.
func mayHoldDecimals(data []byte) bool {
	run := 0
	for _, c := range data {
		switch {
		case c >= '0' && c <= '9':
			if run++; run >= 16 {
				return true
			}
			continue
		case c == 'E' && run > 0:
			return true
		}
		run = 0
	}
	return false
}

// exactEvents brings the variables of events decoded with UseNumber to
// the engine's value model.
func exactEvents(evs []api.Event) error {
	for i := range evs {
		if err := exactNumbers(&evs[i].Variables); err != nil {
			return err
		}
	}
	return nil
}

// exactJobs brings the variables of jobs decoded with UseNumber to the
// engine's value model.
func exactJobs(jobs []api.Job) error {
	for i := range jobs {
		if err := exactNumbers(&jobs[i].Variables); err != nil {
			return err
		}
	}
	return nil
}

// exactNumbers replaces *vars, decoded with UseNumber, by its copy in the
// engine's value model.
func exactNumbers(vars *map[string]any) error {
	if *vars == nil {
		return nil
	}
	norm, err := value.NormalizeChecked(*vars)
	if err != nil {
		return err
	}
	*vars = norm
	return nil
}

// decodePlain decodes a result holding no number that needs more than a
// float64: the hot ones by wire's decoders, without reflection, the others
// through encoding/json.
func decodePlain(data []byte, out any) error {
	switch r := out.(type) {
	case *wire.StartResult:
		return wire.DecodeStartResult(data, r)
	case *wire.CompleteJobResult:
		return wire.DecodeCompleteJobResult(data, r)
	case *wire.MessageResult:
		return wire.DecodeMessageResult(data, r)
	case *wire.InstanceResult:
		return wire.DecodeInstanceResult(data, r)
	}
	return json.Unmarshal(data, out)
}

// invoke runs one operation under the lock, queues the call's events in
// the module's order, and hands them to the observers outside the lock.
func (e *Engine) invoke(ctx context.Context, op string, req []byte) (*envelope, error) {
	if err := e.acquire(ctx); err != nil {
		return nil, err
	}
	env, err := e.invokeLocked(ctx, op, req)
	if e.closeLater.Load() {
		_ = e.closeLocked(context.Background())
	}
	if env != nil && len(env.Events) > 0 {
		e.queue(env.Events) // still under lock: the module's order
	}
	e.release()
	e.notify()
	if err != nil {
		return nil, err
	}
	if !env.OK {
		if env.Error == nil {
			return nil, fmt.Errorf("flowtrack host: %s: error response without error", op)
		}
		return nil, native(env.Error)
	}
	return env, nil
}

// usable returns why the Engine can take no more calls (closed or
// trapped), or nil. Called with e.mu held.
func (e *Engine) usable() error {
	switch {
	case e.trapped != nil:
		return fmt.Errorf("%w (earlier: %v)", ErrTrapped, e.trapped)
	case e.mod == nil && e.transport == nil:
		return api.ErrClosed
	}
	return nil
}

func (e *Engine) invokeLocked(ctx context.Context, op string, req []byte) (*envelope, error) {
	if err := e.usable(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !knownOperation(op) {
		return nil, &Error{Code: string(wire.CodeUnknownOperation), Message: fmt.Sprintf("unknown operation %q", op)}
	}
	if e.transport != nil {
		out, err := e.transport.Call(ctx, op, req)
		if err != nil {
			return nil, e.trap(ctx, op, err)
		}
		return e.decode(op, out)
	}
	fn := e.fns[op]
	ptr, err := e.request(ctx, req)
	if err != nil {
		return nil, e.trap(ctx, op, err)
	}
	res, err := e.run(ctx, op, fn, uint64(ptr), uint64(len(req)))
	if err != nil {
		return nil, err
	}
	rptr, rlen := uint32(res[0]>>32), uint32(res[0])
	view, ok := e.mod.Memory().Read(rptr, rlen)
	if !ok {
		return nil, e.trap(ctx, op, fmt.Errorf("response (%d, %d) outside linear memory", rptr, rlen))
	}
	env, err := e.decode(op, view) // decoding copies out of the view
	if _, ferr := e.free.Call(ctx, uint64(rptr)); ferr != nil {
		return nil, e.trap(ctx, op, ferr)
	}
	return env, err
}

// decode decodes op's response envelope and keeps its clock reading.
func (e *Engine) decode(op string, data []byte) (*envelope, error) {
	env := new(envelope)
	if !mayHoldDecimals(data) {
		if err := wire.DecodeResponse(data, env); err != nil {
			return nil, fmt.Errorf("flowtrack host: %s: decode response: %w", op, err)
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // the digits of the events' variables (exactEvents)
		if err := dec.Decode(env); err != nil {
			return nil, fmt.Errorf("flowtrack host: %s: decode response: %w", op, err)
		}
		if err := exactEvents(env.Events); err != nil {
			return nil, fmt.Errorf("flowtrack host: %s: decode response: %w", op, err)
		}
	}
	e.now, e.deadline = env.Now, env.NextDeadline
	return env, nil
}

// request writes req into the reusable request buffer, growing it as
// needed, and returns its address. A request over MaxRequest is not
// written: the module rejects it by its length alone.
func (e *Engine) request(ctx context.Context, req []byte) (uint32, error) {
	n := uint32(len(req))
	if len(req) > MaxRequest || n == 0 {
		return 0, nil
	}
	if n > e.reqCap {
		if e.reqPtr != 0 {
			if _, err := e.free.Call(ctx, uint64(e.reqPtr)); err != nil {
				return 0, err
			}
		}
		size := max(n, 64<<10)
		if n > size/2 && size < MaxRequest {
			size = min(2*n, MaxRequest)
		}
		res, err := e.alloc.Call(ctx, uint64(size))
		if err != nil {
			return 0, err
		}
		e.reqPtr, e.reqCap = uint32(res[0]), size
		if e.reqPtr == 0 {
			e.reqCap = 0
			return 0, fmt.Errorf("alloc(%d) failed", size)
		}
	}
	if !e.mod.Memory().Write(e.reqPtr, req) {
		return 0, fmt.Errorf("request buffer (%d, %d) outside linear memory", e.reqPtr, n)
	}
	return e.reqPtr, nil
}

// run calls fn and returns its results, or the error to report after
// discarding the module.
//
// A call that can be cancelled runs on a goroutine of its own, so that the
// caller gets its context's error as soon as the context ends. The module
// cannot be stopped mid-call (see compile): it is abandoned, finishes the
// call on that goroutine (every call ends: the engine bounds its loops)
// and is then closed; the Engine reports ErrTrapped from then on, since
// the call's effect is unknown. A context that cannot be cancelled costs
// no goroutine.
func (e *Engine) run(ctx context.Context, op string, fn wazeroapi.Function, params ...uint64) ([]uint64, error) {
	if ctx.Done() == nil {
		res, err := fn.Call(ctx, params...)
		if err != nil {
			return nil, e.trap(ctx, op, err)
		}
		return res, nil
	}
	type result struct {
		res []uint64
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := fn.Call(context.WithoutCancel(ctx), params...)
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, e.trap(ctx, op, r.err)
		}
		return r.res, nil
	case <-ctx.Done():
	}
	err := fmt.Errorf("%w: %s: abandoned mid-call: %w", ErrTrapped, op, ctx.Err())
	e.trapped = err
	mod, own := e.mod, e.own
	e.mod, e.own = nil, nil
	go func() {
		<-done
		_ = mod.Close(context.Background())
		if own != nil {
			_ = own.Close(context.Background())
		}
	}()
	return nil, err
}

// trap discards the module after a failed call and returns the error to
// report.
func (e *Engine) trap(ctx context.Context, op string, cause error) error {
	err := fmt.Errorf("%w: %s: %v%s", ErrTrapped, op, cause, e.stderr.suffix())
	e.trapped = err
	if e.transport != nil {
		_ = e.transport.Close(ctx)
		e.transport = nil
		return err
	}
	_ = e.mod.Close(ctx)
	e.closeRuntime(ctx)
	return err
}

// Trapped returns the error that discarded the module, or nil.
func (e *Engine) Trapped() error {
	_ = e.acquire(context.Background())
	defer e.release()
	return e.trapped
}

// tailBuffer keeps the last max bytes written (the module's crash report).
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	copy io.Writer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.copy != nil {
		_, _ = t.copy.Write(p)
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

// suffix formats what the module wrote for an error message.
func (t *tailBuffer) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := bytes.TrimSpace(t.buf)
	if len(s) == 0 {
		return ""
	}
	if i := bytes.IndexByte(s, '\n'); i > 0 {
		s = s[:i] // the panic line; the goroutine dump is noise here
	}
	return "; module stderr: " + string(s)
}

// DebugTrap calls the module's test-only debug_trap export, which crashes
// the module on purpose; the Engine is discarded as after any trap. It
// exists to test trap handling and returns an error wrapping ErrTrapped.
func (e *Engine) DebugTrap(ctx context.Context) error {
	if err := e.acquire(ctx); err != nil {
		return err
	}
	defer e.release()
	if e.trapped != nil || (e.mod == nil && e.transport == nil) {
		return ErrTrapped
	}
	if e.transport != nil {
		_, err := e.transport.Call(ctx, "debug_trap", nil)
		if err == nil {
			err = errors.New("debug_trap returned")
		}
		return e.trap(ctx, "debug_trap", err)
	}
	fn := e.mod.ExportedFunction("debug_trap")
	if fn == nil {
		return errors.New("flowtrack host: module exports no debug_trap")
	}
	_, err := fn.Call(ctx)
	if err == nil {
		err = errors.New("debug_trap returned")
	}
	return e.trap(ctx, "debug_trap", err)
}
