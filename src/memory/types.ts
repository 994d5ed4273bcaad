/**
 * The execution-memory contract the executor relies on before every model call and after every tool call.
 * @module
 */
import type { LlmBackend, Message, Purpose, ToolSpec, Usage } from '../backend/types.js';
import type { EmitEvent } from '../events.js';
import type { Sampling } from '../llm/call-model.js';
import type { DataMark } from '../prompts/datamark.js';
import type { ToolInvocation } from '../tools/types.js';
import type { Workspace } from '../workspace/types.js';

/** Where a memory operation happens and what it may use. */
export interface MemoryScope {
  runId: string;
  purpose: Purpose;
  /** `subtask-1`…, `synthesis`, `repair-1`…. */
  scope: string;
  /** The backend about to be called; its `contextWindow` is the budget. */
  backend: LlmBackend;
  /** The backend that writes summaries (purpose `summarize`). */
  summarizer: LlmBackend;
  /** Sampling sent with the summariser's calls (the `summarize` role's); absent: none is sent. */
  sampling?: Sampling;
  workspace: Workspace;
  signal: AbortSignal;
  emit: EmitEvent;
  /** The run's boundary of untrusted text: summaries enter the dialogue marked with it. Absent: the memory's own. */
  dataMark?: DataMark;
}

/** A request about to be sent. The first `protectedCount` messages (system prompt, original request, objective, checkpoints) are never summarised or pruned. */
export interface PendingRequest {
  messages: Message[];
  tools: ToolSpec[];
  protectedCount: number;
  /**
   * Output tokens reserved for the answer (the request's `maxOutputTokens`): the input may use the window less
   * this. Absent: `reservedOutputTokens(window)`.
   */
  maxOutputTokens?: number;
}

/**
 * Keeps every model call inside the context window. `MemoryManager` is the shipped implementation;
 * pass your own through `components.memory`.
 */
export interface ExecutionMemory {
  /** Reduces a raw tool result to the observation that enters the dialogue; the full output is saved in the workspace. */
  boundObservation(invocation: ToolInvocation, scope: MemoryScope): Promise<string>;
  /**
   * Returns the dialogue to send (and keep) for this request: unchanged when it fits, else compressed
   * or pruned. Throws `ContextOverflowError` when even the protected parts do not fit.
   */
  fitRequest(request: PendingRequest, scope: MemoryScope): Promise<Message[]>;
  /** Deterministic pruning after a backend still answered "context length exceeded". */
  pruneAfterOverflow(request: PendingRequest, scope: MemoryScope): Message[];
  /**
   * The request's size in tokens: messages, tool specs and per-message overhead; with `backend`, corrected by what
   * that backend's provider has reported so far (see `observeUsage`).
   */
  countRequest(messages: readonly Message[], tools: readonly ToolSpec[], backend?: LlmBackend): number;
  /**
   * The request's size as cheaply as the memory knows it: `countRequest`'s figure with `exact: true`, or an upper
   * bound on it with `exact: false` (for a request the memory did not need to count, far below the window). The
   * executor reports it as `requestTokens`. Optional: without it, `countRequest` is used.
   */
  sizeRequest?(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    backend?: LlmBackend,
  ): { tokens: number; exact: boolean };
  /**
   * Told after every call whose request was counted exactly how many input tokens the memory counted and how many
   * the provider reported, so counts for that backend can be calibrated. Never told a bound. `report` says where to
   * report a usage figure the memory refuses to learn from. Optional.
   */
  observeUsage?(backend: LlmBackend, countedInputTokens: number, usage: Usage, report?: UsageReport): void;
}

/**
 * Where a memory reports what it makes of a call's usage (a `run-warning` when it ignores a report): the call's run,
 * purpose and scope, and the run's event sink.
 */
export interface UsageReport {
  runId: string;
  purpose: Purpose;
  scope: string;
  emit: EmitEvent;
}

const MEMORY_METHODS = ['boundObservation', 'fitRequest', 'pruneAfterOverflow', 'countRequest'] as const;

/** True when `value` implements every required method of {@link ExecutionMemory}. */
export function isExecutionMemory(value: unknown): value is ExecutionMemory {
  return (
    typeof value === 'object' &&
    value !== null &&
    MEMORY_METHODS.every((method) => typeof (value as Record<string, unknown>)[method] === 'function')
  );
}

/** What a custom memory must implement, for error messages. */
export const EXECUTION_MEMORY_SHAPE = `ExecutionMemory (${MEMORY_METHODS.join(', ')})`;
