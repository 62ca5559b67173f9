// flowtrack: a BPMN 2.0 engine compiled to WebAssembly, for Node and browsers.

export { Engine } from './engine.js';
export type { ActivateJobsOptions, EngineOptions, HandlerOptions, JobHandler, JobResultOptions, Listener, ScopeOptions, StartOptions, IncidentFilter, Modification, TimeMode } from './engine.js';
export type { WasmSource } from './wasm-source.js';
export type { ConnectOptions, NatsConnection, NatsMessages } from './remote.js';
export { ABI_VERSION, MAX_VARIABLE_DEPTH } from './module.js';
export { parseDuration } from './duration.js';
export { Decimal } from './numbers.js';
export type { Duration } from './duration.js';
export {
  BadModificationError,
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
  KeyInUseError,
  NoNoneStartError,
  NoServerError,
  PermissionDeniedError,
  ObserverError,
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
} from './errors.js';
export type { ErrorCode, ErrorData } from './errors.js';
export { eventTypes } from './types.js';
export type {
  AnyFlowEvent,
  CompletedJob,
  DecisionResult,
  DeployedDecision,
  DeployedProcess,
  Definition,
  EvaluatedDecision,
  MatchedRule,
  DefinitionXML,
  Deployment,
  EventType,
  FlowEvent,
  Incident,
  InstanceInfo,
  InstanceState,
  Job,
  JobAge,
  JobFilter,
  Limits,
  Message,
  Metrics,
  Problem,
  ProcessMetrics,
  PublishedMessage,
  Stats,
  StartedInstance,
  Token,
  Choice,
  Variables,
  WaitReason,
} from './types.js';
