// Engine: the SDK's public API over one engine module instance.

import { defaultWasmURL } from '#platform';
import { createWorker } from '#spawn';
import { addDuration, parseDuration, toMs } from './duration.js';
import { BadRequestError, BadStateError, BpmnError, ClosedError, errorFromData, FlowtrackError, ObserverError, StaleActivationError, TimeOutOfRangeError, TooManyJobsError, UnknownJobError } from './errors.js';
import type { StateResult } from './contract.js';
import { ModuleInstance, type Envelope, type Operation } from './module.js';
import { parseJSON, stringifyDocument } from './numbers.js';
import { RemoteTransport, type ConnectOptions } from './remote.js';
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
  Definition,
  DefinitionXML,
  DecisionResult,
  Limits,
  Message,
  Metrics,
  StartedInstance,
  CompletedJob,
  PublishedMessage,
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
 * retry less (an incident at zero) and the handler's retry back-off: the
 * job is worked again once the engine clock has passed it.
 */
export type JobHandler<V extends Variables = Variables> = (job: Job<V>) => Variables | void | Promise<Variables | void>;

/** HandlerOptions configure one job handler (handle); every field is optional. */
export interface HandlerOptions {
  /** Worker name recorded in the activated jobs. Default `'sdk'`. */
  worker?: string;
  /** How long an activation holds a job, ms or ISO 8601. Default 5 minutes. */
  timeout?: number | string;
  /**
   * How long, on the engine clock, a job the handler failed waits before it
   * is worked again, ms or ISO 8601. Default 1 second: in virtual time the
   * retry comes with the advanceTime that passes it, not within the call.
   */
  retryBackoff?: number | string;
}

/** ActivateJobsRequest says which jobs activateJobs activates and for whom. */
export interface ActivateJobsOptions {
  /** Job type; required. */
  type: string;
  /** Worker name recorded in the jobs. */
  worker?: string;
  /** How long each activation holds its job (> 0), ms or ISO 8601. */
  timeout: number | string;
  /** Most jobs to activate (> 0). */
  maxJobs: number;
}

/**
 * IncidentFilter selects incidents; absent fields match anything. `type` is
 * `job` (a job with no retries left) or `element` (anything else).
 */
export interface IncidentFilter {
  instanceKey?: number;
  elementId?: string;
  type?: 'job' | 'element';
}

/** Modification is what modifyInstance changes in one instance. */
export interface Modification {
  /** Elements to start a token before, in order. */
  activate?: { elementId: string; scope?: number; variables?: Variables }[];
  /** Token ids to terminate. */
  terminate?: number[];
}

/** StartOptions qualify start. */
export interface StartOptions {
  /** The process version to start (from 1, see definitions); default the newest. The instance runs on it to its end. */
  version?: number;
}

/** ScopeOptions name a variable scope of an instance (setVariables, scopeVariables). */
export interface ScopeOptions {
  /** The token waiting at a sub-process for its inner tokens whose scope is meant; default the process scope. */
  scope?: number;
  /** Only the scope's own variables (not propagating). Default false. */
  local?: boolean;
}

/** JobResultOptions qualify completeJob, failJob and throwError. */
export interface JobResultOptions {
  /** The activation (Job.activation from activateJobs) this result answers: StaleActivationError once replaced. */
  activation?: number;
  /** failJob only: how long, on the engine clock, the job waits before it can be activated again. */
  retryBackoff?: number | string;
}

// handler is a registered job handler with its options resolved.
interface handler {
  fn: JobHandler;
  worker: string;
  timeoutMs: number;
  backoffMs: number;
}

// jobsPageSize is how many jobs a remote engine's jobs() asks for at a time.
const jobsPageSize = 1000;

// activateBatch is how many jobs the handler loop activates per call.
const activateBatch = 32;

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
  #handlers = new Map<string, handler>();
  // #retryAt is, per handled type, the earliest engine time (ms) at which a
  // job a handler failed ends its back-off: from then on the type is
  // worked again.
  #retryAt = new Map<string, number>();
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
  // #remote is set on an engine of a flowtrack server (Engine.connect):
  // the server owns time and events, and job handlers work its queues.
  #remote: RemoteTransport | undefined;
  #stopHandlers = new Map<string, () => Promise<void>>();
  #closing: Promise<void> | undefined;
  #stopEvents: (() => void) | undefined;

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

  /**
   * compile returns the compiled engine module, for Engine.create({ wasm })
   * and Engine.createInWorker({ wasm }): compiling is most of a first
   * create, and a compiled module starts any number of engines (and can be
   * posted to workers). With no source it is the flowtrack.wasm shipped
   * with the SDK, compiled once per realm (create uses the same one); a
   * source is compiled on every call (see WasmSource).
   */
  static compile(source?: WasmSource): Promise<WebAssembly.Module> {
    return source === undefined ? shippedModule(defaultWasmURL) : compileSource(source);
  }

  /** create loads the engine module and returns an engine running in this thread. */
  static async create(options: EngineOptions = {}): Promise<Engine> {
    const module = await Engine.compile(options.wasm);
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

  /**
   * connect returns an engine served by a flowtrack server (`flowtrack
   * serve`) over NATS, with the same API as create: calls are the server's
   * operations, with the same results and error classes; listeners (`on`)
   * get every event the cluster's server publishes from then on; job
   * handlers (`handle`) work the server's job queue of their type, so any
   * number of processes may handle one type, each job once per
   * activation. The server owns time (`time` is `real`): advanceTime,
   * checkpoint and restore throw UnsupportedError. With `servers` the SDK
   * connects through the `nats` package (an optional peer dependency:
   * install it next to flowtrack); in a browser pass a `connection` from
   * nats.ws. Throws NoServerError when no server answers for the cluster.
   *
   *     const engine = await Engine.connect({ servers: 'nats://127.0.0.1:4222', cluster: 'orders' });
   *     engine.handle('check-order', async job => ({ valid: job.variables?.amount < 1000 }));
   *     const { instanceKey } = await engine.start('order', { amount: 250 });
   */
  static async connect(options: ConnectOptions): Promise<Engine> {
    const t = await RemoteTransport.open(options ?? {});
    const engine = new Engine(t, { time: 'real', ...(options?.onError ? { onError: options.onError } : {}) });
    engine.#remote = t;
    await engine.#initOrClose();
    return engine;
  }

  // #initOrClose runs #init; when it fails (a bad state document, say) the
  // module is released before the error reaches the caller.
  async #initOrClose(): Promise<void> {
    try {
      await this.#init();
    } catch (err) {
      await this.close().catch(() => {}); // the first error is the one to report
      throw err;
    }
  }

  async #init(): Promise<void> {
    if (this.#remote) {
      await this.#exec('now', {}); // a server answers
      return;
    }
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

  /** nextDeadline is when the earliest pending timer is due or a job's activation timeout or back-off ends, or null. */
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
   * start creates an instance of the newest version of processId (or of
   * `options.version`, which it then runs on to its end). It
   * resolves once the instance has settled and the handlers are done, with
   * the instance's state at that moment.
   */
  async start<V extends Variables = Variables>(processId: string, variables?: V, options: StartOptions = {}): Promise<StartedInstance> {
    const req: Record<string, unknown> = { processId };
    if (variables !== undefined) req.variables = variables;
    if (options.version !== undefined) req.version = options.version;
    const res = (await this.#exec('start', req)) as StartedInstance;
    if (this.#pendingTypes.size === 0) return res;
    this.#watch.set(res.instanceKey, res.state);
    try {
      await this.#drain();
      // The handlers moved the instance on: the jobs start reported are stale.
      return { instanceKey: res.instanceKey, state: this.#watch.get(res.instanceKey) ?? res.state };
    } finally {
      this.#watch.delete(res.instanceKey);
    }
  }

  /**
   * publishMessage correlates a message to the instances waiting for it
   * (at most one per process), starts instances at matching message start
   * events, or buffers it for `ttl`. It returns where the instances it
   * reached stand once settled (those it was correlated to, then those it
   * started; `instances` absent when it reached none), as completeJob does
   * for a job's instance, so that a caller that goes on with one needs no
   * `jobs` or `state` call; when job handlers (`handle`) ran after the
   * call, they moved the instances on, and only their keys are returned.
   */
  async publishMessage(message: Message): Promise<PublishedMessage> {
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
    const res = ((await this.#exec('publish_message', req)) ?? {}) as PublishedMessage;
    if (!(await this.#runHandlers()) || res.instances === undefined) return res;
    return { instances: res.instances.map(({ instanceKey }) => ({ instanceKey })) };
  }

  /** broadcastSignal wakes every instance waiting for the signal (a no-op if none). */
  async broadcastSignal(name: string, variables?: Variables): Promise<void> {
    await this.#call('broadcast_signal', variables === undefined ? { name } : { name, variables });
  }

  /**
   * jobs returns the activatable jobs matching filter, ordered by key; with
   * `limit` (and `afterKey`) one page of them. In remote mode, without a
   * limit, it asks the server a page of jobsPageSize at a time, so that no
   * answer outgrows a NATS message.
   */
  async jobs<V extends Variables = Variables>(filter: JobFilter = {}): Promise<Job<V>[]> {
    if (!this.#remote || filter.limit) return (await this.#exec('jobs', filter)) as Job<V>[];
    const all: Job<V>[] = [];
    let afterKey = filter.afterKey ?? 0;
    for (;;) {
      const page = (await this.#exec('jobs', { ...filter, afterKey, limit: jobsPageSize })) as Job<V>[];
      all.push(...page);
      if (page.length < jobsPageSize) return all;
      afterKey = page[page.length - 1]!.key;
    }
  }

  /**
   * completeJob completes a job; variables are merged into the instance. It
   * returns where the job's instance stands once settled (its state and
   * activatable jobs), so that a worker needs no `jobs` call; when job
   * handlers (`handle`) ran after the call, they moved the instance on, and
   * only its key is returned. Throws UnknownJobError; with `activation`,
   * StaleActivationError once the job timed out and was activated again,
   * or failed.
   */
  async completeJob(jobKey: number, variables?: Variables, options: JobResultOptions = {}): Promise<CompletedJob> {
    const req: Record<string, unknown> = { jobKey };
    if (variables !== undefined) req.variables = variables;
    if (options.activation !== undefined) req.activation = options.activation;
    const res = (await this.#exec('complete_job', req)) as CompletedJob;
    if (this.#pendingTypes.size === 0) return res;
    await this.#drain();
    return { instanceKey: res.instanceKey };
  }

  /**
   * failJob reports a failed attempt; with retries 0 an incident holds the
   * token, with retries left the job can be activated again after
   * `retryBackoff` (engine clock). With `activation`, as completeJob.
   */
  async failJob(jobKey: number, retries: number, message?: string, options: JobResultOptions = {}): Promise<void> {
    const req: Record<string, unknown> = { jobKey, retries };
    if (message !== undefined) req.message = message;
    if (options.activation !== undefined) req.activation = options.activation;
    if (options.retryBackoff !== undefined) req.backoffMs = toMs(options.retryBackoff, 'failJob retryBackoff');
    await this.#call('fail_job', req);
  }

  /** throwError raises the BPMN error errorCode from the job's element. With `activation`, as completeJob. */
  async throwError(jobKey: number, errorCode: string, message?: string, variables?: Variables, options: JobResultOptions = {}): Promise<void> {
    const req: Record<string, unknown> = { jobKey, errorCode };
    if (message !== undefined) req.message = message;
    if (variables !== undefined) req.variables = variables;
    if (options.activation !== undefined) req.activation = options.activation;
    await this.#call('throw_error', req);
  }

  /**
   * activateJobs activates up to maxJobs jobs of a type for a worker, oldest
   * first, as a Zeebe job worker does: each job carries its `activation`,
   * `worker` and `deadline` (now + timeout, engine clock). Until the
   * deadline no other call activates it; after it the job is activatable
   * again. Jobs in a retry back-off are passed over until it ends.
   */
  async activateJobs<V extends Variables = Variables>(options: ActivateJobsOptions): Promise<Job<V>[]> {
    const { type, worker, timeout, maxJobs } = options ?? ({} as ActivateJobsOptions);
    const req: Record<string, unknown> = { type, timeoutMs: toMs(timeout, 'activateJobs timeout'), maxJobs };
    if (worker !== undefined) req.worker = worker;
    return (await this.#exec('activate_jobs', req)) as Job<V>[];
  }

  /**
   * updateJobRetries sets how many retries (>= 1) a job has left. A job an
   * incident holds stays held: resolveIncident then retries it with these
   * retries. Throws UnknownJobError.
   */
  async updateJobRetries(jobKey: number, retries: number): Promise<void> {
    await this.#call('update_job_retries', { jobKey, retries });
  }

  /** incidents returns the open incidents, of one instance (a key) or those a filter selects. */
  async incidents(filter?: number | IncidentFilter): Promise<Incident[]> {
    const req = filter === undefined ? {} : typeof filter === 'number' ? { instanceKey: filter } : filter;
    return (await this.#exec('incidents', req)) as Incident[];
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

  /** definitions lists every deployed version of every process (or of one), by process id and version. */
  async definitions(processId?: string): Promise<Definition[]> {
    return (await this.#exec('definitions', processId === undefined ? {} : { processId })) as Definition[];
  }

  /**
   * evaluateDecision evaluates a deployed decision (a DMN model given to
   * deploy) over variables, its newest version unless version says which:
   * the result carries its output and the rules its decision tables
   * matched. A failed evaluation (hit policy UNIQUE with two rules
   * matching...) is a result with output null and failure saying why.
   * Throws UnknownDecisionError.
   */
  async evaluateDecision(decisionId: string, variables: Variables = {}, version?: number): Promise<DecisionResult> {
    const req: { decisionId: string; variables: Variables; version?: number } = { decisionId, variables };
    if (version !== undefined) req.version = version;
    return (await this.#exec('evaluate_decision', req)) as DecisionResult;
  }

  /**
   * definitionXml returns the document that deployed a version (default the
   * newest) of a process: its deployment name, and its text (`xml`, when
   * the bytes are UTF-8) and bytes (`xmlBase64`). Throws UnknownProcessError.
   */
  async definitionXml(processId: string, version?: number): Promise<DefinitionXML> {
    return (await this.#exec('definition_xml', version === undefined ? { processId } : { processId, version })) as DefinitionXML;
  }

  /**
   * metrics returns what an operator reads of the engine: what it holds
   * open, open jobs by type and the one waiting longest, and per process
   * the instances active and ended by state with the mean and longest
   * start-to-end time (engine clock) of the completed ones.
   */
  async metrics(): Promise<Metrics> {
    return (await this.#exec('metrics', {})) as Metrics;
  }

  /**
   * modifyInstance repairs a live instance, as Zeebe's
   * ModifyProcessInstance: it starts a token before each element of
   * `activate` (`scope`: the token waiting at the enclosing sub-process;
   * `variables`: set locally there first), then terminates each token of
   * `terminate` (ids from tokens). Terminating the last token of a
   * sub-process terminates it; the last of the instance, the instance.
   * Checked whole before anything applies: throws BadModificationError.
   */
  async modifyInstance(instanceKey: number, modification: Modification): Promise<void> {
    const { activate, terminate } = modification ?? {};
    const req: Record<string, unknown> = { instanceKey };
    if (activate !== undefined) req.activate = activate;
    if (terminate !== undefined) req.terminate = terminate;
    await this.#call('modify_instance', req);
  }

  /**
   * setGatewayChoices turns gateway choices on or off (default off). With
   * them on, a token about to leave a diverging exclusive or inclusive
   * gateway stops there before the gateway evaluates its conditions: its
   * token waits for `choice`, and `Token.choice` says which conditions
   * hold and what the gateway would take, until chooseFlows routes it.
   * It applies to tokens that reach a gateway from then on.
   */
  async setGatewayChoices(on: boolean): Promise<void> {
    await this.#call('configure', { gatewayChoices: on });
  }

  /**
   * chooseFlows routes a token waiting for a choice at a gateway
   * (setGatewayChoices) through `flowIds`, outgoing flows of the gateway
   * (exactly one for an exclusive gateway): an explicit override the
   * history records as a `flowsChosen` event, naming what the conditions
   * would have taken. With no flows the conditions decide. Throws
   * BadModificationError for a token that waits for no choice or a flow
   * the gateway cannot take.
   */
  async chooseFlows(instanceKey: number, tokenId: number, flowIds: string[] = []): Promise<void> {
    await this.#call('choose_flows', { instanceKey, tokenId, flowIds });
  }

  /**
   * setVariables sets variables on a live instance, as Zeebe's
   * SetVariables: on the process scope, or with `scope` (the id of a token
   * waiting at a sub-process for its inner tokens) on that sub-process's
   * scope; `local` writes into the scope's own variables instead of
   * propagating each to the nearest scope holding it. Throws
   * UnknownInstanceError, InstanceEndedError, UnknownScopeError.
   */
  async setVariables(instanceKey: number, variables: Variables, options: ScopeOptions = {}): Promise<void> {
    const req: Record<string, unknown> = { instanceKey, variables };
    if (options.scope !== undefined) req.scope = options.scope;
    if (options.local !== undefined) req.local = options.local;
    await this.#call('set_variables', req);
  }

  /** scopeVariables returns a scope's variables: its own with `local`, else all visible in it. */
  async scopeVariables<V extends Variables = Variables>(instanceKey: number, options: ScopeOptions = {}): Promise<V> {
    const req: Record<string, unknown> = { instanceKey };
    if (options.scope !== undefined) req.scope = options.scope;
    if (options.local !== undefined) req.local = options.local;
    return (await this.#exec('scope_variables', req)) as V;
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
    // Decimals as the exact numbers they are, strings escaped as the module
    // escapes them: the bytes the module (and every other host) writes.
    return new TextEncoder().encode(stringifyDocument(res.state));
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
      doc = parseJSON(text); // numbers no double holds kept as Decimals
    } catch (err) {
      throw new BadStateError({ code: 'BAD_STATE', message: `restore: the state is not JSON: ${(err as Error).message}` });
    }
    await this.#call('restore', { state: doc });
  }

  /**
   * checkpointInstance returns the state document of one live instance
   * with its whole call tree (UTF-8 bytes): restoreInstance, here or on any
   * other host, adds it to a running engine. Throws UnknownInstanceError for
   * a key that names no live instance.
   */
  async checkpointInstance(instanceKey: number): Promise<Uint8Array> {
    const res = (await this.#exec('checkpoint', { instanceKey })) as StateResult;
    return new TextEncoder().encode(stringifyDocument(res.state)); // as checkpoint writes it
  }

  /**
   * restoreInstance adds the instance of a checkpointInstance document to
   * this engine, which goes on running its own: the instance keeps its key,
   * its jobs and incidents get keys of this engine. Throws KeyInUseError when
   * the engine holds the instance's key already, BadStateError for a
   * document it cannot take; nothing is added then.
   */
  async restoreInstance(state: Uint8Array | string): Promise<void> {
    const text = typeof state === 'string' ? state : new TextDecoder().decode(state);
    let doc: unknown;
    try {
      doc = parseJSON(text);
    } catch (err) {
      throw new BadStateError({ code: 'BAD_STATE', message: `restoreInstance: the state is not JSON: ${(err as Error).message}` });
    }
    await this.#call('restore', { state: doc, instance: true });
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
    if (this.#remote && !this.#stopEvents && !this.#closed) {
      this.#stopEvents = this.#remote.subscribe((ev) => {
        this.#emit(ev.type, ev);
        this.#emit('*', ev);
      });
    }
    return () => this.off(type as EventType, listener);
  }

  /** off removes a listener added with on. */
  off<T extends EventType>(type: T | '*', listener: Listener<T>): void {
    this.#listeners.get(type)?.delete(listener as AnyListener);
  }

  /**
   * handle registers the handler of a job type: after every call, the
   * engine activates the jobs of that type (including jobs that exist
   * already, through activateJobs) and works each until none is left. A
   * job the handler fails waits out `retryBackoff` on the engine clock
   * before it is worked again. It returns a function that removes the
   * handler.
   */
  handle<V extends Variables = Variables>(type: string, handler: JobHandler<V>, options: HandlerOptions = {}): () => void {
    if (typeof type !== 'string' || type === '') throw new BadRequestError({ code: 'BAD_REQUEST', message: `handle: the job type must be a non-empty string, got ${JSON.stringify(type)}` });
    if (typeof handler !== 'function') throw new BadRequestError({ code: 'BAD_REQUEST', message: `handle ${type}: handler must be a function` });
    const h: handler = {
      fn: handler as JobHandler,
      worker: options.worker ?? 'sdk',
      timeoutMs: toMs(options.timeout ?? 'PT5M', `handle ${type}: timeout`),
      backoffMs: toMs(options.retryBackoff ?? 1000, `handle ${type}: retryBackoff`),
    };
    if (h.timeoutMs <= 0) throw new BadRequestError({ code: 'BAD_REQUEST', message: `handle ${type}: timeout must be > 0` });
    this.#handlers.set(type, h);
    if (this.#remote) {
      this.#checkOpen();
      void this.#stopHandlers.get(type)?.();
      const stop = this.#remote.consume(type, h.timeoutMs, (job) => this.#work(type, h, job), this.#onError);
      this.#stopHandlers.set(type, stop);
      return () => {
        if (this.#handlers.get(type) !== h) return;
        this.#handlers.delete(type);
        this.#stopHandlers.delete(type);
        void stop();
      };
    }
    this.#pendingTypes.add(type);
    return () => {
      if (this.#handlers.get(type) === h) this.#handlers.delete(type);
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
   * terminated); closing again does nothing. An engine of a server
   * (connect) first stops its job handlers, letting each report the job
   * in hand, then closes the connection if it opened it.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#remote) {
        this.#stopHandlers.clear();
        await this.#remote.stopWork(); // the handlers report the jobs in hand
      }
      this.#closed = true; // at once when embedded
      clearTimeout(this.#timer);
      await this.#t.close();
    })();
    return this.#closing;
  }

  // #call runs an operation, then lets the handlers work.
  async #call(op: Operation, request: unknown): Promise<unknown> {
    const result = await this.#exec(op, request);
    await this.#runHandlers();
    return result;
  }

  // #runHandlers runs the job handlers on the jobs a call made available
  // (and on those whose retry back-off ran out), and says whether any ran.
  async #runHandlers(): Promise<boolean> {
    for (const [type, at] of this.#retryAt) {
      if (this.#now.getTime() >= at) {
        this.#retryAt.delete(type);
        this.#pendingTypes.add(type);
      }
    }
    if (this.#pendingTypes.size === 0) return false;
    await this.#drain();
    return true;
  }

  // #exec runs one operation and absorbs its envelope.
  async #exec(op: Operation, request: unknown): Promise<unknown> {
    this.#checkOpen();
    const want = this.#handlers.size > 0 || [...this.#listeners.values()].some((set) => set.size > 0);
    if (want !== this.#events && !this.#remote) {
      this.#absorb(await this.#t.call('configure', { events: want }));
      this.#events = want;
    }
    if (this.#time === 'real' && !this.#remote && op !== 'advance' && Date.now() - this.#now.getTime() >= 1) {
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
      if (ev.type === 'jobCreated') {
        if (ev.jobType !== undefined && this.#handlers.has(ev.jobType)) this.#pendingTypes.add(ev.jobType);
      } else if (this.#watch.size > 0 && terminal[ev.type] && this.#watch.has(ev.instanceKey)) {
        this.#watch.set(ev.instanceKey, terminal[ev.type]!);
      }
      this.#emit(ev.type, ev);
      this.#emit('*', ev);
    }
    if (this.#time === 'real' && !this.#remote && (changed || this.#timer === undefined)) this.#schedule();
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
    let due = this.#nextDeadline;
    for (const at of this.#retryAt.values()) if (!due || at < due.getTime()) due = new Date(at);
    if (!due || this.#closed) return;
    const wait = Math.min(Math.max(0, due.getTime() - Date.now()), 2 ** 31 - 1);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#closed) return;
      // The deadline may be a job's activation timeout or back-off end,
      // which fires no event: let every handler look for work again.
      for (const type of this.#handlers.keys()) this.#pendingTypes.add(type);
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
          for (;;) {
            const h = this.#handlers.get(type);
            if (!h || this.#closed) break;
            const jobs = (await this.#exec('activate_jobs', { type, worker: h.worker, timeoutMs: h.timeoutMs, maxJobs: activateBatch })) as Job[];
            if (jobs.length === 0) break;
            for (const job of jobs) {
              if (++handled > this.#maxHandled) {
                throw new TooManyJobsError({
                  code: 'TOO_MANY_JOBS',
                  message: `flowtrack: handlers worked ${this.#maxHandled} jobs after one call (last: ${type} at ${job.elementId}); is the model looping through jobs?`,
                });
              }
              await this.#work(type, h, job);
            }
          }
        }
      } finally {
        this.#draining = null;
      }
    })();
    return this.#draining;
  }

  async #work(type: string, h: handler, job: Job): Promise<void> {
    const activation = job.activation;
    let result: Variables | void;
    try {
      result = await h.fn(job);
    } catch (err) {
      if (err instanceof BpmnError) {
        await this.#jobCall('throw_error', { jobKey: job.key, errorCode: err.errorCode, message: err.message, activation, ...(err.variables ? { variables: err.variables } : {}) });
      } else {
        await this.#fail(type, h, job, String((err as Error)?.message ?? err));
      }
      return;
    }
    const req = result && typeof result === 'object' ? { jobKey: job.key, variables: result, activation } : { jobKey: job.key, activation };
    try {
      await this.#exec('complete_job', req);
    } catch (err) {
      // Cancelled meanwhile (a boundary event fired, the instance ended), or timed out and taken by another worker.
      if (err instanceof UnknownJobError || err instanceof StaleActivationError) return;
      if (!(err instanceof FlowtrackError) || err.code === 'TRAPPED' || err.code === 'CLOSED') throw err;
      // The result was refused (BAD_VARIABLES...): the job fails with the reason, so an incident shows it.
      this.#onError(err);
      await this.#fail(type, h, job, err.message);
    }
  }

  // #fail fails a job its handler could not do, with the handler's
  // back-off, and remembers when its type is to be worked again.
  async #fail(type: string, h: handler, job: Job, message: string): Promise<void> {
    const retries = Math.max(0, job.retries - 1);
    await this.#jobCall('fail_job', { jobKey: job.key, retries, message, activation: job.activation, backoffMs: h.backoffMs });
    if (retries === 0 || this.#remote) return; // a server queues the job again after the back-off
    const at = this.#now.getTime() + h.backoffMs;
    this.#retryAt.set(type, Math.min(this.#retryAt.get(type) ?? at, at));
    if (this.#time === 'real') this.#schedule();
  }

  async #jobCall(op: Operation, req: unknown): Promise<void> {
    try {
      await this.#exec(op, req);
    } catch (err) {
      if (!(err instanceof UnknownJobError) && !(err instanceof StaleActivationError)) throw err;
    }
  }
}
