// Throughput of the reference workloads straight-10 and message through
// the Extism plug-in in the Extism JS SDK, beside the flowtrack SDK (the
// module of ABI.md) in the same Node process: one instance to completion
// per iteration, calls in sequence, events off on both (the SDK turns them
// off while nobody listens). Prints one line per host and workload.
//
//   make bench-extism     (after make wasm and make sdk)
//   node bench.mjs [--workloads DIR] [--n N]   (DIR: $FLOWTRACK_WORKLOADS or ../shared/workloads)

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import createPlugin from '@extism/extism';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const dir = new URL(`${arg('workloads', process.env.FLOWTRACK_WORKLOADS ?? '../../../shared/workloads')}/`, import.meta.url);
const n = Number(arg('n', 2000));
const { Engine } = await import(new URL('../../sdk-js/dist/index.js', import.meta.url));

const plugin = await createPlugin({ wasm: [{ data: readFileSync(new URL('../../host/flowtrack.extism.wasm', import.meta.url)) }] }, { useWasi: true });
async function call(op, request) {
  const res = (await plugin.call(op, JSON.stringify(request))).json();
  if (!res.ok) throw new Error(`${op}: ${res.error.code}: ${res.error.message}`);
  return res.result;
}
await call('configure', { events: false });
const sdk = await Engine.create();

const hosts = {
  extism: {
    deploy: (xml, name) => call('deploy', { name, xml }),
    start: (id, variables) => call('start', { processId: id, variables }),
    publish: (name, correlationKey) => call('publish_message', { name, correlationKey }),
  },
  sdk: {
    deploy: (xml, name) => sdk.deploy(xml, name),
    start: (id, variables) => sdk.start(id, variables),
    publish: (name, correlationKey) => sdk.publishMessage({ name, correlationKey }),
  },
};

for (const [workload, file] of [['straight-10', 'straight.bpmn'], ['message', 'message.bpmn']]) {
  const xml = readFileSync(new URL(file, dir), 'utf8');
  const process = file.replace('.bpmn', '');
  for (const [name, h] of Object.entries(hosts)) {
    await h.deploy(xml, file);
    const run = async (i) => {
      const key = `${name}-${i}`;
      await h.start(process, { key });
      if (process === 'message') await h.publish('go', key);
    };
    for (let i = 0; i < 200; i++) await run(`warm${i}`);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await run(i);
    const us = ((performance.now() - t0) * 1000) / n;
    console.log(`${workload.padEnd(12)} ${name.padEnd(7)} ${us.toFixed(0).padStart(6)} us/instance  ${(1e6 / us).toFixed(0).padStart(6)} instances/s`);
  }
}
sdk.close();
await plugin.close();
