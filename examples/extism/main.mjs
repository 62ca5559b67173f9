// An order process on flowtrack's Extism plug-in (wasm/EXTISM.md) from
// Node with the Extism JS SDK and nothing of flowtrack on the host side:
// the same calls as main.go, and as the README's Python, Rust and Java
// snippets. It exits non-zero if the order does not end as the model says
// it must.
//
//   make wasm && cd examples/extism && npm ci && node main.mjs

import { readFileSync } from 'node:fs';
import createPlugin from '@extism/extism';

const wasm = process.argv[2] ?? new URL('../../host/flowtrack.extism.wasm', import.meta.url).pathname;
const xml = readFileSync(new URL('./order-payment.bpmn', import.meta.url), 'utf8');
const plugin = await createPlugin({ wasm: [{ data: readFileSync(wasm) }] }, { useWasi: true });

// call runs one operation and returns the result of a response with
// "ok": true, or throws the response's error code and message.
async function call(op, request) {
  const res = (await plugin.call(op, JSON.stringify(request))).json();
  if (!res.ok) throw new Error(`${op}: ${res.error.code}: ${res.error.message}`);
  return res.result;
}

await call('deploy', { name: 'order-payment.bpmn', xml });
const { instanceKey } = await call('start', { processId: 'payment', variables: { orderId: 'A-100', amount: 40 } });
// Each call returns once the engine has settled: the check-order job is
// open now.
const jobs = await call('jobs', { instanceKey });
if (jobs.length !== 1 || jobs[0].type !== 'check-order') throw new Error(`want one check-order job, got ${JSON.stringify(jobs)}`);
await call('complete_job', { jobKey: jobs[0].key, variables: { valid: true } });
await call('publish_message', { name: 'payment', correlationKey: 'A-100', variables: { paidAmount: 40 } });
const inst = await call('instance', { instanceKey });
console.log(`order A-100: ${inst.state} ${JSON.stringify(inst.variables)}`);

// Bad input is an error response, not a failed call.
const again = await call('complete_job', { jobKey: jobs[0].key }).then(() => null, (err) => err);
await plugin.close();

if (inst.state !== 'completed' || inst.variables.paidAmount !== 40 || inst.variables.valid !== true) {
  console.error('example: the order did not end completed, valid and paid');
  process.exit(1);
}
if (!again?.message.includes('UNKNOWN_JOB')) {
  console.error(`example: completing a job twice gave ${again}, want UNKNOWN_JOB`);
  process.exit(1);
}
console.log('as expected:', again.message);
console.log('example: ok');
