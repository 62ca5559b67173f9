// Runs the SDK's test files inside a dedicated Web Worker: the SDK used
// from worker code, where there is no document.
import { run } from './suite.mjs';

run().then(
  (results) => postMessage({ results }),
  (err) => postMessage({ error: String(err?.stack ?? err) }),
);
