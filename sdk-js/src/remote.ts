// The remote transport: the operations of the wire contract over NATS
// request/reply to a flowtrack server (flowtrack serve), its events from
// the cluster's event subjects and its jobs from the cluster's job queues
// (README, "flowtrack serve" and "Job workers in any language"). The
// Engine above is the same as in-process. The NATS client is the `nats`
// package, an optional peer dependency loaded only by Engine.connect with
// `servers`; a browser passes a connection of its own (nats.ws).

import { ClosedError, errorFromData, NoServerError } from './errors.js';
import { toMs } from './duration.js';
import { encodeRequest, parseEnvelope, type Envelope, type Operation } from './module.js';
import { parseJSON } from './numbers.js';
import type { Transport } from './transport.js';
import type { FlowEvent, Job } from './types.js';

/**
 * NatsConnection is what the SDK uses of a NATS connection: the shape of
 * the `nats` package's (version 2) and of `nats.ws`'s, stated here so that
 * the SDK's types do not depend on either package.
 */
export interface NatsConnection {
  request(subject: string, data?: Uint8Array, opts?: { timeout?: number }): Promise<{ data: Uint8Array }>;
  subscribe(subject: string, opts?: { callback?: (err: Error | null, msg: { data: Uint8Array }) => void }): { unsubscribe(): void };
  jetstreamManager(): Promise<{ consumers: { add(stream: string, cfg: Record<string, unknown>): Promise<unknown> } }>;
  jetstream(): { consumers: { get(stream: string, name: string): Promise<{ consume(opts?: { max_messages?: number }): Promise<NatsMessages> }> } };
  flush(): Promise<void>;
  drain(): Promise<void>;
  /** The connection's status events (`disconnect`, `reconnect`...); used, when present, to fail calls fast while the connection is down. */
  status?(): AsyncIterable<{ type: string }>;
}

/** NatsMessages is a JetStream consumer's message iterator. */
export interface NatsMessages extends AsyncIterable<{ data: Uint8Array; ack(): void }> {
  stop(): void;
}

/** ConnectOptions configure Engine.connect. */
export interface ConnectOptions {
  /** NATS server URLs; the SDK connects with the `nats` package (Node), and closes the connection on close. */
  servers?: string | string[];
  /** An open NATS connection to use instead (any nats.js v2 client, nats.ws in browsers); it stays the caller's. */
  connection?: NatsConnection;
  /** The cluster name the server serves (`flowtrack serve --cluster`). Default `default`. */
  cluster?: string;
  /** How long a call waits for the server's answer, ms or ISO 8601. Default 30 seconds. */
  timeout?: number | string;
  /**
   * How long a call waits for a connection that went down to come back
   * (another server of the NATS cluster) before it fails with
   * NoServerError, ms or ISO 8601. Default 2 seconds.
   */
  reconnectGrace?: number | string;
  /** How many queued jobs each handler holds ahead of the one it works. Default 8. */
  prefetch?: number;
  /** Receives errors nobody awaits, as EngineOptions.onError. Default console.error. */
  onError?: (error: unknown) => void;
}

// natsModule is the package connect loads; a name in a variable keeps
// bundlers from pulling it into the browser bundle.
const natsModule = 'nats';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * jobToken writes a job type as the subject token and consumer name of its
 * queue: every byte other than an ASCII letter, digit, `_` or `-` as `%`
 * and two upper-case hex digits (the Go wire.JobToken).
 */
export function jobToken(type: string): string {
  let out = '';
  for (const b of encoder.encode(type)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_-]/.test(c) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** RemoteTransport carries operations, events and jobs to and from a flowtrack server. */
export class RemoteTransport implements Transport {
  readonly #nc: NatsConnection;
  readonly #owned: boolean;
  readonly #cluster: string;
  readonly #timeoutMs: number;
  readonly #prefetch: number;
  readonly #graceMs: number;
  // #downSince is when the connection went down (a disconnect event), or
  // undefined while it is up.
  #downSince: number | undefined;
  // #closers stop what close must end: subscriptions, and job queues once
  // the job in hand is reported.
  #closers = new Set<() => Promise<void> | void>();
  // #working holds the loops of the job queues until each has reported its
  // last job, even after it was told to stop.
  #working = new Set<Promise<void>>();

  private constructor(nc: NatsConnection, owned: boolean, options: ConnectOptions) {
    this.#nc = nc;
    this.#owned = owned;
    this.#cluster = options.cluster ?? 'default';
    this.#timeoutMs = toMs(options.timeout ?? 30_000, 'connect timeout');
    this.#prefetch = options.prefetch ?? 8;
    this.#graceMs = toMs(options.reconnectGrace ?? 2_000, 'connect reconnectGrace');
    const status = nc.status?.();
    if (status) {
      void (async () => {
        for await (const s of status) {
          if (s.type === 'disconnect' && this.#downSince === undefined) this.#downSince = Date.now();
          if (s.type === 'reconnect') this.#downSince = undefined;
        }
      })().catch(() => {});
    }
  }

  /** open connects as options say. */
  static async open(options: ConnectOptions): Promise<RemoteTransport> {
    const cluster = options.cluster ?? 'default';
    if (!/^[A-Za-z0-9_-]+$/.test(cluster)) throw errorFromData({ code: 'BAD_REQUEST', message: `connect: cluster ${JSON.stringify(cluster)}: only letters, digits, "_" and "-" are allowed` });
    if (!Number.isSafeInteger(options.prefetch ?? 8) || (options.prefetch ?? 8) < 1) throw errorFromData({ code: 'BAD_REQUEST', message: `connect: prefetch ${String(options.prefetch)}: want a whole number >= 1` });
    if (options.connection) return new RemoteTransport(options.connection, false, options);
    if (options.servers === undefined) throw errorFromData({ code: 'BAD_REQUEST', message: 'connect: give servers or a connection' });
    const nats = (await import(/* @vite-ignore */ natsModule)) as { connect(o: { servers: string | string[] }): Promise<NatsConnection> };
    return new RemoteTransport(await nats.connect({ servers: options.servers }), true, options);
  }

  /**
   * call runs an operation on the server and returns its response envelope.
   * It throws NoServerError at once when NATS says nobody serves the
   * cluster's subjects (no responders), and when the connection has been
   * down for reconnectGrace (its server died and no other took over),
   * rather than after the timeout.
   */
  async call(op: Operation, request: unknown): Promise<Envelope> {
    const text = encodeRequest(op, request);
    const noServer = (why: string) => new NoServerError({ code: 'NO_SERVER', message: `flowtrack: ${op}: no flowtrack server answers for cluster ${this.#cluster}: ${why}` });
    let timer: ReturnType<typeof setInterval> | undefined;
    const down = new Promise<never>((_, reject) => {
      const check = () => {
        if (this.#downSince !== undefined && Date.now() - this.#downSince >= this.#graceMs) {
          reject(noServer(`the NATS connection has been down for ${Date.now() - this.#downSince} ms`));
        }
      };
      timer = setInterval(check, Math.min(100, this.#graceMs));
    });
    let reply: { data: Uint8Array };
    try {
      reply = await Promise.race([this.#nc.request(`flowtrack.${this.#cluster}.op.${op}`, encoder.encode(text), { timeout: this.#timeoutMs }), down]);
    } catch (err) {
      if ((err as { code?: string })?.code === '503') throw noServer('NATS has no responders on its subjects');
      throw err;
    } finally {
      clearInterval(timer);
    }
    return parseEnvelope(decoder.decode(reply.data));
  }

  /** subscribe calls fn with every event the server publishes from now on; it returns a function that stops. */
  subscribe(fn: (ev: FlowEvent) => void): () => void {
    const sub = this.#nc.subscribe(`flowtrack.${this.#cluster}.events.*`, {
      callback: (err, msg) => {
        if (!err) fn(parseJSON(decoder.decode(msg.data)) as FlowEvent);
      },
    });
    const stop = () => {
      this.#closers.delete(stop);
      sub.unsubscribe();
    };
    this.#closers.add(stop);
    return stop;
  }

  /**
   * consume works the job queue of type, one job at a time: it creates or
   * updates the type's consumer with AckWait timeoutMs (the server's
   * activation timeout for the type) and calls work on each job whose
   * activation has not timed out, acking the message once work resolved.
   * A work that throws leaves the message for redelivery and goes to
   * onError. It returns a function that stops, resolving once the job in
   * hand is reported; jobs queued ahead and not worked are delivered again.
   */
  consume(type: string, timeoutMs: number, work: (job: Job) => Promise<void>, onError: (err: unknown) => void): () => Promise<void> {
    let stopped = false;
    let messages: NatsMessages | undefined;
    const stream = `FLOWTRACK_JOBS_${this.#cluster}`;
    const name = jobToken(type);
    const done = (async () => {
      const jsm = await this.#nc.jetstreamManager();
      await jsm.consumers.add(stream, {
        durable_name: name,
        filter_subject: `flowtrack.${this.#cluster}.jobs.${name}`,
        ack_policy: 'explicit',
        ack_wait: Math.round(timeoutMs * 1e6),
        // Unused for this long, JetStream removes the consumer and the server stops activating the type (wire.JobConsumerIdle).
        inactive_threshold: Math.round(Math.max(2 * timeoutMs, 600_000) * 1e6),
      });
      const consumer = await this.#nc.jetstream().consumers.get(stream, name);
      if (stopped) return;
      messages = await consumer.consume({ max_messages: this.#prefetch });
      if (stopped) return messages.stop();
      for await (const m of messages) {
        const job = parseJSON(decoder.decode(m.data)) as Job;
        if (job.deadline && Date.parse(job.deadline) <= Date.now()) {
          m.ack(); // timed out before it came: the server has queued the job again
          continue;
        }
        try {
          await work(job);
          m.ack();
        } catch (err) {
          onError(err);
        }
      }
    })().catch((err) => {
      if (!stopped) onError(new ClosedError({ code: 'CLOSED', message: `flowtrack: the job queue of ${type} on cluster ${this.#cluster}: ${String((err as Error)?.message ?? err)}` }));
    });
    this.#working.add(done);
    void done.finally(() => this.#working.delete(done));
    const stop = () => {
      stopped = true;
      this.#closers.delete(stop);
      messages?.stop();
      return done;
    };
    this.#closers.add(stop);
    return stop;
  }

  /** stopWork stops every job queue and resolves once each has reported the job in hand. */
  async stopWork(): Promise<void> {
    for (const stop of [...this.#closers]) void stop();
    await Promise.all([...this.#working]);
  }

  async close(): Promise<void> {
    await this.stopWork();
    if (this.#owned) await this.#nc.drain();
  }
}
