/**
 * `openAICompatible()`: an {@link LlmBackend} over the Chat Completions API (OpenAI, vLLM, Ollama,
 * llama.cpp server, DeepSeek, Qwen, GLM, Groq, OpenRouter, Gemini's compatible endpoint).
 * @module
 */
import type { InspectOptions } from 'node:util';
import { z } from 'zod';
import { HarnessError } from '../errors.js';
import { rejectsField, withAdaptation } from './adaptation.js';
import type { OpenResponse } from './http.js';
import { inBodyError } from './http-errors.js';
import { backendView, HttpTransport, type BackendView } from './http-transport.js';
import { baseUrlSchema, commonFields, parseOptions, retrySettings } from './options.js';
import { jsonInstruction, mapFinishReason, mapUsage, toWireMessages, type WireToolCallDelta } from './openai-wire.js';
import { readAnswerBody } from './response-body.js';
import { SamplingPolicy, type SamplingRule } from './sampling.js';
import { parseSse } from './sse.js';
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

/** Options of {@link openAICompatible}. */
export const OpenAICompatibleOptionsSchema = z.strictObject({
  /** e.g. `https://api.openai.com/v1`; `/chat/completions` is appended. */
  baseURL: baseUrlSchema,
  /** Sent as `Authorization: Bearer …`; local servers need none. For api.openai.com, `OPENAI_API_KEY` is read when omitted. */
  apiKey: z.string().min(1).optional(),
  /** Name reported as `backend.provider`; derived from the baseURL when omitted. */
  provider: z.string().min(1).optional(),
  /**
   * Reported as `backend.promptCache`: how the provider caches prompt prefixes. The OpenAI-style providers cache
   * every prefix of at least 1 024 tokens by themselves; give `{ mode: 'none' }` for a server that does not cache
   * (most local ones), or the figures of yours.
   * @defaultValue `{ mode: 'automatic', minPrefixTokens: 1024 }`
   */
  promptCache: z
    .strictObject({
      mode: z.enum(['automatic', 'markers', 'none']),
      minPrefixTokens: z.number().int().min(0).optional(),
      maxMarkers: z.number().int().min(0).optional(),
      ttl: z.enum(['5m', '1h']).optional(),
    })
    .default({ mode: 'automatic', minPrefixTokens: 1_024 }),
  ...commonFields,
});

/** What users pass to {@link openAICompatible}. */
export type OpenAICompatibleOptions = z.input<typeof OpenAICompatibleOptionsSchema>;

type ResponseFormatLevel = 'json_schema' | 'json_object' | 'prompt';

/** The body field of the output-token limit: OpenAI's current one, or the one every compatible server reads. */
type OutputLimitField = 'max_completion_tokens' | 'max_tokens';

const KNOWN_HOSTS: Array<[RegExp, string]> = [
  [/(^|\.)openai\.com$/, 'openai'],
  [/(^|\.)deepseek\.com$/, 'deepseek'],
  [/dashscope/, 'alibaba'],
  [/(^|\.)bigmodel\.cn$|(^|\.)z\.ai$/, 'zhipu'],
  [/(^|\.)groq\.com$/, 'groq'],
  [/(^|\.)openrouter\.ai$/, 'openrouter'],
  [/generativelanguage\.googleapis\.com$/, 'google'],
  [/(^|\.)ollama\.com$/, 'ollama'],
];

/** The environment variable each provider's own docs keep the key in; named in 401/403 messages. */
const KEY_ENV_VARS: Record<string, string> = {
  openai: 'OPENAI_API_KEY',
  deepseek: 'DEEPSEEK_API_KEY',
  alibaba: 'DASHSCOPE_API_KEY',
  zhipu: 'ZHIPU_API_KEY',
  groq: 'GROQ_API_KEY',
  openrouter: 'OPENROUTER_API_KEY',
  google: 'GEMINI_API_KEY',
};

function credentialHint(hostProvider: string, keySent: boolean): string {
  const missing = keySent ? '' : 'no API key was sent; ';
  if (hostProvider === 'openai')
    return `${missing}set OPENAI_API_KEY or pass the \`apiKey\` option of openAICompatible()`;
  const envVar = KEY_ENV_VARS[hostProvider];
  return envVar
    ? `${missing}pass the key as the \`apiKey\` option of openAICompatible(), e.g. \`apiKey: process.env.${envVar}\``
    : `${missing}pass this provider's key as the \`apiKey\` option of openAICompatible() (e.g. from its API-key environment variable)`;
}

function providerFromUrl(baseURL: string): string {
  const url = new URL(baseURL);
  if (url.port === '11434') return 'ollama';
  return KNOWN_HOSTS.find(([pattern]) => pattern.test(url.hostname))?.[1] ?? 'openai-compatible';
}

/**
 * OpenAI's reasoning models (o1, o3, o4-mini, …, and the gpt-5 family except the original gpt-5-chat): they reject
 * `max_tokens` and any `temperature` / `top_p` but the default. A router prefix (`openai/o3`) is ignored.
 */
function isOpenAIReasoningModel(modelId: string): boolean {
  const id = modelId.slice(modelId.lastIndexOf('/') + 1);
  if (/^o\d+(-|$)/.test(id) || id.startsWith('codex-mini')) return true;
  const gpt = /^gpt-(\d+)(?:\.(\d+))?(?:-(.+))?$/.exec(id);
  if (!gpt) return false;
  const isChatModel = gpt[2] === undefined && (gpt[3]?.startsWith('chat') ?? false);
  return Number(gpt[1]) >= 5 && !isChatModel;
}

function openAISamplingRule(modelId: string): SamplingRule {
  return isOpenAIReasoningModel(modelId) ? { rejected: ['temperature', 'top_p'] } : {};
}

/**
 * OpenAI itself and its reasoning models take `max_completion_tokens`. Other servers get `max_tokens`: Ollama,
 * llama.cpp and LM Studio ignore `max_completion_tokens` without an error, which would leave the answer unbounded.
 */
function outputLimitFieldFor(hostProvider: string, modelId: string): OutputLimitField {
  return hostProvider === 'openai' || isOpenAIReasoningModel(modelId) ? 'max_completion_tokens' : 'max_tokens';
}

/** The Chat Completions adapter; see {@link openAICompatible}. */
class OpenAICompatibleBackend implements LlmBackend {
  readonly provider: string;
  readonly modelId: string;
  readonly contextWindow: number;
  readonly supportsImages?: boolean;
  readonly streaming: boolean;
  readonly pricing?: BackendPricing;
  readonly promptCache: PromptCacheCapability;
  // Private (#) fields: the options and the transport hold the api key and headers, which must never print.
  readonly #options: z.output<typeof OpenAICompatibleOptionsSchema>;
  readonly #http: HttpTransport;
  // Remembered per instance: once the server rejects something, later calls leave it out from the start.
  private responseFormatLevel: ResponseFormatLevel = 'json_schema';
  private readonly sampling: SamplingPolicy;
  private readonly knownOutputLimitField: OutputLimitField;
  private outputLimitField: OutputLimitField;

  constructor(input: OpenAICompatibleOptions) {
    this.#options = parseOptions('openAICompatible', OpenAICompatibleOptionsSchema, input);
    const { baseURL, model, contextWindow, headers } = this.#options;
    this.provider = this.#options.provider ?? providerFromUrl(baseURL);
    this.modelId = model;
    this.contextWindow = contextWindow;
    this.supportsImages = this.#options.supportsImages;
    this.streaming = this.#options.stream;
    this.pricing = this.#options.pricing;
    this.promptCache = this.#options.promptCache;
    const hostProvider = providerFromUrl(baseURL);
    this.sampling = new SamplingPolicy(this.#options.sampling, openAISamplingRule(model));
    this.knownOutputLimitField = outputLimitFieldFor(hostProvider, model);
    this.outputLimitField = this.knownOutputLimitField;
    const apiKey = this.#options.apiKey ?? (hostProvider === 'openai' ? process.env.OPENAI_API_KEY : undefined);
    this.#http = new HttpTransport({
      ...this.#options,
      owner: this,
      url: `${baseURL}/chat/completions`,
      apiKey,
      headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers },
      retry: retrySettings(this.#options),
      errors: {
        provider: this.provider,
        credentialHint: credentialHint(hostProvider, apiKey !== undefined && apiKey !== ''),
      },
    });
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    try {
      return await withAdaptation(
        () => this.buildBody(request),
        (body) => this.#http.send(body, request, async (open) => finishOf(await this.openParts(open), this.provider)),
        (errorBody, sent) => this.adapt(request, errorBody, sent),
      );
    } catch (error) {
      throw this.#http.redact(error);
    }
  }

  async *stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
    try {
      const parts = await withAdaptation(
        () => ({ ...this.buildBody(request), stream: true, stream_options: { include_usage: true } }),
        (body) => this.#http.send(body, request, (open) => this.openParts(open)),
        (errorBody, sent) => this.adapt(request, errorBody, sent),
      );
      yield* parts;
    } catch (error) {
      throw this.#http.redact(error);
    }
  }

  /** What the backend shows of itself: never the api key or the headers. */
  toJSON(): BackendView {
    return backendView(this, this.#http.url.replace(/\/chat\/completions$/, ''));
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `OpenAICompatibleBackend ${inspect(this.toJSON(), options)}`;
  }

  /** The parts of a 2xx answer: streamed from an event stream, replayed from a JSON completion. */
  private async openParts(open: OpenResponse): Promise<AsyncIterable<StreamPart> | Iterable<StreamPart>> {
    const body = await readAnswerBody(open, this.#http.errors);
    return body.kind === 'json' ? partsOf(this.parseResponse(body.value)) : this.readSse(body.bytes);
  }

  /** Learns every rejection a 400 names (response_format, sampling, output-limit field); true when the request should go again. */
  private adapt(request: GenerateRequest, errorBody: string, sent: Record<string, unknown>): boolean {
    const learned = [
      this.learnResponseFormat(request, errorBody),
      this.sampling.learn(errorBody, sent),
      this.learnOutputLimitField(errorBody, sent),
    ];
    return learned.includes(true);
  }

  /** Steps response_format down json_schema → json_object → prompt-only when the server rejects it. */
  private learnResponseFormat(request: GenerateRequest, errorBody: string): boolean {
    if (
      !request.responseFormat ||
      this.responseFormatLevel === 'prompt' ||
      !/response_format|json_schema|json_object/i.test(errorBody)
    )
      return false;
    this.responseFormatLevel = this.responseFormatLevel === 'json_schema' ? 'json_object' : 'prompt';
    return true;
  }

  /** Switches once, away from the field chosen for this model, when the server says it does not take that field. */
  private learnOutputLimitField(errorBody: string, sent: Record<string, unknown>): boolean {
    const field = this.knownOutputLimitField;
    if (!(field in sent) || !rejectsField(errorBody, field)) return false;
    this.outputLimitField = field === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
    return true;
  }

  private buildBody(request: GenerateRequest): Record<string, unknown> {
    const messages = toWireMessages(request.messages);
    const body: Record<string, unknown> = { model: this.modelId, messages, stream: this.#options.stream };
    if (this.#options.stream) body.stream_options = { include_usage: true };
    if (request.tools && request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
      }));
    }
    if (request.toolChoice !== undefined) {
      body.tool_choice =
        typeof request.toolChoice === 'string'
          ? request.toolChoice
          : { type: 'function', function: { name: request.toolChoice.name } };
    }
    Object.assign(body, this.sampling.fields(request));
    if (request.maxOutputTokens !== undefined) body[this.outputLimitField] = request.maxOutputTokens;
    const format = request.responseFormat;
    if (format) {
      if (this.responseFormatLevel === 'json_schema' && format.schema) {
        body.response_format = {
          type: 'json_schema',
          json_schema: { name: format.name ?? 'response', schema: format.schema },
        };
      } else if (this.responseFormatLevel !== 'prompt') {
        body.response_format = { type: 'json_object' };
      }
      // json_object mode requires the word "JSON" in the prompt, and prompt-only mode has nothing else to go on.
      if (this.responseFormatLevel !== 'json_schema' || !format.schema)
        messages.push({ role: 'system', content: jsonInstruction(format.schema) });
    }
    return body;
  }

  private parseResponse(json: unknown): GenerateResult {
    const record = json as Record<string, unknown>;
    if (typeof record !== 'object' || record === null)
      throw new HarnessError('invalid-response', `${this.provider} sent an empty response.`);
    if (record.error !== undefined && record.error !== null) throw inBodyError(record, this.#http.errors);
    const choice = (record.choices as Array<Record<string, unknown>> | undefined)?.[0];
    if (!choice)
      throw new HarnessError(
        'invalid-response',
        `${this.provider} sent a response without choices: ${JSON.stringify(json).slice(0, 300)}`,
      );
    const message = (choice.message ?? {}) as Record<string, unknown>;
    const assembler = new StreamAssembler();
    assembler.addText(message.content ?? message.refusal);
    assembler.addReasoning(message.reasoning_content ?? message.reasoning);
    for (const call of (message.tool_calls as WireToolCallDelta[] | undefined) ?? []) {
      const open = assembler.openCall(call.id ?? undefined, call.function?.name ?? '');
      assembler.appendArguments(open, call.function?.arguments ?? '', false);
    }
    assembler.finishReason = mapFinishReason(choice.finish_reason);
    assembler.usage = mapUsage(record.usage) ?? assembler.usage;
    return assembler.result('other');
  }

  private async *readSse(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<StreamPart> {
    const assembler = new StreamAssembler();
    const byIndex = new Map<number, OpenToolCall>();
    let current: OpenToolCall | undefined;
    let done = false;
    for await (const frame of parseSse(bytes)) {
      if (frame.data === '[DONE]') {
        done = true;
        break;
      }
      let chunk: Record<string, unknown>;
      try {
        chunk = JSON.parse(frame.data) as Record<string, unknown>;
      } catch (error) {
        // Some proxies put plain text in an `event: error` frame; it is still the provider's error, not bad data.
        if (frame.event === 'error') throw inBodyError({ error: { message: frame.data } }, this.#http.errors);
        throw new HarnessError(
          'invalid-response',
          `${this.provider} sent a stream frame that is not JSON: ${frame.data.slice(0, 200)}`,
          { cause: error },
        );
      }
      if (frame.event === 'error' || (chunk.error !== undefined && chunk.error !== null))
        throw inBodyError(chunk, this.#http.errors);
      const usage = mapUsage(chunk.usage);
      if (usage) assembler.usage = usage;
      const choice = (chunk.choices as Array<Record<string, unknown>> | undefined)?.[0];
      if (!choice) continue;
      const delta = (choice.delta ?? {}) as Record<string, unknown>;
      const reasoning = assembler.addReasoning(delta.reasoning_content ?? delta.reasoning);
      if (reasoning) yield reasoning;
      const text = assembler.addText(delta.content ?? delta.refusal);
      if (text) yield text;
      for (const piece of (delta.tool_calls as WireToolCallDelta[] | undefined) ?? []) {
        const id = typeof piece.id === 'string' && piece.id !== '' ? piece.id : undefined;
        const args = piece.function?.arguments ?? '';
        // A new non-empty id opens a call even when the index repeats (servers that send index 0 for every
        // parallel call). Without an id, a delta continues the call its index points at, and an index not seen
        // yet opens a new call (servers that send no ids); without id or index it continues the latest call.
        let call: OpenToolCall | undefined;
        if (id !== undefined) call = assembler.findCall(id);
        else if (piece.index !== undefined)
          call = byIndex.get(piece.index) ?? (byIndex.size === 0 ? current : undefined);
        else call = current;
        let announce = false;
        if (call === undefined) {
          call = assembler.openCall(id, piece.function?.name ?? '');
          announce = true;
        } else if (piece.function?.name && call.name === '') {
          call.name = piece.function.name;
          announce = true;
        }
        if (piece.index !== undefined) byIndex.set(piece.index, call);
        current = call;
        const part = assembler.appendArguments(call, args, announce);
        if (part) yield part;
      }
      const reason = mapFinishReason(choice.finish_reason);
      if (reason) assembler.finishReason = reason;
    }
    if (!done && assembler.finishReason === undefined) {
      throw new HarnessError(
        'invalid-response',
        `${this.provider} closed the stream before the model finished; the answer is incomplete.`,
        { retryable: true },
      );
    }
    yield { type: 'finish', result: assembler.result('other') };
  }
}

/**
 * An {@link LlmBackend} for any server speaking the OpenAI Chat Completions API, over undici.
 *
 * @example
 * ```ts
 * const backend = openAICompatible({ baseURL: 'http://localhost:11434/v1', model: 'qwen3:8b', contextWindow: 32_768 });
 * ```
 */
export function openAICompatible(
  options: OpenAICompatibleOptions,
): LlmBackend & { stream(request: GenerateRequest): AsyncIterable<StreamPart> } {
  return new OpenAICompatibleBackend(options);
}
