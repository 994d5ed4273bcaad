/**
 * The backend contract: every role of the harness talks to an {@link LlmBackend}.
 * Shapes are fixed by ARCHITECTURE §2; adapters translate at the edge.
 * @module
 */

/** A tool call requested by the model. `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One part of a multimodal message. Images are base64 data or an https URL. */
export type ContentPart = { type: 'text'; text: string } | { type: 'image'; data: string; mediaType: string };

/** One message of a dialogue, provider-neutral. */
export type Message =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | {
      role: 'tool';
      toolCallId: string;
      toolName: string;
      content: string | ContentPart[];
      isError?: boolean;
    };

/** A tool as offered to the model: name, description and a JSON Schema of its input. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** Why the harness is calling the model; set on every request so backends and tests can route by role. */
export type Purpose =
  | 'plan'
  | 'execute'
  | 'synthesize'
  | 'verify'
  | 'repair'
  | 'summarize'
  | 'vision'
  | 'manage'
  | 'audit';

/** Token usage of one model call. */
export interface Usage {
  /** Every input token of the call, the cached ones included (the shipped adapters report it so). */
  inputTokens: number;
  outputTokens: number;
  /** The part of `inputTokens` the provider served from its prompt cache (a cache read). */
  cachedInputTokens?: number;
  /**
   * The part of `inputTokens` the provider wrote to its prompt cache (Anthropic's `cache_creation_input_tokens`),
   * billed at `Pricing.cacheWritePerMTok`. Providers that cache automatically report none.
   */
  cacheWriteInputTokens?: number;
}

/** Prices of a model per million tokens. */
export interface Pricing {
  /** Input tokens not served from the cache. */
  inputPerMTok: number;
  outputPerMTok: number;
  /** Cached input tokens (`Usage.cachedInputTokens`); without it they cost `inputPerMTok`. */
  cachedInputPerMTok?: number;
  /**
   * Input tokens written to the prompt cache (`Usage.cacheWriteInputTokens`); without it they cost `inputPerMTok`.
   * Anthropic bills a 5-minute write at 1.25× and a 1-hour write at 2× the input price (see docs/backends.md).
   */
  cacheWritePerMTok?: number;
}

/** A backend's prices and the currency they are in (any name the host chooses, e.g. `USD`). */
export interface BackendPricing extends Pricing {
  currency: string;
}

/** Why the model stopped. */
export type FinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other';

/** One model call. */
export interface GenerateRequest {
  messages: Message[];
  tools?: ToolSpec[];
  toolChoice?: 'auto' | 'none' | 'required' | { name: string };
  responseFormat?: { type: 'json'; schema?: Record<string, unknown>; name?: string };
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  /** Set by the harness on every call. */
  purpose?: Purpose;
  signal?: AbortSignal;
  /**
   * Called by a backend that retries internally, once per retry, before it waits `delayMs` (the harness turns it
   * into an `llm-retry` event). A backend without retries never calls it.
   */
  onRetry?: (retry: RetryNotice) => void;
  /**
   * Indices into `messages` of the messages that end a stable part of the request (the loop's task message, the
   * latest compression summary, the last aged observation of this request and of the loop's previous one): a backend
   * whose provider caches only where the request marks it places its cache markers there. Set by the harness on the
   * calls of its executor loops; other backends ignore it.
   */
  cacheBreakpoints?: readonly number[];
}

/** One retry of a model call, as a backend reports it through {@link GenerateRequest.onRetry}. */
export interface RetryNotice {
  /** The attempt that failed, from 1. */
  attempt: number;
  /** How long the backend waits before the next attempt. */
  delayMs: number;
  /** Why the attempt failed (a `HarnessError`-shaped code and a message with credentials redacted). */
  error: { code: string; message: string };
}

/** The complete answer to one model call. */
export interface GenerateResult {
  message: { role: 'assistant'; content: string; toolCalls: ToolCall[]; reasoning?: string };
  finishReason: FinishReason;
  usage: Usage;
}

/**
 * How a backend's provider caches prompt prefixes, so the harness can keep prefixes stable and price calls:
 * - `'automatic'`: the provider caches every long enough prefix by itself (OpenAI, DeepSeek, Gemini);
 * - `'markers'`: it caches only the prefixes the request marks (Anthropic's `cache_control`), at most `maxMarkers`;
 * - `'none'`: it does not cache.
 */
export interface PromptCacheCapability {
  mode: 'automatic' | 'markers' | 'none';
  /** The shortest prefix the provider caches, in tokens (1 024 for most models). */
  minPrefixTokens?: number;
  /** The most cache markers one request may carry (Anthropic: 4). */
  maxMarkers?: number;
  /** How long a cached prefix lives after its last use (`'5m'` or `'1h'`), where the request chooses it. */
  ttl?: '5m' | '1h';
}

/** One part of a streamed answer; `finish` is always last. */
export type StreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call-delta'; id: string; name?: string; argumentsDelta: string }
  | { type: 'finish'; result: GenerateResult };

/**
 * A language model the harness can call. Implement it to plug in any provider,
 * or use the shipped adapters `openAICompatible` and `anthropic`.
 *
 * @example
 * ```ts
 * const backend: LlmBackend = {
 *   provider: 'echo', modelId: 'echo-1', contextWindow: 8_000,
 *   async generate(request) {
 *     const last = request.messages.at(-1);
 *     const text = typeof last?.content === 'string' ? last.content : '';
 *     return { message: { role: 'assistant', content: text, toolCalls: [] },
 *              finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } };
 *   },
 * };
 * ```
 */
export interface LlmBackend {
  readonly provider: string;
  readonly modelId: string;
  /** Context window in tokens. */
  readonly contextWindow: number;
  /**
   * Whether the model accepts image content parts. `false` makes the harness send text only (the verifier then
   * says how many images it could not show); leave it out when unknown: images are sent, and a request the
   * provider rejects for them is sent again as text only.
   */
  readonly supportsImages?: boolean;
  /**
   * Whether the harness makes its model calls through `stream()` (and so emits `text-delta`, `reasoning-delta` and
   * `tool-call-delta` events). Leave it out to stream whenever `stream()` exists; `false` keeps the harness on
   * `generate()`. The shipped adapters set it from their `stream` option.
   */
  readonly streaming?: boolean;
  /**
   * What the model costs: each call's cost is carried on its `llm-response` event and summed in the run's report.
   * The shipped adapters and `ScriptedBackend` set it from their `pricing` option; leave it out when unknown.
   */
  readonly pricing?: BackendPricing;
  /**
   * How the provider caches prompt prefixes (see {@link PromptCacheCapability}). Leave it out when unknown: the
   * harness then treats the backend as one that does not cache. The shipped adapters set it.
   */
  readonly promptCache?: PromptCacheCapability;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  stream?(request: GenerateRequest): AsyncIterable<StreamPart>;
}
