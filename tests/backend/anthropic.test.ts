import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { anthropic, type AnthropicOptions } from '../../src/backend/anthropic.js';
import type { GenerateRequest, StreamPart } from '../../src/backend/types.js';
import { DEFAULTS } from '../../src/defaults.js';
import type { ProviderHttpError } from '../../src/errors.js';
import { readFixture } from '../support/fixtures.js';
import { adapterOptions, FAST_RETRY, runBackendConformance } from './conformance.js';
import { readChunkObjects, readChunks, readLocalFixture } from './support/fixture-formats.js';
import { SSE_HEADERS, sseBody, startLoopbackServer, type LoopbackServer } from './support/loopback-server.js';
import { anthropicWire } from './support/wire-formats.js';
import { harnessRejection } from '../support/rejection.js';

function backend(baseURL: string, extra: Partial<AnthropicOptions> = {}) {
  return anthropic({ baseURL, apiKey: 'sk-ant-test', model: 'claude-test', retry: FAST_RETRY, ...extra });
}

runBackendConformance('anthropic', (context) => backend(context.baseURL, adapterOptions(context)), anthropicWire);

const ASK: GenerateRequest = { messages: [{ role: 'user', content: 'Hi' }] };

/** The last part of a stream (its `finish`), after reading all of it. */
async function lastPart(parts: AsyncIterable<StreamPart>): Promise<StreamPart | undefined> {
  let last: StreamPart | undefined;
  for await (const part of parts) last = part;
  return last;
}

function textOf(events: Array<Record<string, unknown>>, deltaType: string, field: string): string {
  return events
    .filter((e) => e.type === 'content_block_delta' && (e.delta as Record<string, unknown>).type === deltaType)
    .map((e) => String((e.delta as Record<string, unknown>)[field]))
    .join('');
}

describe('anthropic', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => {
    await server.close();
  });

  describe('recorded fixtures', () => {
    it('anthropic/basic_response.txt: raw SSE with event lines and a ping', async () => {
      server.reply({ headers: SSE_HEADERS, body: readFixture('providers/anthropic/basic_response.txt') });
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result).toEqual({
        message: { role: 'assistant', content: 'Hello there!', toolCalls: [] },
        finishReason: 'stop',
        usage: { inputTokens: 11, outputTokens: 6 },
      });
    });

    it('anthropic/tool_use_response.txt: text then tool_use from 5 input_json_delta pieces', async () => {
      server.reply({ headers: SSE_HEADERS, body: readFixture('providers/anthropic/tool_use_response.txt') });
      const parts: StreamPart[] = [];
      for await (const part of backend(server.baseURL).stream(ASK)) parts.push(part);
      const finish = parts.at(-1);
      if (finish?.type !== 'finish') throw new Error('stream must end with finish');
      expect(finish.result.message.content).toBe("I'll check the current weather in Paris for you.");
      expect(finish.result.message.toolCalls).toEqual([
        { id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' },
      ]);
      expect(finish.result.finishReason).toBe('tool-calls');
      expect(finish.result.usage).toEqual({
        inputTokens: 377,
        outputTokens: 65,
        cachedInputTokens: 0,
        cacheWriteInputTokens: 0,
      });
      expect(
        parts
          .filter((p) => p.type === 'tool-call-delta')
          .map((p) => (p.type === 'tool-call-delta' ? p.argumentsDelta : ''))
          .join(''),
      ).toBe('{"location": "Paris"}');
    });

    for (const eventLines of [false, true]) {
      it(`anthropic/anthropic-clear-thinking.1.chunks.txt: thinking_delta becomes reasoning (${eventLines ? 'with' : 'without'} event: lines)`, async () => {
        const events = readChunkObjects('providers/anthropic/anthropic-clear-thinking.1.chunks.txt');
        server.reply({
          headers: SSE_HEADERS,
          body: sseBody(readChunks('providers/anthropic/anthropic-clear-thinking.1.chunks.txt'), { eventLines }),
        });
        const result = await backend(server.baseURL, { stream: true }).generate(ASK);
        expect(result.message.reasoning).toBe(textOf(events, 'thinking_delta', 'thinking'));
        expect(result.message.content).toBe(textOf(events, 'text_delta', 'text'));
        expect(result.message.content).toBe('925 ÷ 5 = 185');
        expect(result.finishReason).toBe('stop');
        expect(result.usage).toEqual({
          inputTokens: 69,
          outputTokens: 53,
          cachedInputTokens: 0,
          cacheWriteInputTokens: 0,
        });
      });
    }

    it('anthropic/anthropic-tool-no-args.chunks.txt: tool_use without arguments, pings between blocks', async () => {
      server.reply({
        headers: SSE_HEADERS,
        body: sseBody(readChunks('providers/anthropic/anthropic-tool-no-args.chunks.txt')),
      });
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result.message.content).toBe("I'll update the issue list for you.");
      expect(result.message.toolCalls).toEqual([
        { id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '{}' },
      ]);
      expect(result).toMatchObject({ finishReason: 'tool-calls', usage: { inputTokens: 565, outputTokens: 48 } });
    });

    it('anthropic/anthropic-issue-17366-error.json: a 400 invalid_request_error is a bad request, not retried', async () => {
      server.reply({ status: 400, body: readFixture('providers/anthropic/anthropic-issue-17366-error.json') });
      const error = await harnessRejection(backend(server.baseURL, { maxRetries: 3 }).generate(ASK));
      expect(error.code).toBe('bad-request');
      expect(error.message).toMatch(/unexpected `tool_use_id` found in `tool_result` blocks/);
      expect((error as ProviderHttpError).status).toBe(400);
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('fixtures written here', () => {
    it('\\r\\n line ends, padded blank lines, comments and data: without a space', async () => {
      server.reply({ headers: SSE_HEADERS, body: readLocalFixture('anthropic-padded-crlf.txt') });
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result).toEqual({
        message: { role: 'assistant', content: 'Hi you', toolCalls: [] },
        finishReason: 'stop',
        usage: { inputTokens: 25, outputTokens: 4, cachedInputTokens: 5 },
      });
    });

    it('the same bytes split at every awkward boundary still parse', async () => {
      const body = readLocalFixture('anthropic-padded-crlf.txt');
      const pieces: string[] = [];
      for (let i = 0; i < body.length; i += 7) pieces.push(body.slice(i, i + 7));
      server.reply({ headers: SSE_HEADERS, body: pieces });
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result.message.content).toBe('Hi you');
    });

    it('event: error with overloaded_error inside a 200 stream is a retryable server error', async () => {
      server.reply(
        { headers: SSE_HEADERS, body: readLocalFixture('anthropic-error-in-stream.txt') },
        anthropicWire.reply({ text: ['recovered'], finish: 'stop', usage: { input: 1, output: 1 } }, true),
      );
      const result = await backend(server.baseURL, { stream: true, maxRetries: 1 }).generate(ASK);
      expect(result.message.content).toBe('recovered');
      expect(server.requests).toHaveLength(2);
    });

    it('max_tokens inside a tool_use JSON ends with finishReason length and raw partial arguments', async () => {
      server.reply({ headers: SSE_HEADERS, body: readLocalFixture('anthropic-truncated-tool-json.txt') });
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result.finishReason).toBe('length');
      expect(result.message.content).toBe('Saving.');
      expect(result.message.toolCalls).toEqual([
        { id: 'toolu_t', name: 'write_file', arguments: '{"path": "a.md", "content": "# Ti' },
      ]);
    });
  });

  describe('request building', () => {
    it('puts system text in `system`, merges consecutive tool results, maps images, tools and tool_choice', async () => {
      server.reply(anthropicWire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, false));
      await backend(server.baseURL, { cacheMarkers: false }).generate({
        messages: [
          { role: 'system', content: 'You are careful.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'see' },
              { type: 'image', data: 'AAAA', mediaType: 'image/png' },
              { type: 'image', data: 'https://x.test/i.png', mediaType: 'image/png' },
            ],
          },
          {
            role: 'assistant',
            content: 'Two calls.',
            toolCalls: [
              { id: 'toolu_1', name: 'read', arguments: '{"p":"a"}' },
              { id: 'toolu_2', name: 'read', arguments: '{"p":"b"}' },
            ],
          },
          { role: 'tool', toolCallId: 'toolu_1', toolName: 'read', content: 'A' },
          { role: 'tool', toolCallId: 'toolu_2', toolName: 'read', content: 'missing', isError: true },
          { role: 'user', content: 'go on' },
        ],
        tools: [
          {
            name: 'read',
            description: 'Read a file',
            inputSchema: { type: 'object', properties: { p: { type: 'string' } } },
          },
        ],
        toolChoice: 'required',
        temperature: 0,
        responseFormat: { type: 'json', schema: { type: 'object' } },
      });
      const request = server.requests[0]!;
      expect(request.path).toBe('/v1/messages');
      expect(request.headers['x-api-key']).toBe('sk-ant-test');
      expect(request.headers['anthropic-version']).toBe('2023-06-01');
      expect(request.body).toMatchObject({
        model: 'claude-test',
        max_tokens: DEFAULTS.maxOutputTokens,
        stream: false,
        temperature: 0,
        tool_choice: { type: 'any' },
      });
      expect(request.body.system).toMatch(/^You are careful\.\n\nReply with one JSON object only/);
      expect(request.body.tools).toEqual([
        {
          name: 'read',
          description: 'Read a file',
          input_schema: { type: 'object', properties: { p: { type: 'string' } } },
        },
      ]);
      expect(request.body.messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'see' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'image', source: { type: 'url', url: 'https://x.test/i.png' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Two calls.' },
            { type: 'tool_use', id: 'toolu_1', name: 'read', input: { p: 'a' } },
            { type: 'tool_use', id: 'toolu_2', name: 'read', input: { p: 'b' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'A' }] },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: [{ type: 'text', text: 'missing' }],
              is_error: true,
            },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'go on' }] },
      ]);
    });

    it('maps the other tool_choice values and honours maxOutputTokens', async () => {
      const ok = () => anthropicWire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, false);
      server.reply(ok(), ok(), ok());
      const llm = backend(`${server.baseURL}/v1`, { maxOutputTokens: 1024 });
      await llm.generate({ ...ASK, toolChoice: { name: 'read' }, maxOutputTokens: 77 });
      await llm.generate({ ...ASK, toolChoice: 'none' });
      await llm.generate({ ...ASK, toolChoice: 'auto' });
      expect(server.requests.map((r) => [r.path, r.body.tool_choice, r.body.max_tokens])).toEqual([
        ['/v1/messages', { type: 'tool', name: 'read' }, 77],
        ['/v1/messages', { type: 'none' }, 1024],
        ['/v1/messages', { type: 'auto' }, 1024],
      ]);
    });

    it('parses a non-streamed answer with thinking, text and parallel tool_use', async () => {
      server.reply({
        body: JSON.stringify({
          type: 'message',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 's' },
            { type: 'text', text: 'Both.' },
            { type: 'tool_use', id: 'toolu_a', name: 'read', input: { p: 'a' } },
            { type: 'tool_use', id: '', name: 'read', input: {} },
          ],
          stop_reason: 'tool_use',
          usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 7 },
        }),
      });
      const result = await backend(server.baseURL).generate(ASK);
      expect(result.message).toMatchObject({ content: 'Both.', reasoning: 'hmm' });
      expect(result.message.toolCalls[0]).toEqual({ id: 'toolu_a', name: 'read', arguments: '{"p":"a"}' });
      expect(result.message.toolCalls[1]).toMatchObject({ name: 'read', arguments: '{}' });
      expect(result.message.toolCalls[1]?.id).toMatch(/^call_[0-9a-f]{32}$/);
      expect(result.usage).toEqual({ inputTokens: 100, outputTokens: 7, cachedInputTokens: 90 });
    });
  });

  describe('sampling and the output limit', () => {
    const ok = (stream = false) =>
      anthropicWire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, stream);
    const SAMPLED: GenerateRequest = { ...ASK, temperature: 0.2, topP: 0.9, maxOutputTokens: 300 };
    const invalidRequest = (message: string) => ({
      status: 400,
      body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message }, request_id: 'req_1' }),
    });

    it.each([
      'claude-test',
      'claude-3-5-sonnet-20241022',
      'claude-3-7-sonnet-latest',
      'claude-sonnet-4-20250514',
      'claude-opus-4-20250514',
    ])('a model that takes both (%s) gets temperature and top_p', async (model) => {
      server.reply(ok());
      await backend(server.baseURL, { model }).generate(SAMPLED);
      expect(server.requests[0]?.body).toMatchObject({ temperature: 0.2, top_p: 0.9, max_tokens: 300 });
    });

    it.each([
      'claude-opus-4-1-20250805',
      'claude-opus-4-5',
      'claude-opus-4-6',
      'claude-sonnet-4-5-20250929',
      'claude-sonnet-4-6',
      'claude-haiku-4-5',
      'anthropic.claude-opus-4-1-20250805-v1:0',
      'claude-sonnet-4-5@20250929',
      'claude-sonnet-4.5',
    ])(
      'a model that rejects both together (%s) gets temperature alone, or top_p when it is the only one set',
      async (model) => {
        server.reply(ok(), ok());
        const llm = backend(server.baseURL, { model });
        await llm.generate(SAMPLED);
        await llm.generate({ ...ASK, topP: 0.9 });
        expect(server.requests[0]?.body).toMatchObject({ temperature: 0.2, max_tokens: 300 });
        expect(server.requests[0]?.body).not.toHaveProperty('top_p');
        expect(server.requests[1]?.body).toMatchObject({ top_p: 0.9 });
      },
    );

    it.each(['claude-opus-4-7', 'claude-opus-4-8-20260601', 'claude-sonnet-5', 'claude-opus-5'])(
      'a model that rejects both (%s) gets neither',
      async (model) => {
        server.reply(ok());
        await backend(server.baseURL, { model }).generate(SAMPLED);
        expect(server.requests[0]?.body).not.toHaveProperty('temperature');
        expect(server.requests[0]?.body).not.toHaveProperty('top_p');
        expect(server.requests[0]?.body).toMatchObject({ max_tokens: 300 });
      },
    );

    it('"cannot both be specified" resends once with temperature alone, and later requests start that way', async () => {
      server.reply(
        invalidRequest('`temperature` and `top_p` cannot both be specified for this model. Please use only one.'),
        ok(),
        ok(),
      );
      const llm = backend(server.baseURL);
      expect((await llm.generate(SAMPLED)).message.content).toBe('ok');
      await llm.generate(SAMPLED);
      expect(server.requests.map((r) => [r.body.temperature, r.body.top_p])).toEqual([
        [0.2, 0.9],
        [0.2, undefined],
        [0.2, undefined],
      ]);
    });

    it('"`temperature` is deprecated" resends without temperature, also through stream(), and remembers it', async () => {
      server.reply(invalidRequest('`temperature` is deprecated for this model.'), ok(true), ok(true));
      const llm = backend(server.baseURL);
      expect(await lastPart(llm.stream(SAMPLED))).toMatchObject({
        type: 'finish',
        result: { message: { content: 'ok' } },
      });
      await lastPart(llm.stream(SAMPLED));
      expect(server.requests.map((r) => [r.body.temperature, r.body.top_p])).toEqual([
        [0.2, 0.9],
        [undefined, 0.9],
        [undefined, 0.9],
      ]);
    });

    it('a rejection naming a field that was not sent is reported, not resent', async () => {
      server.reply(invalidRequest('`top_p` is deprecated for this model.'));
      const error = await harnessRejection(backend(server.baseURL).generate({ ...ASK, temperature: 0.2 }));
      expect(error.code).toBe('bad-request');
      expect(server.requests).toHaveLength(1);
    });

    it("without the request's maxOutputTokens, max_tokens is DEFAULTS.maxOutputTokens, streaming and not", async () => {
      server.reply(ok(), ok(true), ok(true));
      await backend(server.baseURL).generate(ASK);
      await backend(server.baseURL, { stream: true }).generate(ASK);
      await lastPart(backend(server.baseURL).stream(ASK));
      expect(server.requests.map((r) => r.body.max_tokens)).toEqual([
        DEFAULTS.maxOutputTokens,
        DEFAULTS.maxOutputTokens,
        DEFAULTS.maxOutputTokens,
      ]);
    });
  });

  describe('options', () => {
    it('requires an API key from the option or ANTHROPIC_API_KEY', () => {
      vi.stubEnv('ANTHROPIC_API_KEY', '');
      expect(() => anthropic({ model: 'claude-test' })).toThrowError(/ANTHROPIC_API_KEY/);
      vi.stubEnv('ANTHROPIC_API_KEY', 'from-env');
      expect(anthropic({ model: 'claude-test' }).provider).toBe('anthropic');
      vi.unstubAllEnvs();
    });

    it('names ANTHROPIC_API_KEY when the key is rejected', async () => {
      server.reply(anthropicWire.authError());
      const error = await harnessRejection(backend(server.baseURL).generate(ASK));
      expect(error.code).toBe('authentication');
      expect(error.message).toMatch(/ANTHROPIC_API_KEY/);
    });

    it('rejects bad options naming them', () => {
      expect(() => anthropic({ apiKey: 'k', model: 'm', maxOutputTokens: 0 })).toThrowError(/`maxOutputTokens`/);
      expect(() => anthropic({ apiKey: 'k', model: 'm', baseURL: 'nope' })).toThrowError(/`baseURL`/);
      expect(() => anthropic({ apiKey: 'k', model: 'm', timeoutMs: -5 })).toThrowError(/`timeoutMs`/);
      expect(() =>
        anthropic({ apiKey: 'k', model: 'm', sampling: 'never' } as unknown as AnthropicOptions),
      ).toThrowError(/`sampling`/);
    });
  });
});
