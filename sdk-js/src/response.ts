/** compileResponse compiles a fetched module, streaming when the server sends application/wasm. */
export async function compileResponse(res: Response): Promise<WebAssembly.Module> {
  if (!res.ok) throw new Error(`flowtrack: loading the engine module from ${res.url}: HTTP ${res.status}`);
  if (res.headers.get('content-type')?.startsWith('text/html')) {
    // A dev server's fallback page: Vite's dependency pre-bundling moves
    // the SDK away from its flowtrack.wasm, so the URL finds no file.
    throw new Error(
      `flowtrack: ${res.url} served an HTML page, not the engine module: with Vite's dev server, add ` +
        "optimizeDeps: { exclude: ['flowtrack'] } to vite.config, or pass Engine.create({ wasm }) a URL that serves flowtrack.wasm",
    );
  }
  if (typeof WebAssembly.compileStreaming === 'function' && res.headers.get('content-type')?.startsWith('application/wasm')) {
    return WebAssembly.compileStreaming(res);
  }
  return WebAssembly.compile(await res.arrayBuffer());
}
