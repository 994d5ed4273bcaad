/**
 * `openAICompatible()`: an {@link LlmBackend} over the Chat Completions API (OpenAI, vLLM, Ollama,
 * llama.cpp server, DeepSeek, Qwen, GLM, Groq, OpenRouter, Gemini's compatible endpoint).
 * @module
 */
import { z } from 'zod';
import { HarnessError } from '../errors.js';
import { rejectsField, withAdaptation } from './adaptation.js';
import { bodyBytes, postJson, readJson, withRetry, type PostSettings, type RetrySettings } from './http.js';
import { inBodyError, type ErrorContext } from './http-errors.js';
import { baseUrlSchema, commonFields, makeDispatcher, parseOptions, retrySettings } from './options.js';
import { SamplingPolicy, type SamplingRule } from './sampling.js';
import { parseSse } from './sse.js';
import { StreamAssembler, type OpenToolCall } from './stream-assembler.js';
import type { ContentPart, FinishReason, GenerateRequest, GenerateResult, LlmBackend, Message, StreamPart, Usage } from './types.js';

/** Options of {@link openAICompatible}. */
export const OpenAICompatibleOptionsSchema = z.object({
  /** e.g. `https://api.openai.com/v1`; `/chat/completions` is appended. */
  baseURL: baseUrlSchema,
  /** Sent as `Authorization: Bearer …`; local servers need none. For api.openai.com, `OPENAI_API_KEY` is read when omitted. */
  apiKey: z.string().min(1).optional(),
  /** Name reported as `backend.provider`; derived from the baseURL when omitted. */
  provider: z.string().min(1).optional(),
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
  if (hostProvider === 'openai') return `${missing}set OPENAI_API_KEY or pass the \`apiKey\` option of openAICompatible()`;
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

function imageUrl(part: Extract<ContentPart, { type: 'image' }>): string {
  return /^(https?:|data:)/.test(part.data) ? part.data : `data:${part.mediaType};base64,${part.data}`;
}

function userContent(content: string | ContentPart[]): unknown {
  if (typeof content === 'string') return content;
  return content.map((part) =>
    part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image_url', image_url: { url: imageUrl(part) } },
  );
}

/** Chat Completions messages; tool images go into a user message after the run of tool messages (tool messages carry text only). */
function toWireMessages(messages: Message[]): unknown[] {
  const wire: unknown[] = [];
  let pendingImages: Array<Extract<ContentPart, { type: 'image' }>> = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    wire.push({ role: 'user', content: [{ type: 'text', text: 'Images returned by the tool calls above:' }, ...pendingImages.map((p) => ({ type: 'image_url', image_url: { url: imageUrl(p) } }))] });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushImages();
    switch (message.role) {
      case 'system':
        wire.push({ role: 'system', content: message.content });
        break;
      case 'user':
        wire.push({ role: 'user', content: userContent(message.content) });
        break;
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        wire.push({
          role: 'assistant',
          content: message.content === '' && calls.length > 0 ? null : message.content,
          ...(calls.length > 0
            ? { tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }
            : {}),
        });
        break;
      }
      case 'tool': {
        const parts = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
        const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
        pendingImages.push(...parts.filter((part): part is Extract<ContentPart, { type: 'image' }> => part.type === 'image'));
        wire.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.isError ? `Error: ${text}` : text });
        break;
      }
    }
  }
  flushImages();
  return wire;
}

function jsonInstruction(schema: Record<string, unknown> | undefined): string {
  return schema
    ? `Reply with one JSON object only, no prose and no code fence, matching this JSON Schema:\n${JSON.stringify(schema)}`
    : 'Reply with one JSON object only, no prose and no code fence.';
}

const FINISH_REASONS: Record<string, FinishReason> = {
  stop: 'stop',
  eos: 'stop',
  length: 'length',
  max_tokens: 'length',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  content_filter: 'content-filter',
  sensitive: 'content-filter',
  error: 'error',
};

function mapFinishReason(reason: unknown): FinishReason | undefined {
  if (typeof reason !== 'string' || reason === '') return undefined;
  return FINISH_REASONS[reason] ?? 'other';
}

function mapUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as Record<string, unknown>;
  const details = u.prompt_tokens_details as Record<string, unknown> | undefined;
  const cached = typeof details?.cached_tokens === 'number' ? details.cached_tokens : typeof u.prompt_cache_hit_tokens === 'number' ? u.prompt_cache_hit_tokens : undefined;
  const result: Usage = {
    inputTokens: typeof u.prompt_tokens === 'number' ? u.prompt_tokens : 0,
    outputTokens: typeof u.completion_tokens === 'number' ? u.completion_tokens : 0,
  };
  if (cached !== undefined) result.cachedInputTokens = cached;
  return result;
}

interface WireToolCallDelta {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null };
}

/** The Chat Completions adapter; see {@link openAICompatible}. */
class OpenAICompatibleBackend implements LlmBackend {
  readonly provider: string;
  readonly modelId: string;
  readonly contextWindow: number;
  readonly supportsImages?: boolean;
  private readonly options: z.output<typeof OpenAICompatibleOptionsSchema>;
  private readonly post: PostSettings;
  private readonly retry: RetrySettings;
  private readonly errors: ErrorContext;
  // Remembered per instance: once the server rejects something, later calls leave it out from the start.
  private responseFormatLevel: ResponseFormatLevel = 'json_schema';
  private readonly sampling: SamplingPolicy;
  private readonly knownOutputLimitField: OutputLimitField;
  private outputLimitField: OutputLimitField;

  constructor(input: OpenAICompatibleOptions) {
    this.options = parseOptions('openAICompatible', OpenAICompatibleOptionsSchema, input);
    const { baseURL, model, contextWindow, timeoutMs, headers } = this.options;
    this.provider = this.options.provider ?? providerFromUrl(baseURL);
    this.modelId = model;
    this.contextWindow = contextWindow;
    this.supportsImages = this.options.supportsImages;
    const hostProvider = providerFromUrl(baseURL);
    this.sampling = new SamplingPolicy(this.options.sampling, openAISamplingRule(model));
    this.knownOutputLimitField = outputLimitFieldFor(hostProvider, model);
    this.outputLimitField = this.knownOutputLimitField;
    const apiKey = this.options.apiKey ?? (hostProvider === 'openai' ? process.env.OPENAI_API_KEY : undefined);
    this.errors = { provider: this.provider, credentialHint: credentialHint(hostProvider, apiKey !== undefined && apiKey !== '') };
    this.post = {
      url: `${baseURL}/chat/completions`,
      headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers },
      timeoutMs,
      dispatcher: makeDispatcher(this.options.dispatcher, timeoutMs),
      errors: this.errors,
    };
    this.retry = retrySettings(this.options);
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    return withAdaptation(
      () => this.buildBody(request),
      (body) =>
        withRetry(
          async () => {
            const open = await postJson(this.post, body, request.signal);
            if (this.options.stream) {
              let finish: GenerateResult | undefined;
              for await (const part of this.readStream(open)) if (part.type === 'finish') finish = part.result;
              if (finish === undefined) throw new HarnessError('invalid-response', `${this.provider} stream ended without a result.`);
              return finish;
            }
            return this.parseResponse(await readJson(open, this.errors));
          },
          this.retry,
          request.signal,
        ),
      (errorBody, sent) => this.adapt(request, errorBody, sent),
    );
  }

  async *stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
    const open = await withAdaptation(
      () => ({ ...this.buildBody(request), stream: true, stream_options: { include_usage: true } }),
      (body) => withRetry(() => postJson(this.post, body, request.signal), this.retry, request.signal),
      (errorBody, sent) => this.adapt(request, errorBody, sent),
    );
    yield* this.readStream(open);
  }

  /** Learns every rejection a 400 names (response_format, sampling, output-limit field); true when the request should go again. */
  private adapt(request: GenerateRequest, errorBody: string, sent: Record<string, unknown>): boolean {
    const learned = [this.learnResponseFormat(request, errorBody), this.sampling.learn(errorBody, sent), this.learnOutputLimitField(errorBody, sent)];
    return learned.includes(true);
  }

  /** Steps response_format down json_schema → json_object → prompt-only when the server rejects it. */
  private learnResponseFormat(request: GenerateRequest, errorBody: string): boolean {
    if (!request.responseFormat || this.responseFormatLevel === 'prompt' || !/response_format|json_schema|json_object/i.test(errorBody)) return false;
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
    const body: Record<string, unknown> = { model: this.modelId, messages, stream: this.options.stream };
    if (this.options.stream) body.stream_options = { include_usage: true };
    if (request.tools && request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
      }));
    }
    if (request.toolChoice !== undefined) {
      body.tool_choice = typeof request.toolChoice === 'string' ? request.toolChoice : { type: 'function', function: { name: request.toolChoice.name } };
    }
    Object.assign(body, this.sampling.fields(request));
    if (request.maxOutputTokens !== undefined) body[this.outputLimitField] = request.maxOutputTokens;
    const format = request.responseFormat;
    if (format) {
      if (this.responseFormatLevel === 'json_schema' && format.schema) {
        body.response_format = { type: 'json_schema', json_schema: { name: format.name ?? 'response', schema: format.schema } };
      } else if (this.responseFormatLevel !== 'prompt') {
        body.response_format = { type: 'json_object' };
      }
      // json_object mode requires the word "JSON" in the prompt, and prompt-only mode has nothing else to go on.
      if (this.responseFormatLevel !== 'json_schema' || !format.schema) messages.push({ role: 'system', content: jsonInstruction(format.schema) });
    }
    return body;
  }

  private parseResponse(json: unknown): GenerateResult {
    const record = json as Record<string, unknown>;
    if (typeof record !== 'object' || record === null) throw new HarnessError('invalid-response', `${this.provider} sent an empty response.`);
    if (record.error !== undefined && record.error !== null) throw inBodyError(record, this.errors);
    const choice = (record.choices as Array<Record<string, unknown>> | undefined)?.[0];
    if (!choice) throw new HarnessError('invalid-response', `${this.provider} sent a response without choices: ${JSON.stringify(json).slice(0, 300)}`);
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

  private async *readStream(open: Awaited<ReturnType<typeof postJson>>): AsyncGenerator<StreamPart> {
    const assembler = new StreamAssembler();
    const byIndex = new Map<number, OpenToolCall>();
    let current: OpenToolCall | undefined;
    let done = false;
    for await (const frame of parseSse(bodyBytes(open))) {
      if (frame.data === '[DONE]') {
        done = true;
        break;
      }
      let chunk: Record<string, unknown>;
      try {
        chunk = JSON.parse(frame.data) as Record<string, unknown>;
      } catch (error) {
        // Some proxies put plain text in an `event: error` frame; it is still the provider's error, not bad data.
        if (frame.event === 'error') throw inBodyError({ error: { message: frame.data } }, this.errors);
        throw new HarnessError('invalid-response', `${this.provider} sent a stream frame that is not JSON: ${frame.data.slice(0, 200)}`, { cause: error });
      }
      if (frame.event === 'error' || (chunk.error !== undefined && chunk.error !== null)) throw inBodyError(chunk, this.errors);
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
        else if (piece.index !== undefined) call = byIndex.get(piece.index) ?? (byIndex.size === 0 ? current : undefined);
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
      throw new HarnessError('invalid-response', `${this.provider} closed the stream before the model finished; the answer is incomplete.`, { retryable: true });
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
export function openAICompatible(options: OpenAICompatibleOptions): LlmBackend & { stream(request: GenerateRequest): AsyncIterable<StreamPart> } {
  return new OpenAICompatibleBackend(options);
}
