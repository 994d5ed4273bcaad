import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, describe, expect, it } from 'vitest';
import { aiSdkBackend } from '../../src/ai-sdk/index.js';
import type { GenerateRequest, RetryNotice, StreamPart } from '../../src/backend/types.js';
import { readFixture } from '../support/fixtures.js';
import {
  cassetteResponse,
  concatDeltas,
  readCassette,
  readChunkObjects,
  readChunks,
} from '../backend/support/fixture-formats.js';
import { SSE_HEADERS, sseBody, startLoopbackServer, type LoopbackServer } from '../backend/support/loopback-server.js';
import { openAIWire } from '../backend/support/wire-formats.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const hello: GenerateRequest = { messages: [{ role: 'user', content: 'Hi' }] };
const fastRetry = { retry: { minTimeoutMs: 1, maxTimeoutMs: 2 } };

/** `@ai-sdk/openai`'s Chat Completions model, pointed at the loopback server. */
const openAIChat = (baseURL: string) =>
  createOpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'sk-test' }).chat('gpt-4o-mini');
const claude = (baseURL: string) =>
  createAnthropic({ baseURL: `${baseURL}/v1`, apiKey: 'sk-ant-test' })('claude-sonnet-4-5');

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

const finishOf = (parts: StreamPart[]) => (parts.at(-1) as Extract<StreamPart, { type: 'finish' }>).result;

describe('@ai-sdk/openai (Chat Completions) replaying recorded answers', () => {
  it('a recorded text stream: every delta, the whole text and the usage', async () => {
    server = await startLoopbackServer();
    const chunks = readChunkObjects('providers/openai/openai-text.chunks.txt');
    server.reply({
      headers: SSE_HEADERS,
      body: sseBody(readChunks('providers/openai/openai-text.chunks.txt'), { done: true }),
    });
    const parts = await collect(aiSdkBackend(openAIChat(server.baseURL), { contextWindow: 128_000 }).stream(hello));
    const text = concatDeltas(chunks, 'content');
    expect(
      parts
        .filter((part) => part.type === 'text-delta')
        .map((part) => part.text)
        .join(''),
    ).toBe(text);
    const usage = chunks.at(-1)?.usage as { prompt_tokens: number; completion_tokens: number };
    expect(finishOf(parts)).toMatchObject({
      message: { content: text, toolCalls: [] },
      finishReason: 'stop',
      usage: { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens },
    });
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(server.requests[0]?.body).toMatchObject({ model: 'gpt-4o-mini', stream: true });
  });

  it('a recorded JSON completion through generate', async () => {
    server = await startLoopbackServer();
    const recorded = JSON.parse(readFixture('providers/openai/openai-text.json')) as {
      choices: Array<{ message: { content: string } }>;
      usage: { prompt_tokens: number; completion_tokens: number };
    };
    server.reply({ body: JSON.stringify(recorded) });
    const result = await aiSdkBackend(openAIChat(server.baseURL), { contextWindow: 128_000 }).generate(hello);
    expect(result).toMatchObject({
      message: { content: recorded.choices[0]?.message.content, toolCalls: [] },
      finishReason: 'stop',
      usage: { inputTokens: recorded.usage.prompt_tokens, outputTokens: recorded.usage.completion_tokens },
    });
  });

  it('a recorded tool-call stream: the call announced, its arguments in pieces, then whole', async () => {
    server = await startLoopbackServer();
    server.reply(cassetteResponse(readCassette('providers/openai/test_run_stream_sync_streams_real_model.yaml')[0]!));
    const parts = await collect(aiSdkBackend(openAIChat(server.baseURL), { contextWindow: 128_000 }).stream(hello));
    const deltas = parts.filter((part) => part.type === 'tool-call-delta');
    expect(deltas[0]).toMatchObject({ name: 'get_capital', argumentsDelta: '' });
    expect(deltas.map((part) => part.argumentsDelta).join('')).toBe('{"country":"UK"}');
    expect(finishOf(parts)).toMatchObject({
      message: {
        toolCalls: [{ id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', name: 'get_capital', arguments: '{"country":"UK"}' }],
      },
      finishReason: 'tool-calls',
    });
  });

  it('recorded HTTP 429s: rate-limited, each retry reported, the last one thrown', async () => {
    server = await startLoopbackServer();
    const attempts = readCassette('providers/openrouter/test_openrouter_errors_raised.yaml').map(cassetteResponse);
    server.reply(...attempts);
    const notices: RetryNotice[] = [];
    const error = await aiSdkBackend(openAIChat(server.baseURL), {
      contextWindow: 128_000,
      maxRetries: attempts.length - 1,
      ...fastRetry,
    })
      .generate({ ...hello, onRetry: (notice) => notices.push(notice) })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'rate-limited', status: 429 });
    expect(server.requests).toHaveLength(attempts.length);
    expect(notices.map((notice) => notice.error.code)).toEqual(Array(attempts.length - 1).fill('rate-limited'));
  });

  it("a recorded 429 whose body asks for a longer wait than allowed fails at once, with the body's delay", async () => {
    server = await startLoopbackServer();
    server.reply({ status: 429, body: readFixture('providers/google/google-429-retry-info.json') });
    const error = await aiSdkBackend(openAIChat(server.baseURL), {
      contextWindow: 128_000,
      retry: { maxRetryAfterMs: 1_000 },
    })
      .generate(hello)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'rate-limited', retryAfterMs: 34_400 });
    expect(server.requests).toHaveLength(1);
  });

  it('context length and credentials are named as the shipped adapters name them', async () => {
    server = await startLoopbackServer();
    server.reply(openAIWire.contextLengthError(), openAIWire.authError());
    const backend = aiSdkBackend(openAIChat(server.baseURL), { contextWindow: 128_000 });
    await expect(backend.generate(hello)).rejects.toMatchObject({ code: 'context-length-exceeded', status: 400 });
    await expect(backend.generate(hello)).rejects.toMatchObject({ code: 'authentication', status: 401 });
  });

  it('nothing listening: a connection error naming the address, after the quick retries', async () => {
    const closed = await startLoopbackServer();
    const baseURL = closed.baseURL;
    await closed.close();
    const notices: RetryNotice[] = [];
    const error = await aiSdkBackend(openAIChat(baseURL), { contextWindow: 128_000, retry: { connectDelayMs: 1 } })
      .generate({ ...hello, onRetry: (notice) => notices.push(notice) })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'connection' });
    expect((error as Error).message).toContain(baseURL);
    expect(notices).toHaveLength(2);
  });
});

describe('@ai-sdk/anthropic (Messages) replaying recorded answers', () => {
  it('a recorded stream with text then a tool call in five pieces', async () => {
    server = await startLoopbackServer();
    server.reply({ headers: SSE_HEADERS, body: readFixture('providers/anthropic/tool_use_response.txt') });
    const parts = await collect(aiSdkBackend(claude(server.baseURL), { contextWindow: 200_000 }).stream(hello));
    const result = finishOf(parts);
    expect(result.message.content).toBe("I'll check the current weather in Paris for you.");
    expect(result.message.toolCalls).toEqual([
      { id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' },
    ]);
    expect(result.finishReason).toBe('tool-calls');
    expect(result.usage.inputTokens).toBe(377);
    expect(server.requests[0]?.path).toBe('/v1/messages');
  });

  it('a recorded thinking stream: reasoning deltas, then the text', async () => {
    server = await startLoopbackServer();
    const events = readChunks('providers/anthropic/anthropic-clear-thinking.1.chunks.txt');
    server.reply({ headers: SSE_HEADERS, body: sseBody(events) });
    const parts = await collect(aiSdkBackend(claude(server.baseURL), { contextWindow: 200_000 }).stream(hello));
    const objects = events.map(
      (line) => JSON.parse(line) as { delta?: { type?: string; thinking?: string; text?: string } },
    );
    const thinking = objects
      .map((event) => (event.delta?.type === 'thinking_delta' ? event.delta.thinking : ''))
      .join('');
    const text = objects.map((event) => (event.delta?.type === 'text_delta' ? event.delta.text : '')).join('');
    expect(thinking).not.toBe('');
    expect(
      parts
        .filter((part) => part.type === 'reasoning-delta')
        .map((part) => part.text)
        .join(''),
    ).toBe(thinking);
    expect(finishOf(parts).message).toMatchObject({ content: text, reasoning: thinking });
  });

  it('a recorded HTTP 400 error body is a bad request carrying its message', async () => {
    server = await startLoopbackServer();
    server.reply({ status: 400, body: readFixture('providers/anthropic/anthropic-issue-17366-error.json') });
    const error = await aiSdkBackend(claude(server.baseURL), { contextWindow: 200_000 })
      .generate(hello)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'bad-request', status: 400 });
    expect((error as Error).message).toMatch(/unexpected `tool_use_id`/);
  });
});
