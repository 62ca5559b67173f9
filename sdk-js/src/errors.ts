// Typed errors. Every error the engine reports carries the module's stable
// ABI error code (wasm/ABI.md, "Error codes") and, where there is one, the
// element and process concerned. Callers use `instanceof` or `code`. The
// classes are generated from the Go definition of the codes (contract.ts);
// BpmnError is the SDK's own, thrown by job handlers.

export {
  BadModificationError,
  BadRequestError,
  BadStateError,
  BadVariablesError,
  ClosedError,
  DeployError,
  DuplicateMessageError,
  errorFromData,
  FlowtrackError,
  InstanceEndedError,
  InternalError,
  KeyInUseError,
  NoNoneStartError,
  NoServerError,
  PermissionDeniedError,
  StaleActivationError,
  TimeOutOfRangeError,
  TooManyFiringsError,
  TooLargeError,
  TooManyJobsError,
  TrappedError,
  UnknownDecisionError,
  UnknownIncidentError,
  UnknownInstanceError,
  UnknownJobError,
  UnknownOperationError,
  UnknownProcessError,
  UnknownScopeError,
  UnsupportedError,
} from './contract.js';
export type { ErrorCode, ErrorData } from './contract.js';
import type { FlowEvent } from './types.js';

/**
 * BpmnError, thrown by a job handler, raises the BPMN error `errorCode` from
 * the job's element (like `throwError`), so a boundary error event or an
 * event sub-process can catch it.
 *
 *     engine.handle('reserve-stock', async job => {
 *       if (!inStock(job.variables)) throw new BpmnError('OUT_OF_STOCK', 'sku 17');
 *       return { reserved: true };
 *     });
 */
export class BpmnError extends Error {
  readonly errorCode: string;
  readonly variables?: Record<string, unknown>;
  constructor(errorCode: string, message = '', variables?: Record<string, unknown>) {
    super(message || errorCode);
    this.name = 'BpmnError';
    this.errorCode = errorCode;
    if (variables) this.variables = variables;
  }
}

/**
 * ObserverError is what `onError` receives when a listener (`on`) throws:
 * the event the listener was handling and what it threw (`cause`). The
 * listener stays registered and gets the next events; the engine and the
 * other listeners are not affected (the observer contract, README
 * "Listeners"; the Go engine's ObserverPanicError).
 */
export class ObserverError extends Error {
  readonly event: FlowEvent;
  constructor(event: FlowEvent, cause: unknown) {
    super(`listener threw on event ${event.seq} (${event.type}) of instance ${event.instanceKey}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'ObserverError';
    this.event = event;
  }
}
