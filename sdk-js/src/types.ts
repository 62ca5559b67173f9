// Plain data records of the engine, exactly as the module's ABI (wasm/ABI.md)
// returns them. They are copies: changing one never changes the engine.

/** JSON-compatible variables of an instance, a job or a message. */
export type Variables = Record<string, unknown>;

/** An instance's lifecycle state. */
export type InstanceState = 'active' | 'completed' | 'terminated' | 'failed';

/** Every event type of the per-instance event stream. */
export const eventTypes = [
  'instanceStarted',
  'instanceCompleted',
  'instanceTerminated',
  'instanceFailed',
  'elementEntered',
  'elementLeft',
  'elementTerminated',
  'flowTaken',
  'tokenMerged',
  'jobCreated',
  'jobCompleted',
  'jobFailed',
  'jobCanceled',
  'incidentCreated',
  'incidentResolved',
  'variablesUpdated',
  'messageSubscribed',
  'messageCorrelated',
  'signalSubscribed',
  'signalReceived',
  'timerScheduled',
  'timerFired',
  'errorThrown',
  'escalationThrown',
  'messagePublished',
  'signalBroadcast',
  'errorCaught',
  'escalationCaught',
  'callStarted',
  'conditionSatisfied',
] as const;

/** The name of what an event records. */
export type EventType = (typeof eventTypes)[number];

/** One record of an instance's ordered event stream. */
export interface FlowEvent<T extends EventType = EventType> {
  /** Position in the instance's stream, from 1, without gaps. */
  seq: number;
  /** Engine clock reading when the record was written (RFC 3339). */
  time: string;
  type: T;
  instanceKey: number;
  processId: string;
  /** Element concerned, if any (`sequenceFlow` for flowTaken). */
  elementId?: string;
  elementType?: string;
  /** Sequence flow of a flowTaken record. */
  flowId?: string;
  /** Token (path) concerned. */
  tokenId?: number;
  jobKey?: number;
  jobType?: string;
  incidentKey?: number;
  /** Message, signal, error or escalation name or code. */
  name?: string;
  correlationKey?: string;
  /** A timer's due time (RFC 3339). */
  due?: string;
  /** Explains incidents, failures and terminations. */
  message?: string;
  /** Variables the record set (start, job result, message payload). */
  variables?: Variables;
}

/** Why a token waits. A moving token has no reason. */
export type WaitReason = 'job' | 'message' | 'signal' | 'timer' | 'event' | 'join' | 'incident' | 'scope';

/** Where one path of an instance is and why it waits. */
export interface Token {
  id: number;
  elementId: string;
  waiting?: WaitReason;
  jobKey?: number;
  incidentKey?: number;
}

/** A unit of work the engine waits on: a task for the host to do. */
export interface Job {
  key: number;
  type: string;
  processId: string;
  elementId: string;
  instanceKey: number;
  retries: number;
  headers?: Record<string, string>;
  variables?: Variables;
  /** Message of the last failure. */
  errorMessage?: string;
  /** When the job was created (RFC 3339). */
  created: string;
}

/** Selects jobs; absent fields match anything. */
export interface JobFilter {
  type?: string;
  instanceKey?: number;
  elementId?: string;
}

/** A problem holding a token until it is resolved. */
export interface Incident {
  key: number;
  instanceKey: number;
  elementId: string;
  jobKey?: number;
  message: string;
}

/** One rule a deployed model breaks (or, as a deploy warning, one thing that is probably not meant). */
export interface Problem {
  /** The rule: EXT.nnn, REF.nn (BPMN constraint catalogue), XSD.<what>, FT.<what> (flowtrack's own). */
  ruleId?: string;
  processId?: string;
  elementId?: string;
  /** Where the element starts in the document, 1-based. */
  line?: number;
  column?: number;
  /** What is wrong and how to fix it. */
  rule: string;
}

/** One deployed process version. */
export interface DeployedProcess {
  id: string;
  name?: string;
  key: number;
  version: number;
}

/** What deploy registered. */
export interface Deployment {
  name: string;
  processes: DeployedProcess[];
  /** What deploys but is probably not what the modeller meant; absent when there is nothing. */
  warnings?: Problem[];
}

/** What start returns: the instance and its state once handlers are done. */
export interface StartedInstance {
  instanceKey: number;
  state: InstanceState;
}

/** State, variables and open incidents of one instance. */
export interface InstanceInfo {
  key: number;
  processId: string;
  state: InstanceState;
  /** Explains a terminated or failed instance. */
  message: string;
  variables: Variables;
  incidents: Incident[];
}

/** A message to publish. */
export interface Message {
  name: string;
  correlationKey?: string;
  variables?: Variables;
  /** How long an uncorrelated message stays buffered: milliseconds or an ISO 8601 duration. Default 0. */
  ttl?: number | string;
  /** Deduplication id: a second publish with the same id while the first is buffered is dropped. */
  messageId?: string;
}

/**
 * Limits are the budgets that bound what one model, expression or input can
 * make the engine do (engine.Limits in Go, `limits` of the ABI's configure).
 * An absent or 0 field keeps the engine's default.
 */
export interface Limits {
  /** Elements one token may pass without waiting (default 10,000). */
  maxSteps?: number;
  /** Elements an instance's tokens may pass together for one input (100,000). */
  maxStepsPerInput?: number;
  /** Tokens an instance may create for one input (10,000). */
  maxTokensPerInput?: number;
  /** History records an instance may write for one input (500,000). */
  maxRecordsPerInput?: number;
  /** Tokens alive in one instance at once (10,000). */
  maxTokens?: number;
  /** Instances one input may start (1,000). */
  maxStartsPerInput?: number;
  /** Work of one expression evaluation (1,000,000 steps). */
  maxEvalSteps?: number;
  /** Bytes one expression evaluation may allocate (16 MiB). */
  maxEvalBytes?: number;
}
