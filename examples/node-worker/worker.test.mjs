// Runs worker.mjs against a real flowtrack serve: the test builds the CLI,
// starts it on 127.0.0.1 with a temporary data directory, deploys a
// process, starts instances and lets two workers, using nothing but the
// nats client, complete every job with variables.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connect } from 'nats';
import { call, jobToken, work } from './worker.mjs';

const repo = new URL('../..', import.meta.url).pathname;
const cluster = 'nodeworker';
let dir, serve, nc;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowtrack-node-worker-'));
  execFileSync('go', ['build', '-o', join(dir, 'flowtrack'), './cmd/flowtrack'], { cwd: repo, stdio: 'inherit' });
  serve = spawn(join(dir, 'flowtrack'), ['serve', '--port', '0', '--data', join(dir, 'data'), '--cluster', cluster], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    serve.stdout.on('data', (b) => {
      out += b;
      const m = /serving cluster \S+ on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    serve.once('exit', (code) => reject(new Error(`flowtrack serve exited with ${code} before serving`)));
  });
  nc = await connect({ servers: url });
});

after(async () => {
  await nc?.drain();
  if (serve && serve.exitCode === null) {
    const exited = new Promise((resolve) => serve.once('exit', resolve));
    serve.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

test('jobToken writes a job type as its subject token, as the server does', () => {
  const vectors = JSON.parse(readFileSync(new URL('../../internal/wire/testdata/job-tokens.json', import.meta.url), 'utf8'));
  for (const [type, token] of Object.entries(vectors)) assert.equal(jobToken(type), token, type);
});

test('two nats-only workers complete every job with variables', { timeout: 120_000 }, async () => {
  const xml = readFileSync(new URL('double.bpmn', import.meta.url));
  await call(nc, cluster, 'deploy', { name: 'double.bpmn', xmlBase64: xml.toString('base64') });
  const n = 20;
  const completed = new Set();
  let allDone;
  const finished = new Promise((resolve) => (allDone = resolve));
  const dec = new TextDecoder();
  nc.subscribe(`flowtrack.${cluster}.events.*`, {
    callback: (err, m) => {
      if (err) return;
      const ev = JSON.parse(dec.decode(m.data));
      if (ev.type === 'instanceCompleted') completed.add(ev.instanceKey);
      if (completed.size === n) allDone();
    },
  });
  await nc.flush();
  const handled = new Map();
  const handler = (job) => {
    handled.set(job.key, (handled.get(job.key) ?? 0) + 1);
    return { doubled: job.variables.amount * 2 };
  };
  const stops = [await work(nc, { cluster, type: 'math.double', handler }), await work(nc, { cluster, type: 'math.double', handler })];
  const keys = [];
  for (let i = 0; i < n; i++) keys.push((await call(nc, cluster, 'start', { processId: 'double', variables: { amount: i } })).instanceKey);
  await finished;
  for (const stop of stops) await stop();
  assert.deepEqual([...completed].sort((a, b) => a - b), [...keys].sort((a, b) => a - b));
  assert.equal(handled.size, n);
  for (const [key, times] of handled) assert.equal(times, 1, `job ${key} handled ${times} times`);
  for (const [i, key] of keys.entries()) {
    const inst = await call(nc, cluster, 'instance', { instanceKey: key });
    assert.equal(inst.state, 'completed');
    assert.equal(inst.variables.doubled, 2 * i);
  }
});
