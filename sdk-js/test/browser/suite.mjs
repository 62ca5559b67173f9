// The SDK's own test files, as they run under node --test, for a browser
// page or a Web Worker: importing them registers their tests (node:test,
// node:assert and node:fs are the shims of shim/, see vite.config.mjs), and
// run runs them one after another.

import '../engine.test.mjs';
import '../boundary.test.mjs';
import '../bad-input.test.mjs';
import { registered } from './shim/node-test.mjs';

/** run runs every registered test and returns one result per test. */
export async function run() {
  const results = [];
  for (const t of registered()) {
    if (t.skip) {
      results.push({ name: t.name, status: 'skip', why: String(t.skip) });
      continue;
    }
    const context = { name: t.name, skipped: undefined, skip: (why = 'skipped') => (context.skipped = why) };
    try {
      await t.fn(context);
      results.push(context.skipped === undefined ? { name: t.name, status: 'pass' } : { name: t.name, status: 'skip', why: String(context.skipped) });
    } catch (err) {
      results.push({ name: t.name, status: 'fail', error: `${err?.stack ?? err}` });
    }
  }
  return results;
}
