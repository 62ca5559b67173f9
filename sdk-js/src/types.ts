// Plain data records of the engine, exactly as the module's ABI (wasm/ABI.md)
// returns them, generated from the Go definitions into contract.ts; the
// SDK's own request shapes. They are copies: changing one never changes the
// engine.

export type {
  AnyFlowEvent,
  Choice,
  CompletedJob,
  DeployedProcess,
  Definition,
  DefinitionXML,
  DecisionResult,
  DeployedDecision,
  Deployment,
  EvaluatedDecision,
  MatchedRule,
  EventType,
  FlowEvent,
  Incident,
  InstanceInfo,
  InstanceState,
  Job,
  JobAge,
  Limits,
  Metrics,
  Problem,
  ProcessMetrics,
  PublishedMessage,
  Stats,
  StartedInstance,
  Token,
  Variables,
  WaitReason,
} from './contract.js';
export { eventTypes } from './contract.js';
import type { Variables } from './contract.js';

/** Selects jobs; absent fields match anything. */
export interface JobFilter {
  type?: string;
  instanceKey?: number;
  elementId?: string;
  /** A page: only jobs whose keys are above afterKey (the last key of the page before). */
  afterKey?: number;
  /** A page: at most limit jobs (0 or absent: all; in remote mode the SDK then asks a page at a time). */
  limit?: number;
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
