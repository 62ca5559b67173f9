// Engine: the SDK's public API over one engine module instance.

import { defaultWasmURL } from '#platform';
import { createWorker } from '#spawn';
import { addDuration, parseDuration, toMs } from './duration.js';
import { BadRequestError, BadStateError, BpmnError, ClosedError, errorFromData, FlowtrackError, ObserverError, TimeOutOfRangeError, TooManyJobsError, UnknownJobError } from './errors.js';
import type { StateResult } from './contract.js';
import { ModuleInstance, type Envelope, type Operation } from './module.js';
import { LocalTransport, WorkerTransport, type Transport } from './transport.js';
import type {
  AnyFlowEvent,
  Deployment,
  EventType,
  FlowEvent,
  Incident,
  InstanceInfo,
  InstanceState,
  Job,
  JobFilter,
  Limits,
  Message,
  StartedInstance,
  Token,
  Variables,
} from './types.js';
import { compileSource, shippedModule, type WasmSource } from './wasm-source.js';

/**
 * TimeMode says where the engine's time comes from.
 *
 * - `virtual` (default): time moves only through advanceTime/advanceTo, so
 *   timers fire exactly when you say. Simulators and tests use it.
 * - `real`: the engine follows the wall clock. Before each call it advances
 *   to now, and it schedules a timer for the next deadline so timer events
 *   fire on time without any call.
 */
export type TimeMode = 'virtual' | 'real';

/** EngineOptions configure Engine.create; every field is optional. */
export interface EngineOptions {
  /** Where the engine module comes from. Default: the flowtrack.wasm shipped with the SDK. */
  wasm?: WasmSource;
  /** Time mode. Default `virtual`. */
  time?: TimeMode;
  /**
   * Receives errors nobody awaits: a listener that throws (an
   * ObserverError naming the event, the thrown value as its `cause`), a job handler
   * whose job cannot be completed, a real-time timer that fails. Default:
   * console.error.
   */
  onError?: (error: unknown) => void;
  /**
   * How many jobs the handlers may work after one call before the SDK stops
   * with an error (a model that loops through jobs forever). Default 100,000.
   */
  maxHandledJobs?: number;
  /**
   * The engine's limits (Limits; the Go engine's WithLimits): budgets on
   * the work one model, expression or input can cause. Absent fields keep
   * the engine's defaults.
   */
  limits?: Limits;
  /**
   * A state document written by checkpoint (here, in the Go engine or in
   * the Go host): the engine starts in that state, its instances going on
   * where their tokens were parked. Throws BadStateError for a document
   * the engine cannot read.
   */
  state?: Uint8Array | string;
}

/**
 * JobHandler does the work of a job. Its result (an object of variables, or
 * nothing) completes the job. Throwing a BpmnError raises that BPMN error
 * from the job's element; throwing anything else fails the job with one
 * retry less (an incident at zero).
 */
export type JobHandler<V extends Variables = Variables> = (job: Job<V>) => Variables | void | Promise<Variables | void>;

/** A listener of one event type, or of every type (`'*'`). */
export type Listener<T extends EventType = EventType> = (event: FlowEvent<T>) => void;

type AnyListener = (event: FlowEvent) => void;

// The instants the engine represents: Go's clock.Min and clock.Max (int64
// nanoseconds since 1970). Beyond them the ABI's RFC 3339 times cannot be
// parsed (years past 9999) or would wrap around, so the SDK refuses them
// before a call, with the error the module gives for the same mistake.
const TIME_MIN = '1677-09-21T00:12:43.145224192Z';
const TIME_MAX = '2262-04-11T23:47:16.854775807Z';
const timeMinMs = Date.parse('1677-09-21T00:12:43.146Z');
const timeMaxMs = Date.parse('2262-04-11T23:47:16.854Z');

// rfc3339 returns t as RFC 3339 for a request, or throws TimeOutOfRangeError.
function rfc3339(t: Date, what: string): string {
  const ms = t.getTime();
  if (ms > timeMaxMs || ms < timeMinMs) {
    const iso = Number.isNaN(ms) ? String(t) : t.toISOString();
    throw new TimeOutOfRangeError({
      code: 'TIME_OUT_OF_RANGE',
      message: `${what}: ${iso} is outside the range the engine represents, ${TIME_MIN} to ${TIME_MAX}`,
    });
  }
  return t.toISOString();
}

// base64 encodes bytes as standard, padded base64 (btoa is in browsers,
// workers and Node alike; it takes one char per byte).
function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

const terminal: Partial<Record<EventType, InstanceState>> = {
  instanceCompleted: 'completed',
  instanceTerminated: 'terminated',
  instanceFailed: 'failed',
};

/**
 * Engine runs BPMN processes in one engine module instance, in this thread
 * (Engine.create) or in a Web Worker (Engine.createInWorker), with the same
 * API either way.
 *
 *     const engine = await Engine.create();
 *     await engine.deploy(xml);
 *     engine.handle('check-order', async job => ({ valid: job.variables?.amount < 1000 }));
 *     const { instanceKey, state } = await engine.start('order', { amount: 250 });
 *
 * Every call returns after the engine has settled: nothing can move without
 * outside input. The events produced by a call are delivered to listeners
 * (`on`) before the call's promise resolves, then registered job handlers
 * (`handle`) work every job they can, until none is left; only then does the
 * call resolve.
 *
 * Concurrency: calls may be issued without awaiting the previous one; they
 * reach the module one at a time in issue order.
 *
 * Listeners follow the observer contract of every flowtrack host (README,
 * "Listeners"): each instance's events arrive in order (`seq` 1, 2, 3...),
 * none missing; listeners run on the JavaScript thread, synchronously inside
 * the call that produced the events, before its promise resolves, and never
 * re-entered; a listener that throws loses only that event: the exception
 * goes to `onError` as an ObserverError, and the engine and the other
 * listeners go on.
 */
export class Engine {
  #t: Transport;
  #time: TimeMode;
  #onError: (error: unknown) => void;
  #maxHandled: number;
  #limits: Limits | undefined;
  #now: Date = new Date(0);
  #nextDeadline: Date | null = null;
  #listeners = new Map<string, Set<AnyListener>>();
  #handlers = new Map<string, JobHandler>();
  #pendingTypes = new Set<string>();
  #draining: Promise<void> | null = null;
  #watch = new Map<number, InstanceState>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  // #events is whether the module currently returns events. They are only
  // asked for while a listener or a job handler needs them: encoding
  // records nobody reads is a large share of every call.
  #events = true;
  #state: Uint8Array | string | undefined;

  private constructor(t: Transport, options: EngineOptions) {
    this.#t = t;
    this.#time = options.time ?? 'virtual';
    if (this.#time !== 'virtual' && this.#time !== 'real') {
      throw new BadRequestError({ code: 'BAD_REQUEST', message: `time: ${JSON.stringify(this.#time)}: want 'virtual' or 'real'` });
    }
    this.#onError = options.onError ?? ((err) => console.error('flowtrack:', err));
    this.#maxHandled = options.maxHandledJobs ?? 100_000;
    for (const [name, v] of Object.entries(options.limits ?? {})) {
      if (v !== undefined && !(Number.isSafeInteger(v) && v >= 0)) {
        throw new BadRequestError({ code: 'BAD_REQUEST', message: `limits.${name}: ${String(v)}: want a whole number >= 0` });
      }
    }
    this.#limits = options.limits;
    this.#state = options.state;
  }

  /** create loads the engine module and returns an engine running in this thread. */
  static async create(options: EngineOptions = {}): Promise<Engine> {
    const module = options.wasm === undefined ? await shippedModule(defaultWasmURL) : await compileSource(options.wasm);
    const engine = new Engine(new LocalTransport(await ModuleInstance.instantiate(module)), options);
    await engine.#initOrClose();
    return engine;
  }

  /**
   * createInWorker returns an engine whose module runs in a Web Worker, so
   * long runs never block the page. Same API as create; handlers and
   * listeners still run on the page. Browsers only.
   */
  static async createInWorker(options: EngineOptions = {}): Promise<Engine> {
    let wasm: WebAssembly.Module | ArrayBuffer | string | undefined;
    const src = options.wasm;
    if (src instanceof URL) wasm = src.href;
    else if (typeof src === 'string') wasm = new URL(src, globalThis.location?.href).href;
    else if (src === undefined || src instanceof WebAssembly.Module) wasm = src;
    else wasm = await compileSource(src);
    const engine = new Engine(await WorkerTransport.start(createWorker(), wasm), options);
    await engine.#initOrClose();
    return engine;
  }

  // #initOrClose runs #init; when it fails (a bad state document, say) the
  // module is released before the error reaches the caller.
  async #initOrClose(): Promise<void> {
    try {
      await this.#init();
    } catch (err) {
      this.close();
      throw err;
    }
  }

  async #init(): Promise<void> {
    // Engine options must reach the module before anything is deployed.
    if (this.#limits !== undefined) await this.#exec('configure', { limits: this.#limits });
    if (this.#state !== undefined) {
      await this.restore(this.#state);
      this.#state = undefined;
    }
    if (this.#time === 'real') await this.#exec('advance', { to: new Date().toISOString() });
    else await this.#exec('now', {});
  }

  /** time is the engine's time mode. */
  get time(): TimeMode {
    return this.#time;
  }

  /** now is the engine clock's reading after the last call. */
  get now(): Date {
    return new Date(this.#now.getTime());
  }

  /** nextDeadline is when the earliest pending timer is due, or null. */
  get nextDeadline(): Date | null {
    return this.#nextDeadline && new Date(this.#nextDeadline.getTime());
  }

  /**
   * deploy parses, validates and registers the processes of a BPMN 2.0 XML
   * document. Throws DeployError.
   *
   * Pass the file's bytes (a Uint8Array, e.g. a Node Buffer or
   * `new Uint8Array(await response.arrayBuffer())`) and the engine reads
   * them exactly as the native engine does, whatever encoding the document
   * declares. A string is text already decoded: it is sent as UTF-8, so a
   * string whose XML declaration names another encoding and that holds
   * non-ASCII characters is refused with BadRequestError.
   */
  async deploy(xml: string | Uint8Array, name?: string): Promise<Deployment> {
    let doc: Record<string, string>;
    if (typeof xml === 'string') doc = { xml };
    else if (xml instanceof Uint8Array) doc = { xmlBase64: base64(xml) };
    else throw new BadRequestError({ code: 'BAD_REQUEST', message: 'deploy: xml must be a string or the bytes (Uint8Array) of a BPMN 2.0 XML document' });
    return (await this.#call('deploy', name === undefined ? doc : { name, ...doc })) as Deployment;
  }

  /**
   * start creates an instance of the newest version of processId. It
   * resolves once the instance has settled and the handlers are done, with
   * the instance's state at that moment.
   */
  async start<V extends Variables = Variables>(processId: string, variables?: V): Promise<StartedInstance> {
    const res = (await this.#exec('start', variables === undefined ? { processId } : { processId, variables })) as StartedInstance;
    if (this.#pendingTypes.size === 0) return res;
    this.#watch.set(res.instanceKey, res.state);
    try {
      await this.#drain();
      return { instanceKey: res.instanceKey, state: this.#watch.get(res.instanceKey) ?? res.state };
    } finally {
      this.#watch.delete(res.instanceKey);
    }
  }

  /** publishMessage correlates a message to an instance waiting for it, or buffers it for `ttl`. */
  async publishMessage(message: Message): Promise<void> {
    const { name, correlationKey, variables, ttl, messageId, ...unknown } = message ?? ({} as Message);
    const extra = Object.keys(unknown);
    if (extra.length > 0) {
      throw new BadRequestError({ code: 'BAD_REQUEST', message: `publishMessage: unknown field ${JSON.stringify(extra[0])} (a message has name, correlationKey, variables, ttl, messageId)` });
    }
    const req: Record<string, unknown> = { name };
    if (correlationKey !== undefined) req.correlationKey = correlationKey;
    if (variables !== undefined) req.variables = variables;
    if (ttl !== undefined) req.ttlMs = toMs(ttl, 'publishMessage ttl');
    if (messageId !== undefined) req.messageId = messageId;
    await this.#call('publish_message', req);
  }

  /** broadcastSignal wakes every instance waiting for the signal (a no-op if none). */
  async broadcastSignal(name: string, variables?: Variables): Promise<void> {
    await this.#call('broadcast_signal', variables === undefined ? { name } : { name, variables });
  }

  /** jobs returns the activatable jobs matching filter, ordered by key. */
  async jobs<V extends Variables = Variables>(filter: JobFilter = {}): Promise<Job<V>[]> {
    return (await this.#exec('jobs', filter)) as Job<V>[];
  }

  /** completeJob completes a job; variables are merged into the instance. Throws UnknownJobError. */
  async completeJob(jobKey: number, variables?: Variables): Promise<void> {
    await this.#call('complete_job', variables === undefined ? { jobKey } : { jobKey, variables });
  }

  /** failJob reports a failed attempt; with retries 0 an incident holds the token. */
  async failJob(jobKey: number, retries: number, message?: string): Promise<void> {
    await this.#call('fail_job', message === undefined ? { jobKey, retries } : { jobKey, retries, message });
  }

  /** throwError raises the BPMN error errorCode from the job's element. */
  async throwError(jobKey: number, errorCode: string, message?: string, variables?: Variables): Promise<void> {
    const req: Record<string, unknown> = { jobKey, errorCode };
    if (message !== undefined) req.message = message;
    if (variables !== undefined) req.variables = variables;
    await this.#call('throw_error', req);
  }

  /** incidents returns the open incidents, of one instance if given. */
  async incidents(instanceKey?: number): Promise<Incident[]> {
    return (await this.#exec('incidents', instanceKey === undefined ? {} : { instanceKey })) as Incident[];
  }

  /** resolveIncident retries what an incident holds. */
  async resolveIncident(incidentKey: number): Promise<void> {
    await this.#call('resolve_incident', { incidentKey });
  }

  /**
   * activateAdHoc activates inner elements of an instance's active ad-hoc
   * sub-process, as Zeebe's ad-hoc activation API does: each gets a token
   * of its own there. A BadRequestError when the instance has no active
   * ad-hoc sub-process `elementId` or an id names something it cannot
   * activate.
   */
  async activateAdHoc(instanceKey: number, elementId: string, elements: string[]): Promise<void> {
    await this.#call('activate_ad_hoc', { instanceKey, elementId, elements });
  }

  /**
   * advanceTime moves the clock forward by milliseconds or an ISO 8601
   * duration (`PT5M`, `P1D`, `P1M`), firing due timers in order. Returns the
   * new time.
   */
  async advanceTime(by: number | string): Promise<Date> {
    if (typeof by === 'number') {
      await this.#call('advance', { byMs: toMs(by, 'advanceTime') });
    } else {
      const d = parseDuration(by);
      if (d.years || d.months) await this.#call('advance', { to: rfc3339(addDuration(this.#now, d), 'advanceTime') });
      else await this.#call('advance', { byMs: d.ms });
    }
    return this.now;
  }

  /** advanceTo moves the clock to an instant (a past instant changes nothing). */
  async advanceTo(instant: Date | string): Promise<Date> {
    const to = typeof instant === 'string' ? new Date(instant) : instant;
    if (Number.isNaN(to.getTime())) throw new BadRequestError({ code: 'BAD_REQUEST', message: `advanceTo: ${String(instant)} is not a date` });
    await this.#call('advance', { to: rfc3339(to, 'advanceTo') });
    return this.now;
  }

  /** advanceToNextTimer moves the clock to the next deadline; false if no timer is pending. */
  async advanceToNextTimer(): Promise<boolean> {
    this.#checkOpen();
    const due = this.#nextDeadline;
    if (!due) return false;
    await this.#call('advance', { to: due.toISOString() });
    return true;
  }

  /** tokens says where every token of an instance is and why it waits. */
  async tokens(instanceKey: number): Promise<Token[]> {
    return (await this.#exec('tokens', { instanceKey })) as Token[];
  }

  /** history returns the instance's whole event stream so far. */
  async history(instanceKey: number): Promise<AnyFlowEvent[]> {
    return (await this.#exec('history', { instanceKey })) as AnyFlowEvent[];
  }

  /** instance returns the state, variables and open incidents of an instance. */
  async instance<V extends Variables = Variables>(instanceKey: number): Promise<InstanceInfo<V>> {
    return (await this.#exec('instance', { instanceKey })) as InstanceInfo<V>;
  }

  /** state returns an instance's lifecycle state. */
  async state(instanceKey: number): Promise<InstanceState> {
    return (await this.instance(instanceKey)).state;
  }

  /** variables returns an instance's variables. */
  async variables<V extends Variables = Variables>(instanceKey: number): Promise<V> {
    return (await this.instance<V>(instanceKey)).variables;
  }

  /**
   * checkpoint returns the engine's state as a JSON document (UTF-8 bytes,
   * engine/STATE.md in the repository): deployments, clock, buffered
   * messages, timers, and every instance with its tokens parked where they
   * are. Engine.create({ state }) or restore, here or on any other host,
   * goes on from there.
   */
  async checkpoint(): Promise<Uint8Array> {
    const res = (await this.#exec('checkpoint', {})) as StateResult;
    return new TextEncoder().encode(JSON.stringify(res.state));
  }

  /**
   * restore replaces the engine's state by the one a checkpoint document
   * describes; listeners and handlers stay. Throws BadStateError for a
   * document the engine cannot read, leaving the engine as it was.
   */
  async restore(state: Uint8Array | string): Promise<void> {
    const text = typeof state === 'string' ? state : new TextDecoder().decode(state);
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new BadStateError({ code: 'BAD_STATE', message: `restore: the state is not JSON: ${(err as Error).message}` });
    }
    await this.#call('restore', { state: doc });
  }

  /** cancel terminates an instance: its tokens are withdrawn, its jobs cancelled. */
  async cancel(instanceKey: number): Promise<void> {
    await this.#call('cancel', { instanceKey });
  }

  /**
   * on calls listener with every event of type (or of every type, for
   * `'*'`) that later calls produce, each instance's in order. A listener
   * that throws is reported to `onError` as an ObserverError and keeps
   * getting events. It returns a function that removes the listener.
   */
  on<T extends EventType>(type: T, listener: Listener<T>): () => void;
  on(type: '*', listener: Listener): () => void;
  on(type: string, listener: AnyListener): () => void {
    let set = this.#listeners.get(type);
    if (!set) this.#listeners.set(type, (set = new Set()));
    set.add(listener);
    return () => this.off(type as EventType, listener);
  }

  /** off removes a listener added with on. */
  off<T extends EventType>(type: T | '*', listener: Listener<T>): void {
    this.#listeners.get(type)?.delete(listener as AnyListener);
  }

  /**
   * handle registers the handler of a job type: after every call, the
   * engine works each activatable job of that type (including jobs that
   * exist already) until none is left. It returns a function that removes
   * the handler.
   */
  handle<V extends Variables = Variables>(type: string, handler: JobHandler<V>): () => void {
    if (typeof handler !== 'function') throw new BadRequestError({ code: 'BAD_REQUEST', message: `handle ${type}: handler must be a function` });
    this.#handlers.set(type, handler as JobHandler);
    this.#pendingTypes.add(type);
    return () => {
      if (this.#handlers.get(type) === (handler as JobHandler)) this.#handlers.delete(type);
    };
  }

  /**
   * work runs the handlers now, until no job they handle is left. Every
   * call does this on its own; use work after registering a handler for
   * jobs that already exist.
   */
  async work(): Promise<void> {
    this.#checkOpen();
    await this.#drain();
  }

  /**
   * close releases the module and stops real-time timers; later calls throw
   * ClosedError. It resolves once the module is released (a worker
   * terminated); closing again does nothing.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#t.close();
  }

  // #call runs an operation, then lets the handlers work.
  async #call(op: Operation, request: unknown): Promise<unknown> {
    const result = await this.#exec(op, request);
    if (this.#pendingTypes.size > 0) await this.#drain();
    return result;
  }

  // #exec runs one operation and absorbs its envelope.
  async #exec(op: Operation, request: unknown): Promise<unknown> {
    this.#checkOpen();
    const want = this.#handlers.size > 0 || [...this.#listeners.values()].some((set) => set.size > 0);
    if (want !== this.#events) {
      this.#absorb(await this.#t.call('configure', { events: want }));
      this.#events = want;
    }
    if (this.#time === 'real' && op !== 'advance' && Date.now() - this.#now.getTime() >= 1) {
      this.#absorb(await this.#t.call('advance', { to: new Date().toISOString() }));
    }
    const env = await this.#t.call(op, request);
    this.#absorb(env);
    if (!env.ok) throw errorFromData(env.error ?? { code: 'INTERNAL', message: 'flowtrack: error response without error' });
    return env.result ?? null;
  }

  #checkOpen(): void {
    if (this.#closed) throw new ClosedError({ code: 'CLOSED', message: 'flowtrack: engine closed' });
  }

  #absorb(env: Envelope): void {
    this.#now = new Date(env.now);
    const due = env.nextDeadline ? new Date(env.nextDeadline) : null;
    const changed = due?.getTime() !== this.#nextDeadline?.getTime();
    this.#nextDeadline = due;
    for (const ev of env.events) {
      if (ev.type === 'jobCreated' || ev.type === 'jobFailed') {
        if (ev.jobType !== undefined && this.#handlers.has(ev.jobType)) this.#pendingTypes.add(ev.jobType);
      } else if (this.#watch.size > 0 && terminal[ev.type] && this.#watch.has(ev.instanceKey)) {
        this.#watch.set(ev.instanceKey, terminal[ev.type]!);
      }
      this.#emit(ev.type, ev);
      this.#emit('*', ev);
    }
    if (this.#time === 'real' && (changed || this.#timer === undefined)) this.#schedule();
  }

  #emit(type: string, ev: FlowEvent): void {
    const set = this.#listeners.get(type);
    if (!set) return;
    for (const fn of set) {
      try {
        fn(ev);
      } catch (err) {
        this.#onError(new ObserverError(ev, err));
      }
    }
  }

  // #schedule arms one wall-clock timer for the next deadline (real time).
  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const due = this.#nextDeadline;
    if (!due || this.#closed) return;
    const wait = Math.min(Math.max(0, due.getTime() - Date.now()), 2 ** 31 - 1);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#closed) return;
      const to = new Date(Math.max(Date.now(), due.getTime())).toISOString();
      this.#call('advance', { to }).catch((err) => this.#onError(err));
    }, wait);
  }

  // #drain works the jobs of every handled type that may have some, until
  // none is left. Concurrent callers share one drain.
  #drain(): Promise<void> {
    this.#draining ??= (async () => {
      let handled = 0;
      try {
        while (this.#pendingTypes.size > 0 && !this.#closed) {
          const type = this.#pendingTypes.values().next().value as string;
          this.#pendingTypes.delete(type);
          if (!this.#handlers.has(type)) continue;
          const jobs = (await this.#exec('jobs', { type })) as Job[];
          for (const job of jobs) {
            const handler = this.#handlers.get(type);
            if (!handler || this.#closed) break;
            if (++handled > this.#maxHandled) {
              throw new TooManyJobsError({
                code: 'TOO_MANY_JOBS',
                message: `flowtrack: handlers worked ${this.#maxHandled} jobs after one call (last: ${type} at ${job.elementId}); is the model looping through jobs?`,
              });
            }
            await this.#work(handler, job);
          }
        }
      } finally {
        this.#draining = null;
      }
    })();
    return this.#draining;
  }

  async #work(handler: JobHandler, job: Job): Promise<void> {
    let result: Variables | void;
    try {
      result = await handler(job);
    } catch (err) {
      if (err instanceof BpmnError) {
        await this.#jobCall('throw_error', { jobKey: job.key, errorCode: err.errorCode, message: err.message, ...(err.variables ? { variables: err.variables } : {}) });
      } else {
        const message = String((err as Error)?.message ?? err);
        await this.#jobCall('fail_job', { jobKey: job.key, retries: Math.max(0, job.retries - 1), message });
      }
      return;
    }
    const req = result && typeof result === 'object' ? { jobKey: job.key, variables: result } : { jobKey: job.key };
    try {
      await this.#exec('complete_job', req);
    } catch (err) {
      if (err instanceof UnknownJobError) return; // cancelled meanwhile (a boundary event fired, the instance ended)
      if (!(err instanceof FlowtrackError) || err.code === 'TRAPPED' || err.code === 'CLOSED') throw err;
      // The result was refused (BAD_VARIABLES...): the job fails with the reason, so an incident shows it.
      this.#onError(err);
      await this.#jobCall('fail_job', { jobKey: job.key, retries: Math.max(0, job.retries - 1), message: err.message });
    }
  }

  async #jobCall(op: Operation, req: unknown): Promise<void> {
    try {
      await this.#exec(op, req);
    } catch (err) {
      if (!(err instanceof UnknownJobError)) throw err;
    }
  }
}
