// An order process run through the flowtrack SDK in Node: job handlers do
// the service and user tasks, a payment message decides the event-based
// gateway, and a second order that is never paid runs into its 24-hour
// timeout. The script checks its own result and exits non-zero if either
// order does not end as the model says it must.
//
//   npm install && node main.js      (after `make sdk` at the repository root)

import { readFileSync } from 'node:fs';
import { Engine } from 'flowtrack';

const xml = readFileSync(new URL('./order-payment.bpmn', import.meta.url), 'utf8');
const engine = await Engine.create(); // virtual time: the 24 hours pass in a call

engine.on('*', (ev) => {
  const what = [ev.elementId, ev.jobType && `job ${ev.jobType}`, ev.name && `"${ev.name}"`].filter(Boolean).join(' ');
  console.log(`${ev.time}  #${ev.instanceKey} ${ev.type.padEnd(18)} ${what}`);
});

// Service task: check the order. User tasks (approve, call the customer)
// are done by a "clerk" here; in a real app a person completes them.
engine.handle('check-order', (job) => ({ valid: job.variables.amount > 0 }));
engine.handle('userTask', (job) => (job.elementId === 'Task_approve' ? { approvedBy: 'ana' } : { called: true }));

await engine.deploy(xml, 'order-payment.bpmn');

const paid = await engine.start('payment', { orderId: 'A-100', amount: 250 });
const unpaid = await engine.start('payment', { orderId: 'A-101', amount: 40 });
await engine.publishMessage({ name: 'payment', correlationKey: 'A-100', variables: { paidAmount: 250 } });
await engine.advanceTime('PT24H');

const results = {
  paid: await engine.instance(paid.instanceKey),
  unpaid: await engine.instance(unpaid.instanceKey),
};
const ended = async (key) => (await engine.history(key)).filter((ev) => ev.type === 'elementLeft' && ev.elementType === 'endEvent').map((ev) => ev.elementId);
const ok =
  results.paid.state === 'completed' &&
  results.paid.variables.approvedBy === 'ana' &&
  results.paid.variables.paidAmount === 250 &&
  (await ended(paid.instanceKey)).join() === 'End_paid' &&
  results.unpaid.state === 'completed' &&
  results.unpaid.variables.called === true &&
  (await ended(unpaid.instanceKey)).join() === 'End_cancelled';
engine.close();

for (const [name, r] of Object.entries(results)) console.log(`${name}: ${r.state} ${JSON.stringify(r.variables)}`);
if (!ok) {
  console.error('example: the orders did not end as the model says (paid -> End_paid, unpaid -> End_cancelled after 24h)');
  process.exit(1);
}
console.log('example: ok');
