// End-to-end test of the token simulator in headless Chromium: the page is
// built with Vite, served from dist/, and driven through a process with an
// event-based gateway, a timer and user tasks, checking the token overlays
// on the diagram and the final state; then chooses a gateway's flow, runs
// two instances, edits variables and resolves an incident by clicking;
// last, a business rule task's decision table (BPMN + DMN) with the rule
// that matched highlighted. Saves screenshot.png, screenshot-final.png,
// screenshot-flow.png, screenshot-instances.png, screenshot-choice.png,
// screenshot-incident.png, screenshot-rejected.png and
// screenshot-decision.png beside this
// folder's package.json.
//
// Chromium comes from the system (Debian package `chromium`); this test
// never downloads a browser. Override the path with CHROMIUM=/path/to/chrome.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Engine } from 'flowtrack';
import { chromium } from 'playwright-core';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf', '.eot': 'application/vnd.ms-fontobject', '.bpmn': 'application/xml' };

function serve(dir) {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    let file = join(dir, path);
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!file.startsWith(dir) || !existsSync(file)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('browser simulator', { skip: !existsSync(executablePath) && `no Chromium at ${executablePath}: apt-get install -y chromium (or set CHROMIUM)` }, () => {
  let server;
  let context;
  let page;
  let profile;
  const errors = [];

  before(async () => {
    await build({ root, logLevel: 'warn' });
    server = await serve(dist);
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
  });

  after(async () => {
    await context?.close();
    server?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  // token is the badge of the shown instance's tokens at an element.
  const token = (id) => page.locator(`.token[data-shown][data-element="${id}"]`);
  // tokens lists the token badges drawn, of one instance or of all.
  const tokens = (instanceKey) =>
    page.$$eval(`.token${instanceKey ? `[data-instance="${instanceKey}"]` : ''}`, (els) => els.map((e) => `${e.dataset.element}:${e.dataset.waiting}`).sort());
  const ready = () => page.waitForSelector('#status[data-state="ready"]');
  // logLine waits for the log line matching re, and returns it: a line
  // an action writes can come after the change it waits for is drawn, so
  // a test waits for the line it expects, never reads the last one.
  const logLine = async (re, cls = '') => {
    const li = page.locator(`#log li${cls}`, { hasText: re }).last();
    await li.waitFor();
    return li.innerText();
  };
  const errorLine = (re) => logLine(re, '.error');
  async function complete(element, vars) {
    const row = page.locator(`.wait.job[data-element="${element}"]`);
    await row.locator('textarea').fill(JSON.stringify(vars));
    await row.locator('button.complete').click();
    await ready();
  }

  it('loads the default model and starts the engine in a worker', async () => {
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await ready();
    assert.ok((await page.locator('.djs-element').count()) > 10, 'diagram rendered');
    await logLine(/engine ready in \d+ ms \(in a worker\)/);
    assert.equal(await page.inputValue('#process'), 'payment');
  });

  it('plays a run through user tasks, an event-based gateway and a timer', async () => {
    await page.selectOption('#speed', '0');
    await page.fill('#start-vars', '{"orderId": "A-7", "amount": 250}');
    await page.click('#start');
    await ready();
    await token('Task_check').waitFor();
    assert.deepEqual(await tokens(), ['Task_check:job']);

    await complete('Task_check', { valid: true });
    // amount 250 > 100: the exclusive gateway's condition (evaluated by the engine) routes to approval.
    await token('Task_approve').waitFor();
    assert.deepEqual(await tokens(), ['Task_approve:job']);

    await complete('Task_approve', { approvedBy: 'e2e' });
    await token('Gateway_wait').waitFor();
    assert.deepEqual(await tokens(), ['Gateway_wait:event']);
    // The event-based gateway waits for either arm: both are offered.
    await page.locator('#waiting button.fire-message').waitFor();
    assert.match(await page.locator('#waiting button.fire-message').innerText(), /payment.*A-7/);
    assert.match(await page.locator('#deadline').innerText(), /^2026-01-02T00:00:00/);
    await page.screenshot({ path: join(root, 'screenshot.png') });

    await page.click('#next-timer');
    await ready();
    await token('Task_call').waitFor();
    assert.deepEqual(await tokens(), ['Task_call:job']);
    assert.match(await page.locator('#now').innerText(), /^2026-01-02T00:00:00/);

    await complete('Task_call', { called: true });
    await page.waitForSelector('#instance[data-state="completed"]');
    assert.deepEqual(await tokens(), []);
    const vars = JSON.parse(await page.locator('#instance .vars').innerText());
    assert.deepEqual(vars, { amount: 250, approvedBy: 'e2e', called: true, orderId: 'A-7', valid: true });
    await logLine(/2026-01-02T00:00:00(\.000)?Z #\d+ timerFired Catch_timeout/);
    await logLine(/instanceCompleted/);
    assert.doesNotMatch(await page.locator('#log').innerText(), /messageCorrelated/);
    await page.screenshot({ path: join(root, 'screenshot-final.png') });
  });

  it('steps through events while paused, then fires the waiting message', async () => {
    await page.click('#reset');
    await ready();
    await page.selectOption('#speed', '120');
    await page.click('#play'); // pause
    await page.fill('#start-vars', '{"orderId": "B-1", "amount": 20}');
    await page.click('#start');
    await ready();
    const queued = Number(await page.locator('#queued').innerText());
    assert.ok(queued > 3, `events queued while paused: ${queued}`);
    assert.deepEqual(await tokens(), [], 'nothing drawn before the first step');
    await page.click('#step'); // instanceStarted
    await page.click('#step'); // elementEntered Start
    assert.deepEqual(await tokens(), ['Start:']);
    assert.equal(Number(await page.locator('#queued').innerText()), queued - 2);
    await page.click('#play');
    await token('Task_check').waitFor();
    await page.waitForFunction(() => document.getElementById('queued').textContent === '0');

    await complete('Task_check', { valid: true });
    // amount 20: the default flow skips approval and reaches the event-based gateway.
    await page.locator('#waiting button.fire-message').waitFor();
    await page.fill('#msg-vars', '{"paidAmount": 20}');
    await page.click('#waiting button.fire-message');
    await page.waitForSelector('#instance[data-state="completed"]');
    const vars = JSON.parse(await page.locator('#instance .vars').innerText());
    assert.equal(vars.paidAmount, 20);
    assert.equal(vars.approvedBy, undefined);
    await logLine(/messageCorrelated Catch_payment "payment" key=B-1/);
  });

  // eventButtons lists the message and timer buttons the waiting panel offers.
  const eventButtons = () => page.$$eval('#waiting button', (els) => els.map((e) => e.className).sort());

  it('saves the session, reloads the page, loads it and goes on', async () => {
    await page.click('#reset');
    await ready();
    await page.selectOption('#speed', '0');
    await page.fill('#start-vars', '{"orderId": "S-1", "amount": 250}');
    await page.click('#start');
    await ready();
    await token('Task_check').waitFor();
    await complete('Task_check', { valid: true });
    await token('Task_approve').waitFor();
    await complete('Task_approve', { approvedBy: 'saver' });
    await token('Gateway_wait').waitFor();
    assert.deepEqual(await eventButtons(), ['fire-message', 'fire-timer']);

    await page.click('#save');
    const saved = JSON.parse(await page.evaluate(() => localStorage.getItem('flowtrack-simulator-session')));
    assert.equal(saved.format, 'flowtrack-state');
    assert.deepEqual(saved.instances.map((i) => i.key), [await page.evaluate(() => window.simulator.instanceKey)]);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    assert.equal(download.suggestedFilename(), 'flowtrack-state.json');
    const downloaded = join(profile, 'downloaded-state.json');
    await download.saveAs(downloaded);
    assert.deepEqual(JSON.parse(readFileSync(downloaded, 'utf8')), saved, 'the download is the saved state document');

    await page.reload();
    await ready();
    await page.selectOption('#speed', '0');
    assert.deepEqual(await tokens(), [], 'a fresh page has no instance');
    await page.click('#load-saved');
    await ready();
    // The token waits at the event-based gateway again, with both of its
    // arms offered: the subscriptions were rebuilt from the history.
    await token('Gateway_wait').waitFor();
    assert.deepEqual(await tokens(), ['Gateway_wait:event']);
    assert.deepEqual(await eventButtons(), ['fire-message', 'fire-timer']);
    await logLine(/loaded session from this browser: 2026-01-01T00:00:00.000Z, instance #\d+/);
    assert.ok(await page.locator('.djs-element.ft-done[data-element-id="Task_approve"]').count(), 'visited elements are marked again');

    // It goes on where it was: the message arm completes the instance.
    await page.fill('#msg-vars', '{"paidAmount": 250}');
    await page.click('#waiting button.fire-message');
    await page.waitForSelector('#instance[data-state="completed"]');
    const vars = JSON.parse(await page.locator('#instance .vars').innerText());
    assert.deepEqual(vars, { amount: 250, approvedBy: 'saver', orderId: 'S-1', paidAmount: 250, valid: true });

    // The downloaded file loads as well, into a fresh page.
    await page.reload();
    await ready();
    await page.setInputFiles('#state-file', downloaded);
    await token('Gateway_wait').waitFor();
    assert.deepEqual(await tokens(), ['Gateway_wait:event']);
    await logLine(/loaded session from downloaded-state\.json/);
  });

  it('steps back in time through a checkpoint per action', async () => {
    await page.click('#reset');
    await ready();
    await page.selectOption('#speed', '0');
    assert.equal(await page.locator('#back').isDisabled(), true, 'nothing to go back to');
    await page.fill('#start-vars', '{"orderId": "T-1", "amount": 20}');
    await page.click('#start');
    await ready();
    await token('Task_check').waitFor();
    await complete('Task_check', { valid: true });
    await token('Gateway_wait').waitFor();
    await page.click('#next-timer');
    await ready();
    await token('Task_call').waitFor();
    assert.match(await page.locator('#now').innerText(), /^2026-01-02T00:00:00/);

    // Back over the timer: the clock and the token are where they were.
    await page.click('#back');
    await ready();
    await token('Gateway_wait').waitFor();
    assert.deepEqual(await tokens(), ['Gateway_wait:event']);
    assert.match(await page.locator('#now').innerText(), /^2026-01-01T00:00:00/);
    assert.match(await page.locator('#deadline').innerText(), /^2026-01-02T00:00:00/);
    assert.deepEqual(await eventButtons(), ['fire-message', 'fire-timer']);

    // Back over the job: it is open again, and its variables are gone.
    await page.click('#back');
    await ready();
    await token('Task_check').waitFor();
    assert.deepEqual(await tokens(), ['Task_check:job']);
    assert.equal(JSON.parse(await page.locator('#instance .vars').innerText()).valid, undefined);
    // ... and this time the message arm is taken.
    await complete('Task_check', { valid: false });
    await page.locator('#waiting button.fire-message').click();
    await page.waitForSelector('#instance[data-state="completed"]');
    assert.equal(JSON.parse(await page.locator('#instance .vars').innerText()).valid, false);

    // The timeline lists every action with its virtual time; clicking the
    // first goes back to before the start: no instance, nothing further back.
    const timeline = await page.$$eval('#timeline li', (els) => els.map((e) => e.textContent));
    assert.deepEqual(
      timeline.map((t) => t.slice(20)),
      ['deploy order-payment.bpmn', 'start', 'complete Task_check', `message payment`],
    );
    assert.match(timeline[0], /^2026-01-01 00:00:00 /);
    await page.click('#timeline li[data-index="0"]');
    await ready();
    await page.waitForFunction(() => document.querySelectorAll('#timeline li').length === 1);
    assert.deepEqual(await tokens(), []);
    assert.equal(await page.locator('#instance').innerText(), '');
    assert.equal(await page.locator('#back').isDisabled(), true);
  });

  // engine asks the page's engine directly, to check what the page shows against it.
  const engine = (fn, ...args) => page.evaluate(([f, a]) => window.simulator.engine[f](...a), [fn, args]);
  const shown = () => page.evaluate(() => window.simulator.instanceKey);
  // clickFlow clicks a sequence flow on the diagram, in the middle of its line.
  async function clickFlow(id) {
    const { x, y } = await page.locator(`.djs-element[data-element-id="${id}"] .djs-visual > path`).first().evaluate((path) => {
      const p = path.getPointAtLength(path.getTotalLength() / 2);
      const m = path.getScreenCTM();
      return { x: p.x * m.a + p.y * m.c + m.e, y: p.x * m.b + p.y * m.d + m.f };
    });
    await page.mouse.click(x, y);
    await ready();
  }

  // chooseMode ticks or unticks "choose at gateways" and waits for the engine to take it.
  async function chooseMode(on) {
    if ((await page.isChecked('#choose')) === on) return;
    await page.click('#choose');
    await logLine(on ? /choose at gateways: tokens stop before/ : /gateways route by their conditions/);
  }

  it('chooses a flow at a gateway before the engine routes, draws the path taken, and every instance\'s tokens', async () => {
    await page.click('#reset');
    await ready();
    await page.selectOption('#speed', '0');
    await chooseMode(true);
    await page.fill('#start-vars', '{"orderId": "G-1", "amount": 250}');
    await page.click('#start');
    await token('Task_check').waitFor();
    const a = await shown();
    await complete('Task_check', { valid: true });
    // The token stops at the gateway: the engine has not routed it.
    await page.locator('.token[data-element="Gateway_amount"][data-waiting="choice"]').waitFor();
    assert.deepEqual(await tokens(a), ['Gateway_amount:choice']);
    assert.equal(await page.locator('.wait.job').count(), 0, 'no approval job: nothing was routed');
    const [waiting] = await engine('tokens', a);
    assert.equal(waiting.waiting, 'choice');
    assert.deepEqual(waiting.choice, { holds: ['f_large'], takes: ['f_large'] });
    // Its outgoing flows are highlighted, clickable and labelled with their conditions.
    for (const f of ['f_large', 'f_small']) assert.ok(await page.locator(`.djs-element.ft-choice[data-element-id="${f}"]`).count(), `${f} highlighted`);
    assert.match(await page.locator('.choice-label[data-flow="f_large"]').innerText(), /amount > 100 ✓/);
    assert.equal(await page.locator('.choice-label[data-flow="f_large"]').getAttribute('data-holds'), 'true');
    assert.match(await page.locator('.choice-label[data-flow="f_small"]').innerText(), /default ✗/);
    assert.match(await page.locator('.wait.choice').innerText(), /Choose at Large order\? \(the conditions take f_large\)[\s\S]*amount > 100\s+holds[\s\S]*default/);
    await page.screenshot({ path: join(root, 'screenshot-choice.png') });

    // A second instance stops at the gateway too: both instances' tokens are drawn, each in its colour.
    await page.fill('#start-vars', '{"orderId": "G-2", "amount": 20}');
    await page.click('#start');
    await page.waitForFunction((k) => window.simulator.instanceKey !== k, a);
    const b = await shown();
    await complete('Task_check', { valid: true });
    await page.locator(`.token[data-instance="${b}"][data-element="Gateway_amount"]`).waitFor();
    assert.deepEqual(await tokens(a), ['Gateway_amount:choice']);
    assert.deepEqual(await tokens(b), ['Gateway_amount:choice']);
    const colour = (k) => page.locator(`.token[data-instance="${k}"]`).evaluate((el) => el.style.getPropertyValue('--instance'));
    assert.notEqual(await colour(a), await colour(b));
    // The filter hides an instance's tokens and shows them again.
    await page.uncheck(`#token-filter input[data-instance="${a}"]`);
    assert.deepEqual(await tokens(), ['Gateway_amount:choice']);
    assert.deepEqual(await tokens(b), ['Gateway_amount:choice']);
    await page.check(`#token-filter input[data-instance="${a}"]`);
    assert.equal((await tokens()).length, 2);
    await page.screenshot({ path: join(root, 'screenshot-instances.png') });

    // Back to the first: clicking the default flow routes its token there, overriding the condition that holds.
    await page.selectOption('#instances', String(a));
    await page.locator('.wait.choice[data-element="Gateway_amount"]').waitFor();
    await clickFlow('f_small');
    await token('Gateway_wait').waitFor();
    assert.deepEqual(await tokens(a), ['Gateway_wait:event']);
    await logLine(/flowsChosen Gateway_amount chose f_small; the conditions would take f_large/);
    await logLine(/chose f_small out of Large order\? \(the conditions take f_large\)/);
    const history = await engine('history', a);
    const taken = history.filter((ev) => ev.type === 'flowTaken').map((ev) => ev.flowId);
    assert.deepEqual(taken.slice(0, 4), ['f1', 'f2', 'f_small', 'f3']);
    assert.ok(!taken.includes('f_large'));
    // The path drawn is the path taken: the chosen flow, not the one the condition holds for.
    const done = (id) => page.locator(`.djs-element.ft-done[data-element-id="${id}"]`).count();
    assert.ok(await done('f_small'));
    assert.equal(await done('f_large'), 0);
    assert.equal(await done('Task_approve'), 0);
    assert.equal(await page.locator('.djs-element.ft-choice').count(), 0, 'no choice is offered any more');
    // The other instance still waits for its own choice, drawn beside.
    assert.deepEqual(await tokens(b), ['Gateway_amount:choice']);
    await page.screenshot({ path: join(root, 'screenshot-flow.png') });

    // With no token waiting at the gateway, a click chooses nothing.
    await clickFlow('f_large');
    await errorLine(/take f_large: no token of the shown instance waits for a choice at Large order\?/);
    assert.deepEqual(await tokens(a), ['Gateway_wait:event']);
    // "Let the conditions decide" routes the other as the engine would.
    await page.selectOption('#instances', String(b));
    await page.locator('.wait.choice button.decide').click();
    await ready();
    await token('Gateway_wait').waitFor();
    assert.deepEqual(await tokens(b), ['Gateway_wait:event']);
    assert.ok(!(await engine('history', b)).some((ev) => ev.type === 'flowsChosen'), 'nothing overridden');
    await chooseMode(false);
  });

  it('runs two instances side by side and shows the one selected', async () => {
    await page.click('#reset');
    await ready();
    await page.selectOption('#speed', '0');
    await page.fill('#start-vars', '{"orderId": "A-1", "amount": 20}');
    await page.click('#start');
    await token('Task_check').waitFor();
    const a = await shown();
    await page.fill('#start-vars', '{"orderId": "B-1", "amount": 250}');
    await page.click('#start');
    await ready();
    await page.waitForFunction((k) => window.simulator.instanceKey !== k, a);
    const b = await shown();
    await complete('Task_check', { valid: true });
    await token('Task_approve').waitFor();
    const options = await page.$$eval('#instances option', (os) => os.map((o) => [o.value, o.selected, o.style.color]));
    assert.deepEqual(options.map(([v, sel]) => [Number(v), sel]), [[a, false], [b, true]]);
    assert.notEqual(options[0][2], options[1][2], 'each instance has its colour');
    const colourB = await token('Task_approve').evaluate((el) => el.style.getPropertyValue('--instance'));
    // Both instances' tokens are drawn.
    assert.deepEqual(await tokens(a), ['Task_check:job']);
    assert.deepEqual(await tokens(b), ['Task_approve:job']);

    await page.selectOption('#instances', String(a));
    await page.locator('.wait.job[data-element="Task_check"]').waitFor();
    assert.deepEqual(await tokens(a), ['Task_check:job']);
    assert.equal(JSON.parse(await page.locator('#instance .vars').innerText()).orderId, 'A-1');
    assert.notEqual(await page.locator(`.token[data-instance="${a}"]`).evaluate((el) => el.style.getPropertyValue('--instance')), colourB);
    await complete('Task_check', { valid: true });
    await token('Gateway_wait').waitFor();
    // Each instance is where the page says, in the engine.
    assert.deepEqual((await engine('tokens', a)).map((t) => t.elementId), ['Gateway_wait']);
    assert.deepEqual((await engine('tokens', b)).map((t) => t.elementId), ['Task_approve']);
    assert.deepEqual(await tokens(), ['Gateway_wait:event', 'Task_approve:job']);

    await page.selectOption('#instances', String(b));
    await page.locator('.wait.job[data-element="Task_approve"]').waitFor();
    assert.deepEqual(await tokens(b), ['Task_approve:job']);
  });

  it('edits an instance\'s variables, and the engine routes by them', async () => {
    await page.click('#reset');
    await ready();
    await page.selectOption('#speed', '0');
    await page.fill('#start-vars', '{"orderId": "V-1", "amount": 250}');
    await page.click('#start');
    await token('Task_check').waitFor();
    await page.fill('#set-vars', '{"amount": 5, "note": "small after all"}');
    await page.click('#set-vars-btn');
    await ready();
    const vars = JSON.parse(await page.locator('#instance .vars').innerText());
    assert.deepEqual(vars, { amount: 5, note: 'small after all', orderId: 'V-1' });
    assert.deepEqual((await engine('instance', await shown())).variables, vars);
    await complete('Task_check', { valid: true });
    // amount 5 now: the default flow, no approval.
    await token('Gateway_wait').waitFor();
    await logLine(/set variables on #\d+: \{"amount":5,"note":"small after all"\}/);
    // Bad input names what is wrong.
    await page.fill('#set-vars', '[1]');
    await page.click('#set-vars-btn');
    await ready();
    await errorLine(/set variables: InputError: variables must be a JSON object/);
  });

  it('fixes an incident from the page: retries back, then resolve', async () => {
    await page.click('#reset');
    await ready();
    await page.selectOption('#speed', '0');
    await page.fill('#start-vars', '{"orderId": "I-1", "amount": 20}');
    await page.click('#start');
    await token('Task_check').waitFor();
    // Three retries in the model: the third failure raises an incident.
    for (let i = 0; i < 3; i++) {
      await page.locator('.wait.job[data-element="Task_check"] button.fail').click();
      await ready();
    }
    await token('Task_check').waitFor();
    assert.deepEqual(await tokens(), ['Task_check:incident']);
    const key = await shown();
    const [inc] = await engine('incidents', key);
    assert.equal(inc.elementId, 'Task_check');
    await page.screenshot({ path: join(root, 'screenshot-incident.png') });

    const row = page.locator('.wait.incident[data-element="Task_check"]');
    await row.locator('input.retries').fill('2');
    await row.locator('button.resolve').click();
    await ready();
    assert.deepEqual(await tokens(), ['Task_check:job']);
    assert.deepEqual(await engine('incidents', key), []);
    const [job] = await engine('jobs', { instanceKey: key });
    assert.equal(job.retries, 2);
    await logLine(new RegExp(`resolved incident ${inc.key} at Task_check`));
    await complete('Task_check', { valid: true });
    await token('Gateway_wait').waitFor();
  });

  it('acts from context pads on the waiting elements', async () => {
    await page.click('#reset');
    await ready();
    await page.selectOption('#speed', '0');
    await page.fill('#start-vars', '{"orderId": "P-1", "amount": 20}');
    await page.click('#start');
    await token('Task_check').waitFor();
    await page.locator('.wait.job[data-element="Task_check"] textarea').fill('{"valid": true}');
    await page.locator('.ft-pad[data-element="Task_check"] button.complete').click();
    await ready();
    await token('Gateway_wait').waitFor();
    // The event-based gateway's arms each get a pad where they wait.
    assert.equal(await page.locator('.ft-pad[data-element="Catch_payment"] button.fire-message').count(), 1);
    // The pad's icons are inline SVG, drawn whatever fonts the system has.
    const timer = page.locator('.ft-pad[data-element="Catch_timeout"] button.fire-timer');
    assert.equal(await timer.locator('svg[data-icon="timer"]').count(), 1);
    assert.equal((await timer.innerText()).trim(), '', 'no glyph from a font');
    const box = await timer.locator('svg').boundingBox();
    assert.ok(box.width >= 10 && box.height >= 10, `the icon is drawn: ${JSON.stringify(box)}`);
    await timer.click();
    await ready();
    await token('Task_call').waitFor();
    assert.match(await page.locator('#now').innerText(), /^2026-01-02T00:00:00/);
    assert.equal(await page.locator('.ft-pad[data-element="Catch_payment"]').count(), 0, 'pads go with what they offered');
    const key = await shown();
    assert.deepEqual((await engine('tokens', key)).map((t) => t.elementId), ['Task_call']);
    assert.equal((await engine('instance', key)).variables.valid, true);
  });

  it('refuses a file that is not a state document and keeps the session', async () => {
    const bad = join(profile, 'not-state.json');
    writeFileSync(bad, '{"format": "something-else"}');
    await page.setInputFiles('#state-file', bad);
    // The file is read asynchronously: wait for its error, not for a status that may not have changed yet.
    const refused = page.locator('#log li.error', { hasText: 'load session from not-state.json' });
    await refused.waitFor();
    assert.match(await refused.innerText(), /load session from not-state\.json: InputError: not a flowtrack state document/);
    await page.click('#start');
    await ready();
    await token('Task_check').waitFor();
  });

  it('runs the engine on the page too (?inline)', async () => {
    await page.goto(`http://127.0.0.1:${server.address().port}/?inline`);
    await ready();
    await logLine(/engine ready in \d+ ms \(on the page\)/);
    await page.selectOption('#speed', '0');
    await page.click('#start');
    await token('Task_check').waitFor();
    assert.deepEqual(await tokens(), ['Task_check:job']);
  });

  it('reports bad input as typed errors without breaking the page', async () => {
    await page.fill('#advance-by', 'soon');
    await page.click('#advance');
    await ready();
    await errorLine(/advance time: BadRequestError \[BAD_REQUEST\]/);
    await page.fill('#start-vars', '{not json');
    await page.click('#start');
    await ready();
    await errorLine(/start: InputError: variables are not JSON/);
    await page.fill('#start-vars', '{"orderId": "C-1", "amount": 1}');
    await page.click('#start');
    await token('Task_check').waitFor();
    assert.deepEqual(errors, []);
  });
  // A model without any diagram layout, and one the engine rejects.
  const undrawn = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="x">
  <bpmn:process id="plain" isExecutable="true">
    <bpmn:startEvent id="s"><bpmn:outgoing>a</bpmn:outgoing></bpmn:startEvent>
    <bpmn:serviceTask id="work" name="Work"><bpmn:extensionElements><zeebe:taskDefinition type="work" /></bpmn:extensionElements><bpmn:incoming>a</bpmn:incoming><bpmn:outgoing>b</bpmn:outgoing></bpmn:serviceTask>
    <bpmn:endEvent id="e"><bpmn:incoming>b</bpmn:incoming></bpmn:endEvent>
    <bpmn:sequenceFlow id="a" sourceRef="s" targetRef="work" />
    <bpmn:sequenceFlow id="b" sourceRef="work" targetRef="e" />
  </bpmn:process>
</bpmn:definitions>`;

  it('lays out a model without diagram and runs it', async () => {
    const file = join(profile, 'plain.bpmn');
    writeFileSync(file, undrawn);
    await page.selectOption('#speed', '0');
    await page.setInputFiles('#file', file);
    await page.locator('#log li', { hasText: 'plain.bpmn has no diagram layout: laid out automatically' }).waitFor();
    await ready();
    await page.locator('.djs-element[data-element-id="work"]').waitFor();
    assert.deepEqual(await page.$$eval('#process option', (os) => os.map((o) => o.value)), ['plain']);
    await page.click('#start');
    await token('work').waitFor();
    assert.deepEqual(await tokens(), ['work:job']);
  });

  it('shows a rejected model\'s problems on the diagram and offers none of its processes', async () => {
    const file = join(profile, 'rejected.bpmn');
    // The task becomes a timer whose duration is not ISO 8601: the engine rejects it.
    writeFileSync(
      file,
      undrawn
        .replace('<bpmn:serviceTask id="work" name="Work"><bpmn:extensionElements><zeebe:taskDefinition type="work" /></bpmn:extensionElements>', '<bpmn:intermediateCatchEvent id="work" name="Work"><bpmn:timerEventDefinition><bpmn:timeDuration>soon</bpmn:timeDuration></bpmn:timerEventDefinition>')
        .replace('</bpmn:serviceTask>', '</bpmn:intermediateCatchEvent>'),
    );
    await page.setInputFiles('#file', file);
    await page.locator('.problem[data-element="work"]').waitFor();
    assert.match(await page.locator('.problem[data-element="work"]').innerText(), /invalid ISO-8601 duration "soon"/);
    assert.ok(await page.locator('.djs-element.ft-error[data-element-id="work"]').count(), 'the element is marked');
    assert.equal(await page.locator('#process option').count(), 0);
    await logLine(/deploy rejected\.bpmn: /);
    // The problems are those of the file as written (it has no layout and
    // deploys laid out), each as `flowtrack validate rejected.bpmn` prints
    // it: the same module, in Node, says what that is.
    const cli = await Engine.create();
    const err = await cli.deploy(readFileSync(file, 'utf8'), 'rejected.bpmn').catch((e) => e);
    cli.close();
    assert.ok(err.problems?.length, `the engine rejects the file: ${err}`);
    for (const p of err.problems) {
      const line = `rejected.bpmn${p.line > 0 ? `:${p.line}:${p.column}` : ''}: ${p.ruleId ? p.ruleId + ': ' : ''}${p.elementId ? p.elementId + ': ' : ''}${p.rule}`;
      assert.equal((await logLine(line, '.error')).trim(), line);
    }
    assert.equal(err.problems[0].line, 5, 'the line of the element in the user\'s file');
    await page.screenshot({ path: join(root, 'screenshot-rejected.png') });
  });
  it('takes the flows ticked out of an inclusive gateway, chosen before it routes', async () => {
    const file = join(profile, 'inclusive.bpmn');
    writeFileSync(
      file,
      `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="x">
  <bpmn:process id="incl" isExecutable="true">
    <bpmn:startEvent id="s"><bpmn:outgoing>f0</bpmn:outgoing></bpmn:startEvent>
    <bpmn:inclusiveGateway id="fork" name="Which parts?"><bpmn:incoming>f0</bpmn:incoming><bpmn:outgoing>fa</bpmn:outgoing><bpmn:outgoing>fb</bpmn:outgoing></bpmn:inclusiveGateway>
    <bpmn:serviceTask id="A"><bpmn:extensionElements><zeebe:taskDefinition type="a" /></bpmn:extensionElements><bpmn:incoming>fa</bpmn:incoming><bpmn:outgoing>ja</bpmn:outgoing></bpmn:serviceTask>
    <bpmn:serviceTask id="B"><bpmn:extensionElements><zeebe:taskDefinition type="b" /></bpmn:extensionElements><bpmn:incoming>fb</bpmn:incoming><bpmn:outgoing>jb</bpmn:outgoing></bpmn:serviceTask>
    <bpmn:inclusiveGateway id="join"><bpmn:incoming>ja</bpmn:incoming><bpmn:incoming>jb</bpmn:incoming><bpmn:outgoing>f9</bpmn:outgoing></bpmn:inclusiveGateway>
    <bpmn:endEvent id="e"><bpmn:incoming>f9</bpmn:incoming></bpmn:endEvent>
    <bpmn:sequenceFlow id="f0" sourceRef="s" targetRef="fork" />
    <bpmn:sequenceFlow id="fa" sourceRef="fork" targetRef="A"><bpmn:conditionExpression>= a</bpmn:conditionExpression></bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="fb" sourceRef="fork" targetRef="B"><bpmn:conditionExpression>= b</bpmn:conditionExpression></bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="ja" sourceRef="A" targetRef="join" />
    <bpmn:sequenceFlow id="jb" sourceRef="B" targetRef="join" />
    <bpmn:sequenceFlow id="f9" sourceRef="join" targetRef="e" />
  </bpmn:process>
</bpmn:definitions>`,
    );
    await page.setInputFiles('#file', file);
    await page.locator('#log li', { hasText: 'inclusive.bpmn has no diagram layout' }).waitFor();
    await ready();
    await page.waitForFunction(() => document.querySelector('#process')?.value === 'incl');
    await page.selectOption('#speed', '0');
    await chooseMode(true);
    await page.fill('#start-vars', '{"a": true, "b": false}');
    await page.click('#start');
    await page.locator('.wait.choice[data-element="fork"]').waitFor();
    assert.deepEqual(await tokens(), ['fork:choice']);
    // The flows the conditions take are ticked; a click on the diagram ticks another.
    assert.deepEqual(await page.$$eval('.wait.choice input.pick', (bs) => bs.map((b) => [b.dataset.flow, b.checked])), [['fa', true], ['fb', false]]);
    await clickFlow('fb');
    assert.equal(await page.isChecked('.wait.choice input.pick[data-flow="fb"]'), true);
    assert.ok(await page.locator('.djs-element.ft-picked[data-element-id="fb"]').count(), 'the ticked flow is marked');
    await page.click('.wait.choice button.take-picked');
    await ready();
    await token('B').waitFor();
    assert.deepEqual(await tokens(), ['A:job', 'B:job']);
    await logLine(/flowsChosen fork chose fa, fb; the conditions would take fa/);
    // The join waits for both paths, the added one included.
    await complete('A', {});
    await token('join').waitFor();
    await complete('B', {});
    await page.waitForSelector('#instance[data-state="completed"]');
    await chooseMode(false);
  });
  // matchedRows lists the decision panel's highlighted rows: rule index, rule id, and the row's text.
  const matchedRows = () =>
    page.$$eval('#decision-panel:not([hidden]) #decision-table tr.ft-matched', (trs) => trs.map((tr) => [Number(tr.dataset.ruleIndex), tr.dataset.ruleId, tr.innerText.replace(/\s+/g, ' ').trim()]));

  it('shows the decision a business rule task evaluated, with the rule that matched (preloaded BPMN + DMN example)', async () => {
    await page.selectOption('#example', 'loan-risk');
    await page.locator('#log li', { hasText: /deployed loan-risk\.dmn: decisions risk v1/ }).waitFor();
    await ready();
    await page.waitForFunction(() => document.querySelector('#process')?.value === 'loan');
    assert.equal(await page.locator('#model-name').innerText(), 'loan-risk.bpmn + loan-risk.dmn');
    assert.equal(await page.inputValue('#start-vars'), '{"age": 40, "amount": 20000}');
    await page.selectOption('#speed', '0');
    await page.click('#start');
    await ready();
    // age 40, amount 20000: only rule 3 (amount in [10000..50000]) holds, so FIRST picks it.
    await page.locator('#decision-panel #decision-table tr.ft-matched').waitFor();
    assert.equal(await page.getAttribute('#decision-panel', 'data-decision'), 'risk');
    assert.equal(await page.getAttribute('#decision-panel', 'data-element'), 'Task_risk');
    const rows = await matchedRows();
    assert.equal(rows.length, 1, `one rule matched: ${JSON.stringify(rows)}`);
    assert.deepEqual(rows[0].slice(0, 2), [3, 'r_medium']);
    assert.match(rows[0][2], /\[10000\.\.50000\].*"medium".*"medium loan"/);
    // The table is dmn-js's: every rule is a row, the matched one highlighted.
    assert.equal(await page.locator('#decision-table tbody tr').count(), 4);
    assert.deepEqual(JSON.parse(await page.locator('#decision-result .decision-output').innerText()), { level: 'medium', reason: 'medium loan' });
    assert.match(await page.locator('#decision-result').innerText(), /matched rule 3 \(r_medium\)/);
    await logLine(/decisionEvaluated Task_risk "risk"/);
    // The engine routed by the output: medium risk goes to the review.
    await token('Task_review').waitFor();
    assert.deepEqual(await tokens(), ['Task_review:job']);
    await page.screenshot({ path: join(root, 'screenshot-decision.png') });
  });

  it('loads a DMN file beside the BPMN and highlights the first rule that matched', async () => {
    const src = (f) => readFileSync(join(root, 'src', f));
    // The BPMN and the DMN selected together, as from a folder.
    await page.setInputFiles('#file', [
      { name: 'my-loan.bpmn', mimeType: 'application/xml', buffer: src('loan-risk.bpmn') },
      { name: 'my-risk.dmn', mimeType: 'application/xml', buffer: src('loan-risk.dmn') },
    ]);
    await page.locator('#log li', { hasText: /deployed my-risk\.dmn: decisions risk v1/ }).waitFor();
    await ready();
    assert.equal(await page.locator('#model-name').innerText(), 'my-loan.bpmn + my-risk.dmn');
    assert.equal(await page.isHidden('#decision-panel'), true, 'no decision shown before one is evaluated');
    // age 22, amount 30000: rules 1 (young, > 10000) and 3 (in [10000..50000]) hold; FIRST takes rule 1.
    await page.fill('#start-vars', '{"age": 22, "amount": 30000}');
    await page.click('#start');
    await ready();
    await page.locator('#decision-panel #decision-table tr.ft-matched').waitFor();
    const rows = await matchedRows();
    assert.deepEqual(rows.map((r) => r.slice(0, 2)), [[1, 'r_young_big']]);
    assert.deepEqual(JSON.parse(await page.locator('#decision-result .decision-output').innerText()), { level: 'high', reason: 'young applicant, large loan' });
    // Another instance with a small loan: the table shows that evaluation's rule.
    await page.fill('#start-vars', '{"age": 30, "amount": 2000}');
    await page.click('#start');
    await ready();
    await page.waitForFunction(() => document.querySelector('#decision-table tr.ft-matched')?.dataset.ruleId === 'r_small');
    assert.deepEqual((await matchedRows()).map((r) => r.slice(0, 2)), [[4, 'r_small']]);
    await token('Task_pay').waitFor();
    // Showing the first instance again rebuilds its decision from its history.
    const first = await page.$$eval('#instances option', (os) => os.map((o) => o.value));
    await page.selectOption('#instances', first[0]);
    await page.waitForFunction(() => document.querySelector('#decision-table tr.ft-matched')?.dataset.ruleId === 'r_young_big');
    await token('Task_review').waitFor();
    assert.deepEqual(errors, []);
  });
});
