// Browsers: start the engine worker. Kept apart from platform.browser.ts so
// the worker's own bundle never contains a worker spawn of itself.

/** createWorker starts the module worker that hosts an engine for Engine.createInWorker. */
export function createWorker(): Worker {
  return new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'flowtrack' });
}
