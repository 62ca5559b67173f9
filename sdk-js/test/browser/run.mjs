// Runs the SDK's own test files (engine, boundary, bad-input) in headless
// Chromium, on a page and inside a Web Worker, from a Vite production build
// of them and the SDK: what a user's bundled app gets. Prints one line per
// test and exits non-zero if any failed. Run: npm run test:browser (after
// npm run build).
//
// Chromium comes from the system (Debian package `chromium`); nothing is
// downloaded. Override the path with CHROMIUM=/path/to/chrome.

import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { build } from 'vite';

const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  console.error(`test:browser: no Chromium at ${executablePath}: apt-get install -y chromium (or set CHROMIUM)`);
  process.exit(1);
}
const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

const out = mkdtempSync(join(tmpdir(), 'flowtrack-sdk-browser-'));
let server;
let browser;
let failed = 0;
try {
  await build({ configFile: fileURLToPath(new URL('./vite.config.mjs', import.meta.url)), build: { outDir: out } });
  server = await new Promise((resolve) => {
    const s = createServer((req, res) => {
      const file = join(out, normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^(\.\.[/\\])+/, ''));
      const path = existsSync(file) && statSync(file).isDirectory() ? join(file, 'index.html') : file;
      if (!path.startsWith(out) || !existsSync(path)) {
        res.writeHead(404).end('not found');
        return;
      }
      res.writeHead(200, { 'content-type': types[extname(path)] ?? 'application/octet-stream' });
      res.end(readFileSync(path));
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
  browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'] });
  const page = await browser.newPage();
  const pageErrors = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(`http://127.0.0.1:${server.address().port}/index.html`);
  const results = await page.evaluate(() => window.flowtrackResults, undefined, { timeout: 0 });
  if (results.error) throw new Error(results.error);
  for (const [where, list] of Object.entries(results)) {
    const count = { pass: 0, fail: 0, skip: 0 };
    for (const r of list) {
      count[r.status]++;
      if (r.status === 'fail') {
        failed++;
        console.log(`not ok - ${where}: ${r.name}\n  ${r.error.replaceAll('\n', '\n  ')}`);
      }
    }
    console.log(`${where}: ${count.pass} passed, ${count.fail} failed, ${count.skip} skipped of ${list.length}`);
    if (list.length === 0) failed++;
  }
  for (const e of pageErrors) console.log(`page error: ${e}`);
} finally {
  await browser?.close();
  server?.close();
  rmSync(out, { recursive: true, force: true });
}
process.exit(failed > 0 ? 1 : 0);
