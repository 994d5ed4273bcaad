/**
 * One observed model call: emits `llm-request` and `llm-response` around `backend.generate`.
 * @module
 */
import type { GenerateRequest, GenerateResult, LlmBackend, Message, Purpose, ToolSpec } from '../backend/types.js';
import type { EmitEvent } from '../events.js';

/** Counts a request's tokens (messages plus tool specs). */
export type RequestTokenCounter = (messages: readonly Message[], tools: readonly ToolSpec[]) => number;

/**
 * Fits a single-shot request into the backend's window before it is sent (the harness passes its memory's
 * `fitRequest`); throws a `ContextOverflowError` when it cannot fit.
 */
export type RequestFitter = (messages: Message[], call: { purpose: Purpose; scope: string; signal?: AbortSignal | undefined }) => Promise<Message[]>;

/** Where and how a single-shot role call (plan, verify) is observed. */
export interface ModelCallContext {
  backend: LlmBackend;
  purpose: Purpose;
  runId: string;
  /** Scope name carried by the events, e.g. `plan` or `verify-1`. */
  scope: string;
  emit?: EmitEvent | undefined;
  countTokens?: RequestTokenCounter | undefined;
  fit?: RequestFitter | undefined;
  now?: (() => number) | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Approximate token count (one token per four characters) for callers that have no tokenizer;
 * the harness passes its memory's exact counter instead.
 */
export const estimateRequestTokens: RequestTokenCounter = (messages, tools) => {
  let chars = 0;
  for (const message of messages) {
    if (typeof message.content === 'string') chars += message.content.length;
    else for (const part of message.content) chars += part.type === 'text' ? part.text.length : 1_000;
    chars += 16;
  }
  for (const tool of tools) chars += JSON.stringify(tool).length;
  return Math.ceil(chars / 4);
};

/** Calls the backend with `purpose` set and emits the request/response events. */
export async function callModel(
  context: ModelCallContext,
  request: Omit<GenerateRequest, 'purpose' | 'signal'>,
): Promise<GenerateResult> {
  const now = context.now ?? Date.now;
  const count = context.countTokens ?? estimateRequestTokens;
  if (context.fit) {
    const call = { purpose: context.purpose, scope: context.scope, signal: context.signal };
    request = { ...request, messages: await context.fit(request.messages, call) };
  }
  context.emit?.({
    type: 'llm-request',
    runId: context.runId,
    purpose: context.purpose,
    scope: context.scope,
    provider: context.backend.provider,
    modelId: context.backend.modelId,
    messages: request.messages.length,
    requestTokens: count(request.messages, request.tools ?? []),
  });
  const started = now();
  const result = await context.backend.generate({
    ...request,
    purpose: context.purpose,
    ...(context.signal ? { signal: context.signal } : {}),
  });
  context.emit?.({
    type: 'llm-response',
    runId: context.runId,
    purpose: context.purpose,
    scope: context.scope,
    finishReason: result.finishReason,
    usage: result.usage,
    toolCalls: result.message.toolCalls.length,
    durationMs: Math.max(0, now() - started),
  });
  return result;
}
