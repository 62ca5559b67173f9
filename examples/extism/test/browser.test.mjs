// The example of order.mjs in headless Chromium: index.html runs the
// plug-in with the Extism JS SDK's browser build and writes its verdict
// into the page. Chromium comes from the system (Debian package
// `chromium`); this test never downloads a browser. Override the path with
// CHROMIUM=/path/to/chrome. Run by make test-browser.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { chromium } from 'playwright-core';

const here = new URL('..', import.meta.url);
const files = {
  '/': ['index.html', 'text/html'],
  '/order.mjs': ['order.mjs', 'text/javascript'],
  '/order-payment.bpmn': ['order-payment.bpmn', 'application/xml'],
  '/extism.js': ['node_modules/@extism/extism/dist/browser/mod.js', 'text/javascript'],
  '/flowtrack.extism.wasm': ['../../host/flowtrack.extism.wasm', 'application/wasm'],
};

let server;
let context;
let profile;

before(async () => {
  server = createServer((req, res) => {
    const f = files[new URL(req.url, 'http://x').pathname];
    if (!f) return res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': f[1] }).end(readFileSync(new URL(f[0], here)));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  profile = mkdtempSync(join(tmpdir(), 'flowtrack-extism-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await context?.close();
  server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

it('runs the order on the plug-in in the page', async () => {
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForSelector('body[data-result]', { timeout: 60_000 });
  const result = await page.getAttribute('body', 'data-result');
  const text = await page.textContent('#out');
  assert.equal(result, 'ok', text);
  assert.match(text, /order A-100: completed/);
  assert.match(text, /UNKNOWN_JOB/);
  assert.deepEqual(errors, []);
});
