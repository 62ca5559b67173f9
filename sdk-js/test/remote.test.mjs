// The SDK's remote mode (Engine.connect) against a real flowtrack serve:
// the test builds the CLI, starts it on 127.0.0.1 with a temporary data
// directory and drives it through the same API as the embedded engine.
// Run: npm test (after npm run build); needs Go on PATH.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from 'nats';
import { jobToken } from '../dist/remote.js';
import { BadRequestError, BpmnError, ClosedError, Engine, InstanceEndedError, NoServerError, StaleActivationError, UnknownInstanceError, UnknownJobError, UnsupportedError } from '../dist/index.js';

const repo = new URL('../..', import.meta.url).pathname;
const fixture = (name) => readFileSync(new URL(`fixtures/${name}`, import.meta.url));
const cluster = 'sdkremote';
const risky = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="r" targetNamespace="http://flowtrack.dev/test">
  <bpmn:error id="Error_nope" errorCode="NOPE" />
  <bpmn:process id="risky" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="flaky" />
    <bpmn:serviceTask id="flaky"><bpmn:extensionElements><zeebe:taskDefinition type="remote-flaky" /></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f2" sourceRef="flaky" targetRef="refuse" />
    <bpmn:serviceTask id="refuse"><bpmn:extensionElements><zeebe:taskDefinition type="remote-refuse" /></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:boundaryEvent id="refused" attachedToRef="refuse"><bpmn:errorEventDefinition errorRef="Error_nope" /></bpmn:boundaryEvent>
    <bpmn:sequenceFlow id="f3" sourceRef="refuse" targetRef="end" />
    <bpmn:sequenceFlow id="f4" sourceRef="refused" targetRef="endRefused" />
    <bpmn:endEvent id="end" />
    <bpmn:endEvent id="endRefused" />
  </bpmn:process>
</bpmn:definitions>`;
const manual = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="http://flowtrack.dev/test">
  <bpmn:process id="manual" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="check" />
    <bpmn:serviceTask id="check"><bpmn:extensionElements><zeebe:taskDefinition type="manual-check" /></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f2" sourceRef="check" targetRef="end" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>`;
let dir, serve, url;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowtrack-sdk-remote-'));
  execFileSync('go', ['build', '-o', join(dir, 'flowtrack'), './cmd/flowtrack'], { cwd: repo, stdio: 'inherit' });
  serve = spawn(join(dir, 'flowtrack'), ['serve', '--port', '0', '--data', join(dir, 'data'), '--cluster', cluster], { stdio: ['ignore', 'pipe', 'inherit'] });
  url = await new Promise((resolve, reject) => {
    let out = '';
    serve.stdout.on('data', (b) => {
      out += b;
      const m = /serving cluster \S+ on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    serve.once('exit', (code) => reject(new Error(`flowtrack serve exited with ${code} before serving`)));
  });
});

after(async () => {
  if (serve && serve.exitCode === null) {
    const exited = new Promise((resolve) => serve.once('exit', resolve));
    serve.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

// completion resolves with the instanceCompleted event of the instance whose key keyOf() returns.
function completion(engine) {
  const done = new Map();
  const waiting = new Map();
  engine.on('instanceCompleted', (ev) => {
    done.set(ev.instanceKey, ev);
    waiting.get(ev.instanceKey)?.(ev);
  });
  return (key) => (done.has(key) ? Promise.resolve(done.get(key)) : new Promise((resolve) => waiting.set(key, resolve)));
}

describe('Engine.connect', { timeout: 120_000 }, () => {
  it('runs an order through a server with job handlers, listeners and the embedded API', async () => {
    const engine = await Engine.connect({ servers: url, cluster });
    try {
      assert.equal(engine.time, 'real');
      const completed = completion(engine);
      const dep = await engine.deploy(fixture('order.bpmn'), 'order.bpmn');
      assert.deepEqual(dep.processes.map((p) => p.id), ['order']);
      const seen = [];
      engine.on('jobCreated', (ev) => seen.push(ev.jobType));
      const stops = [
        engine.handle('check-order', (job) => ({ checked: true, team: job.headers?.team })),
        engine.handle('reserve-stock', () => ({ reserved: true })),
        engine.handle('charge-payment', (job) => ({ charged: job.variables.amount })),
      ];
      const { instanceKey } = await engine.start('order', { amount: 42 });
      await completed(instanceKey);
      const inst = await engine.instance(instanceKey);
      assert.equal(inst.state, 'completed');
      assert.deepEqual({ ...inst.variables }, { amount: 42, checked: true, team: 'orders', reserved: true, charged: 42 });
      assert.deepEqual(seen.sort(), ['charge-payment', 'check-order', 'reserve-stock']);
      for (const stop of stops) stop();
    } finally {
      await engine.close();
    }
  });

  it('queues a failed job again and throws a BpmnError from a handler', async () => {
    const engine = await Engine.connect({ servers: url, cluster });
    try {
      const completed = completion(engine);
      await engine.deploy(risky);
      const attempts = [];
      engine.handle('remote-flaky', (job) => {
        attempts.push(job.retries);
        if (attempts.length === 1) throw new Error('flaky downstream');
        return { attempts: attempts.length };
      }, { retryBackoff: 10 });
      engine.handle('remote-refuse', () => {
        throw new BpmnError('NOPE', 'refused', { reason: 'policy' });
      });
      const { instanceKey } = await engine.start('risky', {});
      await completed(instanceKey);
      assert.deepEqual(attempts, [3, 2]);
      const history = await engine.history(instanceKey);
      assert.ok(history.some((ev) => ev.type === 'elementLeft' && ev.elementId === 'endRefused'), 'the boundary error path ran');
      assert.deepEqual({ ...(await engine.variables(instanceKey)) }, { attempts: 2, reason: 'policy', errorCode: 'NOPE', errorMessage: 'refused' });
    } finally {
      await engine.close();
    }
  });

  it('refuses a stale activation, an unknown job and what the server cannot do, with the embedded error classes', async () => {
    const engine = await Engine.connect({ servers: url, cluster });
    try {
      // A type no worker queue serves, so that only this test activates its jobs.
      await engine.deploy(manual);
      const { instanceKey } = await engine.start('manual', { amount: 7 });
      const [first] = await engine.activateJobs({ type: 'manual-check', worker: 'a', timeout: 1, maxJobs: 1 });
      assert.equal(first.instanceKey, instanceKey);
      // The activation times out at once (1 ms); the next one replaces it.
      let again = [];
      while (again.length === 0) again = await engine.activateJobs({ type: 'manual-check', worker: 'b', timeout: 60_000, maxJobs: 1 });
      await assert.rejects(engine.completeJob(first.key, {}, { activation: first.activation }), StaleActivationError);
      await engine.completeJob(again[0].key, { checked: true }, { activation: again[0].activation });
      await assert.rejects(engine.completeJob(again[0].key), UnknownJobError);
      await assert.rejects(engine.instance(-5), UnknownInstanceError);
      await assert.rejects(engine.advanceTime('PT1M'), UnsupportedError);
      assert.throws(() => engine.handle('', () => ({})), BadRequestError);
      assert.equal((await engine.state(instanceKey)), 'completed');
      await assert.rejects(engine.cancel(instanceKey), InstanceEndedError);
    } finally {
      await engine.close();
    }
    await assert.rejects(engine.jobs(), ClosedError);
  });

  it('correlates a published message and shares one connection the caller owns', async () => {
    const nc = await connect({ servers: url });
    try {
      const engine = await Engine.connect({ connection: nc, cluster });
      const completed = completion(engine);
      await engine.deploy(fixture('message.bpmn'));
      const { instanceKey } = await engine.start('message', { key: 'k-1' });
      await engine.publishMessage({ name: 'go', correlationKey: 'k-1', variables: { went: true } });
      await completed(instanceKey);
      assert.equal((await engine.variables(instanceKey)).went, true);
      await engine.close();
      assert.equal(nc.isClosed(), false, 'the caller owns the connection');
    } finally {
      await nc.close();
    }
  });

  it('types a nats connection as a NatsConnection', () => {
    const sdk = new URL('..', import.meta.url).pathname;
    execFileSync(process.execPath, [join(sdk, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--target', 'ES2022', '--module', 'NodeNext',
      '--moduleResolution', 'NodeNext', '--lib', 'ES2022,DOM', '--types', 'node', join(sdk, 'test/fixtures/remote-consumer.ts')], { cwd: sdk, stdio: 'inherit' });
  });

  it('names job queues as the Go wire package does', () => {
    const vectors = JSON.parse(readFileSync(new URL('../../internal/wire/testdata/job-tokens.json', import.meta.url), 'utf8'));
    for (const [type, token] of Object.entries(vectors)) assert.equal(jobToken(type), token, type);
  });

  it('says when no server answers for the cluster, at once (NATS no-responders)', async () => {
    // A timeout far beyond the test's: a bare TIMEOUT would fail the test, not pass it late.
    await assert.rejects(Engine.connect({ servers: url, cluster: 'nobody', timeout: 600_000 }), (err) => err instanceof NoServerError && err.code === 'NO_SERVER');
    await assert.rejects(Engine.connect({ cluster }), /give servers or a connection/);
  });

  it('fails fast with NoServerError once its server died', async () => {
    const deadDir = mkdtempSync(join(tmpdir(), 'flowtrack-sdk-dead-'));
    const doomed = spawn(join(dir, 'flowtrack'), ['serve', '--port', '0', '--data', join(deadDir, 'data'), '--cluster', 'doomed'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const doomedURL = await new Promise((resolve, reject) => {
        let out = '';
        doomed.stdout.on('data', (b) => {
          out += b;
          const m = /serving cluster \S+ on (\S+)/.exec(out);
          if (m) resolve(m[1]);
        });
        doomed.once('exit', (code) => reject(new Error(`flowtrack serve exited with ${code} before serving`)));
      });
      const engine = await Engine.connect({ servers: doomedURL, cluster: 'doomed', timeout: 600_000, reconnectGrace: 200 });
      const exited = new Promise((resolve) => doomed.once('exit', resolve));
      doomed.kill('SIGKILL');
      await exited;
      await assert.rejects(engine.jobs(), (err) => err instanceof NoServerError && /connection has been down/.test(err.message));
      await engine.close().catch(() => {});
    } finally {
      if (doomed.exitCode === null) doomed.kill('SIGKILL');
      rmSync(deadDir, { recursive: true, force: true });
    }
  });

  it('lists jobs a page at a time', async () => {
    const engine = await Engine.connect({ servers: url, cluster });
    try {
      await engine.deploy(manual);
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push((await engine.start('manual', { i })).instanceKey);
      const all = (await engine.jobs({ type: 'manual-check' })).filter((j) => keys.includes(j.instanceKey));
      assert.equal(all.length, 3);
      const first = await engine.jobs({ type: 'manual-check', afterKey: all[0].key - 1, limit: 2 });
      assert.deepEqual(first.map((j) => j.key), [all[0].key, all[1].key]);
      const next = await engine.jobs({ type: 'manual-check', afterKey: all[1].key, limit: 1 });
      assert.deepEqual(next.map((j) => j.key), [all[2].key]);
      for (const k of keys) await engine.cancel(k);
    } finally {
      await engine.close();
    }
  });
});
