// Camunda 8's official clients against flowtrack serve --http: the
// Orchestration Cluster API client (@camunda8/orchestration-cluster-api,
// its methods and its createJobWorker) and the 8.8 SDK's REST job worker
// (@camunda8/sdk), with the client's strict response validation (its zod
// schemas, generated from Camunda's OpenAPI description) on, so every
// answer has the documented shape.
//
// FLOWTRACK_CLUSTER=1 runs the same suite against three cluster nodes,
// the clients speaking to the first, and kills the second (SIGKILL) in the
// middle: the cluster's other nodes take its partitions over.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import createCamundaClient from '@camunda8/orchestration-cluster-api';
import { Camunda8 } from '@camunda8/sdk';
import { cluster, single, stop } from './serve.mjs';

const clustered = process.env.FLOWTRACK_CLUSTER === '1';
let served, camunda, base;

const model = (name) => new URL(`models/${name}`, import.meta.url).pathname;
const file = (name) => new File([readFileSync(model(name))], name, { type: 'application/xml' });
// eventually: the search and get methods' consistency option, polling
// until the predicate holds (flowtrack's searches read a projection of
// the engine's events, as Camunda's read its exporter's).
const eventually = (predicate) => ({ consistency: { waitUpToMs: 20_000, pollIntervalMs: 100, predicate } });

before(async () => {
  served = clustered ? await cluster(3) : await single();
  base = served.urls[0];
  camunda = createCamundaClient({
    config: {
      CAMUNDA_REST_ADDRESS: base,
      CAMUNDA_AUTH_STRATEGY: 'NONE',
      // Responses are checked strictly. Requests are not: the strict
      // request check replaces a body by what its schema parsed, and the
      // page union's first member ({limit}) drops "from" and "after".
      CAMUNDA_SDK_VALIDATION: 'req:none,res:strict',
      CAMUNDA_SDK_LOG_LEVEL: process.env.CAMUNDA_SDK_LOG_LEVEL ?? 'silent',
      CAMUNDA_SDK_HTTP_RETRY_MAX_ATTEMPTS: '8',
    },
  });
});

after(async () => {
  await served?.close();
});

let definitions;

test('topology answers one broker per node, with the partitions it holds', async () => {
  const t = await camunda.getTopology();
  assert.equal(t.brokers.length, clustered ? 3 : 1);
  assert.equal(t.partitionsCount, clustered ? 6 : 1);
  const held = t.brokers.flatMap((b) => b.partitions.map((p) => p.partitionId));
  assert.equal(new Set(held).size, held.length, 'a partition is held by one node');
  assert.ok(held.every((p) => p >= 1 && p <= t.partitionsCount));
  assert.equal(typeof t.gatewayVersion, 'string');
});

test('a deployment of several resources deploys every process', async () => {
  const res = await camunda.createDeployment({
    resources: ['straight.bpmn', 'retry.bpmn', 'boundary.bpmn', 'message.bpmn', 'signal.bpmn', 'usertask.bpmn', 'timer.bpmn'].map(file),
  });
  definitions = Object.fromEntries(res.deployments.map((d) => [d.processDefinition.processDefinitionId, d.processDefinition]));
  assert.deepEqual(Object.keys(definitions).sort(), ['ct-boundary', 'ct-message', 'ct-retry', 'ct-review', 'ct-signal', 'ct-straight', 'ct-timer']);
  assert.match(res.deploymentKey, /^[0-9]+$/);
  const again = await camunda.deployResourcesFromFiles([model('straight-v2.bpmn')]);
  assert.equal(again.processes[0].processDefinitionVersion, 2, 'a changed model is the next version');
});

test('a broken model is a 400 problem detail', async () => {
  const bad = new File(['<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"><bpmn:process id="x" isExecutable="true"><bpmn:sequenceFlow id="f" sourceRef="a" targetRef="b"/></bpmn:process></bpmn:definitions>'], 'bad.bpmn');
  await assert.rejects(camunda.createDeployment({ resources: [bad] }), (e) => e.status === 400);
});

test('process definitions: search, get and XML', async () => {
  const page = await camunda.searchProcessDefinitions({ filter: { processDefinitionId: 'ct-straight' }, sort: [{ field: 'version', order: 'DESC' }] }, eventually((r) => r.items.length === 2));
  assert.deepEqual(page.items.map((d) => d.version), [2, 1]);
  const latest = await camunda.searchProcessDefinitions({ filter: { processDefinitionId: 'ct-straight', isLatestVersion: true } }, eventually(() => true));
  assert.deepEqual(latest.items.map((d) => d.version), [2]);
  const def = await camunda.getProcessDefinition({ processDefinitionKey: definitions['ct-straight'].processDefinitionKey }, eventually(() => true));
  assert.equal(def.processDefinitionId, 'ct-straight');
  assert.equal(def.version, 1);
  const xml = await camunda.getProcessDefinitionXml({ processDefinitionKey: def.processDefinitionKey }, eventually(() => true));
  assert.match(String(xml), /id="ct-straight"/);
});

test('create-and-await with a createJobWorker completing the jobs', async () => {
  const worker = camunda.createJobWorker({
    jobType: 'ct.double', maxParallelJobs: 4, jobTimeoutMs: 30_000, pollIntervalMs: 50, fetchVariables: ['amount'],
    jobHandler: (job) => {
      assert.deepEqual(Object.keys(job.variables), ['amount'], 'fetchVariable limits the variables');
      return job.complete({ doubled: job.variables.amount * 2 });
    },
  });
  try {
    const res = await camunda.createProcessInstance({ processDefinitionId: 'ct-straight', variables: { amount: 21, other: 'x' },
      awaitCompletion: true, fetchVariables: ['doubled'], requestTimeout: 30_000 });
    assert.deepEqual(res.variables, { doubled: 42 });
    assert.equal(res.processDefinitionVersion, 2);
    const inst = await camunda.getProcessInstance({ processInstanceKey: res.processInstanceKey }, eventually((r) => r.state === 'COMPLETED'));
    assert.equal(inst.state, 'COMPLETED');
    assert.ok(inst.endDate);
  } finally {
    worker.stop();
  }
});

test('the 8.8 SDK REST worker fails jobs with retries and back-off, then completes them', async () => {
  const c8 = new Camunda8({ ZEEBE_REST_ADDRESS: base, CAMUNDA_AUTH_STRATEGY: 'NONE', CAMUNDA_LOG_LEVEL: 'none' });
  const rest = c8.getCamundaRestClient();
  const attempts = [];
  const worker = rest.createJobWorker({
    type: 'ct.flaky', maxJobsToActivate: 2, timeout: 30_000, worker: 'sdk-8.8', pollIntervalMs: 50,
    jobHandler: (job) => {
      attempts.push({ retries: job.retries, at: Date.now() });
      if (attempts.length < 3) return job.fail({ errorMessage: `attempt ${attempts.length}`, retries: job.retries - 1, retryBackOff: 300 });
      return job.complete({ attempts: attempts.length });
    },
  });
  try {
    const res = await camunda.createProcessInstance({ processDefinitionId: 'ct-retry', awaitCompletion: true, requestTimeout: 30_000 });
    assert.equal(res.variables.attempts, 3);
    assert.deepEqual(attempts.map((a) => a.retries), [3, 2, 1]);
    for (let i = 1; i < attempts.length; i++) assert.ok(attempts[i].at - attempts[i - 1].at >= 250, 'the back-off holds the retry');
  } finally {
    await worker.stop();
  }
});

test('a BPMN error thrown by a worker is caught by the boundary event', async () => {
  const worker = camunda.createJobWorker({
    jobType: 'ct.reserve', maxParallelJobs: 1, jobTimeoutMs: 30_000, pollIntervalMs: 50,
    jobHandler: (job) => job.error({ errorCode: 'NOT_IN_STOCK', errorMessage: 'none left' }),
  });
  try {
    const res = await camunda.createProcessInstance({ processDefinitionId: 'ct-boundary', awaitCompletion: true, requestTimeout: 30_000 });
    const els = await camunda.searchElementInstances({ filter: { processInstanceKey: res.processInstanceKey }, sort: [{ field: 'startDate' }] },
      eventually((r) => r.items.some((e) => e.elementId === 'backordered' && e.state === 'COMPLETED')));
    const ids = els.items.map((e) => e.elementId);
    assert.ok(ids.includes('outOfStock') && ids.includes('backordered') && !ids.includes('reserved'), ids.join());
    assert.equal(els.items.find((e) => e.elementId === 'reserve').state, 'TERMINATED');
  } finally {
    worker.stop();
  }
});

test('messages: published with a key and a TTL before the instance waits, and correlated to a waiting one', async () => {
  await camunda.publishMessage({ name: 'ct-paid', correlationKey: 'order-1', timeToLive: 60_000, variables: { amountPaid: 10 } });
  const early = await camunda.createProcessInstance({ processDefinitionId: 'ct-message', variables: { orderId: 'order-1' },
    awaitCompletion: true, requestTimeout: 30_000 });
  assert.equal(early.variables.amountPaid, 10, 'the buffered message correlated on arrival');

  const waiting = await camunda.createProcessInstance({ processDefinitionId: 'ct-message', variables: { orderId: 'order-2' } });
  const corr = await camunda.correlateMessage({ name: 'ct-paid', correlationKey: 'order-2', variables: { amountPaid: 20 } });
  assert.equal(corr.processInstanceKey, waiting.processInstanceKey);
  const done = await camunda.getProcessInstance({ processInstanceKey: waiting.processInstanceKey }, eventually((r) => r.state === 'COMPLETED'));
  assert.equal(done.state, 'COMPLETED');
  await assert.rejects(camunda.correlateMessage({ name: 'ct-paid', correlationKey: 'nobody' }), (e) => e.status === 404);
});

test('a signal broadcast reaches every waiting instance', async () => {
  const a = await camunda.createProcessInstance({ processDefinitionId: 'ct-signal' });
  const b = await camunda.createProcessInstance({ processDefinitionId: 'ct-signal' });
  await camunda.searchElementInstances({ filter: { elementId: 'go', state: 'ACTIVE' } },
    eventually((r) => [a, b].every((i) => r.items.some((e) => e.processInstanceKey === i.processInstanceKey))));
  const sig = await camunda.broadcastSignal({ signalName: 'ct-go' });
  assert.match(sig.signalKey, /^[0-9]+$/);
  for (const i of [a, b]) {
    const done = await camunda.getProcessInstance({ processInstanceKey: i.processInstanceKey }, eventually((r) => r.state === 'COMPLETED'));
    assert.equal(done.state, 'COMPLETED');
  }
});

if (clustered) {
  test('the cluster loses a node in the middle of the suite, and serves again', async () => {
    await stop(served.nodes[1], { kill: true });
    // While the dead node's partitions and stream leaders move, commands
    // are answered 503 (no owner yet) or 504 (taken, outcome unknown).
    // The cluster serves again once creations succeed on every
    // partition (they are spread round robin) a few times in a row.
    const deadline = Date.now() + 90_000;
    let streak = 0;
    while (streak < 18) {
      assert.ok(Date.now() < deadline, 'the cluster did not serve again within 90 s of the kill');
      try {
        await camunda.createProcessInstance({ processDefinitionId: 'ct-signal' });
        streak++;
      } catch (e) {
        assert.ok([503, 504].includes(e.status), `a failover answer is 503 or 504, not ${e.status}: ${e.message}`);
        streak = 0;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    await camunda.broadcastSignal({ signalName: 'ct-go' });
  });
}

if (clustered) {
  test('another node answers for the whole cluster', async () => {
    const other = createCamundaClient({ config: { CAMUNDA_REST_ADDRESS: served.urls[2], CAMUNDA_AUTH_STRATEGY: 'NONE',
      CAMUNDA_SDK_VALIDATION: 'req:none,res:strict', CAMUNDA_SDK_LOG_LEVEL: 'silent', CAMUNDA_SDK_HTTP_RETRY_MAX_ATTEMPTS: '8' } });
    // A worker on the first node completes the jobs of an instance the
    // third node creates and awaits.
    const worker = camunda.createJobWorker({ jobType: 'ct.double', maxParallelJobs: 2, jobTimeoutMs: 30_000, pollIntervalMs: 50,
      jobHandler: (job) => job.complete({ doubled: job.variables.amount * 2 }) });
    try {
      const res = await other.createProcessInstance({ processDefinitionId: 'ct-straight', variables: { amount: 5 },
        awaitCompletion: true, fetchVariables: ['doubled'], requestTimeout: 30_000 });
      assert.deepEqual(res.variables, { doubled: 10 });
      const seen = await camunda.getProcessInstance({ processInstanceKey: res.processInstanceKey }, eventually((r) => r.state === 'COMPLETED'));
      assert.equal(seen.state, 'COMPLETED');
    } finally {
      worker.stop();
    }
  });
}

test('an incident is resolved after its job gets retries again', async () => {
  const inst = await camunda.createProcessInstance({ processDefinitionId: 'ct-retry' });
  const { jobs } = await camunda.activateJobs({ type: 'ct.flaky', worker: 'direct', timeout: 30_000, maxJobsToActivate: 1, requestTimeout: 20_000 });
  assert.equal(jobs.length, 1);
  assert.equal(jobs[0].processInstanceKey, inst.processInstanceKey);
  await camunda.failJob({ jobKey: jobs[0].jobKey, retries: 0, errorMessage: 'the ledger is down' });
  const found = await camunda.searchIncidents({ filter: { processInstanceKey: inst.processInstanceKey, state: 'ACTIVE' } },
    eventually((r) => r.items.length === 1));
  const incident = found.items[0];
  assert.equal(incident.errorType, 'JOB_NO_RETRIES');
  assert.equal(incident.errorMessage, 'the ledger is down');
  assert.equal(incident.jobKey, jobs[0].jobKey);
  const got = await camunda.getIncident({ incidentKey: incident.incidentKey }, eventually(() => true));
  assert.equal(got.processInstanceKey, inst.processInstanceKey);
  const pi = await camunda.getProcessInstance({ processInstanceKey: inst.processInstanceKey }, eventually((r) => r.hasIncident));
  assert.ok(pi.hasIncident);

  await camunda.updateJob({ jobKey: jobs[0].jobKey, changeset: { retries: 1 } });
  await camunda.resolveIncident({ incidentKey: incident.incidentKey });
  const failed = await camunda.searchJobs({ filter: { processInstanceKey: inst.processInstanceKey } }, eventually((r) => r.items.length === 1));
  assert.equal(failed.items[0].state, 'FAILED');
  assert.equal(failed.items[0].retries, 1);
  assert.equal(failed.items[0].errorMessage, 'the ledger is down');
  const again = await camunda.activateJobs({ type: 'ct.flaky', worker: 'direct', timeout: 30_000, maxJobsToActivate: 1, requestTimeout: 20_000 });
  assert.equal(again.jobs[0].jobKey, jobs[0].jobKey);
  assert.equal(again.jobs[0].retries, 1);
  await camunda.completeJob({ jobKey: again.jobs[0].jobKey, variables: { fixed: true } });
  const done = await camunda.getProcessInstance({ processInstanceKey: inst.processInstanceKey }, eventually((r) => r.state === 'COMPLETED'));
  assert.equal(done.hasIncident, false);
  const resolved = await camunda.searchIncidents({ filter: { incidentKey: incident.incidentKey } }, eventually((r) => r.items[0]?.state === 'RESOLVED'));
  assert.equal(resolved.items[0].state, 'RESOLVED');
});

test('job activation long-polls until a job is created', async () => {
  const poll = camunda.activateJobs({ type: 'ct.reserve', worker: 'poller', timeout: 30_000, maxJobsToActivate: 1, requestTimeout: 20_000 });
  await new Promise((r) => setTimeout(r, 300));
  const inst = await camunda.createProcessInstance({ processDefinitionId: 'ct-boundary' });
  const { jobs } = await poll;
  assert.equal(jobs.length, 1);
  assert.equal(jobs[0].processInstanceKey, inst.processInstanceKey);
  assert.equal(jobs[0].worker, 'poller');
  assert.ok(jobs[0].deadline > Date.now());
  await camunda.completeJob({ jobKey: jobs[0].jobKey });
  const empty = await camunda.activateJobs({ type: 'ct.nothing', timeout: 1000, maxJobsToActivate: 1, requestTimeout: 200 });
  assert.deepEqual(empty.jobs, []);
});

test('searches find what was created, page by page', async () => {
  const keys = [];
  for (let i = 0; i < 5; i++) keys.push((await camunda.createProcessInstance({ processDefinitionId: 'ct-signal', variables: { i } })).processInstanceKey);
  const filter = { processDefinitionId: 'ct-signal', state: 'ACTIVE', processInstanceKey: { $in: keys } };
  const first = await camunda.searchProcessInstances({ filter, sort: [{ field: 'processInstanceKey' }], page: { limit: 2 } },
    eventually((r) => r.page.totalItems === 5));
  assert.equal(first.items.length, 2);
  assert.equal(first.page.totalItems, 5);
  const second = await camunda.searchProcessInstances({ filter, sort: [{ field: 'processInstanceKey' }], page: { limit: 2, after: first.page.endCursor } }, eventually(() => true));
  const third = await camunda.searchProcessInstances({ filter, sort: [{ field: 'processInstanceKey' }], page: { from: 4, limit: 2 } }, eventually(() => true));
  const seen = [...first.items, ...second.items, ...third.items].map((p) => p.processInstanceKey);
  assert.deepEqual(seen, [...keys].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)));

  // variables: set on the instance (its element instance), then searched
  await camunda.createElementInstanceVariables({ elementInstanceKey: keys[0], variables: { note: 'vip', i: 100 } });
  const vars = await camunda.searchVariables({ filter: { processInstanceKey: keys[0] } }, eventually((r) => r.items.some((v) => v.name === 'note')));
  const byName = Object.fromEntries(vars.items.map((v) => [v.name, JSON.parse(v.value)]));
  assert.deepEqual(byName, { i: 100, note: 'vip' });

  // cancel one; its state is TERMINATED
  await camunda.cancelProcessInstance({ processInstanceKey: keys[1] });
  const t = await camunda.getProcessInstance({ processInstanceKey: keys[1] }, eventually((r) => r.state === 'TERMINATED'));
  assert.equal(t.state, 'TERMINATED');
  await assert.rejects(camunda.cancelProcessInstance({ processInstanceKey: '999999999' }), (e) => e.status === 404);
  await camunda.broadcastSignal({ signalName: 'ct-go' });
});

test('a user task is found, assigned and completed', async () => {
  const inst = await camunda.createProcessInstance({ processDefinitionId: 'ct-review', variables: { doc: 'a.pdf' } });
  const tasks = await camunda.searchUserTasks({ filter: { processInstanceKey: inst.processInstanceKey, state: 'CREATED' } },
    eventually((r) => r.items.length === 1));
  const task = tasks.items[0];
  assert.equal(task.elementId, 'review');
  assert.deepEqual(task.candidateGroups, ['clerks']);
  await camunda.assignUserTask({ userTaskKey: task.userTaskKey, assignee: 'ada' });
  const assigned = await camunda.searchUserTasks({ filter: { assignee: 'ada', processInstanceKey: inst.processInstanceKey } }, eventually((r) => r.items.length === 1));
  assert.equal(assigned.items[0].assignee, 'ada');
  await camunda.completeUserTask({ userTaskKey: task.userTaskKey, variables: { approved: true } });
  const done = await camunda.getProcessInstance({ processInstanceKey: inst.processInstanceKey }, eventually((r) => r.state === 'COMPLETED'));
  assert.equal(done.state, 'COMPLETED');
  const completed = await camunda.searchUserTasks({ filter: { userTaskKey: task.userTaskKey } }, eventually((r) => r.items[0]?.state === 'COMPLETED'));
  assert.ok(completed.items[0].completionDate);
});

test('an expression is evaluated with FEEL', async () => {
  const res = await camunda.evaluateExpression({ expression: '=sum(items) * rate', variables: { items: [1, 2, 3], rate: 2 } });
  assert.equal(res.result, 12);
  await assert.rejects(camunda.evaluateExpression({ expression: '= 1 +' }), (e) => e.status === 400);
});

test('the clock is pinned and moved to fire a timer, then reset', async () => {
  if (clustered) {
    // A cluster's partitions each keep their own clock: pinning is refused.
    await assert.rejects(camunda.pinClock({ timestamp: Date.now() }), (e) => e.status === 501);
    return;
  }
  const now = Date.now();
  await camunda.pinClock({ timestamp: now });
  try {
    const inst = await camunda.createProcessInstance({ processDefinitionId: 'ct-timer' });
    await camunda.searchElementInstances({ filter: { processInstanceKey: inst.processInstanceKey, elementId: 'wait' } }, eventually((r) => r.items.length === 1));
    await camunda.pinClock({ timestamp: now + 30 * 60_000 });
    const half = await camunda.getProcessInstance({ processInstanceKey: inst.processInstanceKey }, eventually(() => true));
    assert.equal(half.state, 'ACTIVE', 'half an hour is not enough');
    await camunda.pinClock({ timestamp: now + 61 * 60_000 });
    const done = await camunda.getProcessInstance({ processInstanceKey: inst.processInstanceKey }, eventually((r) => r.state === 'COMPLETED'));
    assert.equal(done.state, 'COMPLETED');
    assert.equal(Date.parse(done.endDate), now + 61 * 60_000, 'the instance ended at the pinned instant');
  } finally {
    await camunda.resetClock();
  }
});
