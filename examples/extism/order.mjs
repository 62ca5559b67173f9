// The calls of this example, shared by main.mjs (Node) and index.html
// (browser): an order process on flowtrack's Extism plug-in with nothing of
// flowtrack on the host side. main.go makes the same calls from Go, and the
// README's "Use flowtrack from any language" in Python, Rust and Java.

/**
 * Runs order A-100 of order-payment.bpmn on plugin (an Extism plug-in of
 * host/flowtrack.extism.wasm) and returns what the caller checks.
 */
export async function runOrder(plugin, xml) {
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
  // Bad input is an error response, not a failed call.
  const again = await call('complete_job', { jobKey: jobs[0].key }).then(() => null, (err) => err.message);
  return { inst, again };
}

/** Returns what is wrong with runOrder's answer, or '' when it is right. */
export function problems({ inst, again }) {
  const bad = [];
  if (inst.state !== 'completed' || inst.variables.paidAmount !== 40 || inst.variables.valid !== true) {
    bad.push(`the order ended ${inst.state} with ${JSON.stringify(inst.variables)}; want completed, valid and paid`);
  }
  if (!again?.includes('UNKNOWN_JOB')) bad.push(`completing a job twice gave ${again}, want UNKNOWN_JOB`);
  return bad.join('; ');
}
