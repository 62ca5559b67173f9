// Throughput and cold start of the SDK in Node, beside the native engine.
//
//   node bench/bench.mjs [instances]      (after npm run build; `make bench-sdk`)
//
// straight-10 (start -> 10 tasks -> end) and message (start -> message catch
// keyed by a variable -> end, published right after start): one engine, one
// instance per iteration, run to completion, median of 5 rounds. Native
// figures come from the Go benchmark BenchmarkHost_Workloads/*/native (same
// graphs); cold start is Engine.create in a fresh Node process.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Engine } from '../dist/index.js';

const n = Number(process.argv[2] ?? 2000);
const fixture = (f) => readFileSync(new URL(`../test/fixtures/${f}`, import.meta.url), 'utf8');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(file, process, message) {
  const e = await Engine.create();
  await e.deploy(fixture(file), file);
  let seq = 0;
  const one = async () => {
    const key = `k${seq++}`;
    const { instanceKey, state } = await e.start(process, { key });
    if (message) {
      await e.publishMessage({ name: 'go', correlationKey: key });
    } else if (state !== 'completed') throw new Error(`instance ${instanceKey} ${state}`);
  };
  for (let i = 0; i < 200; i++) await one(); // warm up the JIT
  const rates = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await one();
    rates.push(n / ((performance.now() - t0) / 1000));
  }
  if (message) {
    const [last] = (await e.history(seq + 1).catch(() => [])).slice(-1);
    void last;
  }
  e.close();
  return median(rates);
}

function nativeRates() {
  try {
    const out = execFileSync('go', ['test', '-run', '^$', '-bench', 'BenchmarkHost_Workloads/(Straight10|Message)/native', '-benchtime', '3000x', '-count', '3', './host'], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const by = {};
    for (const m of out.matchAll(/BenchmarkHost_Workloads\/(\w+)\/native\S*\s+\d+\s+([\d.]+) ns\/op/g)) (by[m[1]] ??= []).push(1e9 / Number(m[2]));
    return { straight: by.Straight10 && median(by.Straight10), message: by.Message && median(by.Message) };
  } catch {
    return {};
  }
}

function coldStart() {
  const script = `const t0 = performance.now(); const { Engine } = await import(${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)});
const e = await Engine.create(); const t1 = performance.now(); await Engine.create(); const t2 = performance.now();
console.log(JSON.stringify({ cold: t1 - t0, warm: t2 - t1 }));`;
  const runs = [];
  for (let i = 0; i < 5; i++) runs.push(JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })));
  return { cold: median(runs.map((r) => r.cold)), warm: median(runs.map((r) => r.warm)) };
}

const native = nativeRates();
const rows = [
  ['straight-10', await measure('straight.bpmn', 'straight', false), native.straight],
  ['message', await measure('message.bpmn', 'message', true), native.message],
];
console.log(`flowtrack SDK in Node ${process.version}, ${n} instances x 5 rounds (median)`);
console.log('workload       SDK inst/s   native inst/s   native/SDK');
for (const [name, sdk, nat] of rows) {
  console.log(`${name.padEnd(14)} ${sdk.toFixed(0).padStart(10)}   ${nat ? nat.toFixed(0).padStart(13) : '            -'}   ${nat ? (nat / sdk).toFixed(1) + 'x' : '-'}`);
}
const cs = coldStart();
console.log(`cold start (import + compile + instantiate + init, fresh process): ${cs.cold.toFixed(0)} ms; next Engine.create in the same process: ${cs.warm.toFixed(0)} ms`);
