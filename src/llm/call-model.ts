/**
 * The one observed model call every role goes through: sampling and the output reserve applied, `llm-request`,
 * `llm-retry`, the live deltas and `llm-response` emitted under one call id, the result normalised, and the
 * provider's usage handed back for calibration.
 * @module
 */
import type {
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  Message,
  Purpose,
  RetryNotice,
  ToolSpec,
  Usage,
} from '../backend/types.js';
import { callCost } from '../backend/pricing.js';
import { DEFAULTS } from '../defaults.js';
import type { EmitEvent } from '../events.js';
import { callGateOf } from './call-gate.js';
import { streamCall, streamsCalls, type CallIdentity } from './stream-call.js';

/** Counts a request's tokens (messages plus tool specs). */
export type RequestTokenCounter = (messages: readonly Message[], tools: readonly ToolSpec[]) => number;

/**
 * Fits a single-shot request into the backend's window before it is sent (the harness passes its memory's
 * `fitRequest`); throws a `ContextOverflowError` when it cannot fit.
 */
export type RequestFitter = (
  messages: Message[],
  call: { purpose: Purpose; scope: string; signal?: AbortSignal | undefined; tools?: ToolSpec[] | undefined },
) => Promise<Message[]>;

/** Sampling parameters sent with a request; a field left out is not sent (the provider's default applies). */
export interface Sampling {
  temperature?: number;
  topP?: number;
}

/** Where and how one model call is observed. */
export interface ModelCallContext {
  backend: LlmBackend;
  purpose: Purpose;
  runId: string;
  /** Scope name carried by the events, e.g. `plan`, `subtask-1` or `verify-1`. */
  scope: string;
  emit?: EmitEvent | undefined;
  countTokens?: RequestTokenCounter | undefined;
  /** Fits the request first (single-shot roles); loops that fit their own dialogue leave it out. */
  fit?: RequestFitter | undefined;
  now?: (() => number) | undefined;
  signal?: AbortSignal | undefined;
  /** Applied where the request sets no sampling of its own. */
  sampling?: Sampling | undefined;
  /** Sent as `maxOutputTokens` where the request sets none; the same number the memory reserved for the answer. */
  maxOutputTokens?: number | undefined;
  /**
   * Receives the counted input and the provider's usage after every call (the memory calibrates its counts with it),
   * and the call: its identity and the request as sent.
   */
  onUsage?: ((countedInputTokens: number, usage: Usage, backend: LlmBackend, call: UsageCall) => void) | undefined;
  /** Makes the id that ties a call's events together; a random UUID by default. */
  newCallId?: (() => string) | undefined;
}

/** The call a usage figure belongs to, as `onUsage` is told it. */
export interface UsageCall {
  runId: string;
  purpose: Purpose;
  scope: string;
  /** The messages sent (after fitting) and the tool specs offered: what `countedInputTokens` counted. */
  messages: readonly Message[];
  tools: readonly ToolSpec[];
}

/** How a role's calls are made: its sampling, output reserve and usage observer (the harness fills these in per role). */
export type CallSettings = Pick<ModelCallContext, 'sampling' | 'maxOutputTokens' | 'onUsage'>;

/**
 * Output tokens reserved for a backend's answer: the configured number, but never more than a quarter of its window,
 * so a small window keeps room for its input.
 */
export function reservedOutputTokens(contextWindow: number, configured: number = DEFAULTS.maxOutputTokens): number {
  const window = Number.isFinite(contextWindow) && contextWindow > 0 ? contextWindow : DEFAULTS.contextWindow;
  return Math.max(1, Math.min(configured, Math.floor(window / 4)));
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

/**
 * Calls the backend with `purpose`, sampling and the output reserve set, emits the call's events and returns the
 * result normalised (a missing `toolCalls` or `usage` becomes empty). A backend with `stream()` (and no
 * `streaming: false`) is called through it, its parts emitted as delta events as they arrive; otherwise `generate()`.
 * Every retry the backend reports through `onRetry` becomes an `llm-retry` event. Backend errors propagate.
 * A backend with `pricing` gets the call's cost on its `llm-response`; a run's backend may refuse the call before it
 * is sent (`cost-limit`, when it could take the run past `limits.maxCost`).
 */
export async function callModel(
  context: ModelCallContext,
  request: Omit<GenerateRequest, 'purpose' | 'signal'>,
): Promise<GenerateResult> {
  const now = context.now ?? Date.now;
  const count = context.countTokens ?? estimateRequestTokens;
  const { backend, emit } = context;
  let messages = request.messages;
  if (context.fit) {
    messages = await context.fit(messages, {
      purpose: context.purpose,
      scope: context.scope,
      signal: context.signal,
      tools: request.tools,
    });
  }
  const requestTokens = count(messages, request.tools ?? []);
  const maxOutputTokens = request.maxOutputTokens ?? context.maxOutputTokens;
  const temperature = request.temperature ?? context.sampling?.temperature;
  const topP = request.topP ?? context.sampling?.topP;
  // A run's backend refuses here a call its limits forbid (limits.maxCost): before it is announced or sent.
  const release = callGateOf(backend)?.admit({
    purpose: context.purpose,
    scope: context.scope,
    backend,
    requestTokens,
    maxOutputTokens,
  });
  const identity: CallIdentity = {
    runId: context.runId,
    purpose: context.purpose,
    scope: context.scope,
    callId: context.newCallId?.() ?? crypto.randomUUID(),
  };
  emit?.({
    type: 'llm-request',
    ...identity,
    provider: backend.provider,
    modelId: backend.modelId,
    contextWindow: backend.contextWindow,
    messages: messages.length,
    requestTokens,
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(topP === undefined ? {} : { topP }),
    // The emitter drops it unless content is captured (see HarnessEvents.captureContent). A copy: the loop goes on
    // appending to its dialogue, and a listener that keeps the event must see the messages of this call only.
    content: { messages: [...messages] },
  });
  const onRetry = (notice: RetryNotice) => {
    request.onRetry?.(notice);
    emit?.({
      type: 'llm-retry',
      ...identity,
      provider: backend.provider,
      modelId: backend.modelId,
      attempt: notice.attempt,
      delayMs: notice.delayMs,
      error: { code: notice.error.code, message: notice.error.message },
    });
  };
  const sent: GenerateRequest = {
    ...request,
    messages: [...messages],
    purpose: context.purpose,
    ...(temperature === undefined ? {} : { temperature }),
    ...(topP === undefined ? {} : { topP }),
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
    ...(context.signal ? { signal: context.signal } : {}),
    onRetry,
  };
  const started = now();
  let raw: GenerateResult;
  try {
    raw = streamsCalls(backend) ? await streamCall(backend, sent, identity, emit) : await backend.generate(sent);
  } finally {
    // From here to llm-response nothing awaits: the call's cost is in the run's tally before its reservation goes.
    release?.();
  }
  const result = normalizeResult(raw);
  context.onUsage?.(requestTokens, result.usage, backend, {
    runId: context.runId,
    purpose: context.purpose,
    scope: context.scope,
    messages,
    tools: request.tools ?? [],
  });
  emit?.({
    type: 'llm-response',
    ...identity,
    finishReason: result.finishReason,
    usage: result.usage,
    toolCalls: result.message.toolCalls.length,
    durationMs: Math.max(0, now() - started),
    ...(backend.pricing ? { cost: callCost(result.usage, backend.pricing), currency: backend.pricing.currency } : {}),
    content: { message: result.message },
  });
  return result;
}

/** A backend that leaves out `toolCalls`, `content` or `usage` still yields a well-formed result. */
function normalizeResult(result: GenerateResult): GenerateResult {
  const message = result?.message;
  return {
    ...result,
    finishReason: result?.finishReason ?? 'other',
    message: {
      ...message,
      role: 'assistant',
      content: typeof message?.content === 'string' ? message.content : '',
      toolCalls: Array.isArray(message?.toolCalls) ? message.toolCalls : [],
    },
    usage: result?.usage ?? { inputTokens: 0, outputTokens: 0 },
  };
}
