import {
  APICallError,
  type LanguageModelV2,
  type LanguageModelV3FinishReason,
  type LanguageModelV3GenerateResult,
  type LanguageModelV3StreamPart,
  type LanguageModelV3Usage,
  LoadAPIKeyError,
  UnsupportedFunctionalityError,
} from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { aiSdkBackend } from '../../src/ai-sdk/index.js';
import type { GenerateRequest, RetryNotice, StreamPart } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';

const usage = (input: number, output: number, cache: { read?: number; write?: number } = {}): LanguageModelV3Usage => ({
  inputTokens: {
    total: input,
    noCache: input - (cache.read ?? 0) - (cache.write ?? 0),
    cacheRead: cache.read,
    cacheWrite: cache.write,
  },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

const answer = (
  content: LanguageModelV3GenerateResult['content'],
  finish: LanguageModelV3FinishReason['unified'] = 'stop',
): LanguageModelV3GenerateResult => ({
  content,
  finishReason: { unified: finish, raw: finish },
  usage: usage(10, 5),
  warnings: [],
});

const streamOf = (chunks: LanguageModelV3StreamPart[]) => ({
  stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }),
});

/** A model whose every call throws `error`. */
const failing = (error: unknown) =>
  new MockLanguageModelV3({
    doGenerate: async () => {
      throw error;
    },
  });

const hello: GenerateRequest = { messages: [{ role: 'user', content: 'Hi' }] };
const fastRetry = { retry: { minTimeoutMs: 1, maxTimeoutMs: 2 } };

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

function apiError(statusCode: number, body: unknown, headers: Record<string, string> = {}): APICallError {
  return new APICallError({
    message: 'failed',
    url: 'https://api.example.test/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    responseBody: JSON.stringify(body),
  });
}

describe('aiSdkBackend over the AI SDK mock model (V3)', () => {
  it('takes the model id and provider, and requires a context window', () => {
    const model = new MockLanguageModelV3({ provider: 'mock.chat', modelId: 'm-1' });
    const backend = aiSdkBackend(model, { contextWindow: 64_000 });
    expect(backend).toMatchObject({ provider: 'mock.chat', modelId: 'm-1', contextWindow: 64_000, streaming: false });
    expect(() => aiSdkBackend(model, {} as never)).toThrow(/aiSdkBackend\(\) options: .*contextWindow/);
    expect(JSON.stringify(backend)).toBe(
      '{"provider":"mock.chat","modelId":"m-1","specificationVersion":"v3","contextWindow":64000}',
    );
  });

  it('refuses a model of another specification version, naming it', () => {
    const v1 = { specificationVersion: 'v1', provider: 'old', modelId: 'x' };
    const error = (() => {
      try {
        aiSdkBackend(v1 as never, { contextWindow: 1000 });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toMatchObject({ code: 'invalid-options' });
    expect((error as Error).message).toMatch(/specification v3 or v2.*"v1"/);
  });

  it('sends the messages, tools, choice, format and sampling as call options', async () => {
    const model = new MockLanguageModelV3({ doGenerate: answer([{ type: 'text', text: 'ok' }]) });
    const backend = aiSdkBackend(model, {
      contextWindow: 1000,
      providerOptions: { openai: { reasoningEffort: 'low' } },
      headers: { 'x-app': 'test' },
    });
    const controller = new AbortController();
    await backend.generate({
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
            { type: 'image', data: 'https://example.test/a.jpg', mediaType: 'image/jpeg' },
          ],
        },
        {
          role: 'assistant',
          content: 'Two calls.',
          toolCalls: [
            { id: 'c1', name: 'read', arguments: '{"path":"a.md"}' },
            { id: 'c2', name: 'shot', arguments: '' },
          ],
        },
        { role: 'tool', toolCallId: 'c1', toolName: 'read', content: 'text of a', isError: false },
        {
          role: 'tool',
          toolCallId: 'c2',
          toolName: 'shot',
          content: [
            { type: 'text', text: 'a screenshot' },
            { type: 'image', data: 'AAAA', mediaType: 'image/png' },
          ],
          isError: true,
        },
      ],
      tools: [{ name: 'read', description: 'Reads.', inputSchema: { type: 'object', properties: {} } }],
      toolChoice: { name: 'read' },
      responseFormat: { type: 'json', schema: { type: 'object' }, name: 'reply' },
      temperature: 0.2,
      topP: 0.9,
      maxOutputTokens: 300,
      signal: controller.signal,
    });
    const [call] = model.doGenerateCalls;
    expect(call).toMatchObject({
      maxOutputTokens: 300,
      temperature: 0.2,
      topP: 0.9,
      toolChoice: { type: 'tool', toolName: 'read' },
      responseFormat: { type: 'json', schema: { type: 'object' }, name: 'reply' },
      tools: [
        { type: 'function', name: 'read', description: 'Reads.', inputSchema: { type: 'object', properties: {} } },
      ],
      providerOptions: { openai: { reasoningEffort: 'low' } },
      headers: { 'x-app': 'test' },
      abortSignal: controller.signal,
    });
    expect(call?.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          { type: 'file', mediaType: 'image/jpeg', data: new URL('https://example.test/a.jpg') },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Two calls.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'a.md' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'shot', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'read', output: { type: 'text', value: 'text of a' } },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'shot',
            output: { type: 'error-text', value: 'a screenshot' },
          },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images returned by the tool calls above:' },
          { type: 'file', mediaType: 'image/png', data: 'AAAA' },
        ],
      },
    ]);
  });

  it('returns text, reasoning, parallel tool calls and usage with cache reads and writes', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: {
        ...answer(
          [
            { type: 'reasoning', text: 'Both files.' },
            { type: 'text', text: 'Reading.' },
            { type: 'tool-call', toolCallId: 'a', toolName: 'read', input: '{"path":"a"}' },
            { type: 'tool-call', toolCallId: 'b', toolName: 'read', input: '{"path":"b"}' },
            { type: 'tool-call', toolCallId: 'p', toolName: 'web_search', input: '{}', providerExecuted: true },
            { type: 'source', sourceType: 'url', id: 's', url: 'https://example.test' },
          ],
          'tool-calls',
        ),
        usage: usage(1000, 40, { read: 600, write: 300 }),
      },
    });
    const result = await aiSdkBackend(model, { contextWindow: 1000 }).generate(hello);
    expect(result).toEqual({
      message: {
        role: 'assistant',
        content: 'Reading.',
        reasoning: 'Both files.',
        toolCalls: [
          { id: 'a', name: 'read', arguments: '{"path":"a"}' },
          { id: 'b', name: 'read', arguments: '{"path":"b"}' },
        ],
      },
      finishReason: 'tool-calls',
      usage: { inputTokens: 1000, outputTokens: 40, cachedInputTokens: 600, cacheWriteInputTokens: 300 },
    });
  });

  it('adds up the input of a usage that gives no total', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: {
        ...answer([{ type: 'text', text: 'ok' }]),
        usage: {
          inputTokens: { total: undefined, noCache: 10, cacheRead: 20, cacheWrite: undefined },
          outputTokens: { total: undefined, text: 3, reasoning: 4 },
        },
      },
    });
    const { usage: got } = await aiSdkBackend(model, { contextWindow: 1000 }).generate(hello);
    expect(got).toEqual({ inputTokens: 30, outputTokens: 7, cachedInputTokens: 20 });
  });

  it('streams text, reasoning and parallel tool calls as deltas, then finish', async () => {
    const model = new MockLanguageModelV3({
      doStream: streamOf([
        { type: 'stream-start', warnings: [] },
        { type: 'reasoning-start', id: 'r' },
        { type: 'reasoning-delta', id: 'r', delta: 'Think.' },
        { type: 'reasoning-end', id: 'r' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hel' },
        { type: 'text-delta', id: 't', delta: 'lo' },
        { type: 'text-end', id: 't' },
        { type: 'tool-input-start', id: 'a', toolName: 'read' },
        { type: 'tool-input-start', id: 'b', toolName: 'write' },
        { type: 'tool-input-delta', id: 'a', delta: '{"path":' },
        { type: 'tool-input-delta', id: 'b', delta: '{"path":"b"}' },
        { type: 'tool-input-delta', id: 'a', delta: '"a"}' },
        { type: 'tool-input-end', id: 'a' },
        { type: 'tool-input-end', id: 'b' },
        { type: 'tool-call', toolCallId: 'a', toolName: 'read', input: '{"path":"a"}' },
        { type: 'tool-call', toolCallId: 'b', toolName: 'write', input: '{"path":"b"}' },
        // A call announced whole, without input deltas (some providers do that).
        { type: 'tool-call', toolCallId: 'c', toolName: 'list', input: '{}' },
        {
          type: 'finish',
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: usage(50, 20, { read: 10 }),
        },
      ]),
    });
    const backend = aiSdkBackend(model, { contextWindow: 1000, stream: true });
    expect(backend.streaming).toBe(true);
    const parts = await collect(backend.stream(hello));
    expect(parts.slice(0, -1)).toEqual([
      { type: 'reasoning-delta', text: 'Think.' },
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'tool-call-delta', id: 'a', name: 'read', argumentsDelta: '' },
      { type: 'tool-call-delta', id: 'b', name: 'write', argumentsDelta: '' },
      { type: 'tool-call-delta', id: 'a', argumentsDelta: '{"path":' },
      { type: 'tool-call-delta', id: 'b', argumentsDelta: '{"path":"b"}' },
      { type: 'tool-call-delta', id: 'a', argumentsDelta: '"a"}' },
      { type: 'tool-call-delta', id: 'c', name: 'list', argumentsDelta: '{}' },
    ]);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      result: {
        message: {
          role: 'assistant',
          content: 'Hello',
          reasoning: 'Think.',
          toolCalls: [
            { id: 'a', name: 'read', arguments: '{"path":"a"}' },
            { id: 'b', name: 'write', arguments: '{"path":"b"}' },
            { id: 'c', name: 'list', arguments: '{}' },
          ],
        },
        finishReason: 'tool-calls',
        usage: { inputTokens: 50, outputTokens: 20, cachedInputTokens: 10 },
      },
    });
  });

  it('a stream that ends without finish is a retryable invalid-response, never a partial answer', async () => {
    const model = new MockLanguageModelV3({ doStream: streamOf([{ type: 'text-delta', id: 't', delta: 'par' }]) });
    const error = await collect(aiSdkBackend(model, { contextWindow: 1000 }).stream(hello)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid-response', retryable: true });
  });

  it('a stream the network cuts off is a retryable connection error', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'partial ' });
            controller.error(
              new TypeError('terminated', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }),
            );
          },
        }),
      }),
    });
    const error = await collect(aiSdkBackend(model, { contextWindow: 1000 }).stream(hello)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'connection', retryable: true });
    expect((error as Error).message).toMatch(/ECONNRESET/);
  });

  it('an error part inside the stream is thrown with the code its provider object says', async () => {
    const model = new MockLanguageModelV3({
      doStream: streamOf([
        { type: 'text-delta', id: 't', delta: 'partial ' },
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      ]),
    });
    const error = await collect(aiSdkBackend(model, { contextWindow: 1000 }).stream(hello)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HarnessError);
    expect(error).toMatchObject({ code: 'server-error', retryable: true });
    expect((error as Error).message).toMatch(/Overloaded/);
  });

  it.each([
    [
      401,
      { error: { message: 'Incorrect API key provided' } },
      'authentication',
      /rejected the credentials \(HTTP 401\).*apiKey/,
    ],
    [
      400,
      { error: { message: "This model's maximum context length is 128000 tokens.", code: 'context_length_exceeded' } },
      'context-length-exceeded',
      /longer than the model's context window/,
    ],
    [404, { error: { message: 'The model does not exist' } }, 'not-found', /no such model/],
    [400, { error: { message: 'bad value' } }, 'bad-request', /bad value/],
  ])('HTTP %i from the provider is %s, and is not retried', async (status, body, code, message) => {
    const model = failing(apiError(status, body));
    const notices: RetryNotice[] = [];
    const error = await aiSdkBackend(model, { contextWindow: 1000, ...fastRetry })
      .generate({ ...hello, onRetry: (notice) => notices.push(notice) })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code, status });
    expect((error as Error).message).toMatch(message);
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(notices).toEqual([]);
  });

  it('HTTP 429 is rate-limited and retried after the Retry-After the provider sent', async () => {
    let calls = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        calls += 1;
        if (calls === 1) throw apiError(429, { error: { message: 'Rate limit reached' } }, { 'retry-after-ms': '30' });
        return answer([{ type: 'text', text: 'after the wait' }]);
      },
    });
    const notices: RetryNotice[] = [];
    const result = await aiSdkBackend(model, { contextWindow: 1000, ...fastRetry }).generate({
      ...hello,
      onRetry: (notice) => notices.push(notice),
    });
    expect(result.message.content).toBe('after the wait');
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ attempt: 1, error: { code: 'rate-limited' } });
    expect(notices[0]?.delayMs).toBeGreaterThanOrEqual(30);
  });

  it('a Retry-After beyond maxRetryAfterMs fails at once, as rate-limited with the delay', async () => {
    const model = failing(apiError(429, { error: { message: 'Quota' } }, { 'retry-after': '3600' }));
    const error = await aiSdkBackend(model, { contextWindow: 1000 })
      .generate(hello)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'rate-limited', retryAfterMs: 3_600_000 });
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('opening a stream is retried like a call', async () => {
    let opened = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => {
        opened += 1;
        if (opened === 1) throw apiError(503, { error: { message: 'busy' } });
        return streamOf([
          { type: 'text-delta', id: 't', delta: 'ok' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1) },
        ]);
      },
    });
    const parts = await collect(aiSdkBackend(model, { contextWindow: 1000, ...fastRetry }).stream(hello));
    expect(opened).toBe(2);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', result: { message: { content: 'ok' } } });
  });

  it('a missing key and a feature the provider lacks get our codes', async () => {
    const missingKey = failing(new LoadAPIKeyError({ message: 'OpenAI API key is missing.' }));
    await expect(aiSdkBackend(missingKey, { contextWindow: 1000 }).generate(hello)).rejects.toMatchObject({
      code: 'authentication',
    });
    const noImages = failing(new UnsupportedFunctionalityError({ functionality: 'image parts' }));
    await expect(aiSdkBackend(noImages, { contextWindow: 1000 }).generate(hello)).rejects.toMatchObject({
      code: 'bad-request',
    });
  });

  it('aborting passes the signal to the model and rejects as aborted, without a retry', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const model = new MockLanguageModelV3({
      doGenerate: (options) =>
        new Promise((_resolve, reject) => {
          seen = options.abortSignal;
          options.abortSignal?.addEventListener('abort', () => reject(options.abortSignal?.reason), { once: true });
          controller.abort();
        }),
    });
    const error = await aiSdkBackend(model, { contextWindow: 1000 })
      .generate({ ...hello, signal: controller.signal })
      .catch((e: unknown) => e);
    expect(seen).toBe(controller.signal);
    expect(error).toMatchObject({ code: 'aborted' });
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('stopping a stream early cancels the provider stream', async () => {
    let cancelled = false;
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'first' });
          },
          cancel() {
            cancelled = true;
          },
        }),
      }),
    });
    for await (const part of aiSdkBackend(model, { contextWindow: 1000 }).stream(hello)) {
      expect(part).toEqual({ type: 'text-delta', text: 'first' });
      break;
    }
    expect(cancelled).toBe(true);
  });

  it('keeps secret-shaped text a provider echoes out of the error', async () => {
    const key = 'sk-proj-CANARY0123456789abcdefghijklmnopqrstuv';
    const model = failing(apiError(401, { error: { message: `Incorrect API key provided: ${key}` } }));
    const error = (await aiSdkBackend(model, { contextWindow: 1000 })
      .generate(hello)
      .catch((e: unknown) => e)) as Error;
    expect(error.message).not.toContain('CANARY0123456789');
  });
});

describe('aiSdkBackend over a V2 model (AI SDK 5)', () => {
  const v2Model = (overrides: Partial<LanguageModelV2> = {}): LanguageModelV2 => ({
    specificationVersion: 'v2',
    provider: 'legacy.chat',
    modelId: 'v2-model',
    supportedUrls: {},
    doGenerate: async () => ({
      content: [
        { type: 'text', text: 'Hi.' },
        { type: 'tool-call', toolCallId: 'x', toolName: 'read', input: '{"path":"a"}' },
      ],
      finishReason: 'tool-calls',
      usage: { inputTokens: 90, outputTokens: 9, totalTokens: 99, cachedInputTokens: 40 },
      warnings: [],
    }),
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: 'text-delta', id: 't', delta: 'Hi.' },
          { type: 'finish', finishReason: 'unknown', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } },
        ],
        initialDelayInMs: null,
        chunkDelayInMs: null,
      }),
    }),
    ...overrides,
  });

  it('generates with its string finish reason and flat usage', async () => {
    const result = await aiSdkBackend(v2Model(), { contextWindow: 1000 }).generate(hello);
    expect(result).toEqual({
      message: { role: 'assistant', content: 'Hi.', toolCalls: [{ id: 'x', name: 'read', arguments: '{"path":"a"}' }] },
      finishReason: 'tool-calls',
      usage: { inputTokens: 90, outputTokens: 9, cachedInputTokens: 40 },
    });
  });

  it('takes cache writes from the provider metadata (AI SDK 5 puts them there)', async () => {
    const anthropicV2 = v2Model({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'ok' }],
        finishReason: 'stop',
        usage: { inputTokens: 30, outputTokens: 2, totalTokens: 32, cachedInputTokens: 500 },
        providerMetadata: { anthropic: { cacheCreationInputTokens: 1200 } },
        warnings: [],
      }),
    });
    const bedrockV2 = v2Model({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'ok' }],
        finishReason: 'stop',
        usage: { inputTokens: 30, outputTokens: 2, totalTokens: 32 },
        providerMetadata: { bedrock: { usage: { cacheWriteInputTokens: 64 } } },
        warnings: [],
      }),
    });
    expect((await aiSdkBackend(anthropicV2, { contextWindow: 1000 }).generate(hello)).usage).toEqual({
      inputTokens: 30,
      outputTokens: 2,
      cachedInputTokens: 500,
      cacheWriteInputTokens: 1200,
    });
    expect((await aiSdkBackend(bedrockV2, { contextWindow: 1000 }).generate(hello)).usage).toEqual({
      inputTokens: 30,
      outputTokens: 2,
      cacheWriteInputTokens: 64,
    });
  });

  it('streams, and its `unknown` finish reason is `other`', async () => {
    const parts = await collect(aiSdkBackend(v2Model(), { contextWindow: 1000 }).stream(hello));
    expect(parts).toEqual([
      { type: 'text-delta', text: 'Hi.' },
      {
        type: 'finish',
        result: {
          message: { role: 'assistant', content: 'Hi.', toolCalls: [] },
          finishReason: 'other',
          usage: { inputTokens: 3, outputTokens: 2 },
        },
      },
    ]);
  });
});
