// flowtrack token simulator: a bpmn-js viewer driven by the real engine.
//
// The engine (the flowtrack WebAssembly module) runs in a Web Worker through
// Engine.createInWorker (add ?inline to the URL to run it on the page). Every
// action is one engine call; the events it returns are queued and played
// onto the diagram one by one (play/pause/step), and once the queue is empty
// the overlays show the engine's own token snapshot, so what you see is
// what the engine holds: conditions, data, correlation and timers are real.
//
// A session is the engine's state document (engine/STATE.md) and nothing
// else: after every action the page takes a checkpoint, "Back" restores the
// one before, "Save"/"Download" keep the newest in localStorage or a file,
// and "Load saved"/"Open state" restore one, taking the model from its last
// deployment. The document is the one the CLI's --state file holds, so a
// session moves between the page and `flowtrack ... --state FILE`.

import NavigatedViewer from 'bpmn-js/lib/NavigatedViewer';
import { layoutProcess } from 'bpmn-auto-layout';
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
  // Checkpoints after each action, oldest first (the last is the engine's
  // state now): { state, instanceKey }.
  checkpoints: [],
  // Top-level instances the engine holds (live and finished), from the
  // newest checkpoint: [{ key, process, state }], oldest first.
  instances: [],
};

// colours tell instances apart: the selector and the token badges of the
// instance shown use the colour of its position in sim.instances.
const colours = ['#ff6d00', '#00897b', '#d81b60', '#5e35b1', '#7cb342', '#3949ab'];
const colourOf = (key) => colours[Math.max(0, sim.instances.findIndex((i) => i.key === key)) % colours.length];


// maxCheckpoints bounds how far back "Back" goes (a state document holds
// the history of every instance, so each one grows with the session).
const maxCheckpoints = 200;
const sessionKey = 'flowtrack-simulator-session';

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
  sim.checkpoints = [];
  renderBack();
  const d = await engine.deploy(sim.xml, sim.name);
  showProcesses(d.processes);
  await remember(`deploy ${sim.name}`);
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
    await remember(label);
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
  renderInstances();
  renderInstance();
  renderWaiting();
  if (sim.queue.length === 0) renderTokens();
}

function clearInstance() {
  clearTimeout(sim.timer); // a pending playback step would find the queue gone
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

// apply plays one event onto the diagram; quiet leaves it out of the log
// (a restored instance's history, replayed to rebuild marks and waits).
function apply(ev, quiet = false) {
  if (!quiet) logEvent(ev);
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
  const colour = colourOf(sim.instanceKey);
  for (const [elementId, { n, waiting }] of at) {
    if (!registry.get(elementId)) continue;
    const w = [...waiting].join(' ');
    overlays.add(elementId, 'token', {
      position: { top: -12, left: -12 },
      html: `<div class="token" style="--instance: ${colour}" data-element="${elementId}" data-waiting="${w}" title="${n} token(s) of #${sim.instanceKey}${w ? ', waiting: ' + w : ''}">${n}</div>`,
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
  if (state !== 'active') return;
  // The variables editor: setVariables on the process scope or on the
  // scope of a sub-process a token waits at, as Zeebe's SetVariables.
  const scopes = sim.snapshot.tokens.filter((t) => t.waiting === 'scope');
  const editor = document.createElement('div');
  editor.className = 'var-editor';
  editor.innerHTML = `<textarea id="set-vars" rows="2" spellcheck="false" placeholder='{"name": value}'></textarea>
    <div class="row"><select id="var-scope"><option value="">process scope</option>${scopes
      .map((t) => `<option value="${t.id}">${escape(label(t.elementId))} (token ${t.id})</option>`)
      .join('')}</select><label title="write into the scope itself instead of the nearest scope holding each variable"><input id="var-local" type="checkbox" style="width:auto" />local</label>
    <button id="set-vars-btn">Set variables</button></div>`;
  editor.querySelector('#set-vars-btn').onclick = () =>
    act('set variables', async (e) => {
      const vars = parseVars(editor.querySelector('#set-vars').value);
      if (!vars) throw Object.assign(new Error('no variables to set: write a JSON object'), { name: 'InputError' });
      const scope = editor.querySelector('#var-scope').value;
      const options = { local: editor.querySelector('#var-local').checked };
      if (scope) options.scope = Number(scope);
      await e.setVariables(sim.instanceKey, vars, options);
      log('info', `set variables on #${sim.instanceKey}${scope ? ` scope ${scope}` : ''}: ${JSON.stringify(vars)}`);
    });
  el.append(editor);
}

// renderInstances fills the instance selector: every top-level instance
// the engine holds, in its colour; the one selected is the one shown.
function renderInstances() {
  const el = $('instances');
  el.replaceChildren(
    ...sim.instances.map((i) => {
      const o = new Option(`#${i.key} ${i.process} (${i.state})`, String(i.key), false, i.key === sim.instanceKey);
      o.style.color = colourOf(i.key);
      return o;
    }),
  );
  el.disabled = sim.instances.length < 2;
  el.style.borderLeft = sim.instanceKey ? `6px solid ${colourOf(sim.instanceKey)}` : '';
}

// show switches the view to another instance of the engine: marks and
// subscriptions are rebuilt from its history, as after a restore.
async function show(instanceKey) {
  if (instanceKey === sim.instanceKey || sim.busy) return;
  clearInstance();
  sim.instanceKey = instanceKey;
  for (const ev of await sim.engine.history(instanceKey)) apply(ev, true);
  await refresh();
}

// route moves the token of an instance onto the flow a modeller clicked
// out of an exclusive or inclusive gateway. The engine has already chosen
// by the real conditions; the choice is an explicit instance modification
// (modifyInstance, as Operate's): a token starts before the flow's target
// and, for an exclusive gateway, the token it routed onto another path
// ends; for an inclusive one the path is added to those it took. Setting
// the variables a condition reads (the variables editor) is the other way,
// the one that keeps the gateway's own decision.
async function route(flow) {
  const gateway = flow.businessObject.sourceRef;
  const target = flow.businessObject.targetRef;
  const exclusive = gateway.$type === 'bpmn:ExclusiveGateway';
  await act(`take ${flow.id}`, async (e) => {
    const others = new Set(gateway.outgoing.filter((f) => f.id !== flow.id).map((f) => f.targetRef.id));
    const tokens = await e.tokens(sim.instanceKey);
    if (tokens.some((t) => t.elementId === target.id)) throw Object.assign(new Error(`a token is at ${label(target.id)} already`), { name: 'InputError' });
    // Only a token the gateway routed (still at the first element of
    // another of its paths) is rerouted: a click never makes one up.
    const routed = tokens.filter((t) => others.has(t.elementId)).map((t) => t.id);
    if (!routed.length) throw Object.assign(new Error(`no token of #${sim.instanceKey} waits right after ${label(gateway.id)} to reroute`), { name: 'InputError' });
    const terminate = exclusive ? routed : [];
    await e.modifyInstance(sim.instanceKey, { activate: [{ elementId: target.id }], terminate });
    log('info', `took ${flow.id} out of ${label(gateway.id)}: token before ${label(target.id)}${terminate.length ? `, ended token(s) ${terminate.join(', ')}` : ''}`);
  });
}

// pad adds a button to the context pad drawn beside a waiting element on
// the diagram: the same action as the waiting panel's, where it waits.
function pad(elementId, cls, text, title, run) {
  if (!registry.get(elementId)) return;
  let box = document.querySelector(`.ft-pad[data-element="${CSS.escape(elementId)}"]`);
  if (!box) {
    box = Object.assign(document.createElement('div'), { className: 'ft-pad' });
    box.dataset.element = elementId;
    overlays.add(elementId, 'pad', { position: { top: -14, right: 4 }, html: box });
  }
  const btn = Object.assign(document.createElement('button'), { className: cls, textContent: text, title });
  btn.onclick = run;
  box.append(btn);
}

function renderWaiting() {
  const el = $('waiting');
  el.replaceChildren();
  overlays.remove({ type: 'pad' });
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
    const complete = () => act(`complete ${job.elementId}`, (e) => e.completeJob(job.key, parseVars(vars.value)));
    const fail = () => act(`fail ${job.elementId}`, (e) => e.failJob(job.key, Math.max(0, job.retries - 1), 'failed in the simulator'));
    row.querySelector('.complete').onclick = complete;
    row.querySelector('.fail').onclick = fail;
    pad(job.elementId, 'complete', '✔', `complete ${job.type} with the panel's variables`, complete);
    pad(job.elementId, 'fail', '✘', `fail ${job.type} (retries ${job.retries} → ${Math.max(0, job.retries - 1)})`, fail);
    el.append(row);
  }
  for (const t of tokens) {
    if (!['message', 'signal', 'timer', 'event'].includes(t.waiting)) {
      if (t.waiting === 'incident') {
        const inc = info?.incidents.find((i) => i.key === t.incidentKey);
        el.append(incidentRow(t, inc));
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
      const icon = { messageSubscribed: '✉', signalSubscribed: '⚑' }[sub.type] ?? '⏱';
      pad(sub.elementId ?? t.elementId, btn.className, icon, btn.textContent, btn.onclick);
    }
  }
  if (!el.childElementCount) el.append(note('nothing to do: the instance waits for nothing you can give'));
}

// incidentRow offers to fix an incident from the page: a job incident
// gets retries back (updateJobRetries) and is resolved; any other is
// resolved after its cause is fixed, e.g. in the variables editor.
function incidentRow(token, inc) {
  const row = note(`incident at ${label(token.elementId)}: ${inc?.message ?? ''}`, 'wait incident');
  row.dataset.element = token.elementId;
  if (!inc) return row;
  const bar = document.createElement('div');
  bar.className = 'row';
  const retries = Object.assign(document.createElement('input'), { className: 'retries', type: 'number', min: '1', value: '1', title: 'retries the job gets back' });
  const btn = Object.assign(document.createElement('button'), { className: 'resolve', textContent: inc.jobKey ? 'Set retries and resolve' : 'Resolve' });
  btn.onclick = () =>
    act(`resolve incident ${inc.key}`, async (e) => {
      if (inc.jobKey) {
        const n = Number(retries.value);
        if (!Number.isInteger(n) || n < 1) throw Object.assign(new Error(`retries must be a whole number >= 1, not "${retries.value}"`), { name: 'InputError' });
        await e.updateJobRetries(inc.jobKey, n);
      }
      await e.resolveIncident(inc.key);
      log('info', `resolved incident ${inc.key} at ${token.elementId}`);
    });
  if (inc.jobKey) bar.append(retries);
  bar.append(btn);
  row.append(bar);
  return row;
}

function showProcesses(processes) {
  $('process').replaceChildren(...processes.map((p) => new Option(p.name ? `${p.name} (${p.id})` : p.id, p.id)));
}

// renderBack shows how far Back goes and the timeline of checkpoints:
// each action with the virtual time after it; clicking one goes back to it.
function renderBack() {
  $('back').disabled = sim.checkpoints.length < 2;
  $('back').title = `${sim.checkpoints.length - 1} step(s) to go back`;
  const last = sim.checkpoints.length - 1;
  $('timeline').replaceChildren(
    ...sim.checkpoints.map((c, i) => {
      const li = document.createElement('li');
      li.textContent = `${c.now.slice(0, 19).replace('T', ' ')} ${c.label}`;
      li.dataset.index = String(i);
      if (i === last) li.className = 'now';
      else {
        li.title = 'go back to just after this action';
        li.onclick = () => goBack(i);
      }
      return li;
    }),
  );
  $('timeline').lastElementChild?.scrollIntoView({ block: 'nearest' });
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
  log(`ev ${ev.type}`, `${ev.time} #${ev.instanceKey} ${ev.type} ${what}${vars}`);
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

// hasDiagram tells whether a BPMN document has a diagram (BPMN DI) to draw;
// text that is not XML counts as having one, for importXML to report.
function hasDiagram(xml) {
  const doc = new DOMParser().parseFromString(xml, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length) return true;
  return doc.getElementsByTagNameNS('http://www.omg.org/spec/BPMN/20100524/DI', 'BPMNDiagram').length > 0;
}

async function loadModel(xml, name) {
  try {
    if (!hasDiagram(xml)) {
      // A model without diagram layout (written by a tool or by hand):
      // bpmn-auto-layout draws it. The laid-out XML is what deploys, so
      // the session's state document carries a diagram that shows.
      xml = await layoutProcess(xml);
      log('info', `${name} has no diagram layout: laid out automatically`);
    }
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
    // Nothing of the rejected model runs: offer none of its processes (nor
    // those of the model shown before), and put each problem on its element.
    showProcesses([]);
    for (const p of err.problems ?? []) {
      log('error', `  ${p.elementId ?? ''} ${p.rule}`);
      if (!p.elementId || !registry.get(p.elementId)) continue;
      mark(p.elementId, 'ft-error');
      overlays.add(p.elementId, 'problem', {
        position: { bottom: -4, left: 0 },
        html: `<div class="problem" data-element="${escape(p.elementId)}">${escape(p.rule)}</div>`,
      });
    }
  }
}

// ---- session: checkpoints, back, save and load ------------------------------

// remember takes a checkpoint of the engine after an action.
async function remember(label) {
  const state = await sim.engine.checkpoint();
  sim.instances = instancesOf(JSON.parse(new TextDecoder().decode(state)));
  sim.checkpoints.push({ state, instanceKey: sim.instanceKey, label, now: sim.engine.now.toISOString() });
  if (sim.checkpoints.length > maxCheckpoints) sim.checkpoints.shift();
  renderBack();
}

// restore puts the engine in the state of a checkpoint and rebuilds the
// view of instanceKey from its history: visited elements, the
// subscriptions its waiting tokens hold.
async function restore(state, instanceKey) {
  const e = sim.engine;
  await e.restore(state);
  sim.instances = instancesOf(JSON.parse(typeof state === 'string' ? state : new TextDecoder().decode(state)));
  clearInstance();
  sim.instanceKey = instanceKey;
  if (instanceKey) for (const ev of await e.history(instanceKey)) apply(ev, true);
  await refresh();
}

// back restores the checkpoint before the last action.
const back = () => goBack(sim.checkpoints.length - 2);

// goBack restores checkpoint i of the timeline and drops those after it.
async function goBack(i) {
  if (i < 0 || i >= sim.checkpoints.length - 1 || sim.busy) return;
  sim.busy++;
  status('busy', 'back…');
  try {
    const prev = sim.checkpoints[i];
    await restore(prev.state, prev.instanceKey);
    sim.checkpoints.length = i + 1;
    log('info', `back to ${sim.engine.now.toISOString()}${sim.instanceKey ? ` (#${sim.instanceKey})` : ''}`);
  } catch (err) {
    log('error', `back: ${err.name}: ${err.message}`);
  } finally {
    sim.busy--;
    renderBack();
    status('ready', 'ready');
  }
}

// instancesOf lists the top-level instances of a state document, live
// and finished, oldest first.
function instancesOf(doc) {
  return [...(doc.instances ?? []).filter((i) => !i.parent), ...(doc.finished ?? [])]
    .map(({ key, process, state }) => ({ key, process, state }))
    .sort((a, b) => a.key - b.key);
}

// newest returns the key of the newest top-level instance of a state
// document (live or finished), or 0.
function newest(doc) {
  return instancesOf(doc).at(-1)?.key ?? 0;
}

// loadSession restores a saved state document (text): the engine takes
// it, the diagram shows its last deployment, the view its newest instance.
async function loadSession(text, source) {
  sim.busy++;
  status('busy', 'loading session…');
  try {
    let doc;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw Object.assign(new Error(`not JSON: ${err.message}`), { name: 'InputError' });
    }
    const dep = doc?.deployments?.at(-1);
    if (doc?.format !== 'flowtrack-state' || !dep) throw Object.assign(new Error('not a flowtrack state document with a deployment'), { name: 'InputError' });
    const key = newest(doc);
    await restore(text, key); // a document the engine refuses leaves everything as it was
    if (dep.bpmn !== sim.xml) {
      try {
        await viewer.importXML(dep.bpmn);
      } catch (err) {
        // The engine took the document but the diagram cannot show it:
        // go back to the session shown (or a fresh engine).
        const cur = sim.checkpoints.at(-1);
        if (cur) await restore(cur.state, cur.instanceKey);
        throw Object.assign(new Error(`cannot render ${dep.name}: ${err.message}`), { name: 'InputError' });
      }
      canvas.zoom('fit-viewport', 'auto');
      sim.markers.clear();
      await restore(text, key); // marks and tokens onto the new diagram
    }
    sim.xml = dep.bpmn;
    sim.name = dep.name;
    $('model-name').textContent = dep.name;
    showProcesses(doc.deployments.flatMap((d) => d.processes));
    sim.checkpoints = [];
    await remember(`load ${source}`);
    log('info', `loaded session from ${source}: ${sim.engine.now.toISOString()}${key ? `, instance #${key}` : ''}`);
  } catch (err) {
    log('error', `load session from ${source}: ${err.name}${err.code ? ` [${err.code}]` : ''}: ${err.message}`);
  } finally {
    sim.busy--;
    status('ready', 'ready');
  }
}

// currentState is the newest checkpoint as text, or null when the engine
// has none (its model did not deploy).
function currentState() {
  const cur = sim.checkpoints.at(-1);
  if (!cur) log('error', 'no session to keep: the engine holds no model');
  return cur ? new TextDecoder().decode(cur.state) : null;
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
$('instances').onchange = (ev) => show(Number(ev.target.value));
// Clicking a flow out of an exclusive or inclusive gateway takes it.
viewer.get('eventBus').on('element.click', ({ element }) => {
  const src = element.businessObject?.sourceRef;
  if (element.type !== 'bpmn:SequenceFlow' || !['bpmn:ExclusiveGateway', 'bpmn:InclusiveGateway'].includes(src?.$type)) return;
  if (!sim.instanceKey || sim.snapshot.info?.state !== 'active') return log('error', `take ${element.id}: no active instance shown`);
  route(element);
});
$('back').onclick = () => back();
$('save').onclick = () => {
  const state = currentState();
  if (state === null) return;
  localStorage.setItem(sessionKey, state);
  log('info', `session saved in this browser (${sim.engine.now.toISOString()})`);
};
$('load-saved').onclick = () => {
  const text = localStorage.getItem(sessionKey);
  if (text === null) log('error', 'load session: nothing saved in this browser');
  else loadSession(text, 'this browser');
};
$('download').onclick = () => {
  const state = currentState();
  if (state === null) return;
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([state], { type: 'application/json' }));
  a.download = 'flowtrack-state.json';
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 0);
};
$('state-file').onchange = async (ev) => {
  const file = ev.target.files?.[0];
  if (file) await loadSession(await file.text(), file.name);
  ev.target.value = '';
};

// Tests and curious users can reach the simulator state.
window.simulator = sim;

loadModel(defaultXml, 'order-payment.bpmn');
