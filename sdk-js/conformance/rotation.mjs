// The Node host of the Go conformance rotation (conformance/node.go): one
// long-lived process that holds SDK engines and drives them for the Go
// test, one JSON request per stdin line, one JSON reply per stdout line,
// in order. Only the SDK's public API is used (dist/index.js).
//
// Request:  {"id": 1, "op": "<op>", "engine": 2, ...fields}
// Reply:    {"id": 1, "result": ...}  or  {"id": 1, "error": {"code", "message", ...}}
//
// An engine's error is its FlowtrackError as the module wrote it (code,
// message, elementId, processId, problems); a line this script cannot
// act on (not JSON, no id, unknown op or engine, a field missing or of the
// wrong type) gets {"code": "PROTOCOL", "message"} naming what was wrong.
// Bytes (state documents, BPMN files) travel as base64; durations as
// milliseconds; numbers in variables keep every digit both ways (a number
// no double holds is a Decimal here).
//
// Ops (fields; result):
//   restore          state                          {engine}: a new engine in that state
//   checkpoint       engine                         {state}
//   close            engine                         {}
//   deploy           engine, name, bpmn             {}
//   start            engine, processId, variables?  {instanceKey}
//   publishMessage   engine, name, correlationKey?, variables?, ttlMs?, messageId?   {}
//   broadcastSignal  engine, name, variables?       {}
//   advanceTime      engine, ms                     {}
//   nextDeadline     engine                         {deadline: RFC 3339 or null}
//   jobs             engine                         Job[]
//   activateJobs     engine, type, timeoutMs, maxJobs   Job[]
//   completeJob      engine, jobKey, variables?     {}
//   failJob          engine, jobKey, retries, message?, backoffMs?   {}
//   throwError       engine, jobKey, code, message?, variables?      {}
//   incidents        engine                         Incident[]
//   resolveIncident  engine, incidentKey            {}
//   setVariables     engine, instanceKey, variables, scope?, local?  {}
//   modifyInstance   engine, instanceKey, activate?, terminate?     {}
//   cancel           engine, instanceKey            {}
//   activateAdHoc    engine, instanceKey, elementId, elements       {}
//   snapshot         engine, instanceKey            {instance, history, tokens}
//
// The process ends when stdin does, closing its engines.

import { createInterface } from 'node:readline';
import { Decimal, Engine, FlowtrackError } from '../dist/index.js';

/** ProtocolError is a request this script cannot act on. */
class ProtocolError extends Error {}

const engines = new Map();
let nextEngine = 1;

// want returns req[field] when it has the type, else throws a ProtocolError
// naming the field; an optional field may be absent.
function want(req, field, type, optional = false) {
  const v = req[field];
  if (v === undefined && optional) return undefined;
  const ok = type === 'array' ? Array.isArray(v) : type === 'object' ? v !== null && typeof v === 'object' && !Array.isArray(v) : typeof v === type;
  if (!ok) throw new ProtocolError(`${req.op}: field ${JSON.stringify(field)} ${v === undefined ? 'is missing' : 'is not'} ${v === undefined ? `(want ${type})` : `a ${type}`}`);
  return v;
}

function engineOf(req) {
  const id = want(req, 'engine', 'number');
  const e = engines.get(id);
  if (!e) throw new ProtocolError(`${req.op}: no engine ${id}`);
  return e;
}

const bytes = (req, field) => new Uint8Array(Buffer.from(want(req, field, 'string'), 'base64'));
const vars = (req) => want(req, 'variables', 'object', true);

const ops = {
  async restore(req) {
    const engine = await Engine.create({ state: bytes(req, 'state') });
    engines.set(nextEngine, engine);
    return { engine: nextEngine++ };
  },
  async checkpoint(req) {
    return { state: Buffer.from(await engineOf(req).checkpoint()).toString('base64') };
  },
  async close(req) {
    const e = engineOf(req);
    engines.delete(req.engine);
    await e.close();
    return {};
  },
  async deploy(req) {
    await engineOf(req).deploy(bytes(req, 'bpmn'), want(req, 'name', 'string'));
    return {};
  },
  async start(req) {
    const { instanceKey } = await engineOf(req).start(want(req, 'processId', 'string'), vars(req));
    return { instanceKey };
  },
  async publishMessage(req) {
    const m = { name: want(req, 'name', 'string'), correlationKey: want(req, 'correlationKey', 'string', true) ?? '' };
    if (req.variables !== undefined) m.variables = vars(req);
    if (want(req, 'ttlMs', 'number', true)) m.ttl = req.ttlMs;
    if (want(req, 'messageId', 'string', true)) m.messageId = req.messageId;
    await engineOf(req).publishMessage(m);
    return {};
  },
  async broadcastSignal(req) {
    await engineOf(req).broadcastSignal(want(req, 'name', 'string'), vars(req));
    return {};
  },
  async advanceTime(req) {
    await engineOf(req).advanceTime(want(req, 'ms', 'number'));
    return {};
  },
  async nextDeadline(req) {
    return { deadline: engineOf(req).nextDeadline?.toISOString() ?? null };
  },
  jobs: (req) => engineOf(req).jobs(),
  activateJobs: (req) =>
    engineOf(req).activateJobs({ type: want(req, 'type', 'string'), worker: 'conformance', timeout: want(req, 'timeoutMs', 'number'), maxJobs: want(req, 'maxJobs', 'number') }),
  async completeJob(req) {
    await engineOf(req).completeJob(want(req, 'jobKey', 'number'), vars(req));
    return {};
  },
  async failJob(req) {
    const backoff = want(req, 'backoffMs', 'number', true);
    await engineOf(req).failJob(want(req, 'jobKey', 'number'), want(req, 'retries', 'number'), want(req, 'message', 'string', true) ?? '', backoff ? { retryBackoff: backoff } : {});
    return {};
  },
  async throwError(req) {
    await engineOf(req).throwError(want(req, 'jobKey', 'number'), want(req, 'code', 'string'), want(req, 'message', 'string', true) ?? '', vars(req));
    return {};
  },
  incidents: (req) => engineOf(req).incidents(),
  async resolveIncident(req) {
    await engineOf(req).resolveIncident(want(req, 'incidentKey', 'number'));
    return {};
  },
  async setVariables(req) {
    const options = { local: want(req, 'local', 'boolean', true) ?? false };
    if (want(req, 'scope', 'number', true)) options.scope = req.scope;
    await engineOf(req).setVariables(want(req, 'instanceKey', 'number'), want(req, 'variables', 'object'), options);
    return {};
  },
  async modifyInstance(req) {
    const activate = want(req, 'activate', 'array', true) ?? [];
    const terminate = want(req, 'terminate', 'array', true) ?? [];
    await engineOf(req).modifyInstance(want(req, 'instanceKey', 'number'), { activate, terminate });
    return {};
  },
  async cancel(req) {
    await engineOf(req).cancel(want(req, 'instanceKey', 'number'));
    return {};
  },
  async activateAdHoc(req) {
    await engineOf(req).activateAdHoc(want(req, 'instanceKey', 'number'), want(req, 'elementId', 'string'), want(req, 'elements', 'array'));
    return {};
  },
  async snapshot(req) {
    const e = engineOf(req);
    const key = want(req, 'instanceKey', 'number');
    const instance = await e.instance(key);
    const done = instance.state !== 'active';
    return { instance, history: await e.history(key), tokens: done ? [] : await e.tokens(key) };
  },
};

// handle answers one request line.
async function handle(line, n) {
  let req;
  try {
    req = parseExact(line);
  } catch (err) {
    return { id: null, error: { code: 'PROTOCOL', message: `line ${n}: not JSON: ${err.message}` } };
  }
  const id = req !== null && typeof req === 'object' && typeof req.id === 'number' ? req.id : null;
  try {
    if (id === null) throw new ProtocolError('no numeric "id"');
    if (typeof req.op !== 'string' || !Object.hasOwn(ops, req.op)) throw new ProtocolError(`unknown op ${JSON.stringify(req.op)}`);
    return { id, result: await ops[req.op](req) };
  } catch (err) {
    if (err instanceof ProtocolError) return { id, error: { code: 'PROTOCOL', message: `line ${n}: ${err.message}` } };
    if (err instanceof FlowtrackError) return { id, error: { ...err, code: err.code, message: err.message } };
    return { id, error: { code: 'NODE', message: `line ${n}: ${err?.stack ?? err}` } };
  }
}

// parseExact is JSON.parse that reads a number no double holds exactly
// (12345678901234567890, 0.1000000000000000000001) as a Decimal of its
// text, as the SDK itself reads the module's output.
function parseExact(text) {
  const token = /\s*(?:([{}[\],:])|("[^"\\]*(?:\\.[^"\\]*)*")|(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false|null))/y;
  let at = 0;
  const next = () => {
    token.lastIndex = at;
    const m = token.exec(text);
    if (!m) throw new SyntaxError(`unexpected ${JSON.stringify(text.slice(at, at + 10) || 'end')} at offset ${at}`);
    at = token.lastIndex;
    return m;
  };
  const expectPunct = (want) => {
    const m = next();
    if (m[1] !== want) throw new SyntaxError(`want ${JSON.stringify(want)} before offset ${at}`);
  };
  const value = (m = next()) => {
    if (m[2] !== undefined) return JSON.parse(m[2]); // checks escapes and control characters
    if (m[3] !== undefined) {
      const n = Number(m[3]);
      return String(n) === m[3] ? n : new Decimal(m[3]); // a Decimal goes to the engine as the same number
    }
    if (m[4] !== undefined) return JSON.parse(m[4]);
    if (m[1] === '[') {
      const a = [];
      let t = next();
      if (t[1] === ']') return a;
      for (;;) {
        a.push(value(t));
        t = next();
        if (t[1] === ']') return a;
        if (t[1] !== ',') throw new SyntaxError(`want "," or "]" before offset ${at}`);
        t = next();
      }
    }
    if (m[1] === '{') {
      const o = {};
      let t = next();
      if (t[1] === '}') return o;
      for (;;) {
        if (t[2] === undefined) throw new SyntaxError(`want a key before offset ${at}`);
        const k = JSON.parse(t[2]);
        expectPunct(':');
        Object.defineProperty(o, k, { value: value(), enumerable: true, writable: true, configurable: true });
        t = next();
        if (t[1] === '}') return o;
        if (t[1] !== ',') throw new SyntaxError(`want "," or "}" before offset ${at}`);
        t = next();
      }
    }
    throw new SyntaxError(`unexpected ${JSON.stringify(m[0].trim())} before offset ${at}`);
  };
  const v = value();
  if (!/^\s*$/.test(text.slice(at))) throw new SyntaxError(`text after the value at offset ${at}`);
  return v;
}

// stringifyExact is JSON.stringify that writes a Decimal as its exact
// number, not as the string its toJSON gives.
function stringifyExact(v) {
  if (v instanceof Decimal) return v.text;
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined || typeof x === 'function' ? 'null' : stringifyExact(x))).join(',')}]`;
  if (v instanceof Date) return JSON.stringify(v);
  if (v !== null && typeof v === 'object') {
    const parts = [];
    for (const [k, x] of Object.entries(v)) if (x !== undefined && typeof x !== 'function') parts.push(`${JSON.stringify(k)}:${stringifyExact(x)}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

// Requests are answered one at a time, in order: a reply never overtakes
// the reply to an earlier line.
let n = 0;
let queue = Promise.resolve();
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  const no = ++n;
  queue = queue.then(async () => process.stdout.write(stringifyExact(await handle(line, no)) + '\n'));
});
lines.on('close', () => {
  queue = queue.then(async () => {
    for (const e of engines.values()) await e.close();
  });
});
