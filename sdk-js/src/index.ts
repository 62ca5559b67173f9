// flowtrack: a BPMN 2.0 engine compiled to WebAssembly, for Node and browsers.

export { Engine } from './engine.js';
export type { EngineOptions, JobHandler, Listener, TimeMode } from './engine.js';
export type { WasmSource } from './wasm-source.js';
export { ABI_VERSION, MAX_VARIABLE_DEPTH } from './module.js';
export { parseDuration } from './duration.js';
export type { Duration } from './duration.js';
export {
  BadRequestError,
  BadStateError,
  BadVariablesError,
  BpmnError,
  ClosedError,
  DeployError,
  DuplicateMessageError,
  FlowtrackError,
  InstanceEndedError,
  InternalError,
  NoNoneStartError,
  ObserverError,
  TimeOutOfRangeError,
  TooManyFiringsError,
  TooManyJobsError,
  TrappedError,
  UnknownIncidentError,
  UnknownInstanceError,
  UnknownJobError,
  UnknownOperationError,
  UnknownProcessError,
  UnsupportedError,
} from './errors.js';
export type { ErrorCode, ErrorData } from './errors.js';
export { eventTypes } from './types.js';
export type {
  AnyFlowEvent,
  DeployedProcess,
  Deployment,
  EventType,
  FlowEvent,
  Incident,
  InstanceInfo,
  InstanceState,
  Job,
  JobFilter,
  Limits,
  Message,
  Problem,
  StartedInstance,
  Token,
  Variables,
  WaitReason,
} from './types.js';
