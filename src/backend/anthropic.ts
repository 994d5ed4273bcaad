/**
 * `anthropic()`: an {@link LlmBackend} over the Anthropic Messages API.
 * @module
 */
import type { InspectOptions } from 'node:util';
import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import { withAdaptation } from './adaptation.js';
import type { OpenResponse } from './http.js';
import { inBodyError } from './http-errors.js';
import { backendView, HttpTransport, type BackendView } from './http-transport.js';
import { baseUrlSchema, commonFields, parseOptions, retrySettings } from './options.js';
import { readAnswerBody } from './response-body.js';
import { SamplingPolicy, type SamplingRule } from './sampling.js';
import { parseSse } from './sse.js';
import { anthropicPromptCache, placeCacheMarkers } from './anthropic-cache.js';
import { mapStopReason, mapUsage, toWire } from './anthropic-wire.js';
import { finishOf, partsOf, StreamAssembler, type OpenToolCall } from './stream-assembler.js';
import type {
  BackendPricing,
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  PromptCacheCapability,
  StreamPart,
} from './types.js';

// Not imported by name: an ESM import of node:util reads every export, which loads its argument parser and MIME module.
const { inspect } = process.getBuiltinModule('node:util');

/** The `anthropic-version` header the adapter speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Options of {@link anthropic}. */
export const AnthropicOptionsSchema = z.strictObject({
  /** @defaultValue `https://api.anthropic.com`; `/v1/messages` is appended. */
  baseURL: baseUrlSchema.default('https://api.anthropic.com'),
  /** Sent as `x-api-key`; `ANTHROPIC_API_KEY` is read when omitted. */
  apiKey: z.string().min(1).optional(),
  /**
   * `max_tokens` when a request sets no `maxOutputTokens` (the Messages API requires one).
   * @defaultValue `DEFAULTS.maxOutputTokens` (8192), the output the harness reserves for every answer
   */
  maxOutputTokens: z.number().int().positive().default(DEFAULTS.maxOutputTokens),
  /**
   * Whether requests carry `cache_control` markers (the system prompt, the request's `cacheBreakpoints` and the newest
   * message), so the provider caches their prefixes. `false` sends none: nothing is cached.
   * @defaultValue true
   */
  cacheMarkers: z.boolean().default(true),
  /**
   * How long a cached prefix lives after its last use: `'5m'`, or `'1h'` (sent as `ttl: '1h'`; its writes are billed
   * higher, see docs/backends.md).
   * @defaultValue '5m'
   */
  cacheTtl: z.enum(['5m', '1h']).default('5m'),
  ...commonFields,
});

/** What users pass to {@link anthropic}. */
export type AnthropicOptions = z.input<typeof AnthropicOptionsSchema>;

/**
 * Claude Opus 4.1 to 4.6, Sonnet 4.5 / 4.6 and Haiku 4.5 reject `temperature` and `top_p` together; Opus 4.7 and the
 * Claude 5 models reject both ("deprecated for this model"); earlier models take both. Matches Bedrock and Vertex ids
 * (`anthropic.claude-opus-4-1-20250805-v1:0`, `claude-opus-4-1@20250805`) and dotted ones (`claude-sonnet-4.5`).
 */
function anthropicSamplingRule(modelId: string): SamplingRule {
  const match = /claude-(?:opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2}))?(?!\d)/.exec(modelId);
  if (!match) return {};
  const major = Number(match[1]);
  const minor = Number(match[2] ?? 0);
  if (major >= 5 || (major === 4 && minor >= 7)) return { rejected: ['temperature', 'top_p'] };
  return major === 4 && minor >= 1 ? { notBoth: true } : {};
}

/** The Messages API adapter; see {@link anthropic}. */
class AnthropicBackend implements LlmBackend {
  readonly provider = 'anthropic';
  readonly modelId: string;
  readonly contextWindow: number;
  readonly supportsImages?: boolean;
  readonly streaming: boolean;
  readonly pricing?: BackendPricing;
  readonly promptCache: PromptCacheCapability;
  private readonly sampling: SamplingPolicy;
  // Private (#) fields: the options and the transport hold the api key and headers, which must never print.
  readonly #options: z.output<typeof AnthropicOptionsSchema>;
  readonly #http: HttpTransport;

  constructor(input: AnthropicOptions) {
    this.#options = parseOptions('anthropic', AnthropicOptionsSchema, input);
    const apiKey = this.#options.apiKey ?? process.env.ANTHROPIC_API_KEY;
    if (!apiKey) {
      throw new HarnessError(
        'invalid-options',
        'Invalid anthropic() options: `apiKey` is required; pass it or set ANTHROPIC_API_KEY.',
      );
    }
    const { baseURL, model, contextWindow, headers } = this.#options;
    this.modelId = model;
    this.contextWindow = contextWindow;
    this.supportsImages = this.#options.supportsImages;
    this.streaming = this.#options.stream;
    this.pricing = this.#options.pricing;
    this.promptCache = anthropicPromptCache(model, this.#options.cacheMarkers, this.#options.cacheTtl);
    this.sampling = new SamplingPolicy(this.#options.sampling, anthropicSamplingRule(model));
    this.#http = new HttpTransport({
      ...this.#options,
      owner: this,
      url: baseURL.endsWith('/v1') ? `${baseURL}/messages` : `${baseURL}/v1/messages`,
      apiKey,
      headers: { 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION, ...headers },
      retry: retrySettings(this.#options),
      errors: {
        provider: 'anthropic',
        credentialHint: 'set ANTHROPIC_API_KEY or pass the `apiKey` option of anthropic()',
      },
    });
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    try {
      return await withAdaptation(
        () => this.buildBody(request, this.#options.stream),
        (body) => this.#http.send(body, request, async (open) => finishOf(await this.openParts(open), this.provider)),
        (errorBody, sent) => this.sampling.learn(errorBody, sent),
      );
    } catch (error) {
      throw this.#http.redact(error);
    }
  }

  async *stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
    try {
      const parts = await withAdaptation(
        () => this.buildBody(request, true),
        (body) => this.#http.send(body, request, (open) => this.openParts(open)),
        (errorBody, sent) => this.sampling.learn(errorBody, sent),
      );
      yield* parts;
    } catch (error) {
      throw this.#http.redact(error);
    }
  }

  /** What the backend shows of itself: never the api key or the headers. */
  toJSON(): BackendView {
    return backendView(this, this.#http.url.replace(/\/(v1\/)?messages$/, ''));
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `AnthropicBackend ${inspect(this.toJSON(), options)}`;
  }

  /** The parts of a 2xx answer: streamed from an event stream, replayed from a JSON message. */
  private async openParts(open: OpenResponse): Promise<AsyncIterable<StreamPart> | Iterable<StreamPart>> {
    const body = await readAnswerBody(open, this.#http.errors);
    return body.kind === 'json' ? partsOf(this.parseResponse(body.value)) : this.readSse(body.bytes);
  }

  private buildBody(request: GenerateRequest, stream: boolean): Record<string, unknown> {
    const { system, messages, ends } = toWire(request.messages);
    const format = request.responseFormat;
    // The Messages API has no portable JSON mode, so the format is asked for in the system prompt.
    const formatText = format
      ? format.schema
        ? `Reply with one JSON object only, no prose and no code fence, matching this JSON Schema:\n${JSON.stringify(format.schema)}`
        : 'Reply with one JSON object only, no prose and no code fence.'
      : '';
    const systemText = [system, formatText].filter((text) => text !== '').join('\n\n');
    const body: Record<string, unknown> = {
      model: this.modelId,
      max_tokens: request.maxOutputTokens ?? this.#options.maxOutputTokens,
      messages,
      stream,
    };
    if (systemText !== '') body.system = systemText;
    if (request.tools && request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: tool.inputSchema,
      }));
    }
    const choice = request.toolChoice;
    if (choice !== undefined) {
      body.tool_choice =
        typeof choice === 'object'
          ? { type: 'tool', name: choice.name }
          : choice === 'required'
            ? { type: 'any' }
            : { type: choice };
    }
    Object.assign(body, this.sampling.fields(request));
    const cache = this.promptCache;
    if (cache.mode === 'markers') {
      placeCacheMarkers(body, {
        ends,
        breakpoints: request.cacheBreakpoints ?? [],
        ttl: cache.ttl ?? '5m',
        maxMarkers: cache.maxMarkers ?? 0,
      });
    }
    return body;
  }

  private parseResponse(json: unknown): GenerateResult {
    const record = json as Record<string, unknown>;
    if (typeof record !== 'object' || record === null)
      throw new HarnessError('invalid-response', 'anthropic sent an empty response.');
    if (record.type === 'error') throw inBodyError(record, this.#http.errors);
    const assembler = new StreamAssembler();
    for (const block of (record.content as Array<Record<string, unknown>> | undefined) ?? []) {
      if (block.type === 'text') assembler.addText(block.text);
      else if (block.type === 'thinking') assembler.addReasoning(block.thinking);
      else if (block.type === 'tool_use') {
        const call = assembler.openCall(typeof block.id === 'string' ? block.id : undefined, String(block.name ?? ''));
        assembler.appendArguments(call, JSON.stringify(block.input ?? {}), false);
      }
    }
    assembler.finishReason = mapStopReason(record.stop_reason);
    assembler.usage = mapUsage(record.usage, assembler.usage);
    return assembler.result('other');
  }

  private async *readSse(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<StreamPart> {
    const assembler = new StreamAssembler();
    const blocks = new Map<number, { call: OpenToolCall; sawJson: boolean; initialInput: unknown }>();
    let stopped = false;
    for await (const frame of parseSse(bytes)) {
      if (frame.data === '[DONE]') break;
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(frame.data) as Record<string, unknown>;
      } catch (error) {
        // Some proxies put plain text in an `event: error` frame; it is still the provider's error, not bad data.
        if (frame.event === 'error') throw inBodyError({ error: { message: frame.data } }, this.#http.errors);
        throw new HarnessError(
          'invalid-response',
          `anthropic sent a stream frame that is not JSON: ${frame.data.slice(0, 200)}`,
          { cause: error },
        );
      }
      const type = event.type ?? frame.event;
      const index = typeof event.index === 'number' ? event.index : -1;
      switch (type) {
        case 'error':
          throw inBodyError(event, this.#http.errors);
        case 'message_start':
          assembler.usage = mapUsage((event.message as Record<string, unknown> | undefined)?.usage, assembler.usage);
          break;
        case 'content_block_start': {
          const block = (event.content_block ?? {}) as Record<string, unknown>;
          if (block.type === 'text') {
            const part = assembler.addText(block.text);
            if (part) yield part;
          } else if (block.type === 'thinking') {
            const part = assembler.addReasoning(block.thinking);
            if (part) yield part;
          } else if (block.type === 'tool_use') {
            const call = assembler.openCall(
              typeof block.id === 'string' ? block.id : undefined,
              String(block.name ?? ''),
            );
            blocks.set(index, { call, sawJson: false, initialInput: block.input });
            const part = assembler.appendArguments(call, '', true);
            if (part) yield part;
          }
          break;
        }
        case 'content_block_delta': {
          const delta = (event.delta ?? {}) as Record<string, unknown>;
          let part: StreamPart | undefined;
          if (delta.type === 'text_delta') part = assembler.addText(delta.text);
          else if (delta.type === 'thinking_delta') part = assembler.addReasoning(delta.thinking);
          else if (delta.type === 'input_json_delta') {
            const open = blocks.get(index);
            if (open && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
              open.sawJson = true;
              part = assembler.appendArguments(open.call, delta.partial_json, false);
            }
          }
          if (part) yield part;
          break;
        }
        case 'content_block_stop': {
          const open = blocks.get(index);
          // A tool_use whose input arrived whole in content_block_start (no JSON deltas) keeps that input.
          if (open && !open.sawJson && open.initialInput !== undefined) {
            const input = JSON.stringify(open.initialInput);
            if (input !== '{}') {
              const part = assembler.appendArguments(open.call, input, false);
              if (part) yield part;
            }
          }
          break;
        }
        case 'message_delta': {
          const reason = mapStopReason((event.delta as Record<string, unknown> | undefined)?.stop_reason);
          if (reason) assembler.finishReason = reason;
          assembler.usage = mapUsage(event.usage, assembler.usage);
          break;
        }
        case 'message_stop':
          stopped = true;
          break;
        default:
          break;
      }
      if (stopped) break;
    }
    if (!stopped && assembler.finishReason === undefined) {
      throw new HarnessError(
        'invalid-response',
        'anthropic closed the stream before the model finished; the answer is incomplete.',
        { retryable: true },
      );
    }
    yield { type: 'finish', result: assembler.result('other') };
  }
}

/**
 * An {@link LlmBackend} for the Anthropic Messages API, over undici.
 *
 * @example
 * ```ts
 * const backend = anthropic({ model: 'claude-sonnet-4-5', contextWindow: 200_000 }); // reads ANTHROPIC_API_KEY
 * ```
 */
export function anthropic(
  options: AnthropicOptions,
): LlmBackend & { stream(request: GenerateRequest): AsyncIterable<StreamPart> } {
  return new AnthropicBackend(options);
}
