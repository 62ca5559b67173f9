// Starts flowtrack serve --http for the client suite: one node, or a
// cluster of three nodes with embedded NATS servers routed together, each
// with its REST listener, on 127.0.0.1 only, in a temporary directory.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repo = new URL('../../..', import.meta.url).pathname;

// freePort asks the system for a free loopback port (for NATS routes,
// which must be known before the nodes start).
export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// build compiles the CLI once into dir.
export function build(dir) {
  const bin = join(dir, 'flowtrack');
  execFileSync('go', ['build', '-o', bin, './cmd/flowtrack'], { cwd: repo, stdio: 'inherit' });
  return bin;
}

// start runs one flowtrack serve and resolves with its REST base URL
// (without /v2) once it prints it, or rejects when it exits first or
// takes longer than timeoutMs.
export function start(bin, args, { timeoutMs = 120_000, env = process.env } = {}) {
  const proc = spawn(bin, ['serve', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env });
  let out = '';
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`flowtrack serve did not serve within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    proc.stdout.on('data', (b) => {
      out += b;
      // The REST API's server errors, for the test's log.
      for (const line of String(b).split('\n')) if (line.startsWith('flowtrack: rest:')) process.stderr.write(line + '\n');
      const m = /REST API on (\S+)\/v2/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`flowtrack serve exited with ${code} before serving:\n${out}`));
    });
  });
  return { proc, url, output: () => out };
}

// stop ends a flowtrack serve (SIGTERM, or SIGKILL when kill) and waits
// for it.
export async function stop(node, { kill = false } = {}) {
  const { proc } = node;
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill(kill ? 'SIGKILL' : 'SIGTERM');
  await exited;
}

// single starts one node; cluster starts three (FLOWTRACK_NODES). With
// port false it passes no --port (a --config file sets the addresses).
export async function single(extra = [], { port = true } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'flowtrack-camunda-'));
  const bin = build(dir);
  const node = start(bin, [...(port ? ['--port', '0'] : []), '--data', join(dir, 'data'), '--http', '127.0.0.1:0', ...extra]);
  return { dir, bin, nodes: [node], urls: [await node.url], close: async () => { await stop(node); rmSync(dir, { recursive: true, force: true }); } };
}

export async function cluster(n = 3) {
  const dir = mkdtempSync(join(tmpdir(), 'flowtrack-camunda-cluster-'));
  const bin = build(dir);
  const ports = [];
  for (let i = 0; i < n; i++) ports.push({ client: await freePort(), route: await freePort() });
  const nodes = ports.map((p, i) => start(bin, ['--node', `n${i}`, '--partitions', '6', '--replicas', '3',
    '--data', join(dir, `n${i}`), '--port', String(p.client), '--route-port', String(p.route),
    '--routes', ports.filter((_, j) => j !== i).map((q) => `nats-route://127.0.0.1:${q.route}`).join(','),
    '--lease-ttl', '3s', '--http', '127.0.0.1:0']));
  const urls = await Promise.all(nodes.map((nd) => nd.url));
  return { dir, bin, nodes, urls, close: async () => { for (const nd of nodes) await stop(nd); rmSync(dir, { recursive: true, force: true }); } };
}
