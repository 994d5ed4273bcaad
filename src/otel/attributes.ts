/**
 * The attribute and span names the tracing uses: the OpenTelemetry GenAI semantic conventions where they define one,
 * `horizon_harness.*` for what is the harness's own.
 * @module
 */
import type { FinishReason } from '../backend/types.js';

/** The semantic-conventions release whose GenAI span conventions the names follow. */
export const GEN_AI_SEMCONV_VERSION = '1.41.0';

/** GenAI semantic-convention attributes (and the general `error.type`). @internal */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolType: 'gen_ai.tool.type',
  toolCallId: 'gen_ai.tool.call.id',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
} as const;

/** The harness's own attributes. @internal */
export const HH = {
  runId: 'horizon_harness.run.id',
  mode: 'horizon_harness.mode',
  status: 'horizon_harness.status',
  stage: 'horizon_harness.stage',
  purpose: 'horizon_harness.purpose',
  scope: 'horizon_harness.scope',
  callId: 'horizon_harness.call.id',
  round: 'horizon_harness.round',
  attempt: 'horizon_harness.attempt',
  subtaskId: 'horizon_harness.subtask.id',
  subtaskIndex: 'horizon_harness.subtask.index',
  subtaskTitle: 'horizon_harness.subtask.title',
  subtaskAttempts: 'horizon_harness.subtask.attempts',
  requestMessages: 'horizon_harness.request.messages',
  requestTokens: 'horizon_harness.request.tokens',
  responseToolCalls: 'horizon_harness.response.tool_calls',
  retryDelayMs: 'horizon_harness.retry.delay_ms',
  retryError: 'horizon_harness.retry.error',
  toolOutputChars: 'horizon_harness.tool.output_chars',
  toolFiles: 'horizon_harness.tool.files',
  planSubtasks: 'horizon_harness.plan.subtasks',
  planFallback: 'horizon_harness.plan.fallback',
  decomposition: 'horizon_harness.decomposition',
  verification: 'horizon_harness.verification',
  resumed: 'horizon_harness.resumed',
  passed: 'horizon_harness.verify.passed',
  defects: 'horizon_harness.verify.defects',
  files: 'horizon_harness.deliverable.files',
  next: 'horizon_harness.manager.next',
  records: 'horizon_harness.manager.records',
  fallback: 'horizon_harness.fallback',
  auditStatus: 'horizon_harness.audit.status',
  integrity: 'horizon_harness.audit.integrity',
  findings: 'horizon_harness.audit.findings',
  changedPaths: 'horizon_harness.audit.changed_paths',
} as const;

/** Span event names. @internal */
export const SPAN_EVENTS = {
  retry: 'horizon_harness.llm.retry',
  attempt: 'horizon_harness.subtask.attempt',
  resume: 'horizon_harness.run.resume',
  warning: 'horizon_harness.run.warning',
  compress: 'horizon_harness.memory.compress',
  prune: 'horizon_harness.memory.prune',
  truncate: 'horizon_harness.memory.truncate',
  integrityViolation: 'horizon_harness.audit.integrity_violation',
} as const;

/**
 * `error.type` values of what the harness reports (the conventions ask instrumentations to list them): an error code
 * of the harness (`HarnessErrorCode`, e.g. `rate-limited`) where the event carries one, a run or repair status
 * (`aborted`, `timeout`, `failed`, `blocked`), and these.
 */
export const ERROR_TYPES = {
  /** A tool returned an error observation. */
  tool: 'tool_error',
  /** A subtask ended failed after its attempts. */
  subtask: 'subtask_failed',
  /** Synthesis ended failed. */
  synthesis: 'synthesis_failed',
  /** A model call or tool call that never reported its end (it failed, or the run stopped). */
  other: '_OTHER',
} as const;

/** The conventions' finish reasons, by the harness's. */
const FINISH_REASONS: Record<FinishReason, string> = {
  stop: 'stop',
  'tool-calls': 'tool_call',
  length: 'length',
  'content-filter': 'content_filter',
  error: 'error',
  other: 'other',
};

/** A harness finish reason as the GenAI conventions spell it. @internal */
export function finishReasonOf(reason: FinishReason): string {
  return FINISH_REASONS[reason] ?? String(reason);
}
