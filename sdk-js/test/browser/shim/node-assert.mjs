// node:assert/strict for the browser run of the SDK's test files: the
// assertions they use, with the strict (Object.is, deep strict) semantics.

class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AssertionError';
  }
}

const show = (v) => {
  try {
    return typeof v === 'bigint' ? `${v}n` : JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
};

function fail(message, fallback) {
  if (message instanceof Error) throw message;
  throw new AssertionError(message ? `${message}: ${fallback}` : fallback);
}

function deepStrictEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof RegExp) return String(a) === String(b);
  if (a instanceof Map || a instanceof Set) {
    if (a.size !== b.size) return false;
    return deepStrictEqual([...a], [...b]);
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepStrictEqual(a[k], b[k]));
}

// matches reports whether err satisfies expected: a class, a RegExp
// (tested against the message), an object of properties, or a predicate.
function matches(err, expected) {
  if (expected === undefined) return true;
  if (expected instanceof RegExp) return expected.test(String(err?.message ?? err));
  if (typeof expected === 'function') {
    if (expected.prototype !== undefined && err instanceof expected) return true;
    if (Error.isPrototypeOf(expected) || expected === Error) return false;
    return expected(err) === true;
  }
  return Object.entries(expected).every(([k, v]) => (v instanceof RegExp ? v.test(err?.[k]) : deepStrictEqual(err?.[k], v)));
}

const assert = (value, message) => ok(value, message);

export function ok(value, message) {
  if (!value) fail(message, `expected a truthy value, got ${show(value)}`);
}
export function equal(actual, expected, message) {
  if (!Object.is(actual, expected)) fail(message, `${show(actual)} !== ${show(expected)}`);
}
export function notEqual(actual, expected, message) {
  if (Object.is(actual, expected)) fail(message, `${show(actual)} === ${show(expected)}`);
}
export function deepEqual(actual, expected, message) {
  if (!deepStrictEqual(actual, expected)) fail(message, `${show(actual)} is not deep-equal to ${show(expected)}`);
}
export function match(string, re, message) {
  if (!re.test(string)) fail(message, `${show(string)} does not match ${re}`);
}
export function throws(fn, expected, message) {
  if (typeof expected === 'string') [message, expected] = [expected, undefined];
  try {
    fn();
  } catch (err) {
    if (!matches(err, expected)) fail(message, `threw the wrong error: ${err}`);
    return;
  }
  fail(message, 'did not throw');
}
export async function rejects(promiseOrFn, expected, message) {
  if (typeof expected === 'string') [message, expected] = [expected, undefined];
  try {
    await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn);
  } catch (err) {
    if (!matches(err, expected)) fail(message, `rejected with the wrong error: ${err}`);
    return;
  }
  fail(message, 'did not reject');
}

Object.assign(assert, { ok, equal, notEqual, deepEqual, match, throws, rejects, strictEqual: equal, deepStrictEqual: deepEqual, AssertionError });
export default assert;
export { AssertionError };
