// The Web Worker behind Engine.createInWorker: it hosts one module instance
// and answers the page's operations in the order they arrive. All engine
// logic (handlers, listeners, time) stays on the page; this is only the
// module's other side of a postMessage channel.

import { FlowtrackError, type ErrorData } from './errors.js';
import { ModuleInstance } from './module.js';
import type { WorkerReply, WorkerRequest } from './transport.js';
import { compileSource, shippedModule } from './wasm-source.js';
import { defaultWasmURL } from '#platform';

interface WorkerScope {
  onmessage: ((ev: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(msg: unknown): void;
}

const scope = globalThis as unknown as WorkerScope;
let instance: ModuleInstance | undefined;

function toData(err: unknown): ErrorData {
  if (err instanceof FlowtrackError) return { code: err.code, message: err.message, elementId: err.elementId, processId: err.processId };
  return { code: 'TRAPPED', message: String((err as Error)?.message ?? err) };
}

scope.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.kind === 'init') {
    try {
      const module = msg.wasm === undefined ? await shippedModule(defaultWasmURL) : await compileSource(msg.wasm);
      instance = await ModuleInstance.instantiate(module);
      scope.postMessage({ kind: 'ready' } satisfies WorkerReply);
    } catch (err) {
      scope.postMessage({ kind: 'initFailed', error: toData(err) });
    }
    return;
  }
  try {
    if (!instance) throw new Error('flowtrack worker: call before init');
    const envelope = instance.callText(msg.op, msg.request);
    scope.postMessage({ kind: 'reply', id: msg.id, envelope } satisfies WorkerReply);
  } catch (err) {
    scope.postMessage({ kind: 'failed', id: msg.id, error: toData(err) } satisfies WorkerReply);
  }
};
