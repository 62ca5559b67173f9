// Node: no Web Worker (Node callers use the engine in-process, or their
// own worker_threads).

/** createWorker is not available in Node: Engine.createInWorker is for browsers. */
export function createWorker(): Worker {
  throw new Error('flowtrack: Engine.createInWorker needs Web Workers (browsers); in Node use Engine.create');
}
