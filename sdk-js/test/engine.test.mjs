// SDK tests against the built package (dist/) and the real engine module.
// Run: npm test (after npm run build).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  BadModificationError,
  BadRequestError,
  BadStateError,
  BadVariablesError,
  BpmnError,
  ClosedError,
  DeployError,
  Engine,
  FlowtrackError,
  InstanceEndedError,
  KeyInUseError,
  MAX_VARIABLE_DEPTH,
  ObserverError,
  StaleActivationError,
  TrappedError,
  UnknownDecisionError,
  UnknownInstanceError,
  UnknownJobError,
  UnknownProcessError,
  UnknownScopeError,
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

  it('compiles the shipped module once and starts engines from it', async () => {
    const module = await Engine.compile();
    assert.ok(module instanceof WebAssembly.Module);
    assert.equal(await Engine.compile(), module, 'the shipped module is compiled once per realm');
    const engines = [await Engine.create({ wasm: module }), await Engine.create({ wasm: module })];
    for (const e of engines) {
      const { processes } = await e.deploy(fixture('order.bpmn'));
      assert.equal(processes[0].id, 'order');
    }
    // Two engines from one module share no state: an instance started in
    // one is unknown to the other.
    const started = await engines[0].start('order', { amount: 1 });
    assert.equal(started.state, 'active');
    await assert.rejects(engines[1].cancel(started.instanceKey), UnknownInstanceError);
    for (const e of engines) e.close();
    const url = new URL('../dist/flowtrack.wasm', import.meta.url);
    assert.ok((await Engine.compile(readFileSync(url))) instanceof WebAssembly.Module);
    await assert.rejects(Engine.compile(new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9])), WebAssembly.CompileError);
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

  it('moves one instance into an engine that runs its own', async () => {
    const src = await engineWith('order.bpmn');
    for (let i = 0; i < 3; i++) await src.start('order', { amount: 1 });
    const { instanceKey } = await src.start('order', { amount: 50 });
    const state = await src.checkpointInstance(instanceKey);
    await assert.rejects(src.checkpointInstance(999999), UnknownInstanceError);
    const history = await src.history(instanceKey);
    src.close();

    const dst = await engineWith('order.bpmn');
    const own = await dst.start('order', { amount: 7 });
    await dst.restoreInstance(state);
    await assert.rejects(dst.restoreInstance(state), KeyInUseError, 'restored twice');
    await assert.rejects(dst.restoreInstance('not json'), BadStateError);
    assert.deepEqual((await dst.history(instanceKey)).map((r) => `${r.type} ${r.elementId ?? ''}`),
      history.map((r) => `${r.type} ${r.elementId ?? ''}`), 'the same records');
    const [check] = await dst.jobs({ instanceKey });
    await dst.completeJob(check.key, { valid: true });
    for (const job of await dst.jobs({ instanceKey })) await dst.completeJob(job.key);
    assert.equal(await dst.state(instanceKey), 'completed');
    assert.deepEqual(await dst.variables(instanceKey), { amount: 50, valid: true });
    assert.equal(await dst.state(own.instanceKey), 'active', 'its own instance waits on');
    dst.close();
  });

  it('writes the very bytes the module writes: strings escaped, map keys ordered as the module has them', async () => {
    const e = await engineWith('order.bpmn');
    // JavaScript puts "2" before "10" (array indexes first); Go sorts map keys byte-wise.
    await e.start('order', { amount: 50, note: '<a & b>\u2028\u2029', byId: { 10: 'x', 2: 'y', '\u{1F600}': 1, '\uFFFD': 2 } });
    const doc = new TextDecoder().decode(await e.checkpoint());
    e.close();
    // The module's own document, as it wrote it in its response.
    const m = await ModuleInstance.instantiate(await Engine.compile());
    assert.equal(m.call('restore', { state: JSON.parse(doc) }).ok, true);
    const raw = m.callText('checkpoint', '{}');
    m.close();
    assert.ok(raw.includes(doc), `the module wrote\n${raw}\nthe SDK\n${doc}`);
    assert.ok(doc.includes('"note":"\\u003ca \\u0026 b\\u003e\\u2028\\u2029"'), doc);
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
    const { instanceKey, state, jobs } = await e.start('order', { amount: 50 });
    assert.equal(state, 'active');
    assert.deepEqual(jobs, await e.jobs({ instanceKey }), 'start reports the jobs');
    const [check] = await e.jobs({ instanceKey });
    assert.equal(check.type, 'check-order');
    assert.equal(check.elementId, 'Task_check');
    assert.equal(check.retries, 2);
    assert.deepEqual(check.headers, { team: 'orders' });
    assert.deepEqual(check.variables, { amount: 50 });
    assert.deepEqual(await e.tokens(instanceKey), [{ id: 1, elementId: 'Task_check', waiting: 'job', jobKey: check.key }]);

    const done = await e.completeJob(check.key, { valid: true });
    const tokens = await e.tokens(instanceKey);
    assert.deepEqual(tokens.map((t) => `${t.elementId}:${t.waiting}`).sort(), ['Task_charge:job', 'Task_reserve:job']);
    assert.deepEqual(done, { instanceKey, state: 'active', jobs: await e.jobs({ instanceKey }) }, 'completeJob reports the instance');
    let last;
    for (const job of await e.jobs({ instanceKey })) last = await e.completeJob(job.key);
    assert.deepEqual(last, { instanceKey, state: 'completed' });
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

  it('fail the job when a handler throws, retry it after the back-off, and raise BPMN errors', async () => {
    const e = await engineWith('order.bpmn');
    let attempts = 0;
    e.handle('check-order', () => {
      attempts++;
      throw new Error('database down');
    }, { retryBackoff: 'PT10S' });
    const { instanceKey, state } = await e.start('order', { amount: 1 });
    assert.equal(state, 'active');
    assert.equal(attempts, 1, 'one attempt per call: the retry waits for its back-off');
    const [failed] = await e.jobs({ instanceKey });
    assert.equal(failed.retries, 1);
    assert.equal(failed.retryAt, '2026-01-01T00:00:10Z');
    await e.advanceTime('PT9S');
    assert.equal(attempts, 1, 'still in back-off');
    await e.advanceTime('PT1S');
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

  it('drop a result whose activation went to another worker', async () => {
    const e = await engineWith('order.bpmn');
    const { instanceKey } = await e.start('order', { amount: 1 });
    let release;
    const held = new Promise((r) => (release = r));
    e.handle('check-order', async () => {
      await held;
      return { valid: true };
    }, { timeout: 1000 });
    const working = e.work();
    // While the handler works, its activation times out and another worker takes the job.
    await e.advanceTime(1000);
    const [taken] = await e.activateJobs({ type: 'check-order', worker: 'other', timeout: 'PT1M', maxJobs: 1 });
    assert.equal(taken.worker, 'other');
    release();
    await working;
    assert.deepEqual(await e.variables(instanceKey), { amount: 1 }, 'the late result was refused, not applied');
    await e.completeJob(taken.key, { valid: false }, { activation: taken.activation });
    assert.equal((await e.variables(instanceKey)).valid, false);
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

describe('job workers', () => {
  it('activate jobs for a timeout and refuse a stale activation', async () => {
    const e = await engineWith('order.bpmn');
    const a = await e.start('order', { amount: 1 });
    const b = await e.start('order', { amount: 2 });
    const first = await e.activateJobs({ type: 'check-order', worker: 'w1', timeout: 'PT1M', maxJobs: 1 });
    assert.equal(first.length, 1);
    assert.equal(first[0].instanceKey, a.instanceKey, 'oldest first');
    assert.equal(first[0].worker, 'w1');
    assert.equal(first[0].deadline, '2026-01-01T00:01:00Z');
    const second = await e.activateJobs({ type: 'check-order', worker: 'w2', timeout: 60_000, maxJobs: 5 });
    assert.deepEqual(second.map((j) => j.instanceKey), [b.instanceKey], 'held jobs are not handed out again');
    await e.advanceTime('PT1M');
    const again = await e.activateJobs({ type: 'check-order', worker: 'w3', timeout: 'PT1M', maxJobs: 1 });
    assert.equal(again[0].key, first[0].key, 'timed out: activatable again');
    await assert.rejects(e.completeJob(first[0].key, { valid: true }, { activation: first[0].activation }), StaleActivationError);
    await e.completeJob(again[0].key, { valid: true }, { activation: again[0].activation });
    await assert.rejects(e.activateJobs({ type: 'check-order', timeout: 0, maxJobs: 1 }), BadRequestError);
    e.close();
  });

  it('fail with a back-off and update retries under an incident', async () => {
    const e = await engineWith('order.bpmn');
    const { instanceKey } = await e.start('order', { amount: 1 });
    const [job] = await e.activateJobs({ type: 'check-order', timeout: 'PT1M', maxJobs: 1 });
    await e.failJob(job.key, 1, 'busy', { activation: job.activation, retryBackoff: 'PT30S' });
    assert.deepEqual(await e.activateJobs({ type: 'check-order', timeout: 'PT1M', maxJobs: 1 }), []);
    await e.advanceTime('PT30S');
    const [back] = await e.activateJobs({ type: 'check-order', timeout: 'PT1M', maxJobs: 1 });
    assert.equal(back.errorMessage, 'busy');
    await e.failJob(back.key, 0, 'broken');
    await e.updateJobRetries(back.key, 4);
    const [incident] = await e.incidents(instanceKey);
    await e.resolveIncident(incident.key);
    const [retried] = await e.jobs({ instanceKey });
    assert.equal(retried.retries, 4);
    await assert.rejects(e.updateJobRetries(back.key, 0), BadRequestError);
    await assert.rejects(e.updateJobRetries(987654, 1), UnknownJobError);
    e.close();
  });
});

describe('definitions', () => {
  it('list versions, return a version\'s document and start an older version', async () => {
    const e = await Engine.create();
    const v1 = fixture('order.bpmn');
    await e.deploy(v1, 'v1.bpmn');
    await e.deploy(v1.replace('type="check-order"', 'type="check-order-2"'), 'v2.bpmn');
    const defs = await e.definitions('order');
    assert.deepEqual(defs.map((d) => [d.version, d.resource, d.latest ?? false]), [[1, 'v1.bpmn', false], [2, 'v2.bpmn', true]]);
    const doc = await e.definitionXml('order', 1);
    assert.equal(doc.name, 'v1.bpmn');
    assert.equal(doc.xml, v1);
    const old = await e.start('order', { amount: 1 }, { version: 1 });
    const [job] = await e.jobs({ instanceKey: old.instanceKey });
    assert.equal(job.type, 'check-order', 'runs on version 1');
    await assert.rejects(e.start('order', {}, { version: 5 }), UnknownProcessError);
    e.close();
  });
});

describe('evaluateDecision', () => {
  it('deploys a DMN model and evaluates its decisions, with the rules that matched', async () => {
    const e = await Engine.create();
    const dmn = readFileSync(new URL('../../engine/testdata/discount.dmn', import.meta.url), 'utf8');
    const d = await e.deploy(dmn, 'discount.dmn');
    assert.deepEqual(d.decisions.map((x) => [x.id, x.version]), [['discount', 1], ['price', 1], ['fees', 1], ['strict', 1]]);
    const r = await e.evaluateDecision('price', { customer: 'gold', 'order amount': 2000 });
    assert.equal(r.output, 1700);
    assert.deepEqual(r.matchedRules, [{ decisionId: 'discount', ruleId: 'gold_big', ruleIndex: 1 }]);
    const failed = await e.evaluateDecision('strict', { 'order amount': 50 });
    assert.equal(failed.output, null);
    assert.match(failed.failure, /UNIQUE/);
    await assert.rejects(e.evaluateDecision('nope'), UnknownDecisionError);
    e.close();
  });
});

describe('modifyInstance', () => {
  it('moves a token: activate before an element, terminate the old one', async () => {
    const e = await engineWith('order.bpmn');
    const { instanceKey } = await e.start('order', { amount: 1 });
    const [token] = await e.tokens(instanceKey);
    await assert.rejects(e.modifyInstance(instanceKey, { activate: [{ elementId: 'nowhere' }] }), BadModificationError);
    await e.modifyInstance(instanceKey, { activate: [{ elementId: token.elementId, variables: { again: true } }], terminate: [token.id] });
    const history = await e.history(instanceKey);
    assert.ok(history.some((ev) => ev.type === 'elementTerminated' && ev.tokenId === token.id), 'the old token was terminated');
    const jobs = await e.jobs({ instanceKey });
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0].variables.again, true);
    e.close();
  });
});

describe('gateway choices', () => {
  it('stop a token before an exclusive gateway routes, and route it by the flow chosen', async () => {
    const e = await engineWith('order.bpmn');
    await e.setGatewayChoices(true);
    const { instanceKey } = await e.start('order', { amount: 250 });
    const [job] = await e.jobs({ instanceKey });
    await e.completeJob(job.key);
    const [token] = await e.tokens(instanceKey);
    assert.equal(token.elementId, 'Gateway_amount');
    assert.equal(token.waiting, 'choice');
    assert.deepEqual(token.choice, { holds: ['Flow_large'], takes: ['Flow_large'] });
    await assert.rejects(e.chooseFlows(instanceKey, token.id, ['Flow_large', 'Flow_small']), BadModificationError);
    await e.chooseFlows(instanceKey, token.id, ['Flow_small']);
    const history = await e.history(instanceKey);
    const chosen = history.find((ev) => ev.type === 'flowsChosen');
    assert.equal(chosen.elementId, 'Gateway_amount');
    assert.equal(chosen.message, 'chose Flow_small; the conditions would take Flow_large');
    assert.ok(history.some((ev) => ev.type === 'flowTaken' && ev.flowId === 'Flow_small'));
    assert.ok(!history.some((ev) => ev.type === 'flowTaken' && ev.flowId === 'Flow_large'));
    await e.setGatewayChoices(false);
    e.close();
  });
});

describe('metrics', () => {
  it('count open jobs by type, the oldest job and instances by process with latency', async () => {
    const e = await engineWith('order.bpmn');
    const first = await e.start('order', { amount: 1 });
    await e.start('order', { amount: 2 });
    await e.advanceTime('PT3S');
    const m = await e.metrics();
    assert.deepEqual(m.open, { instances: 2, jobs: 2, incidents: 0, messageSubscriptions: 0, signalSubscriptions: 0, timers: 0 });
    assert.deepEqual(m.jobsByType, { 'check-order': 2 });
    assert.equal(m.oldestJob.waitingMs, 3000);
    assert.deepEqual(m.processes, [{ processId: 'order', active: 2, completed: 0, terminated: 0, failed: 0, meanLatencyMs: 0, maxLatencyMs: 0 }]);
    await e.cancel(first.instanceKey);
    assert.equal((await e.metrics()).processes[0].terminated, 1);
    e.close();
  });
});

describe('variables', () => {
  const subProcess = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:subProcess id="sub">
      <bpmn:extensionElements><zeebe:ioMapping><zeebe:input source="= 1" target="inner"/></zeebe:ioMapping></bpmn:extensionElements>
      <bpmn:startEvent id="subStart"/>
      <bpmn:serviceTask id="task"><bpmn:extensionElements><zeebe:taskDefinition type="work"/></bpmn:extensionElements></bpmn:serviceTask>
      <bpmn:endEvent id="subEnd"/>
      <bpmn:sequenceFlow id="s1" sourceRef="subStart" targetRef="task"/>
      <bpmn:sequenceFlow id="s2" sourceRef="task" targetRef="subEnd"/>
    </bpmn:subProcess>
    <bpmn:exclusiveGateway id="gw"/>
    <bpmn:endEvent id="big"/>
    <bpmn:endEvent id="small"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="sub"/>
    <bpmn:sequenceFlow id="f2" sourceRef="sub" targetRef="gw"/>
    <bpmn:sequenceFlow id="f3" sourceRef="gw" targetRef="big"><bpmn:conditionExpression>= amount &gt; 100</bpmn:conditionExpression></bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="f4" sourceRef="gw" targetRef="small"><bpmn:conditionExpression>= amount &lt;= 100</bpmn:conditionExpression></bpmn:sequenceFlow>
  </bpmn:process>
</bpmn:definitions>`;

  it('set on a sub-process scope, locally or propagating, and fix an incident', async () => {
    const e = await Engine.create();
    await e.deploy(subProcess, 'sub.bpmn');
    const { instanceKey } = await e.start('p', { customer: 'ana' });
    const sub = (await e.tokens(instanceKey)).find((t) => t.elementId === 'sub');
    assert.equal(sub.waiting, 'scope');
    await e.setVariables(instanceKey, { note: 'x' }, { scope: sub.id, local: true });
    await e.setVariables(instanceKey, { inner: 2, flag: true }, { scope: sub.id });
    assert.deepEqual(await e.scopeVariables(instanceKey, { scope: sub.id, local: true }), { inner: 2, note: 'x' });
    assert.deepEqual(await e.variables(instanceKey), { customer: 'ana', flag: true });
    await assert.rejects(e.setVariables(instanceKey, { a: 1 }, { scope: 999 }), UnknownScopeError);

    const [job] = await e.jobs({ instanceKey });
    await e.completeJob(job.key);
    const [incident] = await e.incidents({ instanceKey, type: 'element', elementId: 'gw' });
    assert.equal(incident.elementId, 'gw', 'no amount: the gateway cannot decide');
    assert.deepEqual(await e.incidents({ type: 'job' }), []);
    await assert.rejects(e.incidents({ type: 'bogus' }), BadRequestError);
    await e.setVariables(instanceKey, { amount: 1000 });
    await e.resolveIncident(incident.key);
    assert.equal((await e.instance(instanceKey)).state, 'completed');
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

  it('wakes in real mode when a held job times out, for its handler', { timeout: 10_000 }, async () => {
    const e = await Engine.create({ time: 'real' });
    await e.deploy(fixture('order.bpmn'));
    await e.start('order', { amount: 1 });
    // A worker that went away holds the job for 0.2 s.
    const [held] = await e.activateJobs({ type: 'check-order', worker: 'gone', timeout: 200, maxJobs: 1 });
    assert.ok(e.nextDeadline && e.nextDeadline.toISOString() === new Date(held.deadline).toISOString(), 'the activation deadline');
    const handled = new Promise((resolve) => e.handle('check-order', (job) => (resolve(job), { valid: true })));
    await e.work(); // nothing activatable yet
    const job = await handled; // the deadline's wake-up let the handler take it
    assert.equal(job.key, held.key);
    assert.notEqual(job.activation, held.activation);
    await e.work(); // joins the wake-up's drain, which completes the job
    assert.deepEqual(await e.jobs({ type: 'check-order' }), []);
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
    const res = await e.publishMessage({ name: 'go', correlationKey: 'b', variables: { paid: true } });
    assert.deepEqual(res, { instances: [{ instanceKey: b.instanceKey, state: 'completed' }] }, 'it reports the instance it reached, settled');
    assert.equal(await e.state(a.instanceKey), 'active');
    assert.equal(await e.state(b.instanceKey), 'completed');
    assert.equal((await e.variables(b.instanceKey)).paid, true);
    e.close();
  });

  it('buffer a message for its ttl', async () => {
    const e = await engineWith('message.bpmn');
    assert.deepEqual(await e.publishMessage({ name: 'go', correlationKey: 'early', ttl: 'PT1M', messageId: 'm1' }), {}, 'buffered: it reached nobody yet');
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
    const res = await e.publishMessage({ name: 'payment', correlationKey: 'A-1' });
    assert.deepEqual(res, { instances: [{ instanceKey: paid.instanceKey, state: 'completed' }] }, 'no handler ran after it: where it stands');
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
