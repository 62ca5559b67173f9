// A transport carries one operation to a module instance and its response
// envelope back: in-process (a direct synchronous call) or to a Web Worker
// (postMessage). The Engine above is the same either way.

import { ClosedError, errorFromData, type ErrorData } from './errors.js';
import { encodeRequest, parseEnvelope, type Envelope, type ModuleInstance, type Operation } from './module.js';

export interface Transport {
  call(op: Operation, request: unknown): Envelope | Promise<Envelope>;
  close(): void | Promise<void>;
}

/** LocalTransport calls a module instance in this thread. */
export class LocalTransport implements Transport {
  constructor(private readonly module: ModuleInstance) {}
  call(op: Operation, request: unknown): Envelope {
    return this.module.call(op, request);
  }
  close(): void {
    this.module.close();
  }
}

/** Messages between WorkerTransport and worker.ts. */
export type WorkerRequest =
  | { kind: 'init'; wasm?: WebAssembly.Module | ArrayBuffer | string }
  | { kind: 'call'; id: number; op: Operation; request: string };
// Requests and envelopes cross as JSON text (encodeRequest, parseEnvelope):
// a structured clone would turn a Decimal into a plain object.
export type WorkerReply =
  | { kind: 'ready' }
  | { kind: 'reply'; id: number; envelope: string }
  | { kind: 'failed'; id: number; error: ErrorData };

/**
 * WorkerTransport runs the module in a Web Worker. The worker handles one
 * message at a time, in order, so calls never overlap inside the module.
 */
export class WorkerTransport implements Transport {
  #worker: Worker;
  #next = 1;
  #waiting = new Map<number, { resolve(e: Envelope): void; reject(e: unknown): void }>();

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  static start(worker: Worker, wasm?: WebAssembly.Module | ArrayBuffer | string): Promise<WorkerTransport> {
    const t = new WorkerTransport(worker);
    return new Promise((resolve, reject) => {
      worker.onerror = (ev) => {
        const err = new ClosedError({ code: 'CLOSED', message: `flowtrack: the engine worker failed: ${ev.message ?? 'error'}` });
        reject(err);
        t.#failAll(err);
      };
      worker.onmessage = (ev: MessageEvent<WorkerReply | { kind: 'initFailed'; error: ErrorData }>) => {
        const msg = ev.data;
        if (msg.kind === 'ready') return resolve(t);
        if (msg.kind === 'initFailed') {
          worker.terminate();
          return reject(errorFromData(msg.error));
        }
        const w = t.#waiting.get(msg.id);
        if (!w) return;
        t.#waiting.delete(msg.id);
        if (msg.kind === 'reply') {
          try {
            w.resolve(parseEnvelope(msg.envelope));
          } catch (err) {
            w.reject(err);
          }
        }
        else w.reject(errorFromData(msg.error));
      };
      const init: WorkerRequest = { kind: 'init', wasm };
      worker.postMessage(init, wasm instanceof ArrayBuffer ? [wasm] : []);
    });
  }

  call(op: Operation, request: unknown): Promise<Envelope> {
    const id = this.#next++;
    let text: string;
    try {
      text = encodeRequest(op, request);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      const msg: WorkerRequest = { kind: 'call', id, op, request: text };
      this.#worker.postMessage(msg);
    });
  }

  close(): void {
    this.#worker.terminate();
    this.#failAll(new ClosedError({ code: 'CLOSED', message: 'flowtrack: engine closed' }));
  }

  #failAll(err: unknown): void {
    for (const w of this.#waiting.values()) w.reject(err);
    this.#waiting.clear();
  }
}
