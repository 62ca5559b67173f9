// The caller side of the module's ABI (wasm/ABI.md): instantiate the WASI
// reactor, check its ABI version, and turn one operation into one
// synchronous call that writes the JSON request into linear memory and reads
// the JSON response back. Everything above this file speaks plain objects.

import { ConsoleStdout, File, OpenFile, WASI, WASIProcExit } from '@bjorn3/browser_wasi_shim';
import { ABI_VERSION, BadRequestError, BadVariablesError, TrappedError, UnknownOperationError, type Envelope, type Operation } from './contract.js';
import { Decimal, parseJSON, stringifyJSON } from './numbers.js';

export { ABI_VERSION };
export type { Envelope, Operation };

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

// maxStateDepth bounds restore's request, whose state document holds
// variables six levels deeper than an ordinary request (the module's
// maxStateDepth, wasm/state.go).
const maxStateDepth = maxRequestDepth + 6;

// checkRequest throws if request is not what the module would accept
// as the same JSON, before it is encoded: a value JSON cannot hold (NaN,
// infinities, functions, symbols, Maps and Sets, which
// JSON.stringify would drop, alter or throw on; a bigint or a Decimal is
// its exact JSON number), `variables` that are not
// an object, or nesting deeper than maxRequestDepth (maxStateDepth for restore; a cycle does). Under
// `variables` these are BadVariablesError, as natively; elsewhere
// BadRequestError. It walks with an explicit stack, never recursing.
function checkRequest(op: string, request: unknown): void {
  const limit = op === 'restore' ? maxStateDepth : maxRequestDepth;
  const stack: Array<[unknown, number, string]> = [[request, 0, '']];
  while (stack.length > 0) {
    const [v, depth, field] = stack.pop()!;
    const fail = (what: string): never => {
      const where = field ? `field ${JSON.stringify(field)}` : 'the request';
      const data = { message: `${op}: ${where} ${what}` };
      throw field === 'variables'
        ? new BadVariablesError({ code: 'BAD_VARIABLES', ...data })
        : new BadRequestError({ code: 'BAD_REQUEST', ...data });
    };
    if (depth === 1 && field === 'variables' && (v === null || typeof v !== 'object' || Array.isArray(v))) {
      fail(`must be an object of JSON values, got ${Array.isArray(v) ? 'an array' : typeof v}`);
    }
    switch (typeof v) {
      case 'number':
        if (!Number.isFinite(v)) fail(`holds ${v}, which is not a JSON number`);
        continue;
      case 'bigint': // sent as its exact JSON number (numbers.ts)
        continue;
      case 'function':
      case 'symbol':
        fail(`holds a ${typeof v}, which is not a JSON value`);
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) {
      fail(`nests deeper than ${limit} levels of arrays and objects; variable values may nest at most ${MAX_VARIABLE_DEPTH} (engine.MaxVariableDepth)`);
    }
    if (v instanceof Map || v instanceof Set) fail(`holds a ${v.constructor.name}, which is not a JSON value`);
    if (v instanceof Uint8Array || v instanceof Date || v instanceof Decimal) continue;
    for (const [k, e] of Object.entries(v)) stack.push([e, depth + 1, depth === 0 ? k : field]);
  }
}

/**
 * encodeRequest checks a request (checkRequest) and writes it as JSON, a
 * bigint or Decimal as its exact number.
 */
export function encodeRequest(op: Operation, request: unknown): string {
  checkRequest(op, request);
  return request === undefined ? '{}' : stringifyJSON(request);
}

/** parseEnvelope reads a response envelope; a number no double holds is a Decimal. */
export function parseEnvelope(text: string): Envelope {
  return parseJSON(text) as Envelope;
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
    return parseEnvelope(this.callText(op, encodeRequest(op, request)));
  }

  /**
   * callText runs one operation on a request already encoded
   * (encodeRequest) and returns the response envelope's JSON text, for
   * parseEnvelope: the worker hands text across, which keeps Decimals.
   */
  callText(op: Operation, request: string): string {
    const fn = this.#op(op);
    const ex = this.#exports;
    // A UTF-16 code unit takes at most 3 bytes in UTF-8: when that fits the
    // request buffer, the text is encoded straight into the module's memory,
    // with no intermediate copy.
    if (this.#buf && request.length * 3 <= this.#bufSize) {
      return this.#guard(() => {
        const { written } = encoder.encodeInto(request, new Uint8Array(ex.memory.buffer, this.#buf, this.#bufSize));
        return this.#decode(fn(this.#buf, written));
      });
    }
    const bytes = encoder.encode(request);
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

  #decode(packed: bigint): string {
    const ex = this.#exports;
    const ptr = Number(BigInt.asUintN(64, packed) >> 32n);
    const len = Number(packed & 0xffffffffn);
    // Read after the call: the memory may have grown and detached old views.
    const text = decoder.decode(new Uint8Array(ex.memory.buffer, ptr, len));
    ex.free(ptr);
    return text;
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
