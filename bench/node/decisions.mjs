// flowtrack decision benchmark for the JS SDK in Node: evaluations per
// second of the models host's BenchmarkEvaluateDecision (wazero) and
// engine/internal/decision's BenchmarkEvaluate (native) measure, through
// the built SDK (sdk-js/dist), one evaluateDecision call per evaluation:
// a 100-rule, 5-input table (engine/testdata/table100.dmn, hit policies
// FIRST and COLLECT SUM) and a small DRD (discount.dmn's price, requiring
// a FIRST table). Prints one JSON line per case on stdout, a table on
// stderr.
//
//   node bench/node/decisions.mjs [--runs 5] [--run-ms 500] [--warmup-ms 3000]
//
// `make bench` runs it after the Go benchmarks.

import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const RUNS = Number(args.runs ?? 5);
const RUN_MS = Number(args['run-ms'] ?? 500);
const WARMUP = 200;
// WARMUP_MS of evaluations come first: V8 compiles the module's hot
// functions with its optimizing tier in the background, and a run before
// that measures the baseline compiler.
const WARMUP_MS = Number(args['warmup-ms'] ?? 3000);

const { Engine } = await import(resolve(root, 'sdk-js/dist/index.js'));
const engine = await Engine.create();
for (const f of ['table100.dmn', 'discount.dmn']) await engine.deploy(await readFile(resolve(root, 'engine/testdata', f), 'utf8'), f);

// Rule 60 of 100 is the first (and only) rule these inputs match.
const inputs = { x1: 66, x2: 79, x3: 2, x4: 25, x5: 1 };
const cases = [
  { name: 'table100-first', decision: 'first', vars: inputs, check: (r) => r.output === 60 && r.matchedRules.length === 1 },
  { name: 'table100-collect-sum', decision: 'sum', vars: inputs, check: (r) => r.output === 60 },
  { name: 'drd', decision: 'price', vars: { customer: 'gold', 'order amount': 2000 }, check: (r) => r.output === 1700 },
];

for (const t0 = performance.now(); performance.now() - t0 < WARMUP_MS; ) {
  for (const c of cases) await engine.evaluateDecision(c.decision, c.vars);
}

for (const c of cases) {
  const first = await engine.evaluateDecision(c.decision, c.vars);
  if (!c.check(first)) throw new Error(`${c.name}: unexpected result ${JSON.stringify(first)}`);
  for (let i = 0; i < WARMUP; i++) await engine.evaluateDecision(c.decision, c.vars);
  const rates = [];
  for (let r = 0; r < RUNS; r++) {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < RUN_MS) {
      await engine.evaluateDecision(c.decision, c.vars);
      n++;
      t = performance.now();
    }
    rates.push((n * 1000) / (t - t0));
  }
  rates.sort((a, b) => a - b);
  const rec = { kind: 'decision', host: 'node', case: c.name, runs: RUNS, evals_per_s_median: rates[RUNS >> 1], evals_per_s_min: rates[0], evals_per_s_max: rates[RUNS - 1] };
  process.stdout.write(JSON.stringify(rec) + '\n');
  process.stderr.write(`node  ${c.name.padEnd(22)} ${rec.evals_per_s_median.toFixed(0).padStart(8)} evals/s (min ${rec.evals_per_s_min.toFixed(0)}, max ${rec.evals_per_s_max.toFixed(0)})\n`);
}
engine.close();
