// The caller side of the module's ABI (wasm/ABI.md): instantiate the WASI
// reactor, check its ABI version, and turn one operation into one
// synchronous call that writes the JSON request into linear memory and reads
// the JSON response back. Everything above this file speaks plain objects.

import { ConsoleStdout, File, OpenFile, WASI, WASIProcExit } from '@bjorn3/browser_wasi_shim';
import { BadRequestError, TrappedError, UnknownOperationError, type ErrorData } from './errors.js';
import type { FlowEvent } from './types.js';

/** ABI_VERSION is the module ABI version this SDK speaks. */
export const ABI_VERSION = 1;

/** The response envelope of every operation. */
export interface Envelope {
  ok: boolean;
  result?: unknown;
  error?: ErrorData;
  events: FlowEvent[];
  now: string;
  nextDeadline: string | null;
}

/** Operation names, each exported by the module under the same name. */
export type Operation =
  | 'deploy'
  | 'start'
  | 'publish_message'
  | 'broadcast_signal'
  | 'complete_job'
  | 'fail_job'
  | 'throw_error'
  | 'resolve_incident'
  | 'advance'
  | 'tokens'
  | 'instance'
  | 'history'
  | 'jobs'
  | 'incidents'
  | 'cancel'
  | 'now'
  | 'configure'
  | 'checkpoint'
  | 'restore';

interface Exports {
  memory: WebAssembly.Memory;
  _initialize(): void;
  alloc(size: number): number;
  free(ptr: number): void;
  abi_version(): number;
  debug_trap?(): void;
  [op: string]: unknown;
}

type OpFn = (ptr: number, len: number) => bigint;

/**
 * MAX_VARIABLE_DEPTH is how deeply arrays and objects may nest inside one
 * variable's value (Go's engine.MaxVariableDepth; wasm/ABI.md). The SDK
 * refuses a deeper request before it encodes it, as the module would: a
 * deep value would otherwise exhaust the stack while being encoded or
 * decoded, and a cyclic one never ends.
 */
export const MAX_VARIABLE_DEPTH = 64;

// maxRequestDepth is the request object, its variables object, then the
// variable's value (as the module's bound on a request's bytes).
const maxRequestDepth = MAX_VARIABLE_DEPTH + 2;

// checkDepth throws BadRequestError if request nests deeper than
// maxRequestDepth. It walks with an explicit stack, never recursing.
function checkDepth(op: string, request: unknown): void {
  const stack: Array<[unknown, number, string]> = [[request, 0, '']];
  while (stack.length > 0) {
    const [v, depth, field] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxRequestDepth) {
      const where = field ? `field ${JSON.stringify(field)}` : 'the request';
      throw new BadRequestError({
        code: 'BAD_REQUEST',
        message: `${op}: ${where} nests deeper than ${maxRequestDepth} levels of arrays and objects; variable values may nest at most ${MAX_VARIABLE_DEPTH} (engine.MaxVariableDepth)`,
      });
    }
    if (v instanceof Uint8Array || v instanceof Date) continue;
    for (const [k, e] of Object.entries(v)) stack.push([e, depth + 1, depth === 0 ? k : field]);
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * ModuleInstance is one instantiated engine module. Calls are synchronous
 * and must not overlap (the module has one memory and one engine); the
 * Engine class and the worker serialise them. After a trap the instance is
 * discarded: every later call throws TrappedError.
 */
export class ModuleInstance {
  #exports: Exports;
  #ops = new Map<string, OpFn>();
  #trapped: string | null = null;
  #stderr: string[] = [];
  // A reusable request buffer, grown on demand, freed on close.
  #buf = 0;
  #bufSize = 0;

  private constructor(exports: Exports) {
    this.#exports = exports;
  }

  /** instantiate creates a fresh module instance from a compiled module. */
  static async instantiate(module: WebAssembly.Module): Promise<ModuleInstance> {
    const stderr: string[] = [];
    const wasi = new WASI(
      ['flowtrack'],
      [],
      [
        new OpenFile(new File([])),
        ConsoleStdout.lineBuffered((line) => stderr.push(line)),
        ConsoleStdout.lineBuffered((line) => {
          stderr.push(line);
          if (stderr.length > 200) stderr.splice(0, stderr.length - 200);
        }),
      ],
      { debug: false },
    );
    const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport });
    const exports = instance.exports as unknown as Exports;
    for (const name of ['memory', '_initialize', 'alloc', 'free', 'abi_version']) {
      if (!(name in exports)) throw new TrappedError({ code: 'TRAPPED', message: `flowtrack: module lacks the export ${name}: not a flowtrack engine module` });
    }
    const m = new ModuleInstance(exports);
    m.#stderr = stderr;
    m.#guard(() => wasi.initialize({ exports } as never));
    const version = m.#guard(() => exports.abi_version());
    if (version !== ABI_VERSION) {
      m.#trapped = `ABI version ${version}`;
      throw new TrappedError({
        code: 'TRAPPED',
        message: `flowtrack: module ABI version ${version}, this SDK speaks ${ABI_VERSION}: use matching SDK and module builds`,
      });
    }
    return m;
  }

  /** call runs one operation and returns its decoded response envelope. */
  call(op: Operation, request: unknown): Envelope {
    const fn = this.#op(op);
    checkDepth(op, request);
    const bytes = encoder.encode(request === undefined ? '{}' : JSON.stringify(request));
    const ex = this.#exports;
    return this.#guard(() => {
      if (bytes.length > this.#bufSize) {
        if (this.#buf) ex.free(this.#buf);
        const size = Math.max(bytes.length, 4096);
        this.#buf = ex.alloc(size);
        this.#bufSize = this.#buf ? size : 0;
      }
      let ptr = this.#buf;
      if (bytes.length > 0 && !ptr) {
        // The module refused the buffer (over its request limit): let it say so.
        return this.#decode(fn(0, bytes.length));
      }
      new Uint8Array(ex.memory.buffer, ptr, bytes.length).set(bytes);
      return this.#decode(fn(ptr, bytes.length));
    });
  }

  /** trap makes the module crash on purpose (test-only export). */
  trap(): void {
    const ex = this.#exports;
    this.#guard(() => ex.debug_trap?.());
  }

  /** trapped reports why the instance was discarded, or null. */
  get trapped(): string | null {
    return this.#trapped;
  }

  /** close releases the request buffer; the instance must not be used afterwards. */
  close(): void {
    if (!this.#trapped && this.#buf) this.#exports.free(this.#buf);
    this.#buf = 0;
    this.#trapped ??= 'closed';
  }

  #decode(packed: bigint): Envelope {
    const ex = this.#exports;
    const ptr = Number(BigInt.asUintN(64, packed) >> 32n);
    const len = Number(packed & 0xffffffffn);
    // Read after the call: the memory may have grown and detached old views.
    const text = decoder.decode(new Uint8Array(ex.memory.buffer, ptr, len));
    ex.free(ptr);
    return JSON.parse(text) as Envelope;
  }

  #op(op: string): OpFn {
    let fn = this.#ops.get(op);
    if (!fn) {
      const f = this.#exports[op];
      if (typeof f !== 'function') {
        throw new UnknownOperationError({ code: 'UNKNOWN_OPERATION', message: `flowtrack: the module does not export the operation ${op}` });
      }
      fn = f as OpFn;
      this.#ops.set(op, fn);
    }
    return fn;
  }

  // guard runs fn against the module; if the module traps (throws), the
  // instance is marked discarded and a TrappedError carries the crash report.
  #guard<T>(fn: () => T): T {
    if (this.#trapped) {
      throw new TrappedError({ code: 'TRAPPED', message: `flowtrack: the engine module was discarded (${this.#trapped}); create a new engine` });
    }
    try {
      return fn();
    } catch (err) {
      const why = err instanceof WASIProcExit ? `exit code ${err.code}` : String((err as Error)?.message ?? err);
      this.#trapped = why;
      const report = this.#stderr.slice(-20).join('\n');
      throw new TrappedError({
        code: 'TRAPPED',
        message: `flowtrack: the engine module trapped (${why}) and was discarded${report ? `:\n${report}` : ''}`,
      });
    }
  }
}
