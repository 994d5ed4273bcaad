/**
 * Lifecycle events: one discriminated union keyed on `type`, one payload object each.
 * @module
 */
import type { FinishReason, GenerateResult, Message, Purpose, Usage } from './backend/types.js';
import type { ResumeRedo } from './durability/types.js';
import type {
  CacheBreakCause,
  Defect,
  Deliverable,
  PlannedSubtask,
  RunResult,
  RunWarningCode,
  SubtaskRecord,
  Verdict,
} from './contracts/work.js';
import type {
  AuditFinding,
  AuditIntegrity,
  AuditStatus,
  Contract,
  ManagerNext,
  RecordDraft,
  TaskState,
} from './contracts/task-state.js';

/** Fields every event carries. */
export interface EventBase {
  runId: string;
  /** Milliseconds since the epoch, from the harness clock. */
  timestamp: number;
  /**
   * Position of the event in its run (1, 2, …), continued by a resumed run from its snapshot. Streaming deltas and
   * events of a component used on its own carry none.
   */
  seq?: number;
  /** Set on every event of a run that `harness.resume()` continued, from its `run-resume` on. */
  resumed?: true;
}

/** Where in the run a model or tool call happened. */
export interface CallScope {
  purpose: Purpose;
  /** `subtask-1`…, `synthesis`, `repair-1`…, or the caller's own scope name. */
  scope?: string;
}

export type RunStartEvent = EventBase & {
  type: 'run-start';
  /** `pipeline` (OneDayAgent) or `managed` (Manage-Execute-Audit). */
  mode: 'pipeline' | 'managed';
  goal: string;
  workspace: string;
  decomposition: boolean;
  verification: boolean;
  /** Things the user should know before the run goes on (e.g. no sandbox available). */
  warnings: string[];
  /**
   * The shipped memory's thresholds, as shares of each call's window (`memory.compressAt`, `memory.emergencyAt`);
   * absent with a custom memory, and in logs written before it existed. Each `llm-request` gives its window.
   */
  memory?: { compressAt: number; emergencyAt: number };
};
export type PlanCreatedEvent = EventBase & {
  type: 'plan-created';
  plan: PlannedSubtask[];
  /** Set when the plan is not what the planner returned as-is. */
  fallback?: 'single-subtask' | 'truncated' | 'decomposition-off';
  reason?: string;
};
export type SubtaskStartEvent = EventBase & { type: 'subtask-start'; subtask: PlannedSubtask; index: number };
export type SubtaskAttemptEvent = EventBase & {
  type: 'subtask-attempt';
  subtaskId: string;
  attempt: number;
  /** Why the previous attempt failed, from the second attempt on. */
  previousError?: string;
};
export type LlmRequestEvent = EventBase &
  CallScope & {
    type: 'llm-request';
    /** Unique per model call; the call's `llm-retry`, delta and `llm-response` events carry the same id. */
    callId: string;
    provider: string;
    modelId: string;
    /** The context window of the backend the call goes to (roles may use backends with different windows). */
    contextWindow?: number;
    messages: number;
    /** Request size (messages + tool specs): exact near the compression threshold, else an upper bound from UTF-8 bytes; the provider's usage on `llm-response` is the truth. */
    requestTokens: number;
    /** Output tokens reserved for the answer and sent with the request. */
    maxOutputTokens?: number;
    /** Sampling sent with the request, when it sets any. */
    temperature?: number;
    topP?: number;
    /** The messages sent; present only while content is captured (`harness.captureContent()`). */
    content?: { messages: Message[] };
  };
/**
 * The backend is about to send a model call again after a failed attempt (`attempt` is the attempt that failed,
 * from 1); emitted for every retry, before the wait of `delayMs`.
 */
export type LlmRetryEvent = EventBase &
  CallScope & {
    type: 'llm-retry';
    /** The model call this retry belongs to (the same id as its `llm-request` and deltas). */
    callId: string;
    provider: string;
    modelId: string;
    attempt: number;
    delayMs: number;
    error: { code: string; message: string };
  };
/** Answer text of a streaming model call, as it arrives. */
export type TextDeltaEvent = EventBase & CallScope & { type: 'text-delta'; callId: string; text: string };
/** Reasoning text of a streaming model call, as it arrives. */
export type ReasoningDeltaEvent = EventBase & CallScope & { type: 'reasoning-delta'; callId: string; text: string };
/** A piece of a tool call's arguments while a streaming model call produces it. */
export type ToolCallDeltaEvent = EventBase &
  CallScope & {
    type: 'tool-call-delta';
    callId: string;
    /** The tool call's id, as the `tool-call` event will carry it. */
    toolCallId: string;
    /** Present on the first delta of a tool call. */
    toolName?: string;
    argumentsDelta: string;
  };
export type LlmResponseEvent = EventBase &
  CallScope & {
    type: 'llm-response';
    /** The id of the call's `llm-request`. */
    callId: string;
    finishReason: FinishReason;
    usage: Usage;
    toolCalls: number;
    durationMs: number;
    /** What the call cost in `currency`, from its usage and the prices of its backend or role; absent when unpriced. */
    cost?: number;
    /** The currency of `cost` (as the host named it in `pricing`); present with `cost`. */
    currency?: string;
    /** The model's reply; present only while content is captured (`harness.captureContent()`). */
    content?: { message: GenerateResult['message'] };
  };
export type ToolCallEvent = EventBase &
  CallScope & { type: 'tool-call'; callId: string; toolName: string; arguments: string };
export type ToolResultEvent = EventBase &
  CallScope & {
    type: 'tool-result';
    callId: string;
    toolName: string;
    isError: boolean;
    durationMs: number;
    /** Characters of the raw output, before any bounding. */
    outputChars: number;
    /**
     * What the model is shown of the output (the observation once the memory bounded it), cut at 2 000 characters
     * with `… N more chars` after the cut. Untrusted data, redacted like every event's text. Emitted after the
     * bounding, so the call's `memory-truncate` comes before it. Absent from logs written before it existed and from
     * a custom executor's events that leave it out.
     */
    output?: string;
    files: string[];
  };
export type MemoryTruncateEvent = EventBase &
  CallScope & {
    type: 'memory-truncate';
    toolName: string;
    callId: string;
    strategy: 'snippets' | 'summary' | 'preview' | 'head-tail';
    /** Size of the raw output; the shipped memory estimates it from the characters per token counted so far. */
    tokensBefore: number;
    /** Size of the observation that enters the dialogue (estimated likewise, except for file previews). */
    tokensAfter: number;
    /** Workspace-relative path of the log holding the full output. */
    savedTo?: string;
    /** The lines of `savedTo` that hold this output (read them with `read_file`'s startLine/endLine). */
    savedLines?: { start: number; end: number };
  };
export type MemoryCompressEvent = EventBase &
  CallScope & { type: 'memory-compress'; tokensBefore: number; tokensAfter: number; roundsSummarized: number };
export type MemoryPruneEvent = EventBase &
  CallScope & {
    type: 'memory-prune';
    tokensBefore: number;
    tokensAfter: number;
    messagesRemoved: number;
    reason: 'emergency-threshold' | 'summary-failed' | 'context-length-error';
  };
/**
 * A request of an executor loop does not extend the loop's previous request byte for byte: from `firstChangedMessage`
 * on, a provider's prompt cache can no longer serve what it cached of that request. Emitted before the request's
 * `llm-request`.
 */
export type CacheBreakEvent = EventBase &
  CallScope & {
    type: 'cache-break';
    cause: CacheBreakCause;
    /** Index of the first message that differs from the previous request. */
    firstChangedMessage: number;
    /**
     * Tokens of the previous request from that message on (the memory's count, calibrated to the backend): the part
     * of the prefix that was sent before and must now be sent, and on a caching provider written, again.
     */
    prefixTokensLost: number;
  };
export type SubtaskFinishEvent = EventBase & { type: 'subtask-finish'; record: SubtaskRecord };
export type SynthesisFinishEvent = EventBase & {
  type: 'synthesis-finish';
  deliverable: Deliverable;
  status: 'completed' | 'failed';
};
/**
 * A verification ended. `status` is the verdict's: `unverified` means no usable verdict could be obtained (the run then
 * ends `unverified`, never `succeeded`); `passed` is true only for `passed`.
 */
export type VerifyFinishEvent = EventBase & {
  type: 'verify-finish';
  attempt: number;
  status: Verdict['status'];
  passed: boolean;
  verdict: Verdict;
  defects: Defect[];
};
export type RepairStartEvent = EventBase & { type: 'repair-start'; attempt: number; defects: Defect[] };
export type RepairFinishEvent = EventBase & {
  type: 'repair-finish';
  attempt: number;
  status: 'completed' | 'failed' | 'aborted' | 'timeout';
  deliverable: Deliverable;
};
/** Managed mode: the manager decided what happens next; `state` is the task state after its records were applied. */
export type ManagerDecisionEvent = EventBase & {
  type: 'manager-decision';
  round: number;
  next: ManagerNext;
  /** The round's contract (`next: 'execute'`), with the records it works on. */
  contract?: Contract;
  /** The records the manager added or revised in this decision. */
  records: RecordDraft[];
  /** The manager's question (`next: 'ask'`). */
  question?: string;
  /** Why the task is blocked (`next: 'blocked'`), or anything else the manager said. */
  reason?: string;
  /** Set when the reply stayed malformed after one re-ask and the documented fallback decided instead. */
  fallback?: 'malformed-reply';
  state: TaskState;
};
/**
 * Managed mode: a round's audit ended and the task state was updated from it. `integrity` is `violation` whenever
 * the workspace changed during the audit (`changedPaths`), whatever the auditor said.
 */
export type AuditFinishEvent = EventBase & {
  type: 'audit-finish';
  round: number;
  status: AuditStatus;
  integrity: AuditIntegrity;
  findings: AuditFinding[];
  /** Workspace paths that changed while the audit ran (`.harness/` excluded); empty for a clean audit. */
  changedPaths: string[];
  /** Set when the audit reply stayed malformed after one re-ask: it then counts as `incomplete` + `suspect`. */
  fallback?: 'malformed-reply';
  reason?: string;
  state: TaskState;
};
/**
 * Managed mode: the workspace changed while an audit ran, or someone other than the harness changed `.harness/`
 * during the round; the round's records became `untrusted`.
 */
export type IntegrityViolationEvent = EventBase & {
  type: 'integrity-violation';
  round: number;
  /**
   * Workspace-relative paths created, changed or removed during the audit, then the `.harness/…` paths someone other
   * than the harness changed during the round's execution or audit.
   */
  changedPaths: string[];
  /** Ids of the records that became `untrusted`. */
  records: string[];
};
/**
 * Something was lost or degraded without failing the run: a long answer that could not be saved whole, a
 * summariser that failed (reported once per run, with its error; later failures are counted in the report).
 */
export type RunWarningEvent = EventBase & {
  type: 'run-warning';
  code: RunWarningCode;
  message: string;
  purpose?: Purpose;
  scope?: string;
};
export type RunFinishEvent = EventBase & { type: 'run-finish'; result: RunResult };
export type RunErrorEvent = EventBase & {
  type: 'run-error';
  error: { code: string; message: string };
  stage: string;
};

/**
 * A run goes on from its last snapshot (`harness.resume()`); every later event of the run carries `resumed: true`.
 */
export type RunResumeEvent = EventBase & {
  type: 'run-resume';
  mode: 'pipeline' | 'managed';
  /** The stage the run goes on with (`execute`, `synthesize`, `verify`, `repair`, `manage`, …). */
  stage: string;
  /**
   * The scopes of the executor loops it goes on inside, when it stopped in any (several when subtasks were running
   * in parallel).
   */
  scopes?: string[];
  /** Harness clock when the snapshot it goes on from was saved. */
  savedAt: number;
  /** What is done again, or handed to the model as interrupted. */
  redo: ResumeRedo;
};

/** Every event the harness emits. */
export type HarnessEvent =
  | RunStartEvent
  | PlanCreatedEvent
  | SubtaskStartEvent
  | SubtaskAttemptEvent
  | LlmRequestEvent
  | LlmRetryEvent
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | ToolCallDeltaEvent
  | LlmResponseEvent
  | ToolCallEvent
  | ToolResultEvent
  | MemoryTruncateEvent
  | MemoryCompressEvent
  | MemoryPruneEvent
  | CacheBreakEvent
  | SubtaskFinishEvent
  | SynthesisFinishEvent
  | VerifyFinishEvent
  | RepairStartEvent
  | RepairFinishEvent
  | ManagerDecisionEvent
  | AuditFinishEvent
  | IntegrityViolationEvent
  | RunWarningEvent
  | RunFinishEvent
  | RunErrorEvent
  | RunResumeEvent;

/** The `type` of an event. */
export type HarnessEventType = HarnessEvent['type'];
/** The event whose `type` is T. */
export type EventOf<T extends HarnessEventType> = Extract<HarnessEvent, { type: T }>;
/** An event as an emitter receives it, before the base fields are filled in. */
export type EventInput = HarnessEvent extends infer E ? (E extends HarnessEvent ? Omit<E, 'timestamp'> : never) : never;

/** A listener of one event type. */
export type HarnessListener<T extends HarnessEventType> = (event: EventOf<T>) => void;

/** Every event type, in lifecycle order. */
export const HARNESS_EVENT_TYPES: readonly HarnessEventType[] = [
  'run-start',
  'plan-created',
  'subtask-start',
  'subtask-attempt',
  'llm-request',
  'llm-retry',
  'text-delta',
  'reasoning-delta',
  'tool-call-delta',
  'llm-response',
  'tool-call',
  'tool-result',
  'memory-truncate',
  'memory-compress',
  'memory-prune',
  'cache-break',
  'subtask-finish',
  'synthesis-finish',
  'verify-finish',
  'repair-start',
  'repair-finish',
  'manager-decision',
  'audit-finish',
  'integrity-violation',
  'run-warning',
  'run-finish',
  'run-error',
  'run-resume',
];

/** A function that stamps and emits an event; components receive one instead of the emitter. */
export type EmitEvent = (event: EventInput) => void;

/** The streaming deltas: many per model call and useful only live. */
const DELTA_EVENT_TYPES: ReadonlySet<HarnessEventType> = new Set<HarnessEventType>([
  'text-delta',
  'reasoning-delta',
  'tool-call-delta',
]);

/** Whether an event is a streaming delta (`text-delta`, `reasoning-delta`, `tool-call-delta`). */
export function isDeltaEvent(event: { type: HarnessEventType }): boolean {
  return DELTA_EVENT_TYPES.has(event.type);
}
