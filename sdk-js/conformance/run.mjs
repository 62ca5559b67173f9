// The SDK's conformance runner: plays the shared scenario corpus
// (conformance/scenarios/*.json, format in conformance/README.md) through the
// JavaScript SDK and produces the same normalized observations as the Go
// kit (conformance/kit.go), so the results compare with the native engine's
// byte for byte after canonical JSON encoding.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { DeployError, Engine } from '../dist/index.js';

/** loadScenarios reads every scenario in dir, ordered by name. */
export function loadScenarios(dir) {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ ...JSON.parse(readFileSync(join(dir, f), 'utf8')), name: f.slice(0, -5), dir }));
}

/** runScenario plays one scenario on a fresh engine: {observations, mismatches} or throws. */
//
// With restoreEachStep, after every step the engine's state is checkpointed
// and the run goes on in a new engine created from it, the old one closed;
// each new engine must write back the very document it was created from.
export async function runScenario(scenario, createEngine = () => Engine.create(), { restoreEachStep = false } = {}) {
  const ru = { engine: await createEngine(), s: scenario, restoreEachStep, insts: new Map(), last: '', started: 0, deployErr: null, res: { observations: [], mismatches: [] } };
  try {
    return await play(ru);
  } finally {
    ru.engine.close();
  }
}

async function restore(ru) {
  const state = await ru.engine.checkpoint();
  const next = await Engine.create({ state });
  const again = await next.checkpoint();
  if (Buffer.compare(Buffer.from(state), Buffer.from(again)) !== 0) {
    next.close();
    throw new Error(`the restored engine writes another document:\n${Buffer.from(again)}\nthan the one it was created from:\n${Buffer.from(state)}`);
  }
  ru.engine.close();
  ru.engine = next;
}

async function play(ru) {
  const s = ru.s;
  if (s.bpmn) await deploy(ru, s.bpmn);
  for (const [i, st] of (s.steps ?? []).entries()) {
    let err = null;
    try {
      await step(ru, i + 1, st);
    } catch (e) {
      err = e;
    }
    const where = `step ${i + 1} (${st.op})`;
    if (st.error && !err) throw new Error(`${where}: succeeded, want error containing ${JSON.stringify(st.error)}`);
    if (st.error && !String(err.message).includes(st.error)) throw new Error(`${where}: error ${JSON.stringify(err.message)} does not contain ${JSON.stringify(st.error)}`);
    if (!st.error && err) throw new Error(`${where}: ${err.message}`, { cause: err });
    if (ru.restoreEachStep && !err) await restore(ru);
  }
  if (s.expect) await expect(ru, 0, s.expect);
  return ru.res;
}

async function deploy(ru, file) {
  ru.deployErr = null;
  try {
    await ru.engine.deploy(readFileSync(join(ru.s.dir, file), 'utf8'), file);
  } catch (err) {
    if (!(err instanceof DeployError)) throw err;
    ru.deployErr = err;
  }
}

function instance(ru, alias) {
  alias ||= ru.last;
  if (!ru.insts.has(alias)) throw new Error(`no instance ${JSON.stringify(alias)} was started`);
  return [ru.insts.get(alias), alias];
}

// Durations as conformance.ParseDuration reads them (no years or months).
const isoDuration = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;
function parseDuration(s) {
  const m = isoDuration.exec(s ?? '');
  if (!m || s === 'P' || s.endsWith('T')) throw new Error(`duration ${JSON.stringify(s)}: want ISO 8601 like PT5M or P1DT2H`);
  const units = [604_800_000, 86_400_000, 3_600_000, 60_000, 1000];
  return units.reduce((ms, u, i) => ms + (m[i + 1] ? Number(m[i + 1]) * u : 0), 0);
}

async function step(ru, idx, st) {
  const e = ru.engine;
  switch (st.op) {
    case 'deploy':
      return deploy(ru, st.file);
    case 'start': {
      const { instanceKey } = await e.start(st.process, st.variables);
      ru.started++;
      const alias = st.as || String(ru.started);
      ru.insts.set(alias, instanceKey);
      ru.last = alias;
      return;
    }
    case 'publishMessage': {
      const m = { name: st.name, correlationKey: st.correlationKey ?? '', variables: st.variables };
      if (st.ttl) m.ttl = parseDuration(st.ttl);
      if (st.messageId) m.messageId = st.messageId;
      return e.publishMessage(m);
    }
    case 'broadcastSignal':
      return e.broadcastSignal(st.name, st.variables);
    case 'advanceTime':
      return e.advanceTime(parseDuration(st.duration));
    case 'cancel':
      return e.cancel(instance(ru, st.instance)[0]);
    case 'activateAdHoc':
      return e.activateAdHoc(instance(ru, st.instance)[0], st.element, st.elements ?? []);
    case 'completeJobs':
    case 'failJob':
    case 'throwError': {
      for (const j of await matchJobs(ru, st)) {
        try {
          if (st.op === 'completeJobs') await e.completeJob(j.key, st.variables);
          else if (st.op === 'failJob') await e.failJob(j.key, st.retries ?? 0, st.message ?? '');
          else await e.throwError(j.key, st.code ?? '', st.message ?? '', st.variables);
        } catch (err) {
          throw new Error(`job ${j.type}@${j.elementId}: ${err.message}`, { cause: err });
        }
      }
      return;
    }
    case 'resolveIncident': {
      let n = 0;
      for (const inc of await e.incidents()) {
        if (st.element && inc.elementId !== st.element) continue;
        await e.resolveIncident(inc.key);
        n++;
      }
      if (n === 0) throw new Error(`no open incident at element ${JSON.stringify(st.element ?? '')}`);
      return;
    }
    case 'expect':
      if (!st.expect) throw new Error('expect step without expect');
      return expect(ru, idx, st.expect);
  }
  throw new Error(`unknown op ${JSON.stringify(st.op)}`);
}

async function matchJobs(ru, st) {
  const jobs = await ru.engine.jobs();
  const inst = st.instance ? instance(ru, st.instance)[0] : 0;
  const out = [];
  for (const j of jobs) {
    if ((st.type && j.type !== st.type) || (st.element && j.elementId !== st.element) || (inst && j.instanceKey !== inst)) continue;
    out.push(j);
    if (st.count > 0 && out.length === st.count) break;
  }
  if (out.length === 0) throw new Error(`no open job matches type ${JSON.stringify(st.type ?? '')} element ${JSON.stringify(st.element ?? '')}`);
  return out;
}

async function expect(ru, idx, e) {
  const obs = await observe(ru, e.instance);
  obs.step = idx;
  ru.res.observations.push(obs);
  const where = idx > 0 ? `step ${idx}` : 'end';
  for (const m of check(e, obs)) ru.res.mismatches.push(`${where}: ${m}`);
}

const byString = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

async function observe(ru, alias) {
  const e = ru.engine;
  const obs = { step: 0 };
  if (ru.deployErr) obs.deployError = { element: ru.deployErr.elementId ?? '', rule: ru.deployErr.problems[0]?.rule ?? ru.deployErr.message };
  const jobInfo = (await e.jobs()).map((j) => ({ type: j.type, element: j.elementId, retries: j.retries, headers: j.headers, errorMessage: j.errorMessage }));
  jobInfo.sort((x, y) => byString(x.element, y.element) || byString(x.type, y.type));
  obs.jobs = jobInfo.map((j) => `${j.type}@${j.element}`).sort(byString); // a multiset, compared sorted as "type@element"
  obs.jobInfo = jobInfo;
  obs.incidents = (await e.incidents()).map((i) => i.elementId).sort(byString);
  if (ru.insts.size === 0 && !alias) return obs;
  const [key, name] = instance(ru, alias);
  const info = await e.instance(key);
  const history = await e.history(key);
  const tokens = await e.tokens(key);
  obs.instance = name;
  obs.state = info.state;
  obs.variables = info.variables;
  obs.events = [];
  obs.completed = [];
  obs.trace = [];
  obs.terminated = [];
  const paths = new Map();
  for (const ev of history) {
    obs.events.push(ev.type);
    obs.trace.push(ev.elementId ? `${ev.type} ${ev.elementId}` : ev.type);
    if (ev.type === 'elementTerminated') obs.terminated.push(ev.elementId);
    if (ev.type !== 'elementLeft') continue;
    obs.completed.push(ev.elementId);
    const id = ev.tokenId ?? 0;
    if (!paths.has(id)) paths.set(id, []);
    paths.get(id).push(ev.elementId);
  }
  obs.completed.sort(byString);
  obs.events.sort(byString);
  obs.paths = sortPaths([...paths.values()]);
  obs.tokens = tokens.map((t) => (t.waiting ? `${t.elementId}:${t.waiting}` : t.elementId)).sort(byString);
  return obs;
}

function sortPaths(p) {
  return p.sort((a, b) => byString(a.join('\0'), b.join('\0')));
}

/** check returns the expectations of e that obs does not meet (conformance.Check). */
export function check(e, obs) {
  const bad = [];
  const q = (v) => JSON.stringify(v);
  if (!e.deployError && obs.deployError) bad.push(`unexpected deploy error: element ${q(obs.deployError.element)}: ${obs.deployError.rule}`);
  else if (e.deployError && !obs.deployError) bad.push(`deploy succeeded, want error at element ${q(e.deployError.element)} with rule containing ${q(e.deployError.rule)}`);
  else if (e.deployError && (obs.deployError.element !== (e.deployError.element ?? '') || !obs.deployError.rule.includes(e.deployError.rule ?? ''))) {
    bad.push(`deploy error: element ${q(obs.deployError.element)} rule ${q(obs.deployError.rule)}, want element ${q(e.deployError.element)} rule containing ${q(e.deployError.rule)}`);
  }
  if (e.state && e.state !== obs.state) bad.push(`state ${q(obs.state)}, want ${q(e.state)}`);
  const multiset = (what, want, got = []) => {
    if (!want) return;
    const w = [...want].sort(byString);
    if (!isDeepStrictEqual(w, got)) bad.push(`${what} ${q(got)}, want ${q(w)}`);
  };
  multiset('completed', e.completed, obs.completed);
  if (e.terminated && !isDeepStrictEqual(e.terminated, obs.terminated ?? [])) {
    bad.push(`terminated ${q(obs.terminated)}, want ${q(e.terminated)} (in this order)`);
  }
  multiset('tokens', e.tokens, obs.tokens);
  multiset('jobs', e.jobs, obs.jobs);
  multiset('incidents', e.incidents, obs.incidents);
  if (e.paths) {
    const w = sortPaths(e.paths.map((p) => [...p]));
    if (!isDeepStrictEqual(w, obs.paths ?? [])) bad.push(`paths ${q(obs.paths)}, want ${q(w)}`);
  }
  const findJob = (el) => obs.jobInfo?.find((j) => j.element === el);
  for (const [el, want] of Object.entries(e.jobHeaders ?? {})) {
    const j = findJob(el);
    if (!j) bad.push(`no open job at ${el}, want headers ${q(want)}`);
    else if (!isDeepStrictEqual(j.headers ?? null, want ?? null)) bad.push(`job at ${el} has headers ${q(j.headers)}, want ${q(want)}`);
  }
  for (const [el, want] of Object.entries(e.jobRetries ?? {})) {
    const j = findJob(el);
    if (!j) bad.push(`no open job at ${el}, want retries ${want}`);
    else if (j.retries !== want) bad.push(`job at ${el} has retries ${j.retries}, want ${want}`);
  }
  for (const [k, want] of Object.entries(e.variables ?? {})) {
    const vars = obs.variables ?? {};
    if (!(k in vars)) bad.push(`variable ${q(k)} not set, want ${q(want)}`);
    else if (!isDeepStrictEqual(vars[k], want)) bad.push(`variable ${q(k)} = ${q(vars[k])}, want ${q(want)}`);
  }
  if (e.events) {
    const have = new Map();
    for (const ev of obs.events ?? []) have.set(ev, (have.get(ev) ?? 0) + 1);
    for (const ev of e.events) {
      if (!have.get(ev)) bad.push(`no ${ev} event (or fewer than expected) in history`);
      have.set(ev, (have.get(ev) ?? 0) - 1);
    }
  }
  return bad;
}

/**
 * canonical encodes observations the way Go's encoding/json does for
 * conformance.Observation (empty fields omitted, map keys sorted), so JS and
 * native observations compare as strings.
 */
export function canonical(observations) {
  const omit = (v) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
  const sortKeys = (v) => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
    return v;
  };
  const clean = (o) => {
    const out = {};
    for (const [k, v] of Object.entries(o)) {
      if (k === 'step' || k === 'retries' || k === 'element' || k === 'rule' || k === 'type') out[k] = v;
      else if (k === 'jobInfo' && !omit(v)) out[k] = v.map(clean);
      else if (!omit(v)) out[k] = v;
    }
    return out;
  };
  return JSON.stringify(sortKeys((observations ?? []).map(clean)));
}
