// A flowtrack job worker that needs nothing but a NATS client: it pulls
// the jobs of one type from a flowtrack server's job queue (README,
// "Job workers in any language"), runs a handler on each and reports the
// result with the job's activation through the server's operations, then
// acks the message.
//
//   node worker.mjs nats://127.0.0.1:4222 [cluster] [job type]

import { AckPolicy, connect, nanos } from 'nats';

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * jobToken writes a job type as the subject token and consumer name of its
 * queue: every byte other than an ASCII letter, digit, "_" or "-" as "%"
 * and two upper-case hex digits (wire.JobToken).
 */
export function jobToken(type) {
  let out = '';
  for (const b of enc.encode(type)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_-]/.test(c) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** call runs one operation of the wire contract and returns its result, or throws its error. */
export async function call(nc, cluster, op, request) {
  const reply = await nc.request(`flowtrack.${cluster}.op.${op}`, enc.encode(JSON.stringify(request)), { timeout: 30_000 });
  const env = JSON.parse(dec.decode(reply.data));
  if (!env.ok) throw Object.assign(new Error(env.error.message), { code: env.error.code });
  return env.result;
}

// report logs a refused result, except those that only say another
// activation or worker finished the job (exactly once per activation).
function report(err) {
  if (err.code !== 'STALE_ACTIVATION' && err.code !== 'UNKNOWN_JOB') console.error('flowtrack worker:', err);
}

/**
 * work serves jobs of `type` until the returned stop() is called: handler
 * gets the job (key, type, elementId, instanceKey, variables, retries,
 * activation, deadline...) and returns the variables to complete it with;
 * a thrown error fails it with one retry fewer. Jobs are worked one at a
 * time, up to `prefetch` of them waiting in this process. timeoutMs is the
 * queue's AckWait, which the server takes as the activation timeout of
 * the type. onError gets the results the server refused.
 */
export async function work(nc, { cluster = 'default', type, handler, timeoutMs = 60_000, prefetch = 8, onError = report }) {
  const stream = `FLOWTRACK_JOBS_${cluster}`;
  const name = jobToken(type);
  const jsm = await nc.jetstreamManager();
  await jsm.consumers.add(stream, {
    durable_name: name,
    filter_subject: `flowtrack.${cluster}.jobs.${name}`,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(timeoutMs),
    // Once no worker pulls for this long, the consumer goes and the server stops activating the type.
    inactive_threshold: nanos(Math.max(2 * timeoutMs, 600_000)),
  });
  const consumer = await nc.jetstream().consumers.get(stream, name);
  const messages = await consumer.consume({ max_messages: prefetch });
  const done = (async () => {
    for await (const m of messages) {
      const job = m.json();
      if (job.deadline && Date.parse(job.deadline) <= Date.now()) {
        m.ack(); // its activation timed out: the server has queued the job again
        continue;
      }
      let variables;
      try {
        variables = await handler(job);
      } catch (err) {
        // The handler failed: the job goes back with one retry fewer (none left: an incident).
        await call(nc, cluster, 'fail_job', { jobKey: job.key, activation: job.activation, retries: Math.max(job.retries - 1, 0), message: String(err?.message ?? err) })
          .catch(onError);
        m.ack();
        continue;
      }
      await call(nc, cluster, 'complete_job', { jobKey: job.key, activation: job.activation, variables: variables ?? {} }).catch(onError);
      m.ack();
    }
  })();
  return async () => {
    messages.stop();
    await done;
  };
}

// Run as a program: serve job type "work" (or the third argument), doubling "amount".
if (import.meta.url === `file://${process.argv[1]}`) {
  const [servers = 'nats://127.0.0.1:4222', cluster = 'default', type = 'work'] = process.argv.slice(2);
  const nc = await connect({ servers });
  const stop = await work(nc, { cluster, type, handler: (job) => ({ doubled: (job.variables?.amount ?? 0) * 2 }) });
  console.log(`serving jobs of type ${type} of cluster ${cluster} on ${servers}; Ctrl-C stops`);
  process.once('SIGINT', async () => {
    await stop();
    await nc.drain();
  });
}
