// An order process on flowtrack's Extism plug-in (wasm/EXTISM.md) from
// Node with the Extism JS SDK and nothing of flowtrack on the host side:
// the calls are in order.mjs, shared with the browser page (index.html),
// and are the same as main.go's. It exits non-zero if the order does not
// end as the model says it must.
//
//   make wasm && cd examples/extism && npm ci && node main.mjs

import { readFileSync } from 'node:fs';
import createPlugin from '@extism/extism';
import { problems, runOrder } from './order.mjs';

const wasm = process.argv[2] ?? new URL('../../host/flowtrack.extism.wasm', import.meta.url).pathname;
const xml = readFileSync(new URL('./order-payment.bpmn', import.meta.url), 'utf8');
const plugin = await createPlugin({ wasm: [{ data: readFileSync(wasm) }] }, { useWasi: true });
const result = await runOrder(plugin, xml);
await plugin.close();

console.log(`order A-100: ${result.inst.state} ${JSON.stringify(result.inst.variables)}`);
console.log(`as expected: ${result.again}`);
const bad = problems(result);
if (bad) {
  console.error(`example: ${bad}`);
  process.exit(1);
}
console.log('example: ok');
