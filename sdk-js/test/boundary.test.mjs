// Hostile input at the SDK boundary (issue 22): calls after close, times
// the engine cannot represent, document encodings, variable depth, strict
// requests and the step limit. Each case asserts a clear error and that a
// normal instance still completes afterwards on the same engine.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  BadRequestError,
  BadVariablesError,
  ClosedError,
  Engine,
  MAX_VARIABLE_DEPTH,
  TimeOutOfRangeError,
} from '../dist/index.js';
import { ModuleInstance } from '../dist/module.js';

const fixture = (name) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
// The same ISO-8859-1 model the Go engine, host and CLI tests run.
const latin1 = readFileSync(new URL('../../engine/testdata/latin1.bpmn', import.meta.url));

// runOrder starts an order and works its jobs: a normal instance.
async function runOrder(e, variables = {}) {
  const { instanceKey } = await e.start('order', { amount: 1, ...variables });
  for (let i = 0; i < 10; i++) {
    const jobs = await e.jobs({ instanceKey });
    if (jobs.length === 0) break;
    for (const job of jobs) await e.completeJob(job.key);
  }
  assert.equal(await e.state(instanceKey), 'completed');
  return instanceKey;
}

const nested = (depth) => {
  let v = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

describe('close', () => {
  it('makes every operation throw ClosedError', async () => {
    const e = await Engine.create();
    await e.deploy(fixture('order.bpmn'));
    const { instanceKey } = await e.start('order', { amount: 1 });
    const [job] = await e.jobs();
    e.close();
    const calls = {
      deploy: () => e.deploy(fixture('order.bpmn')),
      start: () => e.start('order'),
      publishMessage: () => e.publishMessage({ name: 'm', ttl: 'PT1H' }),
      broadcastSignal: () => e.broadcastSignal('s'),
      advanceTime: () => e.advanceTime(1000),
      advanceTo: () => e.advanceTo(new Date('2026-02-01T00:00:00Z')),
      advanceToNextTimer: () => e.advanceToNextTimer(),
      jobs: () => e.jobs(),
      completeJob: () => e.completeJob(job.key),
      failJob: () => e.failJob(job.key, 0),
      throwError: () => e.throwError(job.key, 'E'),
      incidents: () => e.incidents(),
      resolveIncident: () => e.resolveIncident(1),
      tokens: () => e.tokens(instanceKey),
      history: () => e.history(instanceKey),
      instance: () => e.instance(instanceKey),
      state: () => e.state(instanceKey),
      variables: () => e.variables(instanceKey),
      cancel: () => e.cancel(instanceKey),
      work: () => e.work(),
    };
    for (const [name, call] of Object.entries(calls)) {
      await assert.rejects(call(), ClosedError, name);
    }
    const fresh = await Engine.create();
    await fresh.deploy(fixture('order.bpmn'));
    await runOrder(fresh);
    fresh.close();
  });
});

describe('time range', () => {
  it('refuses instants the engine cannot represent, naming the limit', async () => {
    const e = await Engine.create();
    await e.deploy(fixture('order.bpmn'));
    const cases = {
      'advanceTo year 10000': () => e.advanceTo(new Date('+010000-01-01T00:00:00Z')),
      'advanceTo 2263': () => e.advanceTo('2263-01-01T00:00:00Z'),
      'advanceTime P300Y': () => e.advanceTime('P300Y'),
      'advanceTime 285 years of ms': () => e.advanceTime(9e12),
      'publishMessage ttl': () => e.publishMessage({ name: 'm', ttl: 9e12 }),
    };
    for (const [name, call] of Object.entries(cases)) {
      const err = await call().catch((x) => x);
      assert.ok(err instanceof TimeOutOfRangeError, `${name}: ${err}`);
      assert.match(err.message, /2262-04-11T23:47:16\.854775807Z/, name);
    }
    assert.equal(e.now.toISOString(), '2026-01-01T00:00:00.000Z', 'nothing moved');
    await runOrder(e);
    const end = await e.advanceTo('2262-04-11T23:47:16.854Z');
    assert.equal(end.toISOString(), '2262-04-11T23:47:16.854Z');
    await runOrder(e);
    e.close();
  });
});

describe('document encoding', () => {
  it('deploys an ISO-8859-1 model from its bytes as the native engine does', async () => {
    const e = await Engine.create();
    const d = await e.deploy(latin1, 'latin1.bpmn');
    assert.deepEqual(d.processes.map((p) => [p.id, p.name]), [['prüfung', 'Größenprüfung für Bücher']]);
    const { instanceKey } = await e.start('prüfung', { länge: 12 });
    const [job] = await e.jobs();
    assert.equal(job.type, 'maße-prüfen');
    await e.completeJob(job.key);
    assert.equal(await e.state(instanceKey), 'completed');
    assert.deepEqual(await e.variables(instanceKey), { länge: 12, ergebnis: 'Größe: 12' });
    const left = (await e.history(instanceKey)).filter((ev) => ev.type === 'elementLeft').map((ev) => ev.elementId);
    assert.deepEqual(left.sort(), ['ende', 'prüfen', 'start']);
    e.close();
  });

  it('refuses text that declares another encoding instead of altering it', async () => {
    const e = await Engine.create();
    const err = await e.deploy(new TextDecoder('latin1').decode(latin1)).catch((x) => x);
    assert.ok(err instanceof BadRequestError, String(err));
    assert.match(err.message, /ISO-8859-1/);
    assert.match(err.message, /xmlBase64/);
    await e.deploy(fixture('order.bpmn'));
    await runOrder(e);
    e.close();
  });

  it('rejects invalid UTF-8 as the native engine does', async () => {
    const e = await Engine.create();
    const bad = new TextEncoder().encode(fixture('order.bpmn').replace('name="Order"', 'name="Order \u0000"'));
    bad[bad.indexOf(0)] = 0xff;
    await assert.rejects(e.deploy(bad), /UTF-8/);
    await e.deploy(fixture('order.bpmn'));
    await runOrder(e);
    e.close();
  });
});

describe('variable depth', () => {
  it('refuses values nested deeper than MAX_VARIABLE_DEPTH before encoding them', async () => {
    assert.equal(MAX_VARIABLE_DEPTH, 64);
    const e = await Engine.create();
    await e.deploy(fixture('order.bpmn'));
    const cyclic = {};
    cyclic.self = cyclic;
    for (const [name, value] of Object.entries({ over: nested(65), deep: nested(3000), huge: nested(100_000), cyclic })) {
      const err = await e.start('order', { deep: value }).catch((x) => x);
      assert.ok(err instanceof BadVariablesError, `${name}: ${err}`);
      assert.match(err.message, /64/, name);
      await assert.rejects(e.publishMessage({ name: 'm', variables: { deep: value } }), BadVariablesError, name);
    }
    const key = await runOrder(e, { deep: nested(64) });
    assert.deepEqual((await e.variables(key)).deep, nested(64));
    e.close();
  });
});

describe('strict requests', () => {
  it('rejects field names in another case', async () => {
    const url = new URL('../dist/flowtrack.wasm', import.meta.url);
    const m = await ModuleInstance.instantiate(await WebAssembly.compile(readFileSync(url)));
    const env = m.call('start', { PROCESSID: 'order' });
    assert.equal(env.error?.code, 'BAD_REQUEST');
    assert.match(env.error.message, /"PROCESSID"/);
    assert.equal(m.call('now', {}).ok, true, 'the module stays usable');
    m.close();
  });
});

describe('limits', () => {
  const chain = (n) => {
    let body = '<bpmn:startEvent id="s"/>';
    let prev = 's';
    for (let i = 0; i < n; i++) {
      body += `<bpmn:exclusiveGateway id="g${i}"/><bpmn:sequenceFlow id="f${i}" sourceRef="${prev}" targetRef="g${i}"/>`;
      prev = `g${i}`;
    }
    body += `<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="fe" sourceRef="${prev}" targetRef="e"/>`;
    return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t"><bpmn:process id="chain${n}" isExecutable="true">${body}</bpmn:process></bpmn:definitions>`;
  };

  it('sets the engine limits', async () => {
    await assert.rejects(Engine.create({ limits: { maxSteps: -1 } }), BadRequestError);
    await assert.rejects(Engine.create({ limits: { maxStep: 10 } }), BadRequestError, 'an unknown limit is refused by the module');
    const e = await Engine.create({ limits: { maxSteps: 10 } });
    await e.deploy(chain(20));
    await e.deploy(chain(3));
    const long = await e.start('chain20');
    assert.equal((await e.incidents(long.instanceKey)).length, 1, '20 gateways pass the limit of 10 steps');
    assert.equal((await e.start('chain3')).state, 'completed');
    e.close();
  });
});
