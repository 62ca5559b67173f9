// docs/camunda-rest.md's support table against the installed client and
// a running flowtrack serve --http: it lists every endpoint of the client
// once; each row marked supported or partial is routed (answered by its
// handler, whatever the status), and each marked not answers the
// catch-all's 501 problem detail.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { endpoints } from './endpoints.mjs';
import { single } from './serve.mjs';

const doc = readFileSync(new URL('../../../docs/camunda-rest.md', import.meta.url), 'utf8');
const rows = new Map();
for (const m of doc.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE) (\/v2\/\S*)` \| (supported|partial|not) \|/gm)) {
  assert.ok(!rows.has(`${m[1]} ${m[2]}`), `${m[1]} ${m[2]} is listed twice`);
  rows.set(`${m[1]} ${m[2]}`, m[3]);
}

let served;
before(async () => {
  served = await single();
});
after(async () => {
  await served?.close();
});

test('the support table lists every endpoint of the client, and only those', () => {
  const client = endpoints().map((e) => `${e.method} ${e.path}`);
  assert.ok(client.length > 150, `the client has ${client.length} endpoints: the parse of its sources broke`);
  assert.deepEqual([...rows.keys()].sort(), client.sort());
});

test('rows marked supported or partial are routed; rows marked not answer 501', async () => {
  for (const [row, support] of rows) {
    const [method, path] = row.split(' ');
    const url = served.urls[0] + path.replace(/\{[^}]+\}/g, '1');
    const res = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : '{}' });
    const body = await res.text();
    const notServed = res.status === 501 && body.includes('flowtrack does not serve');
    if (support === 'not') assert.ok(notServed, `${row} is marked not, and answered ${res.status} ${body}`);
    else assert.ok(!notServed && res.status !== 404 || body.includes('"title":"NOT_FOUND"'), `${row} is marked ${support}, and answered ${res.status} ${body}`);
  }
});
