/**
 * Prompt caching at the adapters: the Anthropic adapter's `cache_control` markers (checked in the request bodies a
 * loopback server receives, answered with the recorded Anthropic streams), its cache-read and cache-write usage, the
 * capabilities both adapters declare, and the OpenAI-compatible adapter's cached-token usage in every provider shape
 * of the recorded fixtures.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { anthropic, type AnthropicOptions } from '../../src/backend/anthropic.js';
import { anthropicMinCachePrefix } from '../../src/backend/anthropic-cache.js';
import { openAICompatible } from '../../src/backend/openai-compatible.js';
import { mapUsage } from '../../src/backend/openai-wire.js';
import type { GenerateRequest, Message } from '../../src/backend/types.js';
import { readFixture } from '../support/fixtures.js';
import { FAST_RETRY } from './conformance.js';
import { readCassette, readChunkObjects } from './support/fixture-formats.js';
import { SSE_HEADERS, startLoopbackServer, type LoopbackServer } from './support/loopback-server.js';

function claude(baseURL: string, extra: Partial<AnthropicOptions> = {}) {
  return anthropic({ baseURL, apiKey: 'sk-ant-test', model: 'claude-sonnet-4-5', retry: FAST_RETRY, ...extra });
}

/** A loop's dialogue: system, request, then `rounds` tool rounds (assistant call + tool result). */
function loop(rounds: number): Message[] {
  const messages: Message[] = [
    { role: 'system', content: 'You are careful.' },
    { role: 'user', content: 'Collect facts about owls.' },
  ];
  for (let i = 1; i <= rounds; i += 1) {
    messages.push({ role: 'assistant', content: '', toolCalls: [{ id: `t${i}`, name: 'read', arguments: '{}' }] });
    messages.push({ role: 'tool', toolCallId: `t${i}`, toolName: 'read', content: `page ${i}` });
  }
  return messages;
}

const TOOLS: GenerateRequest['tools'] = [{ name: 'read', description: 'Read', inputSchema: { type: 'object' } }];

type Block = Record<string, unknown>;
type Body = { system?: unknown; tools?: Block[]; messages: Array<{ role: string; content: Block[] }> };

/** Every marked block of a request body: where it is and its `cache_control`. */
function markers(body: Body): Array<{ at: string; control: unknown }> {
  const found: Array<{ at: string; control: unknown }> = [];
  const scan = (blocks: unknown, at: string) => {
    if (!Array.isArray(blocks)) return;
    blocks.forEach((block: Block, i) => {
      if (block.cache_control !== undefined) found.push({ at: `${at}[${i}]`, control: block.cache_control });
    });
  };
  scan(body.tools, 'tools');
  scan(body.system, 'system');
  body.messages.forEach((message, i) => scan(message.content, `messages[${i}]`));
  return found;
}

describe('Anthropic cache markers', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => {
    await server.close();
  });

  /** Sends `request` and answers with a recorded stream; returns the body the server received. */
  async function sent(request: GenerateRequest, options: Partial<AnthropicOptions> = {}): Promise<Body> {
    server.reply({ headers: SSE_HEADERS, body: readFixture('providers/anthropic/tool_use_response.txt') });
    await claude(server.baseURL, { stream: true, ...options }).generate(request);
    return server.requests.at(-1)?.body as unknown as Body;
  }

  it('marks the system prompt (covering the tools) and the newest message, 5-minute TTL by default', async () => {
    const body = await sent({ messages: loop(2), tools: TOOLS });
    expect(body.system).toEqual([{ type: 'text', text: 'You are careful.', cache_control: { type: 'ephemeral' } }]);
    // toWire: user, assistant, tool results, assistant, tool results → the newest block is messages[4].content[0].
    expect(markers(body)).toEqual([
      { at: 'system[0]', control: { type: 'ephemeral' } },
      { at: 'messages[4][0]', control: { type: 'ephemeral' } },
    ]);
  });

  it('marks the breakpoints too, at most 4 markers in all, dropping the oldest breakpoints first', async () => {
    // Messages 1 (the request), 4, 6 and 8 end stable parts; 11 (a tool result) is the newest.
    const body = await sent({ messages: loop(5), tools: TOOLS, cacheBreakpoints: [1, 4, 6, 8] });
    const marked = markers(body).map((m) => m.at);
    expect(marked).toHaveLength(4);
    // Harness message i ≥ 1 sits in wire turn i - 1 (one block each): kept 8 and 6, dropped 4 and 1.
    expect(marked).toEqual(['system[0]', 'messages[5][0]', 'messages[7][0]', 'messages[10][0]']);
  });

  it("sends ttl: '1h' on every marker with cacheTtl: '1h', and declares it", async () => {
    const llm = claude(server.baseURL, { cacheTtl: '1h' });
    expect(llm.promptCache).toEqual({ mode: 'markers', maxMarkers: 4, minPrefixTokens: 1024, ttl: '1h' });
    const body = await sent({ messages: loop(1), cacheBreakpoints: [1] }, { cacheTtl: '1h' });
    const controls = markers(body).map((m) => m.control);
    expect(controls).toHaveLength(3);
    for (const control of controls) expect(control).toEqual({ type: 'ephemeral', ttl: '1h' });
  });

  it('without a system prompt marks the last tool; a breakpoint on the newest message is one marker', async () => {
    const messages = loop(1).slice(1);
    const body = await sent({ messages, tools: TOOLS, cacheBreakpoints: [messages.length - 1] });
    expect(markers(body).map((m) => m.at)).toEqual(['tools[0]', 'messages[2][0]']);
  });

  it('puts the marker of a merged tool turn on the breakpoint message’s own tool_result block', async () => {
    const messages: Message[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'read', arguments: '{}' },
          { id: 'b', name: 'read', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'a', toolName: 'read', content: 'A' },
      { role: 'tool', toolCallId: 'b', toolName: 'read', content: 'B' },
      { role: 'user', content: 'next' },
    ];
    const body = await sent({ messages, cacheBreakpoints: [3] });
    expect(markers(body).map((m) => m.at)).toEqual(['system[0]', 'messages[2][0]', 'messages[3][0]']);
  });

  it('sends no marker with cacheMarkers: false, and declares no cache', async () => {
    expect(claude(server.baseURL, { cacheMarkers: false }).promptCache).toEqual({ mode: 'none' });
    const body = await sent({ messages: loop(3), tools: TOOLS, cacheBreakpoints: [1] }, { cacheMarkers: false });
    expect(markers(body)).toEqual([]);
    expect(body.system).toBe('You are careful.');
  });

  it('declares the minimum cacheable prefix of the model', () => {
    expect(anthropicMinCachePrefix('claude-sonnet-4-5')).toBe(1024);
    expect(anthropicMinCachePrefix('claude-opus-4-1-20250805')).toBe(1024);
    expect(anthropicMinCachePrefix('claude-3-5-haiku-latest')).toBe(2048);
    expect(anthropicMinCachePrefix('claude-haiku-4-5')).toBe(4096);
    expect(anthropicMinCachePrefix('claude-opus-4-5')).toBe(4096);
    expect(anthropicMinCachePrefix('claude-sonnet-4-6')).toBe(2048);
    expect(anthropicMinCachePrefix('some-proxy-model')).toBe(1024);
  });

  it('reads cache reads and writes from a stream (message_start, then message_delta) into inputTokens', async () => {
    const start = {
      type: 'message_start',
      message: {
        id: 'm',
        type: 'message',
        role: 'assistant',
        content: [],
        usage: { input_tokens: 12, cache_read_input_tokens: 3000, cache_creation_input_tokens: 500, output_tokens: 1 },
      },
    };
    const frames = [
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ];
    server.reply({
      headers: SSE_HEADERS,
      body: frames.map((f) => `event: ${f.type}\ndata: ${JSON.stringify(f)}\n\n`).join(''),
    });
    const result = await claude(server.baseURL, { stream: true }).generate({ messages: loop(0) });
    expect(result.usage).toEqual({
      inputTokens: 3512,
      outputTokens: 9,
      cachedInputTokens: 3000,
      cacheWriteInputTokens: 500,
    });
  });

  it('reads cache writes from a non-streamed answer', async () => {
    server.reply({
      body: JSON.stringify({
        type: 'message',
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 4, cache_read_input_tokens: 0, cache_creation_input_tokens: 2000, output_tokens: 2 },
      }),
    });
    const result = await claude(server.baseURL).generate({ messages: loop(0) });
    expect(result.usage).toEqual({
      inputTokens: 2004,
      outputTokens: 2,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 2000,
    });
  });
});

/** The usage object a recorded OpenAI-style stream or answer carries. */
function chunkUsage(...parts: string[]): unknown {
  return readChunkObjects(...parts).findLast((chunk) => chunk.usage)?.usage;
}

function cassetteUsage(file: string, index: number): unknown {
  const response = readCassette(file)[index]?.response;
  if (response?.parsed_body) return (response.parsed_body as { usage?: unknown }).usage;
  const frames = (response?.body?.string ?? '').split('\n').filter((line) => line.startsWith('data: {'));
  return frames.map((line) => JSON.parse(line.slice(6)) as { usage?: unknown }).findLast((f) => f.usage)?.usage;
}

describe('OpenAI-compatible cached-token usage, every recorded provider shape', () => {
  it.each([
    ['openai (prompt_tokens_details, streamed)', chunkUsage('providers/openai/openai-text.chunks.txt'), 16, 0],
    [
      'openai (non-streamed)',
      (JSON.parse(readFixture('providers/openai/openai-text.json')) as { usage: unknown }).usage,
      16,
      0,
    ],
    [
      'deepseek (prompt_cache_hit_tokens beside cached_tokens)',
      chunkUsage('providers/deepseek/deepseek-tool-call.chunks.txt'),
      339,
      320,
    ],
    ['alibaba qwen', chunkUsage('providers/alibaba/alibaba-tool-call.chunks.txt'), 295, 0],
    ['zhipu glm', cassetteUsage('providers/zhipu/test_zai_thinking_stream.yaml', 0), 13, 0],
    ['groq (a cache hit)', cassetteUsage('providers/groq/test_tool_use_failed_error.yaml', 2), 336, 256],
    [
      'openai via pydantic-ai cassette',
      cassetteUsage('providers/openai/test_run_stream_sync_streams_real_model.yaml', 0),
      53,
      0,
    ],
  ])('%s', (_name, usage, input, cached) => {
    expect(mapUsage(usage)).toMatchObject({ inputTokens: input, cachedInputTokens: cached });
  });

  it('ollama reports no cache: no cached count', () => {
    const usage = mapUsage(cassetteUsage('providers/ollama/test_ollama_cloud_tool_output.yaml', 0));
    expect(usage).toEqual({ inputTokens: 134, outputTokens: 122 });
  });

  it('DeepSeek hit/miss alone give the prompt size; OpenRouter cache_write_tokens are cache writes', () => {
    expect(mapUsage({ prompt_cache_hit_tokens: 300, prompt_cache_miss_tokens: 20, completion_tokens: 5 })).toEqual({
      inputTokens: 320,
      outputTokens: 5,
      cachedInputTokens: 300,
    });
    // The shape OpenRouter documents (openrouter.ai/docs/use-cases/usage-accounting).
    const openRouter = {
      prompt_tokens: 194,
      completion_tokens: 2,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 100, audio_tokens: 0 },
    };
    expect(mapUsage(openRouter)).toEqual({
      inputTokens: 194,
      outputTokens: 2,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 100,
    });
  });

  it('declares automatic caching from 1 024 tokens by default, and what the promptCache option says', () => {
    const base = { baseURL: 'http://127.0.0.1:9/v1', model: 'm' };
    expect(openAICompatible(base).promptCache).toEqual({ mode: 'automatic', minPrefixTokens: 1024 });
    expect(openAICompatible({ ...base, promptCache: { mode: 'none' } }).promptCache).toEqual({ mode: 'none' });
  });
});
