// flowtrack browser start-up benchmark: how long a page takes to create an
// engine with the SDK in headless Chromium, on a first visit (fresh
// profile: fetch, compile, instantiate, init) and on later visits, when
// the module comes from the HTTP cache and Chromium may reuse the code it
// compiled (WebAssembly code caching, for modules compiled with
// compileStreaming). Prints JSON lines like bench/node/bench.mjs; `make
// bench` runs it through flowbench all.
//
//   node bench/browser/startup.mjs
//
// It serves sdk-js (dist/ and the WASI shim from node_modules, after `make
// sdk`) to a page that loads the SDK through an import map, with no
// bundler. Chromium is the system's (CHROMIUM, default /usr/bin/chromium);
// without one it prints nothing and says so on stderr.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = resolve(here, '../../sdk-js');
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  process.stderr.write(`browser start-up: no Chromium at ${executablePath}; skipped\n`);
  process.exit(0);
}
const { chromium } = await import(resolve(sdk, 'node_modules/playwright-core/index.mjs'));

const page = `<!doctype html>
<script type="importmap">
{ "imports": { "#platform": "/dist/platform.browser.js", "#spawn": "/dist/spawn.browser.js",
  "@bjorn3/browser_wasi_shim": "/node_modules/@bjorn3/browser_wasi_shim/dist/index.js" } }
</script>
<script type="module">
try {
  const { Engine } = await import('/dist/index.js');
  const t0 = performance.now();
  const engine = await Engine.create();
  const ms = performance.now() - t0;
  engine.close();
  // A second engine from the module the first one compiled: the part of a
  // page load that is not fetching and compiling.
  const module = await Engine.compile();
  const t1 = performance.now();
  (await Engine.create({ wasm: module })).close();
  window.result = { ms, fromCompiled: performance.now() - t1 };
} catch (err) { window.result = { error: String(err) }; }
</script>`;
const types = { '.js': 'text/javascript', '.wasm': 'application/wasm' };
const server = await new Promise((done) => {
  const s = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' }).end(page);
      return;
    }
    const file = join(sdk, normalize(path));
    if (!file.startsWith(sdk + '/') || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    // Cacheable, as a deployed app would serve it.
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'max-age=3600' });
    res.end(readFileSync(file));
  });
  s.listen(0, '127.0.0.1', () => done(s));
});
const profile = mkdtempSync(join(tmpdir(), 'flowtrack-startup-'));
const out = (rec) => process.stdout.write(JSON.stringify(rec) + '\n');
try {
  const ctx = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  const tab = await ctx.newPage();
  const url = `http://127.0.0.1:${server.address().port}/`;
  const load = async () => {
    await tab.goto(url);
    const r = await tab.waitForFunction(() => window.result, undefined, { timeout: 120_000 }).then((h) => h.jsonValue());
    if (r.error) throw new Error(r.error);
    return r;
  };
  const first = (await load()).ms;
  // Chromium writes a module's compiled code to its cache once V8 has
  // optimised enough of it in the background: give it time.
  await tab.waitForTimeout(10_000);
  const later = [];
  const fromCompiled = [];
  for (let i = 0; i < 5; i++) {
    const r = await load();
    later.push(r.ms);
    fromCompiled.push(r.fromCompiled);
  }
  later.sort((a, b) => a - b);
  fromCompiled.sort((a, b) => a - b);
  await ctx.close();
  out({ kind: 'cold', host: 'chromium', variant: 'first page load Engine.create', ms: first });
  out({ kind: 'cold', host: 'chromium', variant: 'later page load Engine.create', ms: later[2] });
  out({ kind: 'cold', host: 'chromium', variant: 'later page load Engine.create from compiled module', ms: fromCompiled[2] });
} catch (err) {
  out({ kind: 'cold', host: 'chromium', variant: 'page load', error: String(err?.message ?? err) });
} finally {
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
