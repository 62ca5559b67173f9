// SDK tests against the built package (dist/) and the real engine module.
// Run: npm test (after npm run build).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  BadRequestError,
  BadStateError,
  BadVariablesError,
  BpmnError,
  ClosedError,
  DeployError,
  Engine,
  FlowtrackError,
  InstanceEndedError,
  MAX_VARIABLE_DEPTH,
  ObserverError,
  TrappedError,
  UnknownInstanceError,
  UnknownJobError,
  UnknownProcessError,
  parseDuration,
} from '../dist/index.js';
import { ModuleInstance } from '../dist/module.js';

const fixture = (name) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

async function engineWith(...files) {
  const e = await Engine.create();
  for (const f of files) await e.deploy(fixture(f), f);
  return e;
}

describe('Engine.create', () => {
  it('loads the shipped module on a virtual clock at the epoch', async () => {
    const e = await Engine.create();
    assert.equal(e.time, 'virtual');
    assert.equal(e.now.toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(e.nextDeadline, null);
    e.close();
  });

  it('accepts the module as bytes, a file URL or a compiled module', async () => {
    const url = new URL('../dist/flowtrack.wasm', import.meta.url);
    const bytes = readFileSync(url);
    for (const wasm of [bytes, url, url.href, await WebAssembly.compile(bytes)]) {
      const e = await Engine.create({ wasm });
      assert.equal((await e.deploy(fixture('order.bpmn'))).processes[0].id, 'order');
      e.close();
    }
  });

  it('rejects an unknown time mode', async () => {
    await assert.rejects(Engine.create({ time: 'fast' }), BadRequestError);
  });

  it('runs in a Web Worker in browsers, and is refused under Node', async () => {
    // npm run test:browser runs this file in Chromium, on a page and inside
    // a worker (the engine then runs in a worker of that worker).
    if (typeof Worker === 'undefined') {
      await assert.rejects(Engine.createInWorker(), /Web Workers/);
      return;
    }
    const e = await Engine.createInWorker();
    const seen = [];
    e.on('*', (ev) => seen.push(ev.type));
    await e.deploy(fixture('order.bpmn'));
    const { instanceKey } = await e.start('order', { amount: 1 });
    for (const job of await e.jobs({ instanceKey })) await e.completeJob(job.key, { valid: true });
    assert.equal(seen[0], 'instanceStarted');
    assert.ok(seen.includes('jobCompleted'));
    e.close();
  });
});

describe('deploy', () => {
  it('returns the deployed processes', async () => {
    const e = await Engine.create();
    const d = await e.deploy(fixture('order.bpmn'), 'order.bpmn');
    assert.equal(d.name, 'order.bpmn');
    assert.deepEqual(d.processes.map((p) => [p.id, p.version]), [['order', 1]]);
    assert.equal((await e.deploy(fixture('order.bpmn'))).processes[0].version, 2);
    e.close();
  });

  it('rejects malformed XML with a DeployError', async () => {
    const e = await Engine.create();
    const err = await e.deploy('<not-bpmn/>', 'bad.bpmn').catch((x) => x);
    assert.ok(err instanceof DeployError, String(err));
    assert.ok(err instanceof FlowtrackError);
    assert.equal(err.code, 'DEPLOY_FAILED');
    assert.match(err.message, /bad\.bpmn/);
    assert.ok(err.problems.length >= 1);
    e.close();
  });

  it('names the element and rule of an invalid model', async () => {
    const e = await Engine.create();
    const xml = fixture('order.bpmn').replace('targetRef="Task_check"', 'targetRef="Task_missing"');
    const err = await e.deploy(xml, 'broken.bpmn').catch((x) => x);
    assert.ok(err instanceof DeployError, String(err));
    assert.ok(err.elementId, 'elementId set');
    assert.ok(err.problems.some((p) => p.elementId === err.elementId && p.rule));
    // Nothing of a rejected document is registered.
    await assert.rejects(e.start('order'), UnknownProcessError);
    e.close();
  });

  it('rejects a non-string document', async () => {
    const e = await Engine.create();
    await assert.rejects(e.deploy(42), BadRequestError);
    e.close();
  });
});

describe('checkpoint and restore', () => {
  it('moves a waiting instance into a new engine, where it goes on', async () => {
    const e = await engineWith('order.bpmn');
    const { instanceKey } = await e.start('order', { amount: 50 });
    const [check] = await e.jobs({ instanceKey });
    await e.completeJob(check.key, { valid: true });
    const state = await e.checkpoint();
    const history = await e.history(instanceKey);
    e.close();

    const r = await Engine.create({ state });
    assert.deepEqual(await r.history(instanceKey), history, 'the history is restored, not replayed');
    await assert.rejects(r.completeJob(check.key), UnknownJobError, 'a completed job is not created again');
    for (const job of await r.jobs({ instanceKey })) await r.completeJob(job.key);
    assert.equal(await r.state(instanceKey), 'completed');
    assert.deepEqual(await r.variables(instanceKey), { amount: 50, valid: true });
    r.close();
  });

  it('restores variables nested as deeply as variables may nest', async () => {
    let deep = [];
    for (let i = 1; i < MAX_VARIABLE_DEPTH; i++) deep = [deep];
    const e = await engineWith('order.bpmn');
    const { instanceKey } = await e.start('order', { amount: 50, deep });
    const state = await e.checkpoint();
    e.close();

    const r = await Engine.create({ state });
    assert.deepEqual(await r.variables(instanceKey), { amount: 50, deep });
    r.close();
  });

  it('refuses a document it cannot read and keeps its state', async () => {
    const e = await engineWith('order.bpmn');
    await e.start('order', { amount: 1 });
    await assert.rejects(e.restore('{"format":"flowtrack-state","version":99}'), BadStateError);
    await assert.rejects(e.restore('not json'), BadStateError);
    await assert.rejects(Engine.create({ state: '{"format":"other","version":1}' }), BadStateError);
    assert.equal((await e.jobs()).length, 1);
    e.close();
  });
});

describe('jobs', () => {
  it('creates jobs, completes them and moves tokens', async () => {
    const e = await engineWith('order.bpmn');
    const { instanceKey, state } = await e.start('order', { amount: 50 });
    assert.equal(state, 'active');
    const [check] = await e.jobs({ instanceKey });
    assert.equal(check.type, 'check-order');
    assert.equal(check.elementId, 'Task_check');
    assert.equal(check.retries, 2);
    assert.deepEqual(check.headers, { team: 'orders' });
    assert.deepEqual(check.variables, { amount: 50 });
    assert.deepEqual(await e.tokens(instanceKey), [{ id: 1, elementId: 'Task_check', waiting: 'job', jobKey: check.key }]);

    await e.completeJob(check.key, { valid: true });
    const tokens = await e.tokens(instanceKey);
    assert.deepEqual(tokens.map((t) => `${t.elementId}:${t.waiting}`).sort(), ['Task_charge:job', 'Task_reserve:job']);
    for (const job of await e.jobs({ instanceKey })) await e.completeJob(job.key);
    assert.equal(await e.state(instanceKey), 'completed');
    assert.deepEqual(await e.variables(instanceKey), { amount: 50, valid: true });
    assert.deepEqual(await e.tokens(instanceKey), []);
    const left = (await e.history(instanceKey)).filter((ev) => ev.type === 'elementLeft').map((ev) => ev.elementId);
    assert.deepEqual(left.sort(), ['EndEvent_1', 'Gateway_amount', 'Gateway_fork', 'Gateway_join', 'Gateway_merge', 'StartEvent_1', 'Task_charge', 'Task_check', 'Task_reserve']);
    e.close();
  });

  it('filters jobs by type and element', async () => {
    const e = await engineWith('order.bpmn');
    await e.start('order', { amount: 1 });
    await e.start('order', { amount: 2 });
    assert.equal((await e.jobs({ type: 'check-order' })).length, 2);
    assert.equal((await e.jobs({ elementId: 'Task_check' })).length, 2);
    assert.equal((await e.jobs({ type: 'nothing' })).length, 0);
    e.close();
  });

  it('fails a job into an incident and resolves it', async () => {
    const e = await engineWith('order.bpmn');
    const { instanceKey } = await e.start('order', { amount: 1 });
    const [job] = await e.jobs({ instanceKey });
    await e.failJob(job.key, 1, 'try again');
    assert.equal((await e.jobs({ instanceKey }))[0].errorMessage, 'try again');
    await e.failJob(job.key, 0, 'gave up');
    const [incident] = await e.incidents(instanceKey);
    assert.equal(incident.elementId, 'Task_check');
    assert.deepEqual((await e.tokens(instanceKey)).map((t) => t.waiting), ['incident']);
    await e.resolveIncident(incident.key);
    assert.equal((await e.jobs({ instanceKey })).length, 1);
    e.close();
  });

  it('throws typed errors for unknown keys and ended instances', async () => {
    const e = await engineWith('order.bpmn');
    await assert.rejects(e.completeJob(99999), UnknownJobError);
    await assert.rejects(e.tokens(99999), UnknownInstanceError);
    await assert.rejects(e.start('nope'), (err) => err instanceof UnknownProcessError && err.code === 'UNKNOWN_PROCESS');
    const { instanceKey } = await e.start('order', { amount: 1 });
    await e.cancel(instanceKey);
    assert.equal(await e.state(instanceKey), 'terminated');
    await assert.rejects(e.cancel(instanceKey), InstanceEndedError);
    // The engine stays usable after errors.
    assert.equal((await e.start('order', { amount: 1 })).state, 'active');
    e.close();
  });

  it('rejects bad requests and variables with typed errors', async () => {
    const e = await engineWith('order.bpmn');
    await assert.rejects(e.start('order', 5), (err) => err instanceof BadRequestError || err instanceof BadVariablesError);
    await assert.rejects(e.start('order', ['a']), (err) => err instanceof BadRequestError || err instanceof BadVariablesError);
    await assert.rejects(e.advanceTime(-1), BadRequestError);
    await assert.rejects(e.advanceTime('soon'), BadRequestError);
    await assert.rejects(e.advanceTo('not a date'), BadRequestError);
    await assert.rejects(e.publishMessage({ name: 'x', ttl: 'P1M' }), BadRequestError);
    e.close();
  });
});

describe('handlers', () => {
  it('work jobs after each call until none is left', async () => {
    const e = await engineWith('order.bpmn');
    const seen = [];
    e.handle('check-order', (job) => {
      seen.push(job.type);
      return { valid: job.variables.amount < 1000 };
    });
    e.handle('userTask', async () => ({ approvedBy: 'ana' }));
    e.handle('reserve-stock', async () => {
      await new Promise((r) => setTimeout(r, 1));
    });
    e.handle('charge-payment', () => ({ receipt: 'R-1' }));
    const { instanceKey, state } = await e.start('order', { amount: 250 });
    assert.equal(state, 'completed');
    assert.deepEqual(seen, ['check-order']);
    assert.deepEqual(await e.variables(instanceKey), { amount: 250, valid: true, approvedBy: 'ana', receipt: 'R-1' });
    e.close();
  });

  it('work jobs that existed before the handler, on work()', async () => {
    const e = await engineWith('order.bpmn');
    const { instanceKey } = await e.start('order', { amount: 1 });
    e.handle('check-order', () => ({ valid: true }));
    await e.work();
    assert.deepEqual((await e.jobs({ instanceKey })).map((j) => j.type).sort(), ['charge-payment', 'reserve-stock']);
    e.close();
  });

  it('fail the job when a handler throws, and raise BPMN errors', async () => {
    const e = await engineWith('order.bpmn');
    let attempts = 0;
    e.handle('check-order', () => {
      attempts++;
      throw new Error('database down');
    });
    const { instanceKey, state } = await e.start('order', { amount: 1 });
    assert.equal(state, 'active');
    assert.equal(attempts, 2, 'retries=2: two attempts, then an incident');
    const [incident] = await e.incidents(instanceKey);
    assert.equal(incident.message, 'database down');

    e.handle('check-order', () => {
      throw new BpmnError('INVALID', 'no such customer');
    });
    const second = await e.start('order', { amount: 1 });
    const history = await e.history(second.instanceKey);
    assert.ok(history.some((ev) => ev.type === 'errorThrown' && ev.name === 'INVALID'), 'errorThrown recorded');
    e.close();
  });

  it('stop when removed', async () => {
    const e = await engineWith('order.bpmn');
    const off = e.handle('check-order', () => ({}));
    off();
    const { instanceKey } = await e.start('order', { amount: 1 });
    assert.equal((await e.jobs({ instanceKey }))[0].type, 'check-order');
    e.close();
  });
});

describe('events', () => {
  it('feed typed listeners in order with each call', async () => {
    const e = await engineWith('order.bpmn');
    const entered = [];
    const all = [];
    e.on('elementEntered', (ev) => entered.push(ev.elementId));
    const off = e.on('*', (ev) => all.push(ev));
    const { instanceKey } = await e.start('order', { amount: 1 });
    assert.deepEqual(entered, ['StartEvent_1', 'Task_check']);
    assert.equal(all[0].type, 'instanceStarted');
    assert.deepEqual(all.map((ev) => ev.seq), all.map((_, i) => i + 1));
    assert.ok(all.every((ev) => ev.instanceKey === instanceKey));
    const created = all.find((ev) => ev.type === 'jobCreated');
    assert.equal(created.jobType, 'check-order');
    off();
    const before = all.length;
    await e.completeJob(created.jobKey);
    assert.equal(all.length, before);
    assert.ok(entered.includes('Gateway_fork'));
    e.close();
  });

  it('follow the observer contract', async () => {
    // The contract of every host (README "Listeners"; the Go engine's and
    // host's TestEngine_ObserverContract): each instance's events in
    // order and complete; a listener that throws loses only that event,
    // keeps getting the rest, and the throw reaches onError as an
    // ObserverError naming the event; the others are not affected.
    const reported = [];
    const e = await Engine.create({ onError: (err) => reported.push(err) });
    await e.deploy(fixture('order.bpmn'));
    const calm = new Map();
    const throwing = new Map();
    const threwOn = [];
    const add = (m, ev) => m.set(ev.instanceKey, [...(m.get(ev.instanceKey) ?? []), ev.seq]);
    e.on('*', (ev) => add(calm, ev));
    e.on('*', (ev) => {
      if (ev.type === 'jobCreated') {
        threwOn.push(ev);
        throw new Error(`listener bug at ${ev.elementId}`);
      }
      add(throwing, ev);
    });
    const keys = [];
    for (let i = 0; i < 3; i++) keys.push((await e.start('order', { amount: 1 })).instanceKey);
    for (let round = 0; round < 10; round++) {
      const jobs = await e.jobs();
      if (jobs.length === 0) break;
      await Promise.all(jobs.map((j) => e.completeJob(j.key, { valid: true }))); // issued together
    }
    assert.ok(threwOn.length > 0);
    for (const key of keys) {
      assert.equal(await e.state(key), 'completed', 'a throwing listener does not stop the engine');
      const history = await e.history(key);
      assert.deepEqual(calm.get(key), history.map((ev) => ev.seq), `instance ${key}: every event, in order`);
      assert.deepEqual(throwing.get(key), history.filter((ev) => ev.type !== 'jobCreated').map((ev) => ev.seq), `instance ${key}: all but the events it threw on`);
    }
    assert.equal(reported.length, threwOn.length, 'one report per throw');
    reported.forEach((err, i) => {
      assert.ok(err instanceof ObserverError);
      assert.equal(err.event, threwOn[i]);
      assert.equal(err.cause.message, `listener bug at ${threwOn[i].elementId}`);
    });
    e.close();
  });

  it('survive a listener that throws', async () => {
    const errors = [];
    const e = await Engine.create({ onError: (err) => errors.push(err) });
    await e.deploy(fixture('order.bpmn'));
    e.on('elementEntered', () => {
      throw new Error('listener bug');
    });
    const { state } = await e.start('order', { amount: 1 });
    assert.equal(state, 'active');
    assert.equal(errors.length, 2);
    e.close();
  });
});

describe('time', () => {
  it('moves only through advanceTime in virtual mode', async () => {
    const e = await engineWith('timer.bpmn');
    const { instanceKey } = await e.start('timer');
    assert.equal(e.nextDeadline.toISOString(), '2026-01-01T00:00:01.000Z');
    assert.deepEqual((await e.tokens(instanceKey)).map((t) => t.waiting), ['timer']);
    await e.advanceTime(999);
    assert.equal(await e.state(instanceKey), 'active');
    await e.advanceTime('PT0.001S');
    assert.equal(await e.state(instanceKey), 'completed');
    assert.equal(e.now.toISOString(), '2026-01-01T00:00:01.000Z');
    assert.equal(e.nextDeadline, null);
    e.close();
  });

  it('advances to the next timer and by calendar durations', async () => {
    const e = await engineWith('timer.bpmn');
    const { instanceKey } = await e.start('timer');
    assert.equal(await e.advanceToNextTimer(), true);
    assert.equal(await e.state(instanceKey), 'completed');
    assert.equal(await e.advanceToNextTimer(), false);
    assert.equal((await e.advanceTime('P1M')).toISOString(), '2026-02-01T00:00:01.000Z');
    e.close();
  });

  it('fires timers on the wall clock in real mode', async () => {
    const e = await Engine.create({ time: 'real' });
    assert.ok(Math.abs(e.now.getTime() - Date.now()) < 5000);
    await e.deploy(fixture('timer.bpmn').replace('PT1S', 'PT0.2S'));
    const done = new Promise((resolve) => e.on('instanceCompleted', resolve));
    const t0 = Date.now();
    const { instanceKey } = await e.start('timer');
    const ev = await done;
    assert.equal(ev.instanceKey, instanceKey);
    assert.ok(Date.now() - t0 >= 190, `fired after ${Date.now() - t0} ms`);
    e.close();
  });

  it('parses ISO 8601 durations', () => {
    assert.deepEqual(parseDuration('P1DT2H3M4.5S'), { years: 0, months: 0, ms: 93_784_500 });
    assert.deepEqual(parseDuration('P2W'), { years: 0, months: 0, ms: 1_209_600_000 });
    assert.deepEqual(parseDuration('P1Y2M'), { years: 1, months: 2, ms: 0 });
    for (const bad of ['', 'P', 'PT', '1D', 'P1H', 'PT1D']) assert.throws(() => parseDuration(bad), BadRequestError, bad);
  });
});

describe('messages and signals', () => {
  it('correlate a message by key', async () => {
    const e = await engineWith('message.bpmn');
    const a = await e.start('message', { key: 'a' });
    const b = await e.start('message', { key: 'b' });
    assert.deepEqual((await e.tokens(a.instanceKey)).map((t) => t.waiting), ['message']);
    await e.publishMessage({ name: 'go', correlationKey: 'b', variables: { paid: true } });
    assert.equal(await e.state(a.instanceKey), 'active');
    assert.equal(await e.state(b.instanceKey), 'completed');
    assert.equal((await e.variables(b.instanceKey)).paid, true);
    e.close();
  });

  it('buffer a message for its ttl', async () => {
    const e = await engineWith('message.bpmn');
    await e.publishMessage({ name: 'go', correlationKey: 'early', ttl: 'PT1M', messageId: 'm1' });
    const { state } = await e.start('message', { key: 'early' });
    assert.equal(state, 'completed');
    e.close();
  });

  it('route an event-based gateway by the first event', async () => {
    const e = await engineWith('payment.bpmn');
    e.handle('check-order', () => ({ valid: true }));
    const paid = await e.start('payment', { amount: 10, orderId: 'A-1' });
    const late = await e.start('payment', { amount: 10, orderId: 'A-2' });
    assert.deepEqual(await e.tokens(paid.instanceKey), [{ id: 1, elementId: 'Gateway_wait', waiting: 'event' }]);
    await e.publishMessage({ name: 'payment', correlationKey: 'A-1' });
    assert.equal(await e.state(paid.instanceKey), 'completed');
    await e.advanceTime('PT24H');
    assert.deepEqual((await e.tokens(late.instanceKey)).map((t) => `${t.elementId}:${t.waiting}`), ['Task_call:job']);
    const left = (await e.history(paid.instanceKey)).filter((ev) => ev.type === 'elementLeft').map((ev) => ev.elementId);
    assert.ok(left.includes('Catch_payment') && !left.includes('Catch_timeout'));
    e.close();
  });

  it('broadcast a signal nobody waits for as a no-op', async () => {
    const e = await Engine.create();
    await e.broadcastSignal('nobody', { x: 1 });
    e.close();
  });
});

describe('module life cycle', () => {
  it('throws ClosedError after close', async () => {
    const e = await Engine.create();
    e.close();
    e.close();
    await assert.rejects(e.deploy(fixture('order.bpmn')), ClosedError);
  });

  it('discards a module instance that trapped', async () => {
    const module = await WebAssembly.compile(readFileSync(new URL('../dist/flowtrack.wasm', import.meta.url)));
    const m = await ModuleInstance.instantiate(module);
    assert.equal(m.call('now', {}).ok, true);
    assert.throws(() => m.trap(), TrappedError);
    assert.ok(m.trapped);
    assert.throws(() => m.call('now', {}), TrappedError);
    // A fresh instance of the same module is unaffected.
    const fresh = await ModuleInstance.instantiate(module);
    assert.equal(fresh.call('now', {}).ok, true);
  });

  it('refuses what is not an engine module', async () => {
    const empty = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
    await assert.rejects(Engine.create({ wasm: empty }), TrappedError);
  });
});
