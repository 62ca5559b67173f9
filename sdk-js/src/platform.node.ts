// Node specifics: read the module from disk (fetch cannot read file: URLs).

import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { compileResponse } from './response.js';

/** defaultWasmURL is the flowtrack.wasm shipped next to the compiled SDK. */
export const defaultWasmURL = new URL('./flowtrack.wasm', import.meta.url);

/** loadURL compiles the module at a file:, http: or https: URL or a path. */
export async function loadURL(source: URL | string): Promise<WebAssembly.Module> {
  const url = source instanceof URL ? source : /^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source) ? new URL(source) : pathToFileURL(source);
  if (url.protocol === 'file:') return WebAssembly.compile(await readFile(url));
  return compileResponse(await fetch(url));
}
