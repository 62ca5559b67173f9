// node:test for the browser run of the SDK's test files: describe and it
// register the tests; run (suite.mjs) runs them in order, as node --test
// does for one file, passing each a context whose skip marks it skipped.
// Only what the SDK's tests use is here.

const tests = [];
const stack = [];

export function describe(name, options, fn) {
  if (typeof options === 'function') [fn, options] = [options, {}];
  stack.push({ name, skip: options?.skip });
  try {
    fn();
  } finally {
    stack.pop();
  }
}

export function it(name, options, fn) {
  if (typeof options === 'function') [fn, options] = [options, {}];
  const skip = options?.skip || stack.find((s) => s.skip)?.skip;
  tests.push({ name: [...stack.map((s) => s.name), name].join(' > '), fn, skip });
}

export const test = it;

/** registered returns the tests the imported files registered. */
export function registered() {
  return tests;
}
