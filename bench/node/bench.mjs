// flowtrack benchmark driver for the JS SDK in Node: plays the same
// workloads as bench/workload (Go) through the built SDK (sdk-js/dist) and
// prints one JSON line per measurement on stdout, progress on stderr.
//
//   node bench/node/bench.mjs --shared DIR --own DIR [--workloads a,b] [--modes seq,conc] [--fixed-n N]
//
// `make bench` runs it through flowbench all. The SDK serialises calls on
// one module instance, so "100 in flight" means 100 instances live at once
// with their calls interleaved, not parallel execution.

import { readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { brotliCompressSync, constants as zlibConstants } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = resolve(here, '../../sdk-js/dist');

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const sharedDir = args.shared ?? resolve(here, '../../../shared/workloads');
const ownDir = args.own ?? resolve(here, '../workloads');
const fixedN = Number(args['fixed-n'] ?? 0) || 0;
const modes = (args.modes ?? 'seq,conc').split(',');
const IN_FLIGHT = 100;
const RUNS = 5;
const RUN_MS = 300;
const MIN_N = 200;
const MAX_N = 50_000;
const WARMUP_N = 200;

const out = (rec) => process.stdout.write(JSON.stringify(rec) + '\n');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

// Cold start first, before anything else warms the module: the SDK's own
// create (read + compile + instantiate + init), then compile alone, then
// create from an already compiled module.
const t0 = performance.now();
const { Engine } = await import(resolve(sdkDir, 'index.js'));
const importMs = performance.now() - t0;
let t1 = performance.now();
const first = await Engine.create();
const firstCreateMs = performance.now() - t1;
first.close();
const wasmBytes = await readFile(resolve(sdkDir, 'flowtrack.wasm'));
t1 = performance.now();
const compiled = await WebAssembly.compile(wasmBytes);
const compileMs = performance.now() - t1;
const creates = [];
for (let i = 0; i < 5; i++) {
  t1 = performance.now();
  const e = await Engine.create({ wasm: compiled });
  creates.push(performance.now() - t1);
  e.close();
}
creates.sort((a, b) => a - b);
out({ kind: 'cold', host: 'node', variant: 'import SDK', ms: importMs });
out({ kind: 'cold', host: 'node', variant: 'first Engine.create (read+compile+init)', ms: firstCreateMs });
out({ kind: 'cold', host: 'node', variant: 'WebAssembly.compile', ms: compileMs });
out({ kind: 'cold', host: 'node', variant: 'Engine.create from compiled module', ms: creates[2] });
// Brotli beside the Go driver's gzip -9: what a server that serves .br sends.
const br = brotliCompressSync(wasmBytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: wasmBytes.length } });
out({ kind: 'size', host: 'wasm', variant: 'brotli 11', bytes: br.length });

const key = (i) => `k${i}`;
const workloads = [
  { name: 'straight', file: 'straight.bpmn', shared: true, process: 'straight' },
  { name: 'parallel', file: 'parallel.bpmn', shared: true, process: 'parallel' },
  { name: 'exclusive', file: 'exclusive.bpmn', shared: true, process: 'exclusive', vars: (i) => ({ x: i % 2 === 0 ? 3 : 7 }) },
  {
    name: 'message', file: 'message.bpmn', shared: true, process: 'message',
    vars: (i) => ({ key: key(i) }),
    script: (e, ref, i) => publish(e, ref, 'go', key(i)),
  },
  { name: 'timer', file: 'timer.bpmn', shared: true, process: 'timer', advance: 1000 },
  { name: 'inclusive', file: 'inclusive.bpmn', process: 'inclusive', vars: () => ({ x: 4 }) },
  {
    name: 'jobs', file: 'jobs.bpmn', process: 'jobs',
    script: async (e, ref) => {
      for (let j = 0; j < 10; j++) await completeJob(e, ref, 'work');
    },
  },
  { name: 'timer1h', file: 'timer1h.bpmn', process: 'timer1h', advance: 3_600_000 },
  {
    name: 'order', file: 'order.bpmn', process: 'order',
    vars: (i) => ({ amount: i % 2 === 1 ? 500 : 50, orderId: key(i) }),
    script: async (e, ref, i) => {
      await completeJob(e, ref, 'validate');
      if (i % 2 === 1) await publish(e, ref, 'payment', key(i));
      await completeJob(e, ref, 'pack');
    },
  },
];

// A ref is what the driver knows of an instance: start's result, updated
// by each completeJob and publishMessage result (state and activatable
// jobs), so that a script asks for jobs or state only when a call did not
// report the instance.
async function completeJob(e, ref, type) {
  let job = ref.jobs?.find((j) => j.type === type);
  if (!job) {
    [job] = await e.jobs({ type, instanceKey: ref.instanceKey });
    if (!job) throw new Error(`instance ${ref.instanceKey} has no ${type} job`);
  }
  const res = await e.completeJob(job.key);
  ref.state = res.state;
  ref.jobs = res.jobs;
}

async function publish(e, ref, name, correlationKey) {
  const res = await e.publishMessage({ name, correlationKey });
  const reached = res.instances?.find((p) => p.instanceKey === ref.instanceKey);
  ref.state = reached?.state;
  ref.jobs = reached?.jobs;
}

// A target is one engine. It registers no listener, like any user that
// does not listen, so the module encodes no events. Every call settles, so
// completion is read from start's result or, after later steps, with one
// state call: the counterpart of the native driver's Wait.
async function target(xml) {
  const engine = await Engine.create({ wasm: compiled });
  await engine.deploy(xml);
  const finish = async (k, state) => {
    const st = state ?? (await engine.state(k));
    if (st !== 'completed') throw new Error(`instance ${k} did not complete (state ${st})`);
  };
  return { engine, finish };
}

async function playOne(t, w, i, advance) {
  const ref = await t.engine.start(w.process, w.vars?.(i));
  if (w.script) await w.script(t.engine, ref, i);
  if (advance && w.advance) {
    await t.engine.advanceTime(w.advance);
    ref.state = undefined;
  }
  await t.finish(ref.instanceKey, ref.state === 'completed' ? ref.state : undefined);
}

async function pool(n, fn) {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, n) }, worker));
}

async function run(t, w, mode, n, firstI) {
  const lats = new Float64Array(n);
  const begin = performance.now();
  if (mode === 'seq') {
    for (let j = 0; j < n; j++) {
      const s = performance.now();
      await playOne(t, w, firstI + j, true);
      lats[j] = performance.now() - s;
    }
  } else if (!w.advance) {
    await pool(n, async (j) => {
      const s = performance.now();
      await playOne(t, w, firstI + j, false);
      lats[j] = performance.now() - s;
    });
  } else {
    // Timers: a batch starts, waits on its timers, the clock moves once.
    for (let lo = 0; lo < n; lo += IN_FLIGHT) {
      const hi = Math.min(n, lo + IN_FLIGHT);
      const starts = [];
      const keys = await Promise.all(
        Array.from({ length: hi - lo }, async (_, k) => {
          starts[k] = performance.now();
          return (await t.engine.start(w.process, w.vars?.(firstI + lo + k))).instanceKey;
        }),
      );
      await t.engine.advanceTime(w.advance);
      for (let k = 0; k < keys.length; k++) {
        await t.finish(keys[k]);
        lats[lo + k] = performance.now() - starts[k];
      }
    }
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
  const xml = await readFile(resolve(w.shared ? sharedDir : ownDir, w.file), 'utf8');
  for (const mode of modes) {
    const rec = { kind: 'throughput', host: 'node', workload: w.name, mode, n: 0, runs: 0, ips_median: 0, ips_min: 0, ips_max: 0,
      p50_us: 0, p99_us: 0, allocs_per_instance: -1, bytes_per_instance: -1, peak_rss_mb: -1, ok: false };
    let t;
    try {
      t = await target(xml);
      const warm = fixedN ? Math.min(WARMUP_N, fixedN) : WARMUP_N;
      const wr = await run(t, w, mode, warm, nextI);
      nextI += warm;
      let n = fixedN;
      if (!n) {
        n = Math.floor(((warm / wr.ms) * RUN_MS) / IN_FLIGHT) * IN_FLIGHT;
        n = Math.max(MIN_N, Math.min(MAX_N, n));
      }
      await resetPeak();
      const rates = [];
      const lats = [];
      const cpu0 = process.cpuUsage();
      for (let r = 0; r < RUNS; r++) {
        const res = await run(t, w, mode, n, nextI);
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
    } finally {
      t?.engine.close();
    }
    log(`node    ${w.name.padEnd(10)} ${mode.padEnd(4)} ${rec.ips_median.toFixed(0).padStart(10)} inst/s  p50 ${rec.p50_us.toFixed(1).padStart(8)}µs  p99 ${rec.p99_us.toFixed(1).padStart(8)}µs  cpu ${(rec.cpu_us_per_instance ?? 0).toFixed(1).padStart(8)}µs/inst  ${rec.error ?? ''}`);
    out(rec);
  }
}
process.exitCode = failed ? 1 : 0;
