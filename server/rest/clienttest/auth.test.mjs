// Camunda's client authenticating to flowtrack serve --config FILE --http
// as it does to Camunda: Basic (CAMUNDA_AUTH_STRATEGY=BASIC, users of the
// server's configuration) and OAuth client credentials
// (CAMUNDA_AUTH_STRATEGY=OAUTH: the client fetches a token from the token
// endpoint, here a small one in this test that signs RS256 JWTs, and the
// server verifies it against the issuer's key set and maps its roles).

import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import createCamundaClient from '@camunda8/orchestration-cluster-api';
import { single } from './serve.mjs';

// bcrypt hashes of "worker-pw" and "reader-pw" (flowtrack's
// rest.HashPassword makes such hashes): the users of the server
// configuration, the same for NATS and REST.
const users = [
  { name: 'worker', passwordHash: '$2a$10$NdBXRaWSbB1K5F5kD1rLteoG9VdJVm/6E9HtSMWCHOKbG8OFoMvm.', role: 'worker', jobTypes: ['ct.double'] },
  { name: 'reader', passwordHash: '$2a$10$TU22mI1yrdgZqaClKTCr8uvUSctN94MPQ3nUj/VV.wcCzcO5YNPSu', role: 'reader' },
];

const b64url = (b) => Buffer.from(b).toString('base64url');
let served, tokenServer, issued = 0;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const issuer = 'https://idp.flowtrack.test/realms/camunda';

// jwt signs claims with the issuer's key.
function jwt(claims) {
  const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'test-key' }));
  const body = b64url(JSON.stringify(claims));
  return `${head}.${body}.${b64url(sign('sha256', Buffer.from(`${head}.${body}`), privateKey))}`;
}

before(async () => {
  // The token endpoint: client credentials for two clients.
  const clients = { 'ops-client': { secret: 'ops-secret', roles: ['flowtrack-admin'] }, 'guest-client': { secret: 'guest-secret', roles: ['guest'] } };
  tokenServer = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      const form = new URLSearchParams(data);
      const c = clients[form.get('client_id')];
      if (form.get('grant_type') !== 'client_credentials' || !c || c.secret !== form.get('client_secret')) {
        res.writeHead(401).end();
        return;
      }
      issued++;
      const now = Math.floor(Date.now() / 1000);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ token_type: 'Bearer', expires_in: 300,
        access_token: jwt({ iss: issuer, aud: form.get('audience') ?? 'none', sub: form.get('client_id'), iat: now, exp: now + 300, roles: c.roles }) }));
    });
  });
  await new Promise((r) => tokenServer.listen(0, '127.0.0.1', r));

  const tmp = join(process.env.TMPDIR ?? '/tmp', `flowtrack-auth-${process.pid}-${createHash('sha1').update(String(Date.now())).digest('hex').slice(0, 8)}`);
  const jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'test-key', use: 'sig', alg: 'RS256' }] };
  writeFileSync(`${tmp}-jwks.json`, JSON.stringify(jwks));
  writeFileSync(`${tmp}-auth.json`, JSON.stringify({ listen: '127.0.0.1:0', users,
    oauth: { issuer, audience: 'flowtrack-api', jwksFile: `${tmp}-jwks.json`, roles: { 'flowtrack-admin': 'admin' } } }));
  served = await single(['--config', `${tmp}-auth.json`], { port: false });
  served.cleanup = () => { rmSync(`${tmp}-jwks.json`, { force: true }); rmSync(`${tmp}-auth.json`, { force: true }); };
});

after(async () => {
  await served?.close();
  served?.cleanup();
  tokenServer?.close();
});

const client = (config) => createCamundaClient({ config: { CAMUNDA_REST_ADDRESS: served.urls[0], CAMUNDA_SDK_LOG_LEVEL: 'silent',
  CAMUNDA_SDK_HTTP_RETRY_MAX_ATTEMPTS: '1', ...config } });
const oauth = (id, secret) => client({ CAMUNDA_AUTH_STRATEGY: 'OAUTH', CAMUNDA_OAUTH_URL: `http://127.0.0.1:${tokenServer.address().port}/token`,
  CAMUNDA_CLIENT_ID: id, CAMUNDA_CLIENT_SECRET: secret, CAMUNDA_TOKEN_AUDIENCE: 'flowtrack-api' });
const basic = (user, pw) => client({ CAMUNDA_AUTH_STRATEGY: 'BASIC', CAMUNDA_BASIC_AUTH_USERNAME: user, CAMUNDA_BASIC_AUTH_PASSWORD: pw });

test('without credentials every endpoint but status is refused', async () => {
  await assert.rejects(client({ CAMUNDA_AUTH_STRATEGY: 'NONE' }).getTopology(), (e) => e.status === 401);
});

test('an OAuth client with the admin role deploys and starts instances', async () => {
  const ops = oauth('ops-client', 'ops-secret');
  const dep = await ops.deployResourcesFromFiles([new URL('models/straight.bpmn', import.meta.url).pathname]);
  assert.equal(dep.processes[0].processDefinitionId, 'ct-straight');
  const inst = await ops.createProcessInstance({ processDefinitionId: 'ct-straight', variables: { amount: 1 } });
  assert.match(inst.processInstanceKey, /^[0-9]+$/);
  assert.ok(issued >= 1, 'the client fetched a token from the token endpoint');
});

test('a Basic worker works jobs; a reader may read but not work them', async () => {
  const worker = basic('worker', 'worker-pw');
  const { jobs } = await worker.activateJobs({ type: 'ct.double', worker: 'basic', timeout: 10_000, maxJobsToActivate: 1, requestTimeout: 10_000 });
  assert.equal(jobs.length, 1);
  await worker.completeJob({ jobKey: jobs[0].jobKey, variables: { doubled: 2 } });
  // Its job types bound what it activates, as over NATS.
  await assert.rejects(worker.activateJobs({ type: 'ct.other', worker: 'basic', timeout: 1000, maxJobsToActivate: 1, requestTimeout: -1 }), (e) => e.status === 403);
  await assert.rejects(worker.createDeployment({ resources: [new File(['x'], 'x.bpmn')] }), (e) => e.status === 403);

  const reader = basic('reader', 'reader-pw');
  const found = await reader.searchProcessDefinitions({ filter: { processDefinitionId: 'ct-straight' } }, { consistency: { waitUpToMs: 0 } });
  assert.equal(found.items.length, 1);
  await assert.rejects(reader.activateJobs({ type: 'ct.double', timeout: 1000, maxJobsToActivate: 1, requestTimeout: -1 }), (e) => e.status === 403);
  await assert.rejects(basic('reader', 'wrong').getTopology(), (e) => e.status === 401);
});

test('a token whose roles map to none is forbidden', async () => {
  await assert.rejects(oauth('guest-client', 'guest-secret').getTopology(), (e) => e.status === 403);
});
