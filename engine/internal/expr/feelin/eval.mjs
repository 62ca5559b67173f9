// Evaluates FEEL expressions with feelin, an independent implementation,
// for the differential test (../feelin_test.go). Reads one JSON object a
// line from stdin, {"id", "expr", "vars"}, and writes one a line to stdout,
// {"id", "value"} or {"id", "error"}; values as JSON (a temporal value as
// its text, a range or function as null, as flowtrack's Eval has them).
import { evaluate } from 'feelin';
import { createInterface } from 'node:readline';

function plain(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'function') return null;
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object') {
    if (typeof v.toJSON === 'function' || v.constructor?.name?.startsWith('Plain') || v.constructor?.name === 'ZonedDateTime' || v.constructor?.name === 'Duration') {
      return { '@text': String(v) };
    }
    if ('start included' in v && 'end included' in v) return { '@range': true };
    const out = {};
    for (const [k, e] of Object.entries(v)) out[k] = plain(e);
    return out;
  }
  return { '@unknown': String(v) };
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  const { id, expr, vars } = JSON.parse(line);
  let out;
  try {
    const r = evaluate(expr, vars ?? {});
    out = { id, value: plain(r.value) };
  } catch (err) {
    out = { id, error: String(err?.message ?? err) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
