/** compileResponse compiles a fetched module, streaming when the server sends application/wasm. */
export async function compileResponse(res: Response): Promise<WebAssembly.Module> {
  if (!res.ok) throw new Error(`flowtrack: loading the engine module from ${res.url}: HTTP ${res.status}`);
  if (typeof WebAssembly.compileStreaming === 'function' && res.headers.get('content-type')?.startsWith('application/wasm')) {
    return WebAssembly.compileStreaming(res);
  }
  return WebAssembly.compile(await res.arrayBuffer());
}
