// Browser (and Web Worker, Deno, bundler) specifics: fetch the module and
// compile it while it streams.

import { compileResponse } from './response.js';

/** defaultWasmURL is the flowtrack.wasm shipped next to the compiled SDK. */
export const defaultWasmURL = new URL('./flowtrack.wasm', import.meta.url);

/** loadURL fetches and compiles the module at a URL (relative to the page). */
export async function loadURL(source: URL | string): Promise<WebAssembly.Module> {
  const url = source instanceof URL ? source : new URL(source, globalThis.location?.href);
  return compileResponse(await fetch(url));
}
