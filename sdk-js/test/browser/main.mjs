// Runs the SDK's test files on the page, then inside a Web Worker, and
// leaves both result lists in window.flowtrackResults for run.mjs.
import { run } from './suite.mjs';

async function inWorker() {
  const worker = new Worker(new URL('./worker.mjs', import.meta.url), { type: 'module' });
  try {
    return await new Promise((resolve, reject) => {
      worker.onmessage = (ev) => (ev.data.error ? reject(new Error(ev.data.error)) : resolve(ev.data.results));
      worker.onerror = (ev) => reject(new Error(`worker: ${ev.message}`));
    });
  } finally {
    worker.terminate();
  }
}

window.flowtrackResults = (async () => ({ page: await run(), worker: await inWorker() }))().catch((err) => ({
  error: String(err?.stack ?? err),
}));
