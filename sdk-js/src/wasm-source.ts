// Turning what a user passes as `wasm` into a compiled WebAssembly.Module.
// Only URL loading differs between platforms; that part lives in the
// platform files (platform.node.ts, platform.browser.ts), chosen by the
// package's `imports` map at resolve time, not by run-time checks.

import { loadURL } from '#platform';
import { compileResponse } from './response.js';

/**
 * WasmSource says where the engine module comes from: a URL (or URL string;
 * `file:` URLs and paths in Node), a fetch Response (or its promise), the
 * module's bytes, or an already compiled WebAssembly.Module. The default is
 * the flowtrack.wasm shipped next to the SDK.
 */
export type WasmSource = URL | string | Response | PromiseLike<Response> | ArrayBuffer | ArrayBufferView | WebAssembly.Module;

/** compileSource compiles (or passes through) the engine module. */
export async function compileSource(source: WasmSource): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer) return WebAssembly.compile(source);
  if (ArrayBuffer.isView(source)) {
    return WebAssembly.compile(new Uint8Array(source.buffer, source.byteOffset, source.byteLength).slice());
  }
  if (typeof source === 'string' || source instanceof URL) return loadURL(source);
  return compileResponse(await source);
}

let shipped: Promise<WebAssembly.Module> | undefined;

/** shippedModule compiles the module shipped with the SDK once per realm. */
export function shippedModule(defaultURL: URL): Promise<WebAssembly.Module> {
  shipped ??= loadURL(defaultURL).catch((err) => {
    shipped = undefined;
    throw err;
  });
  return shipped;
}
