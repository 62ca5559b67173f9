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
//
// DMN models deploy beside the BPMN (before it, so its business rule
// tasks find their decisions): when a business rule task evaluates its
// decision, the page shows the decision table with dmn-js, the rules that
// matched highlighted and the outputs, from the engine's
// decisionEvaluated event.

import NavigatedViewer from 'bpmn-js/lib/NavigatedViewer';
import { layoutProcess } from 'bpmn-auto-layout';
import DmnViewer from 'dmn-js/lib/Viewer';
import 'dmn-js/dist/assets/dmn-js-shared.css';
import 'dmn-js/dist/assets/dmn-js-decision-table.css';
import 'dmn-js/dist/assets/dmn-js-literal-expression.css';
import 'dmn-js/dist/assets/dmn-js-boxed-expression.css';
import 'dmn-js/dist/assets/dmn-font/css/dmn.css';
import 'bpmn-js/dist/assets/diagram-js.css';
import 'bpmn-js/dist/assets/bpmn-font/css/bpmn.css';
import { Engine } from 'flowtrack';
import wasmURL from 'flowtrack/flowtrack.wasm?url';
import defaultXml from './order-payment.bpmn?raw';
import loanXml from './loan-risk.bpmn?raw';
import loanDmn from './loan-risk.dmn?raw';
import './style.css';

const $ = (id) => document.getElementById(id);
const inline = new URLSearchParams(location.search).has('inline');

const viewer = new NavigatedViewer({ container: $('canvas') });
const overlays = viewer.get('overlays');
const canvas = viewer.get('canvas');
const registry = viewer.get('elementRegistry');

// examples are the preloaded models: a BPMN, the DMN models it calls, and
// start variables.
const examples = {
  'order-payment': { name: 'order-payment.bpmn', xml: defaultXml, dmn: [], vars: '{"orderId": "A-1", "amount": 250}' },
  'loan-risk': { name: 'loan-risk.bpmn', xml: loanXml, dmn: [{ name: 'loan-risk.dmn', xml: loanDmn }], vars: '{"age": 40, "amount": 20000}' },
};

const sim = {
  xml: defaultXml,
  name: 'order-payment.bpmn',
  // The DMN models deployed beside the BPMN, before it: [{ name, xml }].
  dmn: [],
  // Deployed decisions: decision id -> the DMN model's XML that has it.
  decisionSources: new Map(),
  // The decision shown: the last decisionEvaluated event of the shown
  // instance, { elementId, decisionId, decisionName, version, result,
  // matchedRules, open }, open being the decision whose table is open.
  decision: null,
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
  // Token snapshots of the other live instances (key -> tokens): every
  // instance's tokens are drawn, each in its colour.
  others: new Map(),
  // Instances whose tokens the filter hides.
  hidden: new Set(),
  // The compiled engine module, fetched and compiled once per page.
  module: null,
  // The steps of loading the engine, as shown (tests read them).
  loadSteps: [],
  // gen counts clearInstance calls: a token travelling along a flow
  // stops when the view it belongs to is gone.
  gen: 0,
  traveling: false,
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
const indexOf = (key) => Math.max(0, sim.instances.findIndex((i) => i.key === key));
const colourOf = (key) => colours[indexOf(key) % colours.length];


// maxCheckpoints bounds how far back "Back" goes (a state document holds
// the history of every instance, so each one grows with the session).
const maxCheckpoints = 200;
const sessionKey = 'flowtrack-simulator-session';

// ---- engine -------------------------------------------------------------

// progress shows a step of loading the engine: a fraction of the
// download, or null while the step's length is unknown; done hides it.
function progress(text, fraction = null, done = false) {
  const bar = $('engine-progress');
  bar.hidden = done;
  if (fraction === null) bar.removeAttribute('value');
  else bar.value = Math.min(1, fraction);
  if (!done) {
    status('loading', text);
    sim.loadSteps.push(text);
  }
}

// loadModule fetches and compiles the engine module (about 1 MB gzipped)
// once per page, showing the download's progress; Reset and a new model
// reuse it.
async function loadModule() {
  if (sim.module) return sim.module;
  progress('downloading engine…', 0);
  const res = await fetch(wasmURL);
  if (!res.ok) throw new Error(`engine module ${wasmURL}: HTTP ${res.status} ${res.statusText}`);
  const total = Number(res.headers.get('content-length')) || 0;
  const chunks = [];
  let got = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    got += value.length;
    // A compressed response counts its encoded length: past it, only the bytes show.
    const known = total && got <= total;
    progress(`downloading engine… ${Math.round(got / 1024)} KB${known ? ` of ${Math.round(total / 1024)} KB` : ''}`, known ? got / total : null);
  }
  const bytes = new Uint8Array(got);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  progress('compiling engine…');
  sim.module = await WebAssembly.compile(bytes);
  return sim.module;
}

async function newEngine() {
  const wasm = await loadModule();
  progress(inline ? 'starting engine…' : 'starting engine in a worker…');
  return inline ? Engine.create({ wasm }) : Engine.createInWorker({ wasm });
}

async function resetEngine() {
  sim.engine?.close();
  sim.engine = null;
  clearInstance();
  const t0 = performance.now();
  const engine = await newEngine();
  engine.on('*', (ev) => {
    if (sim.starting) return; // start adopts its own records
    if (ev.instanceKey === sim.instanceKey) sim.queue.push(ev);
    else logEvent(ev);
  });
  sim.engine = engine;
  sim.checkpoints = [];
  renderBack();
  if ($('choose').checked) await engine.setGatewayChoices(true);
  sim.decisionSources.clear();
  for (const m of sim.dmn) {
    progress(`deploying ${m.name}…`);
    let dd;
    try {
      dd = await engine.deploy(m.xml, m.name);
    } catch (err) {
      throw Object.assign(err, { resource: m.name });
    }
    for (const dec of dd.decisions ?? []) sim.decisionSources.set(dec.id, m.xml);
    log('info', `deployed ${m.name}: decisions ${(dd.decisions ?? []).map((x) => `${x.id} v${x.version}`).join(', ')}`);
  }
  progress(`deploying ${sim.name}…`);
  const d = await engine.deploy(sim.xml, sim.name);
  showProcesses(d.processes);
  await remember(`deploy ${sim.name}`);
  log('info', `engine ready in ${Math.round(performance.now() - t0)} ms (${inline ? 'on the page' : 'in a worker'}); deployed ${d.processes.map((p) => p.id).join(', ')}`);
  progress('', null, true);
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
  sim.others.clear();
  for (const i of sim.instances) {
    if (i.key === sim.instanceKey || i.state !== 'active') continue;
    sim.others.set(i.key, await e.tokens(i.key));
  }
  renderTime();
  renderInstances();
  renderInstance();
  renderWaiting();
  if (sim.queue.length === 0) renderTokens();
}

function clearInstance() {
  clearTimeout(sim.timer); // a pending playback step would find the queue gone
  sim.gen++;
  sim.traveling = false;
  canvas.getLayer('ft-travel', 1000).replaceChildren();
  sim.instanceKey = 0;
  sim.state = '';
  sim.queue = [];
  sim.replay.clear();
  sim.subs.clear();
  sim.others.clear();
  sim.snapshot = { tokens: [], jobs: [], info: null };
  for (const key of sim.markers) {
    const [id, cls] = key.split(' ');
    if (registry.get(id)) canvas.removeMarker(id, cls);
  }
  sim.markers.clear();
  overlays.remove({ type: 'token' });
  hideDecision();
  renderInstance();
  renderWaiting();
}

// ---- playback of events --------------------------------------------------

// pump plays the queued events at the chosen speed: a pause of speed ms
// between events, and a token taking a flow travels along the flow's
// waypoints for travelTime(speed) before it enters the flow's target. At
// "instant" speed every event applies at once and nothing moves.
function pump() {
  clearTimeout(sim.timer);
  $('queued').textContent = String(sim.queue.length);
  if (!sim.playing || sim.queue.length === 0 || sim.traveling) return;
  const speed = Number($('speed').value);
  if (speed === 0) {
    while (sim.queue.length) apply(sim.queue.shift());
    afterApply();
    return;
  }
  sim.timer = setTimeout(() => playOne(speed).then(pump), speed);
}

// playOne applies the next queued event; a flowTaken travels first.
async function playOne(speed) {
  const ev = sim.queue.shift();
  if (!ev) return;
  if (ev.type === 'flowTaken' && speed > 0) {
    const gen = sim.gen;
    sim.traveling = true;
    sim.replay.delete(ev.tokenId ?? 0); // it is on the flow now, not at the element it left
    renderTokens();
    try {
      await travel(ev.flowId, sim.instanceKey, speed);
    } finally {
      if (gen === sim.gen) sim.traveling = false;
    }
    if (gen !== sim.gen) return; // reset, back or another instance shown meanwhile
  }
  apply(ev);
  afterApply();
}

function step() {
  if (sim.queue.length === 0 || sim.traveling) return;
  playOne(Math.max(120, Number($('speed').value))).then(() => ($('queued').textContent = String(sim.queue.length)));
}

// travelTime is how long a token takes along one flow at a speed: the
// slower the speed, the slower the travel.
const travelTime = (speed) => speed * 4;

// travel moves a token of the instance's colour along flow flowId's
// waypoints, on a layer above the diagram, and resolves when it arrives.
function travel(flowId, instanceKey, speed) {
  const flow = registry.get(flowId);
  const points = flow?.waypoints;
  if (!points || points.length < 2) return Promise.resolve();
  const lengths = [0];
  for (let i = 1; i < points.length; i++) lengths.push(lengths[i - 1] + Math.hypot(points[i].x - points[i - 1].x, points[i].y - points[i - 1].y));
  const total = lengths.at(-1);
  const ns = 'http://www.w3.org/2000/svg';
  const g = document.createElementNS(ns, 'g');
  g.setAttribute('class', 'ft-travel');
  g.dataset.flow = flowId;
  g.dataset.instance = String(instanceKey);
  const dot = document.createElementNS(ns, 'circle');
  dot.setAttribute('r', '9');
  dot.setAttribute('fill', colourOf(instanceKey));
  const text = document.createElementNS(ns, 'text');
  text.textContent = String(indexOf(instanceKey) + 1);
  g.append(dot, text);
  canvas.getLayer('ft-travel', 1000).append(g);
  const at = (d) => {
    let i = 1;
    while (i < lengths.length - 1 && lengths[i] < d) i++;
    const seg = lengths[i] - lengths[i - 1] || 1;
    const f = Math.min(1, Math.max(0, (d - lengths[i - 1]) / seg));
    return { x: points[i - 1].x + (points[i].x - points[i - 1].x) * f, y: points[i - 1].y + (points[i].y - points[i - 1].y) * f };
  };
  const duration = travelTime(speed);
  return new Promise((resolve) => {
    const t0 = performance.now();
    const frame = (now) => {
      const f = Math.min(1, (now - t0) / duration);
      const p = at(f * total);
      g.setAttribute('transform', `translate(${p.x} ${p.y})`);
      if (f < 1 && g.isConnected) requestAnimationFrame(frame);
      else {
        g.remove();
        resolve();
      }
    };
    frame(t0);
  });
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
    case 'decisionEvaluated':
      decisionEvaluated(ev);
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

// renderTokens draws, for every instance the filter lets through, one
// badge per element holding its tokens, in the instance's colour, badges
// of several instances side by side. The shown instance's tokens are the
// engine's snapshot when every event has been played, the replayed
// positions before; the other instances' are their snapshots.
function renderTokens() {
  overlays.remove({ type: 'token' });
  const at = new Map(); // elementId -> Map(instanceKey -> { n, waiting })
  const add = (key, elementId, waiting) => {
    if (sim.hidden.has(key) || !registry.get(elementId)) return;
    if (!at.has(elementId)) at.set(elementId, new Map());
    const byInstance = at.get(elementId);
    const cur = byInstance.get(key) ?? { n: 0, waiting: new Set() };
    cur.n++;
    if (waiting) cur.waiting.add(waiting);
    byInstance.set(key, cur);
  };
  if (sim.instanceKey) {
    if (sim.queue.length === 0 && sim.snapshot.info) for (const t of sim.snapshot.tokens) add(sim.instanceKey, t.elementId, t.waiting);
    else for (const el of sim.replay.values()) add(sim.instanceKey, el, '');
  }
  for (const [key, tokens] of sim.others) for (const t of tokens) add(key, t.elementId, t.waiting);
  for (const [elementId, byInstance] of at) {
    let slot = 0;
    for (const key of [...byInstance.keys()].sort((a, b) => a - b)) {
      const { n, waiting } = byInstance.get(key);
      const w = [...waiting].join(' ');
      overlays.add(elementId, 'token', {
        position: { top: -12, left: -12 + 30 * slot++ },
        html: `<div class="token" style="--instance: ${colourOf(key)}" data-element="${elementId}" data-instance="${key}"${key === sim.instanceKey ? ' data-shown' : ''} data-waiting="${w}" title="${n} token(s) of instance ${indexOf(key) + 1} (#${key})${w ? ', waiting: ' + w : ''}">${n}</div>`,
      });
    }
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
  // The filter: one chip per live instance, checked while its tokens are drawn.
  const live = sim.instances.filter((i) => i.state === 'active' || i.key === sim.instanceKey);
  $('token-filter').replaceChildren(
    ...live.map((i) => {
      const chip = document.createElement('label');
      chip.style.setProperty('--instance', colourOf(i.key));
      chip.title = `draw the tokens of #${i.key}`;
      const box = Object.assign(document.createElement('input'), { type: 'checkbox', checked: !sim.hidden.has(i.key) });
      box.dataset.instance = String(i.key);
      box.onchange = () => {
        if (box.checked) sim.hidden.delete(i.key);
        else sim.hidden.add(i.key);
        renderTokens();
      };
      chip.append(box, `${indexOf(i.key) + 1}: #${i.key}`);
      return chip;
    }),
  );
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

// Choices at gateways. With "choose at gateways" on, the engine stops a
// token before a diverging exclusive or inclusive gateway routes it
// (setGatewayChoices): the token waits for "choice", with what the
// gateway's conditions say (token.choice: the flows whose condition holds
// and those the gateway would take). The page highlights the gateway's
// outgoing flows, labels each with its condition and whether it holds,
// and routes by the flow clicked (chooseFlows): an explicit override the
// engine records as a flowsChosen event, so the path drawn is the path
// the token took. An inclusive gateway takes the flows ticked in the
// waiting panel (a click on the diagram ticks one); "let the conditions
// decide" routes as the engine would have.

// choiceMarks are the markers and overlays of the choices on display.
const choiceMarks = new Set();

function clearChoices() {
  for (const key of choiceMarks) {
    const [id, cls] = key.split(' ');
    if (registry.get(id)) canvas.removeMarker(id, cls);
  }
  choiceMarks.clear();
  overlays.remove({ type: 'choice' });
}

function choiceMark(id, cls, on = true) {
  if (!registry.get(id)) return;
  if (on) {
    canvas.addMarker(id, cls);
    choiceMarks.add(`${id} ${cls}`);
  } else {
    canvas.removeMarker(id, cls);
    choiceMarks.delete(`${id} ${cls}`);
  }
}

// conditionOf is the text of a flow's condition, "default" for the
// gateway's default flow, or "" when it has none.
function conditionOf(flow, gateway) {
  if (gateway.default === flow) return 'default';
  return flow.conditionExpression?.body?.trim() ?? '';
}

// choiceRow offers the choice token t waits for at its gateway: in the
// waiting panel, and on the diagram as highlighted, labelled flows.
function choiceRow(t) {
  const gateway = registry.get(t.elementId)?.businessObject;
  const row = document.createElement('div');
  row.className = 'wait choice';
  row.dataset.element = t.elementId;
  if (!gateway) return row;
  const inclusive = gateway.$type === 'bpmn:InclusiveGateway';
  const { holds = [], takes = [], error } = t.choice ?? {};
  row.innerHTML = `<div>Choose at <b>${escape(label(t.elementId))}</b> <small>(the conditions ${
    error ? `cannot decide: ${escape(error)}` : `take ${escape(takes.join(', ') || 'nothing')}`
  })</small></div>`;
  const boxes = [];
  for (const f of gateway.outgoing ?? []) {
    const cond = conditionOf(f, gateway);
    const held = cond === 'default' ? takes.includes(f.id) : holds.includes(f.id);
    const line = document.createElement('div');
    line.className = 'flow';
    line.dataset.flow = f.id;
    const verdict = cond === 'default' ? (held ? 'taken by default' : 'default') : held ? 'holds' : 'does not hold';
    if (inclusive) {
      const box = Object.assign(document.createElement('input'), { type: 'checkbox', checked: takes.includes(f.id), className: 'pick' });
      box.dataset.flow = f.id;
      box.style.width = 'auto';
      box.onchange = () => choiceMark(f.id, 'ft-picked', box.checked);
      boxes.push(box);
      line.append(box);
      if (box.checked) choiceMark(f.id, 'ft-picked');
    } else {
      const btn = Object.assign(document.createElement('button'), { className: 'choose-flow', textContent: `Take ${f.name || f.id}` });
      btn.dataset.flow = f.id;
      btn.onclick = () => choose(t, [f.id]);
      line.append(btn);
    }
    line.insertAdjacentHTML('beforeend', `${inclusive ? ` ${escape(f.name || f.id)}` : ''} ${cond && cond !== 'default' ? `<code>${escape(cond)}</code>` : ''} <span class="${held ? 'holds' : 'fails'}">${verdict}</span>`);
    row.append(line);
    // On the diagram: the flow is highlighted and clickable, labelled with its condition.
    choiceMark(f.id, 'ft-choice');
    overlays.add(f.id, 'choice', {
      position: { top: -22, left: 0 },
      html: `<div class="choice-label" data-flow="${escape(f.id)}" data-holds="${held}">${escape(cond && cond !== 'default' ? cond : cond || 'no condition')} ${held ? '✓' : '✗'}</div>`,
    });
  }
  const bar = document.createElement('div');
  bar.className = 'row';
  if (inclusive) {
    const take = Object.assign(document.createElement('button'), { className: 'take-picked', textContent: 'Take the ticked flows' });
    take.onclick = () => {
      const ids = boxes.filter((b) => b.checked).map((b) => b.dataset.flow);
      if (!ids.length) return log('error', `choose at ${t.elementId}: tick at least one flow, or let the conditions decide`);
      choose(t, ids);
    };
    bar.append(take);
  }
  const decide = Object.assign(document.createElement('button'), { className: 'decide', textContent: 'Let the conditions decide' });
  decide.onclick = () => choose(t, []);
  bar.append(decide);
  row.append(bar);
  return row;
}

// choose routes token t out of its gateway through flowIds (none: by the
// conditions), as one logged action.
function choose(t, flowIds) {
  const what = flowIds.length ? `choose ${flowIds.join(', ')} at ${t.elementId}` : `let ${t.elementId} decide`;
  return act(what, async (e) => {
    await e.chooseFlows(sim.instanceKey, t.id, flowIds);
    log('info', flowIds.length ? `chose ${flowIds.join(', ')} out of ${label(t.elementId)} (the conditions take ${t.choice?.takes?.join(', ') || 'nothing'})` : `${label(t.elementId)} routed by its conditions`);
  });
}

// flowClicked routes by a click on a flow out of a gateway where a token
// of the shown instance waits for a choice.
function flowClicked(flow) {
  const src = flow.businessObject.sourceRef;
  const t = sim.queue.length ? null : sim.snapshot.tokens.find((k) => k.waiting === 'choice' && k.elementId === src.id);
  if (!t) {
    log('error', `take ${flow.id}: no token of the shown instance waits for a choice at ${label(src.id)}; tick "choose at gateways" before a token reaches it`);
    return;
  }
  if (src.$type === 'bpmn:InclusiveGateway') {
    const box = document.querySelector(`.wait.choice input.pick[data-flow="${CSS.escape(flow.id)}"]`);
    if (box) {
      box.checked = !box.checked;
      box.onchange();
    }
    return;
  }
  choose(t, [flow.id]);
}

// icons are the context pad's icons as inline SVG (24x24 view box, drawn
// with strokes in the text colour): glyphs such as ⏱ depend on the
// system's fonts, and Debian's Chromium has none for some of them.
const icons = {
  complete: '<path d="M4 13l5 5L20 6"/>',
  fail: '<path d="M6 6l12 12M18 6L6 18"/>',
  message: '<rect x="3" y="6" width="18" height="12" rx="1"/><path d="M3 7l9 6 9-6"/>',
  signal: '<path d="M12 4l9 16H3z"/>',
  timer: '<circle cx="12" cy="13" r="8"/><path d="M12 13V8M12 13l3 2M10 3h4"/>',
};
const iconSVG = (name) =>
  `<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" data-icon="${name}">${icons[name]}</svg>`;

// pad adds a button to the context pad drawn beside a waiting element on
// the diagram: the same action as the waiting panel's, where it waits.
function pad(elementId, cls, icon, title, run) {
  if (!registry.get(elementId)) return;
  let box = document.querySelector(`.ft-pad[data-element="${CSS.escape(elementId)}"]`);
  if (!box) {
    box = Object.assign(document.createElement('div'), { className: 'ft-pad' });
    box.dataset.element = elementId;
    overlays.add(elementId, 'pad', { position: { top: -14, right: 4 }, html: box });
  }
  const btn = Object.assign(document.createElement('button'), { className: cls, title, innerHTML: iconSVG(icon) });
  btn.setAttribute('aria-label', title);
  btn.onclick = run;
  box.append(btn);
}

function renderWaiting() {
  const el = $('waiting');
  el.replaceChildren();
  overlays.remove({ type: 'pad' });
  clearChoices();
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
    pad(job.elementId, 'complete', 'complete', `complete ${job.type} with the panel's variables`, complete);
    pad(job.elementId, 'fail', 'fail', `fail ${job.type} (retries ${job.retries} → ${Math.max(0, job.retries - 1)})`, fail);
    el.append(row);
  }
  for (const t of tokens) {
    if (t.waiting === 'choice') {
      el.append(choiceRow(t));
      continue;
    }
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
      const icon = { messageSubscribed: 'message', signalSubscribed: 'signal' }[sub.type] ?? 'timer';
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

// ---- decisions ------------------------------------------------------------------

// The decision panel shows the decision a business rule task of the shown
// instance evaluated last (its decisionEvaluated event): the decision
// table as dmn-js draws it (a viewer), the rules that matched
// highlighted, and the outputs. A decision that required others has a
// tab for each decision whose rules matched.

let dmnViewer = null;
// dmnImported is the DMN XML the viewer holds.
let dmnImported = '';
// decisionGen counts the panel's renders: an import still running when
// another decision (or none) is shown gives up.
let decisionGen = 0;

// decisionEvaluated records a business rule task's evaluation and shows it.
function decisionEvaluated(ev) {
  const v = ev.variables ?? {};
  const id = v.decisionId ?? ev.name;
  sim.decision = {
    elementId: ev.elementId,
    decisionId: id,
    decisionName: v.decisionName,
    version: v.decisionVersion,
    result: v.result,
    matchedRules: v.matchedRules ?? [],
    open: id,
  };
  showDecision();
}

function hideDecision() {
  decisionGen++;
  sim.decision = null;
  $('decision-panel').hidden = true;
}

// showDecision renders sim.decision: title, tabs, outputs, and the open
// decision's table with its matched rules highlighted.
async function showDecision() {
  const d = sim.decision;
  if (!d) return;
  const gen = ++decisionGen;
  const panel = $('decision-panel');
  panel.hidden = false;
  panel.dataset.element = d.elementId ?? '';
  panel.dataset.decision = d.open;
  $('decision-title').textContent = `${label(d.elementId)}: ${d.decisionName || d.decisionId}${d.version ? ` v${d.version}` : ''}`;
  const ids = [...new Set([d.decisionId, ...d.matchedRules.map((r) => r.decisionId)])];
  $('decision-tabs').replaceChildren(
    ...(ids.length < 2
      ? []
      : ids.map((id) => {
          const b = Object.assign(document.createElement('button'), { className: `decision-tab${id === d.open ? ' open' : ''}`, textContent: id });
          b.dataset.decision = id;
          b.onclick = () => {
            d.open = id;
            showDecision();
          };
          return b;
        })),
  );
  const matched = d.matchedRules.filter((r) => r.decisionId === d.open);
  $('decision-result').innerHTML = `output <code class="decision-output">${escape(JSON.stringify(d.result))}</code> · ${
    matched.length ? `matched ${matched.map((r) => `rule ${r.ruleIndex}${r.ruleId ? ` (${escape(r.ruleId)})` : ''}`).join(', ')}` : 'no rule matched'
  }`;
  const box = $('decision-table');
  const xml = sim.decisionSources.get(d.open);
  if (!xml) {
    box.hidden = true;
    $('decision-result').append(note(`no DMN model deployed by this page has decision ${d.open}`));
    return;
  }
  box.hidden = false;
  try {
    dmnViewer ??= new DmnViewer({ container: box });
    if (dmnImported !== xml) {
      dmnImported = '';
      await dmnViewer.importXML(xml);
      dmnImported = xml;
    }
    if (gen !== decisionGen) return;
    const view = dmnViewer.getViews().find((v) => v.element.id === d.open);
    if (view && dmnViewer.getActiveView() !== view) await dmnViewer.open(view);
  } catch (err) {
    log('error', `decision ${d.open}: dmn-js cannot show it: ${err.message}`);
    return;
  }
  if (gen !== decisionGen) return;
  for (const tr of box.querySelectorAll('tr.ft-matched')) {
    tr.classList.remove('ft-matched');
    delete tr.dataset.ruleIndex;
    delete tr.dataset.ruleId;
  }
  const rows = box.querySelectorAll('tbody tr');
  for (const r of matched) {
    const cell = r.ruleId ? box.querySelector(`td[data-row-id="${CSS.escape(r.ruleId)}"]`) : null;
    const tr = cell?.closest('tr') ?? rows[r.ruleIndex - 1];
    if (!tr) continue;
    tr.classList.add('ft-matched');
    tr.dataset.ruleIndex = String(r.ruleIndex);
    if (r.ruleId) tr.dataset.ruleId = r.ruleId;
  }
  box.querySelector('tr.ft-matched')?.scrollIntoView({ block: 'nearest' });
}

// ---- model loading -----------------------------------------------------------

// isDMN tells a DMN model from a BPMN one by its root element's namespace.
function isDMN(xml) {
  const root = new DOMParser().parseFromString(xml, 'application/xml').documentElement;
  return /\/spec\/DMN\//.test(root?.namespaceURI ?? '');
}

// modelName is what the header shows: the BPMN and the DMN beside it.
const modelName = () => [sim.name, ...sim.dmn.map((m) => m.name)].join(' + ');

// openFiles loads what the file input gave: a BPMN with the DMN models
// selected with it, or DMN models alone, added beside the model shown
// (a DMN of the same name replaces the one before).
async function openFiles(files) {
  const read = await Promise.all([...files].map(async (f) => ({ name: f.name, xml: await f.text() })));
  const dmn = read.filter((f) => isDMN(f.xml));
  const bpmn = read.filter((f) => !isDMN(f.xml));
  if (bpmn.length > 1) log('error', `open: one BPMN model at a time; opening ${bpmn[0].name}, not ${bpmn.slice(1).map((f) => f.name).join(', ')}`);
  if (bpmn.length) {
    sim.dmn = dmn;
    return loadModel(bpmn[0].xml, bpmn[0].name);
  }
  sim.dmn = [...sim.dmn.filter((m) => !dmn.some((n) => n.name === m.name)), ...dmn];
  log('info', `${dmn.map((m) => m.name).join(', ')} beside ${sim.name}: deploying again`);
  return loadModel(sim.xml, sim.name);
}

// hasDiagram tells whether a BPMN document has a diagram (BPMN DI) to draw;
// text that is not XML counts as having one, for importXML to report.
function hasDiagram(xml) {
  const doc = new DOMParser().parseFromString(xml, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length) return true;
  return doc.getElementsByTagNameNS('http://www.omg.org/spec/BPMN/20100524/DI', 'BPMNDiagram').length > 0;
}

// problemLine renders a deploy problem as the CLI's validate does:
// "file:line:col: rule: element: message".
function problemLine(file, p) {
  return `${file}${p.line > 0 ? `:${p.line}:${p.column}` : ''}: ${p.ruleId ? p.ruleId + ': ' : ''}${p.elementId ? p.elementId + ': ' : ''}${p.rule}`;
}

// checkSource deploys a model as the user wrote it into a scratch engine
// on the page, and returns the engine's error for it, or null. A model
// without layout deploys laid out (so a saved session shows a diagram),
// but its problems are those of the user's file, with its lines, as
// `flowtrack validate` reports them, not those of the laid-out copy.
async function checkSource(xml, name) {
  const scratch = await Engine.create({ wasm: await loadModule() });
  try {
    await scratch.deploy(xml, name);
    return null;
  } catch (err) {
    return err;
  } finally {
    scratch.close();
  }
}

// rejected shows why the engine refused a model: the error and each
// problem in the log (the CLI's form), each problem on its element; no
// process of it (nor of the model shown before) is offered.
function rejected(name, err) {
  status('error', 'model rejected');
  log('error', `deploy ${name}: ${err.name}${err.code ? ` [${err.code}]` : ''}: ${err.message}`);
  showProcesses([]);
  for (const p of err.problems ?? []) {
    log('error', `  ${problemLine(name, p)}`);
    if (!p.elementId || !registry.get(p.elementId)) continue;
    mark(p.elementId, 'ft-error');
    overlays.add(p.elementId, 'problem', {
      position: { bottom: -4, left: 0 },
      html: `<div class="problem" data-element="${escape(p.elementId)}">${escape(p.rule)}</div>`,
    });
  }
}

async function loadModel(xml, name) {
  let sourceErr = null;
  try {
    if (!hasDiagram(xml)) {
      // A model without diagram layout (written by a tool or by hand):
      // bpmn-auto-layout draws it. The laid-out XML is what deploys, so
      // the session's state document carries a diagram that shows; the
      // user's own file is checked first, so that its problems are
      // reported as they are in it.
      sourceErr = await checkSource(xml, name);
      xml = await layoutProcess(xml);
      log('info', `${name} has no diagram layout: laid out automatically`);
    }
    const { warnings } = await viewer.importXML(xml);
    for (const w of warnings) log('warn', `bpmn-js: ${w.message}`);
    canvas.zoom('fit-viewport', 'auto');
  } catch (err) {
    log('error', `cannot render ${name}: ${err.message}`);
    if (sourceErr) rejected(name, sourceErr);
    return;
  }
  sim.xml = xml;
  sim.name = name;
  $('model-name').textContent = modelName();
  if (sourceErr) {
    // Nothing of the rejected model runs.
    sim.engine?.close();
    sim.engine = null;
    clearInstance();
    sim.checkpoints = [];
    renderBack();
    progress('', null, true);
    rejected(name, sourceErr);
    return;
  }
  try {
    await resetEngine();
  } catch (err) {
    progress('', null, true);
    rejected(err.resource ?? name, err);
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
    const dep = doc?.deployments?.filter((d) => d.processes).at(-1);
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
    // The DMN models deployed (the newest of each name), for the decision panel and Reset.
    const dmn = new Map();
    for (const d of doc.deployments) if (!d.processes && isDMN(d.bpmn)) dmn.set(d.name, { name: d.name, xml: d.bpmn });
    sim.dmn = [...dmn.values()];
    sim.decisionSources.clear();
    for (const m of sim.dmn) {
      const ids = new DOMParser().parseFromString(m.xml, 'application/xml').getElementsByTagNameNS('*', 'decision');
      for (const el of ids) sim.decisionSources.set(el.getAttribute('id'), m.xml);
    }
    if (sim.decision) showDecision();
    $('model-name').textContent = modelName();
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
  const files = ev.target.files;
  if (files?.length) await openFiles(files);
  ev.target.value = '';
};
$('example').onchange = async (ev) => {
  const x = examples[ev.target.value];
  sim.dmn = x.dmn;
  $('start-vars').value = x.vars;
  await loadModel(x.xml, x.name);
};
$('decision-close').onclick = () => hideDecision();
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
// Clicking a flow out of an exclusive or inclusive gateway chooses it for
// the token waiting there.
viewer.get('eventBus').on('element.click', ({ element }) => {
  const src = element.businessObject?.sourceRef;
  if (element.type !== 'bpmn:SequenceFlow' || !['bpmn:ExclusiveGateway', 'bpmn:InclusiveGateway'].includes(src?.$type)) return;
  if (!sim.instanceKey || sim.snapshot.info?.state !== 'active') return log('error', `take ${element.id}: no active instance shown`);
  flowClicked(element);
});
$('choose').onchange = async (ev) => {
  const on = ev.target.checked;
  if (!sim.engine) return;
  try {
    await sim.engine.setGatewayChoices(on);
    log('info', on ? 'choose at gateways: tokens stop before exclusive and inclusive gateways route' : 'gateways route by their conditions');
  } catch (err) {
    log('error', `choose at gateways: ${err.name}: ${err.message}`);
  }
};
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
