// The token simulator on Vite's dev server (`npm run dev`, as the README
// says), in headless Chromium: the SDK is linked from outside this folder,
// and the dev server must serve its worker and .wasm (vite.config.js,
// server.fs.allow) or the engine never starts. It also watches the engine
// load with progress, and tokens travel along the flows at a playback
// speed and not at "instant".
//
// Chromium comes from the system (Debian package `chromium`); this test
// never downloads a browser. Override the path with CHROMIUM=/path/to/chrome.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { createServer } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';

describe('browser simulator on the dev server', { skip: !existsSync(executablePath) && `no Chromium at ${executablePath}: apt-get install -y chromium (or set CHROMIUM)` }, () => {
  let server;
  let context;
  let page;
  let profile;
  const errors = [];
  const refused = [];

  before(async () => {
    // The configuration of `npm run dev` (vite.config.js), on a free port.
    server = await createServer({ root, logLevel: 'warn', server: { host: '127.0.0.1', port: 0 } });
    await server.listen();
    profile = mkdtempSync(join(tmpdir(), 'flowtrack-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      viewport: { width: 1400, height: 820 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (msg) => msg.type() === 'error' && errors.push(msg.text()));
    context.on('response', (res) => res.status() >= 400 && refused.push(`${res.status()} ${res.url()}`));
  });

  after(async () => {
    await context?.close();
    await server?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const ready = () => page.waitForSelector('#status[data-state="ready"]');
  const logLine = async (re) => {
    const li = page.locator('#log li', { hasText: re }).last();
    await li.waitFor();
    return li.innerText();
  };

  it('serves the page, the SDK, its worker and the engine module, and shows the engine loading', async () => {
    const { port } = server.httpServer.address();
    await page.goto(`http://127.0.0.1:${port}/`);
    await ready();
    assert.match(await logLine(/engine ready in/), /engine ready in \d+ ms \(in a worker\); deployed payment/);
    assert.equal(await page.inputValue('#process'), 'payment');
    assert.deepEqual(refused, [], 'the dev server refused nothing');
    const steps = await page.evaluate(() => window.simulator.loadSteps);
    for (const step of [/^downloading engine… \d+ KB/, /^compiling engine…$/, /^starting engine in a worker…$/, /^deploying order-payment\.bpmn…$/]) {
      assert.ok(steps.some((s) => step.test(s)), `a progress step ${step} in ${JSON.stringify(steps)}`);
    }
    assert.equal(await page.locator('#engine-progress').isHidden(), true, 'the progress bar goes once the engine is ready');
  });

  // travels records every token that travels along a flow on the diagram,
  // with the positions it is drawn at.
  const watchTravel = () =>
    page.evaluate(() => {
      window.travels = [];
      new MutationObserver((records) => {
        for (const r of records) {
          for (const n of r.addedNodes) if (n.classList?.contains('ft-travel')) window.travels.push({ flow: n.dataset.flow, at: [] });
          if (r.type === 'attributes' && r.target.classList?.contains('ft-travel')) window.travels.at(-1)?.at.push(r.target.getAttribute('transform'));
        }
      }).observe(document.querySelector('#canvas svg'), { subtree: true, childList: true, attributes: true, attributeFilter: ['transform'] });
    });

  it('moves tokens along the flows at a playback speed', async () => {
    await watchTravel();
    await page.selectOption('#speed', '120');
    await page.fill('#start-vars', '{"orderId": "D-1", "amount": 250}');
    await page.click('#start');
    await page.locator('.token[data-element="Task_check"][data-waiting="job"]').waitFor();
    const travels = await page.evaluate(() => window.travels);
    assert.deepEqual(travels.map((t) => t.flow), ['f1'], 'the token travelled from the start event to the task');
    const xs = travels[0].at.map((t) => Number(/translate\(([-\d.]+)/.exec(t)[1]));
    assert.ok(xs.length >= 3, `drawn at several points: ${xs}`);
    assert.ok(xs.every((x, i) => i === 0 || x >= xs[i - 1]) && xs.at(-1) > xs[0], `left to right along f1: ${xs}`);
    // The path between the events is drawn only once the token arrives.
    assert.equal(await page.locator('.ft-travel').count(), 0, 'nothing left travelling');
  });

  it('slows the travel down at a slower speed, and moves nothing at "instant"', async () => {
    const timed = async (speed, orderId) => {
      await watchTravel();
      await page.selectOption('#speed', speed);
      await page.fill('#start-vars', JSON.stringify({ orderId, amount: 250 }));
      const started = () => page.locator('#log li', { hasText: 'started payment as' }).count();
      const n = await started();
      await page.click('#start');
      await page.waitForFunction(
        (n) => [...document.querySelectorAll('#log li')].filter((li) => li.textContent.includes('started payment as')).length > n && window.simulator.queue.length === 0 && !window.simulator.traveling,
        n,
      );
      return page.evaluate(() => window.travels.map((t) => t.at.length));
    };
    const fast = await timed('120', 'D-2');
    const slow = await timed('500', 'D-3');
    assert.equal(fast.length, 1);
    assert.equal(slow.length, 1);
    assert.ok(slow[0] > fast[0], `the slow token is drawn at more points on its way (${slow[0]}) than the fast one (${fast[0]})`);
    assert.deepEqual(await timed('0', 'D-4'), [], 'at instant speed no token travels');
    await ready();
    assert.deepEqual(errors, []);
  });
});
