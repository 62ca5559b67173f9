// Typed errors. Every error the engine reports carries the module's stable
// ABI error code (wasm/ABI.md, "Error codes") and, where there is one, the
// element and process concerned. Callers use `instanceof` or `code`.

import type { Problem } from './types.js';

/** The error object of a failed module call (ABI "The response envelope"). */
export interface ErrorData {
  code: string;
  message: string;
  elementId?: string;
  processId?: string;
  problems?: Problem[];
}

/**
 * FlowtrackError is the base class of every error the SDK throws. `code` is
 * the ABI error code (`BAD_REQUEST`, `DEPLOY_FAILED`, ...) or one of the
 * SDK's own: `TRAPPED` (the module crashed and was discarded) and `CLOSED`
 * (the engine was closed). Unknown codes from a newer module still arrive as
 * a FlowtrackError.
 */
export class FlowtrackError extends Error {
  /** Stable error code. */
  readonly code: string;
  /** Element concerned, when there is one. */
  readonly elementId?: string;
  /** Process concerned, when there is one. */
  readonly processId?: string;

  constructor(data: ErrorData) {
    super(data.message);
    // Explicit names survive minifiers; subclasses set their own.
    this.name = 'FlowtrackError';
    this.code = data.code;
    if (data.elementId) this.elementId = data.elementId;
    if (data.processId) this.processId = data.processId;
  }
}

/** A malformed request: a missing, unknown or mistyped field, or an invalid argument. */
export class BadRequestError extends FlowtrackError {
  override readonly name: string = 'BadRequestError';
}
/** An operation the module does not know (a module older than the SDK). */
export class UnknownOperationError extends FlowtrackError {
  override readonly name: string = 'UnknownOperationError';
}
/** A BPMN document that is malformed or invalid; `problems` lists every rule it breaks. */
export class DeployError extends FlowtrackError {
  override readonly name: string = 'DeployError';
  /** Every problem found, the first one included. */
  readonly problems: Problem[];
  constructor(data: ErrorData) {
    super(data);
    this.problems = data.problems ?? [];
  }
}
/** `start` of a process id never deployed. */
export class UnknownProcessError extends FlowtrackError {
  override readonly name: string = 'UnknownProcessError';
}
/** `start` of a process that only events can start. */
export class NoNoneStartError extends FlowtrackError {
  override readonly name: string = 'NoNoneStartError';
}
/** An instance key that names no live or recently finished instance. */
export class UnknownInstanceError extends FlowtrackError {
  override readonly name: string = 'UnknownInstanceError';
}
/** A job key that names no activatable job. */
export class UnknownJobError extends FlowtrackError {
  override readonly name: string = 'UnknownJobError';
}
/** An incident key that names no open incident. */
export class UnknownIncidentError extends FlowtrackError {
  override readonly name: string = 'UnknownIncidentError';
}
/** A call on an instance that has already ended. */
export class InstanceEndedError extends FlowtrackError {
  override readonly name: string = 'InstanceEndedError';
}
/** Variables that are not a JSON object of JSON values. */
export class BadVariablesError extends FlowtrackError {
  override readonly name: string = 'BadVariablesError';
}
/**
 * An instant the engine cannot represent: before 1677-09-21T00:12:43.145224192Z
 * or after 2262-04-11T23:47:16.854775807Z (int64 nanoseconds since 1970), in
 * advanceTo, advanceTime, a message TTL or a timer.
 */
export class TimeOutOfRangeError extends FlowtrackError {
  override readonly name: string = 'TimeOutOfRangeError';
}
/** An operation this build of the engine cannot do yet. */
export class UnsupportedError extends FlowtrackError {
  override readonly name: string = 'UnsupportedError';
}
/** restore of a state document the engine cannot read; the engine is left as it was. */
export class BadStateError extends FlowtrackError {
  override readonly name: string = 'BadStateError';
}
/** A bug inside the engine: the operation failed, the engine stays usable. */
export class InternalError extends FlowtrackError {
  override readonly name: string = 'InternalError';
}
/** The module crashed (trapped); the engine is discarded and every later call fails. */
export class TrappedError extends FlowtrackError {
  override readonly name: string = 'TrappedError';
}
/** A call on a closed engine. */
export class ClosedError extends FlowtrackError {
  override readonly name: string = 'ClosedError';
}

const byCode: Record<string, new (data: ErrorData) => FlowtrackError> = {
  BAD_REQUEST: BadRequestError,
  UNKNOWN_OPERATION: UnknownOperationError,
  DEPLOY_FAILED: DeployError,
  UNKNOWN_PROCESS: UnknownProcessError,
  NO_NONE_START: NoNoneStartError,
  UNKNOWN_INSTANCE: UnknownInstanceError,
  UNKNOWN_JOB: UnknownJobError,
  UNKNOWN_INCIDENT: UnknownIncidentError,
  INSTANCE_ENDED: InstanceEndedError,
  BAD_VARIABLES: BadVariablesError,
  UNSUPPORTED: UnsupportedError,
  TIME_OUT_OF_RANGE: TimeOutOfRangeError,
  BAD_STATE: BadStateError,
  INTERNAL: InternalError,
  TRAPPED: TrappedError,
  CLOSED: ClosedError,
};

/** errorFromData builds the typed error for an ABI error object. */
export function errorFromData(data: ErrorData): FlowtrackError {
  const Type = byCode[data.code] ?? FlowtrackError;
  return new Type(data);
}

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
