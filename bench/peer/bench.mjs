// flowtrack's peer driver: the shared workloads on bpmn-engine, the
// JavaScript BPMN engine from npm (pinned in package.json), measured the
// way bench/node/bench.mjs measures the SDK, one instance at a time. Prints
// one JSON line per workload on stdout (host "peer-bpmn-engine"), progress
// on stderr.
//
//   cd bench/peer && npm ci
//   node bench/peer/bench.mjs --shared DIR [--workloads a,b] [--fixed-n N]
//
// `make bench` runs it through flowbench all (part "peer"). How the peer is
// driven, and where it differs from flowtrack's drivers:
//
// - bpmn-engine runs one instance per Engine object. Each graph is parsed
//   and serialised once (bpmn-moddle + moddle-context-serializer, the
//   sourceContext its docs describe), and every instance is a new Engine
//   on that context: the peer at its fastest, not re-parsing XML per
//   instance.
// - exclusive: bpmn-engine does not evaluate FEEL. At load time the
//   driver rewrites the condition `= x > 5` of the shared file into the
//   peer's own form, a JavaScript condition script
//   (`next(null, environment.variables.x > 5)`); the shared file is read,
//   never copied.
// - message: bpmn-engine has no correlation keys (an Engine is the
//   instance). The driver keeps its own key → execution map, as a user of
//   it would, and signals the message to the execution found by key.
//   "Wait until parked" is the catch event in execution.getPostponed().
// - timer: the engine's timers are replaced by a virtual clock
//   (bpmn-elements' Timers over the driver's setTimeout), advanced 1 s.
// - parallel and straight run as they are.
//
// Only one at a time ("seq"), as the shared peer figures were measured.

import { readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

import { Engine } from 'bpmn-engine';
import * as elements from 'bpmn-elements';
import BpmnModdle from 'bpmn-moddle';
import { Serializer, TypeResolver } from 'moddle-context-serializer';

const here = dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const sharedDir = args.shared ?? resolve(here, '../../../shared/workloads');
const fixedN = Number(args['fixed-n'] ?? 0) || 0;
const HOST = 'peer-bpmn-engine';
// A peer instance takes milliseconds: runs of about half a second (at
// least 20 instances, at most 200, --fixed-n included) keep the part near
// 15 s.
const RUNS = 5;
const RUN_MS = 500;
const MIN_N = 20;
const MAX_N = 200;
const WARMUP_N = 20;
const INSTANCE_TIMEOUT_MS = 10_000;
const VERSION = JSON.parse(readFileSync(resolve(here, 'node_modules/bpmn-engine/package.json'), 'utf8')).version;

const out = (rec) => process.stdout.write(JSON.stringify(rec) + '\n');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

// The virtual clock: setTimeout/clearTimeout for bpmn-elements' Timers,
// fired only by advance(). bpmn-elements computes a duration timer's delay
// from two readings of the wall clock (expiry from one, "now" from an
// earlier one), so PT1S asks for 1,000 ms plus the milliseconds between
// them: advance() fires what is due within CLOCK_SLACK_MS past its target.
const CLOCK_SLACK_MS = 100;
function virtualClock() {
  let now = 0;
  const pending = new Set();
  return {
    setTimeout(fn, delay, ...a) {
      const t = { due: now + delay, fn, a };
      pending.add(t);
      return t;
    },
    clearTimeout(t) {
      pending.delete(t);
    },
    advance(ms) {
      now += ms;
      for (const t of [...pending].sort((x, y) => x.due - y.due)) {
        if (t.due > now + CLOCK_SLACK_MS) throw new Error(`a timer due at ${t.due} ms is still pending at ${now} ms`);
        pending.delete(t);
        t.fn(...t.a);
      }
    },
  };
}

// exclusiveCondition rewrites the shared FEEL condition into bpmn-engine's
// JavaScript condition; it fails if the shared file no longer has it.
function exclusiveCondition(xml) {
  const feel = /<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">= x &gt; 5<\/bpmn:conditionExpression>/;
  if (!feel.test(xml)) throw new Error('exclusive.bpmn: the condition "= x > 5" was not found to adapt');
  return xml.replace(
    feel,
    '<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression" language="javascript">next(null, environment.variables.x &gt; 5)</bpmn:conditionExpression>',
  );
}

const keyOf = (i) => `k${i}`;
const workloads = [
  { name: 'straight', file: 'straight.bpmn' },
  { name: 'parallel', file: 'parallel.bpmn' },
  { name: 'exclusive', file: 'exclusive.bpmn', adapt: exclusiveCondition, vars: (i) => ({ x: i % 2 === 0 ? 3 : 7 }) },
  { name: 'message', file: 'message.bpmn', vars: (i) => ({ key: keyOf(i) }), park: 'wait_go', message: 'Message_go' },
  { name: 'timer', file: 'timer.bpmn', park: 'wait_1s', advance: 1000 },
];

// publish delivers message to the execution waiting under key: the
// correlation bpmn-engine leaves to its user.
function publish(byKey, message, key) {
  const execution = byKey.get(key);
  if (!execution) throw new Error(`no instance waits for ${message} with key ${key}`);
  byKey.delete(key);
  execution.signal({ id: message });
}

async function sourceContext(xml) {
  const moddle = await new BpmnModdle().fromXML(xml);
  return Serializer(moddle, TypeResolver(elements));
}

// playOne runs instance i to completion: start, and for message and timer
// wait until parked, then signal or advance; it fails unless the engine
// reports the end of the execution.
async function playOne(ctx, w, i, byKey) {
  const clock = w.advance ? virtualClock() : null;
  const engine = new Engine({
    name: `${w.name}-${i}`,
    sourceContext: ctx,
    variables: w.vars?.(i),
    ...(clock && { timers: new elements.Timers({ setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout }) }),
  });
  const ended = engine.waitFor('end');
  ended.catch(() => {});
  const execution = await engine.execute();
  if (w.park) {
    if (!execution.getPostponed().some((a) => a.id === w.park)) {
      throw new Error(`instance ${i} is not parked on ${w.park} (state ${execution.state})`);
    }
    if (w.message) {
      byKey.set(keyOf(i), execution);
      publish(byKey, w.message, keyOf(i));
    } else {
      clock.advance(w.advance);
    }
  }
  let timeout;
  await Promise.race([
    ended,
    new Promise((_, reject) => {
      timeout = setTimeout(() => reject(new Error(`instance ${i} did not end within ${INSTANCE_TIMEOUT_MS} ms`)), INSTANCE_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timeout));
  if (engine.state !== 'idle' || execution.isRunning || execution.stopped) {
    throw new Error(`instance ${i} did not complete (state ${engine.state})`);
  }
}

async function run(ctx, w, n, firstI) {
  const lats = new Float64Array(n);
  const byKey = new Map();
  const begin = performance.now();
  for (let j = 0; j < n; j++) {
    const s = performance.now();
    await playOne(ctx, w, firstI + j, byKey);
    lats[j] = performance.now() - s;
  }
  return { ms: performance.now() - begin, lats };
}

const resetPeak = () => writeFile('/proc/self/clear_refs', '5').catch(() => {});
function peakRSS() {
  try {
    const m = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) / 1024 : -1;
  } catch {
    return -1;
  }
}

let failed = false;
let nextI = 0;
const only = args.workloads ? args.workloads.split(',') : null;
for (const w of workloads) {
  if (only && !only.includes(w.name)) continue;
  const rec = { kind: 'throughput', host: HOST, peer_version: VERSION, workload: w.name, mode: 'seq', n: 0, runs: 0,
    ips_median: 0, ips_min: 0, ips_max: 0, p50_us: 0, p99_us: 0, allocs_per_instance: -1, bytes_per_instance: -1,
    peak_rss_mb: -1, ok: false };
  if (w.adapt) rec.adapted = 'condition as a JavaScript script';
  try {
    let xml = await readFile(resolve(sharedDir, w.file), 'utf8');
    if (w.adapt) xml = w.adapt(xml);
    const ctx = await sourceContext(xml);
    const warm = fixedN ? Math.min(WARMUP_N, fixedN) : WARMUP_N;
    const wr = await run(ctx, w, warm, nextI);
    nextI += warm;
    const n = Math.min(MAX_N, fixedN || Math.max(MIN_N, Math.floor((warm / wr.ms) * RUN_MS)));
    await resetPeak();
    const rates = [];
    const lats = [];
    const cpu0 = process.cpuUsage();
    for (let r = 0; r < RUNS; r++) {
      const res = await run(ctx, w, n, nextI);
      nextI += n;
      rates.push(n / (res.ms / 1000));
      for (const l of res.lats) lats.push(l);
    }
    rates.sort((a, b) => a - b);
    lats.sort((a, b) => a - b);
    const pct = (p) => lats[Math.max(0, Math.min(lats.length - 1, Math.round(p * lats.length) - 1))] * 1000;
    Object.assign(rec, { n, runs: RUNS, ips_median: rates[RUNS >> 1], ips_min: rates[0], ips_max: rates[RUNS - 1],
      p50_us: pct(0.5), p99_us: pct(0.99), peak_rss_mb: peakRSS(), ok: true });
    const cpu = process.cpuUsage(cpu0);
    rec.cpu_us_per_instance = (cpu.user + cpu.system) / (RUNS * n);
  } catch (err) {
    failed = true;
    rec.error = String(err?.stack ?? err);
  }
  log(`peer    ${w.name.padEnd(10)} seq  ${rec.ips_median.toFixed(0).padStart(10)} inst/s  p50 ${rec.p50_us.toFixed(1).padStart(8)}µs  p99 ${rec.p99_us.toFixed(1).padStart(8)}µs  cpu ${(rec.cpu_us_per_instance ?? 0).toFixed(1).padStart(8)}µs/inst  ${rec.error ?? ''}`);
  out(rec);
}
process.exitCode = failed ? 1 : 0;
