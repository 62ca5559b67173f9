// flowtrack token simulator: a bpmn-js viewer driven by the real engine.
//
// The engine (the flowtrack WebAssembly module) runs in a Web Worker through
// Engine.createInWorker (add ?inline to the URL to run it on the page). Every
// action is one engine call; the events it returns are queued and played
// onto the diagram one by one (play/pause/step), and once the queue is empty
// the overlays show the engine's own token snapshot, so what you see is
// what the engine holds: conditions, data, correlation and timers are real.

import NavigatedViewer from 'bpmn-js/lib/NavigatedViewer';
import 'bpmn-js/dist/assets/diagram-js.css';
import 'bpmn-js/dist/assets/bpmn-font/css/bpmn.css';
import { Engine } from 'flowtrack';
import defaultXml from './order-payment.bpmn?raw';
import './style.css';

const $ = (id) => document.getElementById(id);
const inline = new URLSearchParams(location.search).has('inline');

const viewer = new NavigatedViewer({ container: $('canvas') });
const overlays = viewer.get('overlays');
const canvas = viewer.get('canvas');
const registry = viewer.get('elementRegistry');

const sim = {
  xml: defaultXml,
  name: 'order-payment.bpmn',
  engine: null,
  instanceKey: 0,
  state: '',
  queue: [],
  playing: true,
  timer: 0,
  busy: 0,
  starting: false,
  // Token positions replayed from events while the queue plays (tokenId -> elementId).
  replay: new Map(),
  // The engine's snapshot after the last call: tokens, jobs, instance info.
  snapshot: { tokens: [], jobs: [], info: null },
  // Subscriptions of waiting tokens, from subscribe events (tokenId -> list).
  subs: new Map(),
  markers: new Set(),
};

// ---- engine -------------------------------------------------------------

async function resetEngine() {
  sim.engine?.close();
  sim.engine = null;
  clearInstance();
  status('loading', 'starting engine…');
  const t0 = performance.now();
  const engine = inline ? await Engine.create() : await Engine.createInWorker();
  engine.on('*', (ev) => {
    if (sim.starting) return; // start adopts its own records
    if (ev.instanceKey === sim.instanceKey) sim.queue.push(ev);
    else logEvent(ev);
  });
  sim.engine = engine;
  const d = await engine.deploy(sim.xml, sim.name);
  const select = $('process');
  select.replaceChildren(...d.processes.map((p) => new Option(p.name ? `${p.name} (${p.id})` : p.id, p.id)));
  log('info', `engine ready in ${Math.round(performance.now() - t0)} ms (${inline ? 'on the page' : 'in a worker'}); deployed ${d.processes.map((p) => p.id).join(', ')}`);
  status('ready', 'ready');
  renderTime();
}

// act runs one engine action, reports its error, and refreshes the views.
async function act(label, fn) {
  if (!sim.engine) return;
  sim.busy++;
  status('busy', label + '…');
  try {
    await fn(sim.engine);
  } catch (err) {
    log('error', `${label}: ${err.name}${err.code ? ` [${err.code}]` : ''}: ${err.message}`);
    if (err.elementId && registry.get(err.elementId)) mark(err.elementId, 'ft-error');
  } finally {
    sim.busy--;
    await refresh();
    status('ready', 'ready');
    pump();
  }
}

async function refresh() {
  const e = sim.engine;
  if (!e) return;
  if (sim.instanceKey) {
    const [tokens, jobs, info] = await Promise.all([e.tokens(sim.instanceKey), e.jobs({ instanceKey: sim.instanceKey }), e.instance(sim.instanceKey)]);
    sim.snapshot = { tokens, jobs, info };
  }
  renderTime();
  renderInstance();
  renderWaiting();
  if (sim.queue.length === 0) renderTokens();
}

function clearInstance() {
  sim.instanceKey = 0;
  sim.state = '';
  sim.queue = [];
  sim.replay.clear();
  sim.subs.clear();
  sim.snapshot = { tokens: [], jobs: [], info: null };
  for (const key of sim.markers) {
    const [id, cls] = key.split(' ');
    if (registry.get(id)) canvas.removeMarker(id, cls);
  }
  sim.markers.clear();
  overlays.remove({ type: 'token' });
  renderInstance();
  renderWaiting();
}

// ---- playback of events --------------------------------------------------

function pump() {
  clearTimeout(sim.timer);
  $('queued').textContent = String(sim.queue.length);
  if (!sim.playing || sim.queue.length === 0) return;
  const speed = Number($('speed').value);
  if (speed === 0) {
    while (sim.queue.length) apply(sim.queue.shift());
    afterApply();
    return;
  }
  sim.timer = setTimeout(() => {
    apply(sim.queue.shift());
    afterApply();
    pump();
  }, speed);
}

function step() {
  if (sim.queue.length === 0) return;
  apply(sim.queue.shift());
  afterApply();
  $('queued').textContent = String(sim.queue.length);
}

function afterApply() {
  $('queued').textContent = String(sim.queue.length);
  renderTokens();
  if (sim.queue.length === 0) {
    renderInstance();
    renderWaiting();
  }
}

function apply(ev) {
  logEvent(ev);
  const id = ev.tokenId ?? 0;
  switch (ev.type) {
    case 'elementEntered':
      if (ev.elementId) sim.replay.set(id, ev.elementId);
      break;
    case 'elementLeft':
      if (ev.elementId) mark(ev.elementId, 'ft-done');
      if (ev.elementType === 'endEvent') sim.replay.delete(id);
      break;
    case 'flowTaken':
      if (ev.flowId) mark(ev.flowId, 'ft-done');
      break;
    case 'tokenMerged':
    case 'elementTerminated':
      sim.replay.delete(id);
      break;
    case 'messageSubscribed':
    case 'signalSubscribed':
    case 'timerScheduled':
      if (!sim.subs.has(id)) sim.subs.set(id, []);
      sim.subs.get(id).push({ type: ev.type, elementId: ev.elementId, name: ev.name, correlationKey: ev.correlationKey, due: ev.due });
      break;
    case 'messageCorrelated':
    case 'signalReceived':
    case 'timerFired':
      sim.subs.delete(id);
      break;
    case 'incidentCreated':
      if (ev.elementId) mark(ev.elementId, 'ft-error');
      break;
    case 'instanceCompleted':
    case 'instanceTerminated':
    case 'instanceFailed':
      sim.replay.clear();
      sim.subs.clear();
      sim.state = ev.type.slice('instance'.length).toLowerCase();
      break;
  }
}

// ---- rendering -------------------------------------------------------------

function mark(id, cls) {
  if (!registry.get(id) || sim.markers.has(`${id} ${cls}`)) return;
  canvas.addMarker(id, cls);
  sim.markers.add(`${id} ${cls}`);
}

// renderTokens draws one badge per element holding tokens: the engine's
// snapshot when every event has been played, the replayed positions before.
function renderTokens() {
  overlays.remove({ type: 'token' });
  const at = new Map();
  const add = (elementId, waiting) => {
    const cur = at.get(elementId) ?? { n: 0, waiting: new Set() };
    cur.n++;
    if (waiting) cur.waiting.add(waiting);
    at.set(elementId, cur);
  };
  if (sim.queue.length === 0 && sim.snapshot.info) for (const t of sim.snapshot.tokens) add(t.elementId, t.waiting);
  else for (const el of sim.replay.values()) add(el, '');
  for (const [elementId, { n, waiting }] of at) {
    if (!registry.get(elementId)) continue;
    const w = [...waiting].join(' ');
    overlays.add(elementId, 'token', {
      position: { top: -12, left: -12 },
      html: `<div class="token" data-element="${elementId}" data-waiting="${w}" title="${n} token(s)${w ? ', waiting: ' + w : ''}">${n}</div>`,
    });
  }
}

function renderInstance() {
  const el = $('instance');
  const info = sim.snapshot.info;
  if (!sim.instanceKey || !info) {
    el.textContent = '';
    el.dataset.state = '';
    return;
  }
  const state = sim.queue.length ? 'active' : info.state;
  el.dataset.state = state;
  el.innerHTML = `<div>instance <b>#${info.key}</b> <span class="state">${state}</span></div><pre class="vars">${escape(JSON.stringify(info.variables, null, 1))}</pre>`;
}

function renderWaiting() {
  const el = $('waiting');
  el.replaceChildren();
  if (!sim.instanceKey) return el.append(note('no instance'));
  if (sim.queue.length) return el.append(note('playing events…'));
  const { tokens, jobs, info } = sim.snapshot;
  if (info && info.state !== 'active') return el.append(note(`instance ${info.state}`));
  for (const job of jobs) {
    const row = document.createElement('div');
    row.className = 'wait job';
    row.dataset.element = job.elementId;
    row.innerHTML = `<div><b>${escape(label(job.elementId))}</b> <small>${escape(job.type)}</small></div>
      <textarea rows="2" spellcheck="false">{}</textarea>
      <div class="row"><button class="complete">Complete</button><button class="fail">Fail</button></div>`;
    const vars = row.querySelector('textarea');
    row.querySelector('.complete').onclick = () => act(`complete ${job.elementId}`, (e) => e.completeJob(job.key, parseVars(vars.value)));
    row.querySelector('.fail').onclick = () => act(`fail ${job.elementId}`, (e) => e.failJob(job.key, Math.max(0, job.retries - 1), 'failed in the simulator'));
    el.append(row);
  }
  for (const t of tokens) {
    if (!['message', 'signal', 'timer', 'event'].includes(t.waiting)) {
      if (t.waiting === 'incident') {
        const inc = info?.incidents.find((i) => i.key === t.incidentKey);
        el.append(note(`incident at ${label(t.elementId)}: ${inc?.message ?? ''}`, 'wait incident'));
      }
      continue;
    }
    for (const sub of sim.subs.get(t.id) ?? []) {
      const row = document.createElement('div');
      row.className = 'wait event';
      row.dataset.element = sub.elementId ?? t.elementId;
      const btn = document.createElement('button');
      if (sub.type === 'messageSubscribed') {
        btn.className = 'fire-message';
        btn.textContent = `Send message "${sub.name}"${sub.correlationKey ? ` (${sub.correlationKey})` : ''}`;
        btn.onclick = () =>
          act(`message ${sub.name}`, (e) => e.publishMessage({ name: sub.name, correlationKey: sub.correlationKey, variables: parseVars($('msg-vars').value) }));
      } else if (sub.type === 'signalSubscribed') {
        btn.className = 'fire-signal';
        btn.textContent = `Broadcast signal "${sub.name}"`;
        btn.onclick = () => act(`signal ${sub.name}`, (e) => e.broadcastSignal(sub.name, parseVars($('msg-vars').value)));
      } else {
        btn.className = 'fire-timer';
        btn.textContent = `Advance to timer ${label(sub.elementId)} (${sub.due ?? ''})`;
        btn.onclick = () => act('advance to timer', (e) => (sub.due ? e.advanceTo(sub.due) : e.advanceToNextTimer()));
      }
      row.append(btn);
      el.append(row);
    }
  }
  if (!el.childElementCount) el.append(note('nothing to do: the instance waits for nothing you can give'));
}

function renderTime() {
  const e = sim.engine;
  $('now').textContent = e ? e.now.toISOString() : '';
  $('deadline').textContent = e?.nextDeadline ? e.nextDeadline.toISOString() : 'none';
}

function logEvent(ev) {
  const what = [ev.elementId, ev.jobType && `[${ev.jobType}]`, ev.name && `"${ev.name}"`, ev.correlationKey && `key=${ev.correlationKey}`, ev.message]
    .filter(Boolean)
    .join(' ');
  const vars = ev.variables ? ' ' + JSON.stringify(ev.variables) : '';
  log(`ev ${ev.type}`, `${ev.time.slice(11, 19)} #${ev.instanceKey} ${ev.type} ${what}${vars}`);
}

function log(cls, text) {
  const li = document.createElement('li');
  li.className = cls;
  li.textContent = text;
  const list = $('log');
  list.append(li);
  while (list.childElementCount > 2000) list.firstElementChild.remove();
  li.scrollIntoView({ block: 'nearest' });
}

function status(state, text) {
  const el = $('status');
  el.dataset.state = sim.busy ? 'busy' : state;
  el.textContent = sim.busy ? 'working…' : text;
}

const label = (id) => registry.get(id)?.businessObject?.name || id;
const note = (text, cls = 'note') => Object.assign(document.createElement('div'), { className: cls, textContent: text });
const escape = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

function parseVars(text) {
  const t = text.trim();
  if (!t) return undefined;
  let v;
  try {
    v = JSON.parse(t);
  } catch (err) {
    throw Object.assign(new Error(`variables are not JSON: ${err.message}`), { name: 'InputError' });
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw Object.assign(new Error('variables must be a JSON object'), { name: 'InputError' });
  return v;
}

// ---- model loading -----------------------------------------------------------

async function loadModel(xml, name) {
  try {
    const { warnings } = await viewer.importXML(xml);
    for (const w of warnings) log('warn', `bpmn-js: ${w.message}`);
    canvas.zoom('fit-viewport', 'auto');
  } catch (err) {
    log('error', `cannot render ${name}: ${err.message}`);
    return;
  }
  sim.xml = xml;
  sim.name = name;
  $('model-name').textContent = name;
  try {
    await resetEngine();
  } catch (err) {
    status('error', 'model rejected');
    log('error', `deploy ${name}: ${err.name}${err.code ? ` [${err.code}]` : ''}: ${err.message}`);
    for (const p of err.problems ?? []) {
      log('error', `  ${p.elementId ?? ''} ${p.rule}`);
      if (p.elementId) mark(p.elementId, 'ft-error');
    }
  }
}

// ---- controls -----------------------------------------------------------------

$('file').onchange = async (ev) => {
  const file = ev.target.files?.[0];
  if (file) await loadModel(await file.text(), file.name);
};
$('reset').onclick = () => loadModel(sim.xml, sim.name);
$('start').onclick = () =>
  act('start', async (e) => {
    const vars = parseVars($('start-vars').value);
    clearInstance();
    const processId = $('process').value;
    // Events of the new instance belong to the animation; its key is only
    // known once start returns, so adopt the instance's records then.
    const early = [];
    const off = e.on('*', (ev) => early.push(ev));
    let res;
    sim.starting = true;
    try {
      res = await e.start(processId, vars);
    } finally {
      sim.starting = false;
      off();
    }
    sim.instanceKey = res.instanceKey;
    sim.queue.push(...early.filter((ev) => ev.instanceKey === res.instanceKey));
    log('info', `started ${processId} as #${res.instanceKey}`);
  });
$('publish').onclick = () =>
  act('publish message', (e) => e.publishMessage({ name: $('msg-name').value, correlationKey: $('msg-key').value, variables: parseVars($('msg-vars').value) }));
$('signal').onclick = () => act('broadcast signal', (e) => e.broadcastSignal($('msg-name').value, parseVars($('msg-vars').value)));
$('next-timer').onclick = () =>
  act('advance to next timer', async (e) => {
    if (!(await e.advanceToNextTimer())) log('info', 'no timer pending');
  });
$('advance').onclick = () => act('advance time', (e) => e.advanceTime($('advance-by').value.trim()));
$('play').onclick = () => {
  sim.playing = !sim.playing;
  $('play').textContent = sim.playing ? 'Pause' : 'Play';
  pump();
};
$('step').onclick = () => step();

// Tests and curious users can reach the simulator state.
window.simulator = sim;

loadModel(defaultXml, 'order-payment.bpmn');
