// The cross-surface bad-input table (conformance/testdata/bad-input.json),
// which the Go tests send through the native engine and the Go host: each
// case must fail here with the same code and the code's error class.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { errorFromData } from '../dist/contract.js';
import { Engine, FlowtrackError } from '../dist/index.js';
const table = JSON.parse(readFileSync(new URL('../../conformance/testdata/bad-input.json', import.meta.url), 'utf8'));

// value turns a {"$value": name} marker into the value it names.
function value(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  switch (v.$value) {
    case 'nan':
      return NaN;
    case 'infinity':
      return Infinity;
    case 'bigint':
      return 10n ** 30n;
    case 'function':
      return () => 1;
    case 'cycle': {
      const cycle = {};
      cycle.self = cycle;
      return cycle;
    }
    case 'deep': {
      let deep = 1;
      for (let i = 0; i < 65; i++) deep = [deep];
      return deep;
    }
  }
  return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, value(e)]));
}

// stacked says what is stacked in an error message, or '' when it reads as
// a plain sentence, by the rules of the Go tests' stacked
// (conformance/bad_input_test.go): a package prefix only opens it, no part
// repeats the part before it, no line is named twice.
function stacked(msg) {
  const prefixes = [...msg.matchAll(/flowtrack(?: [a-z]+)?: /g)];
  if (prefixes.length > 1 || (prefixes.length === 1 && prefixes[0].index !== 0)) return 'the package prefix is not (only) at the start';
  const parts = msg.split(': ');
  for (let i = 1; i < parts.length; i++) {
    if (parts[i] === parts[i - 1] || parts[i - 1].endsWith(` ${parts[i]}`)) return `"${parts[i]}" is repeated`;
  }
  const lines = msg.match(/line \d+/g) ?? [];
  return new Set(lines).size === lines.length ? '' : 'a line is named twice';
}

const calls = {
  deploy: (e, a) => e.deploy(a.xml, 'bad.bpmn'),
  start: (e, a) => e.start(a.processId, value(a.variables)),
  publishMessage: (e, a) => e.publishMessage(value(a.message)),
  broadcastSignal: (e, a) => e.broadcastSignal(a.name, value(a.variables)),
  completeJob: (e, a) => e.completeJob(a.jobKey, value(a.variables)),
  failJob: (e, a) => e.failJob(a.jobKey, a.retries),
  throwError: (e, a) => e.throwError(a.jobKey, a.errorCode, undefined, value(a.variables)),
  advanceTime: (e, a) => e.advanceTime(a.ms),
  jobs: (e, a) => e.jobs(a.filter),
};

describe('bad input gets the same code as in Go', () => {
  for (const c of table.cases) {
    it(c.name, async (t) => {
      if (c.skip?.sdk) return t.skip(c.skip.sdk);
      const e = await Engine.create();
      try {
        const err = await calls[c.call](e, c.args).then(
          () => null,
          (x) => x,
        );
        assert.ok(err instanceof FlowtrackError, `${c.name}: want ${c.code}, got ${err}`);
        assert.equal(err.code, c.code, `${c.name}: ${err.message}`);
        const C = errorFromData({ code: c.code, message: '' }).constructor;
        assert.notEqual(C, FlowtrackError, `${c.code} has a class of its own`);
        assert.ok(err instanceof C, `${c.name}: ${err.name} is not the class of ${c.code}`);
        if (c.code === 'DEPLOY_FAILED') assert.ok(err.problems.length > 0, 'a deploy error lists its problems');
        assert.equal(stacked(err.message), '', err.message);
        assert.ok(await e.jobs(), 'the engine stays usable');
      } finally {
        await e.close();
      }
    });
  }
});
