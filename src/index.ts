/**
 * horizon-harness: an embeddable harness for long-horizon autonomous agents.
 * @packageDocumentation
 */
export type {
  ContentPart,
  FinishReason,
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  Message,
  Purpose,
  StreamPart,
  ToolCall,
  ToolSpec,
  Usage,
} from './backend/types.js';
export { DEFAULTS } from './defaults.js';
export {
  ContextOverflowError,
  HarnessError,
  ProviderHttpError,
  type HarnessErrorCode,
  type HarnessErrorOptions,
} from './errors.js';
export {
  HARNESS_EVENT_TYPES,
  HarnessEvents,
  eventSender,
  type HarnessListener,
  type AuditFinishEvent,
  type CallScope,
  type EmitEvent,
  type EventBase,
  type EventInput,
  type EventOf,
  type HarnessEvent,
  type HarnessEventType,
  type LlmRequestEvent,
  type LlmResponseEvent,
  type ManagerDecisionEvent,
  type MemoryCompressEvent,
  type MemoryPruneEvent,
  type MemoryTruncateEvent,
  type PlanCreatedEvent,
  type RepairFinishEvent,
  type RepairStartEvent,
  type RunErrorEvent,
  type RunFinishEvent,
  type RunStartEvent,
  type SubtaskAttemptEvent,
  type SubtaskFinishEvent,
  type SubtaskStartEvent,
  type SynthesisFinishEvent,
  type ToolCallEvent,
  type ToolResultEvent,
  type VerifyFinishEvent,
} from './events.js';
export type {
  Checkpoint,
  Defect,
  Deliverable,
  PlannedSubtask,
  PurposeUsage,
  RunReport,
  RunResult,
  SubtaskRecord,
  Verdict,
} from './harness/types.js';
export type { ExecutionMemory, MemoryScope, PendingRequest } from './memory/types.js';
export type { ImagePart, ObservationKind, Tool, ToolContext, ToolInvocation, ToolOutput } from './tools/types.js';
export type { ArtifactRecord, Workspace, WriteOrigin } from './workspace/types.js';

// --- backend adapters (src/backend) ---

// --- tools and executor (src/tools, src/executor) ---

// --- execution memory (src/memory) ---

// --- workspace and built-in tools (src/workspace, src/tools/builtin) ---

// --- pipeline (src/harness, planner, synthesizer, verifier, repairer, prompts) ---
