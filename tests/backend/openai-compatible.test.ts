import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { openAICompatible, type OpenAICompatibleOptions } from '../../src/backend/openai-compatible.js';
import type { GenerateRequest, GenerateResult, Message } from '../../src/backend/types.js';
import { HarnessError, type ProviderHttpError } from '../../src/errors.js';
import { readFixture } from '../support/fixtures.js';
import { adapterOptions, FAST_RETRY, runBackendConformance } from './conformance.js';
import {
  cassetteResponse,
  concatDeltas,
  readCassette,
  readChunkObjects,
  readChunks,
  readLocalFixture,
  readSnapshots,
} from './support/fixture-formats.js';
import { SSE_HEADERS, sseBody, startLoopbackServer, type LoopbackServer } from './support/loopback-server.js';
import { openAIWire } from './support/wire-formats.js';
import { harnessRejection } from '../support/rejection.js';

function backend(baseURL: string, extra: Partial<OpenAICompatibleOptions> = {}) {
  return openAICompatible({
    baseURL: `${baseURL}/v1`,
    apiKey: 'sk-test',
    model: 'gpt-test',
    retry: FAST_RETRY,
    ...extra,
  });
}

runBackendConformance('openAICompatible', (context) => backend(context.baseURL, adapterOptions(context)), openAIWire);

const ASK: GenerateRequest = { messages: [{ role: 'user', content: 'Hi' }] };

describe('openAICompatible', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => {
    await server.close();
  });

  const replayChunks = (lines: string[]) =>
    server.reply({ headers: SSE_HEADERS, body: sseBody(lines, { done: true }) });

  describe('recorded fixtures', () => {
    it('openai/openai-text.chunks.txt: text deltas, finish chunk, usage-only chunk', async () => {
      const chunks = readChunkObjects('providers/openai/openai-text.chunks.txt');
      replayChunks(readChunks('providers/openai/openai-text.chunks.txt'));
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result.message.content).toBe(concatDeltas(chunks, 'content'));
      expect(result.message.content.startsWith('**Holiday')).toBe(true);
      expect(result.finishReason).toBe('stop');
      expect(result.usage).toEqual({ inputTokens: 16, outputTokens: 300, cachedInputTokens: 0 });
      expect(result.message.reasoning).toBeUndefined();
    });

    it('openai/openai-text.json: non-streamed completion', async () => {
      const body = readFixture('providers/openai/openai-text.json');
      server.reply({ body });
      const result = await backend(server.baseURL).generate(ASK);
      const expected = (JSON.parse(body) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message
        .content;
      expect(result.message.content).toBe(expected);
      expect(result).toMatchObject({
        finishReason: 'stop',
        usage: { inputTokens: 16, outputTokens: 363, cachedInputTokens: 0 },
      });
    });

    it('openai/ChatCompletionStream.test.ts.snap: every recorded stream, incl. refusal and leading newlines', async () => {
      const bodies = readSnapshots('providers/openai/ChatCompletionStream.test.ts.snap');
      expect(bodies.size).toBe(4);
      for (const [name, body] of bodies) {
        const chunks = body
          .split('\n')
          .filter((line) => line.startsWith('data: {'))
          .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
        const usage = chunks.at(-1)?.usage as { prompt_tokens: number; completion_tokens: number };
        server.reply({ headers: SSE_HEADERS, body });
        const result = await backend(server.baseURL, { stream: true }).generate(ASK);
        expect(result.message.content, name).toBe(concatDeltas(chunks, 'content') + concatDeltas(chunks, 'refusal'));
        expect(result.finishReason, name).toBe('stop');
        expect(result.usage, name).toEqual({ inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens });
      }
      const leading = await (async () => {
        server.reply({
          headers: SSE_HEADERS,
          body: bodies.get('.stream() is robust against leading newline chunks 1') ?? '',
        });
        return backend(server.baseURL, { stream: true }).generate(ASK);
      })();
      expect(leading.message.content).toBe('\n\n{"city":"San Francisco","units":"c"}');
      server.reply({ headers: SSE_HEADERS, body: bodies.get('.stream() emits refusal logprobs events 1') ?? '' });
      const refusal = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(refusal.message.content).toBe("I'm very sorry, but I can't assist with that request.");
    });

    it('openai/test_run_stream_sync_streams_real_model.yaml: tool call in 5 pieces, then the follow-up turn as recorded', async () => {
      const [first, second] = readCassette('providers/openai/test_run_stream_sync_streams_real_model.yaml');
      if (!first || !second) throw new Error('cassette has two interactions');
      server.reply(cassetteResponse(first), cassetteResponse(second));
      const llm = backend(server.baseURL, { stream: true, model: 'gpt-4o-mini' });
      const tools = [
        {
          name: 'get_capital',
          description: '',
          inputSchema: { type: 'object', properties: { country: { type: 'string' } } },
        },
      ];
      const messages: Message[] = [
        { role: 'user', content: 'What is the capital of the UK? Use the tool, then answer.' },
      ];
      const turn1 = await llm.generate({ messages, tools, toolChoice: 'auto' });
      expect(turn1.finishReason).toBe('tool-calls');
      expect(turn1.message.toolCalls).toEqual([
        { id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', name: 'get_capital', arguments: '{"country":"UK"}' },
      ]);
      expect(turn1.usage).toEqual({ inputTokens: 53, outputTokens: 15, cachedInputTokens: 0 });
      const call = turn1.message.toolCalls[0]!;
      messages.push(turn1.message, { role: 'tool', toolCallId: call.id, toolName: call.name, content: 'London' });
      const turn2 = await llm.generate({ messages, tools, toolChoice: 'auto' });
      expect(turn2.finishReason).toBe('stop');
      expect(turn2.message.content).toMatch(/London/);
      // Our second request carries the same messages the real client sent.
      expect(server.requests[1]?.body.messages).toEqual(second.request.parsed_body?.messages);
      expect(server.requests[1]?.body).toMatchObject({
        model: 'gpt-4o-mini',
        stream: true,
        stream_options: { include_usage: true },
        tool_choice: 'auto',
      });
    });

    it('openai/reasoning-model-legacy-parameter-error.json: retries with max_completion_tokens and remembers it', async () => {
      server.reply(
        { status: 400, body: readFixture('providers/openai/reasoning-model-legacy-parameter-error.json') },
        openAIWire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, false),
        openAIWire.reply({ text: ['again'], finish: 'stop', usage: { input: 1, output: 1 } }, false),
      );
      const llm = backend(server.baseURL);
      expect((await llm.generate({ ...ASK, maxOutputTokens: 100 })).message.content).toBe('ok');
      expect(server.requests[0]?.body.max_tokens).toBe(100);
      expect(server.requests[1]?.body).toMatchObject({ max_completion_tokens: 100 });
      expect(server.requests[1]?.body).not.toHaveProperty('max_tokens');
      await llm.generate({ ...ASK, maxOutputTokens: 50 });
      expect(server.requests[2]?.body).toMatchObject({ max_completion_tokens: 50 });
      expect(server.requests).toHaveLength(3);
    });

    it('deepseek/deepseek-tool-call.chunks.txt: reasoning_content, tool call over 11 deltas, usage in the finish chunk', async () => {
      const chunks = readChunkObjects('providers/deepseek/deepseek-tool-call.chunks.txt');
      replayChunks(readChunks('providers/deepseek/deepseek-tool-call.chunks.txt'));
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result.message.reasoning).toBe(concatDeltas(chunks, 'reasoning_content'));
      expect(result.message.reasoning).toMatch(/^The user is asking for the weather/);
      expect(result.message.content).toBe('');
      expect(result.message.toolCalls).toEqual([
        { id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', name: 'weather', arguments: '{"location": "San Francisco"}' },
      ]);
      expect(result.finishReason).toBe('tool-calls');
      expect(result.usage).toEqual({ inputTokens: 339, outputTokens: 83, cachedInputTokens: 320 });
    });

    it('alibaba/alibaba-tool-call.chunks.txt: "id":"" continuations and a trailing empty delta stay in one call', async () => {
      replayChunks(readChunks('providers/alibaba/alibaba-tool-call.chunks.txt'));
      const parts = [];
      for await (const part of backend(server.baseURL).stream(ASK)) parts.push(part);
      const finish = parts.at(-1);
      if (finish?.type !== 'finish') throw new Error('stream must end with finish');
      expect(finish.result.message.toolCalls).toEqual([
        { id: 'call_eee11723464a4b9eb8cee71d', name: 'weather', arguments: '{"location": "San Francisco"}' },
      ]);
      expect(finish.result.finishReason).toBe('tool-calls');
      expect(finish.result.usage).toEqual({ inputTokens: 295, outputTokens: 22, cachedInputTokens: 0 });
      expect(
        parts
          .filter((p) => p.type === 'tool-call-delta')
          .every((p) => p.type === 'tool-call-delta' && p.id === 'call_eee11723464a4b9eb8cee71d'),
      ).toBe(true);
    });

    it('zhipu/test_zai_thinking_stream.yaml: reasoning then content, role repeated, usage with finish', async () => {
      const [interaction] = readCassette('providers/zhipu/test_zai_thinking_stream.yaml');
      if (!interaction) throw new Error('cassette is empty');
      const chunks = (interaction.response.body?.string ?? '')
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
      server.reply(cassetteResponse(interaction));
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result.message.reasoning).toBe(concatDeltas(chunks, 'reasoning_content'));
      expect(result.message.content).toBe(concatDeltas(chunks, 'content'));
      expect(result.message.content).toBe('4');
      expect(result.message.reasoning).toMatch(/^\n1\. {2}\*\*Analyze the User's Request:\*\*/);
      expect(result.finishReason).toBe('stop');
      expect(result.usage).toEqual({ inputTokens: 13, outputTokens: 564, cachedInputTokens: 0 });
    });

    it('groq/test_tool_use_failed_error.yaml: 400 tool_use_failed is a bad request; the retry returns a tool call', async () => {
      const [failed, ok] = readCassette('providers/groq/test_tool_use_failed_error.yaml');
      if (!failed || !ok) throw new Error('cassette has two interactions');
      server.reply(cassetteResponse(failed), cassetteResponse(ok));
      const llm = backend(server.baseURL, { maxRetries: 3 });
      const error = await harnessRejection(llm.generate(ASK));
      expect(error.code).toBe('bad-request');
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/Tool call validation failed/);
      expect((error as ProviderHttpError).status).toBe(400);
      const result = await llm.generate(ASK);
      expect(result.message.toolCalls).toEqual([
        { id: 'fc_311ba17b-89f9-48d3-8fd9-7e74a1264855', name: 'get_something_by_name', arguments: '{"name":"test"}' },
      ]);
      expect(result.message.reasoning).toMatch(/correct param/);
      expect(result.finishReason).toBe('tool-calls');
      expect(result.usage).toEqual({ inputTokens: 301, outputTokens: 52 });
      expect(server.requests).toHaveLength(2);
    });

    it('ollama/test_ollama_cloud_tool_output.yaml: `reasoning` field, plain answer, then a tool call', async () => {
      const [first, second] = readCassette('providers/ollama/test_ollama_cloud_tool_output.yaml');
      if (!first || !second) throw new Error('cassette has two interactions');
      server.reply(cassetteResponse(first), cassetteResponse(second));
      const llm = openAICompatible({ baseURL: `${server.baseURL}/v1`, model: 'gpt-oss:20b' });
      const one = await llm.generate(ASK);
      expect(one.message.content).toBe('Paris.');
      expect(one.message.reasoning).toMatch(/^We need to answer question/);
      expect(one).toMatchObject({ finishReason: 'stop', usage: { inputTokens: 134, outputTokens: 122 } });
      const two = await llm.generate(ASK);
      expect(two.message.toolCalls).toEqual([
        { id: 'call_o2vnpxrw', name: 'final_result', arguments: '{"city":"Paris","country":"France"}' },
      ]);
      expect(two).toMatchObject({ finishReason: 'tool-calls', usage: { inputTokens: 206, outputTokens: 194 } });
      expect(server.requests[0]?.headers.authorization).toBeUndefined();
    });

    it('openrouter/test_openrouter_errors_raised.yaml: 429 on every attempt is retried, then reported with the upstream text', async () => {
      const interactions = readCassette('providers/openrouter/test_openrouter_errors_raised.yaml');
      expect(interactions).toHaveLength(3);
      server.reply(...interactions.map(cassetteResponse));
      const error = await harnessRejection(backend(server.baseURL, { maxRetries: 2 }).generate(ASK));
      expect(error.code).toBe('rate-limited');
      expect(error.retryable).toBe(true);
      expect(error.message).toMatch(/temporarily rate-limited upstream/);
      expect(server.requests).toHaveLength(3);
    });

    it("google/google-429-retry-info.json: RetryInfo.retryDelay becomes the error's retryAfterMs", async () => {
      server.reply({ status: 429, body: readFixture('providers/google/google-429-retry-info.json') });
      const error = await harnessRejection(backend(server.baseURL, { maxRetries: 0 }).generate(ASK));
      expect(error.code).toBe('rate-limited');
      expect((error as ProviderHttpError).retryAfterMs).toBe(34_400);
      expect(error.message).toMatch(/exceeded your current quota/);
    });
  });

  describe('fixtures written here', () => {
    it('parallel calls that repeat index 0: a new id opens a new call', async () => {
      replayChunks(readLocalFixture('openai-parallel-repeated-index.chunks.txt').trim().split('\n'));
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result.message.toolCalls).toEqual([
        { id: 'call_one', name: 'read_file', arguments: '{"path":"a.txt"}' },
        { id: 'call_two', name: 'list_dir', arguments: '{"dir":"src"}' },
      ]);
      expect(result.usage).toEqual({ inputTokens: 40, outputTokens: 21 });
    });

    it('parallel calls without index; an empty first id gets a generated unique id', async () => {
      replayChunks(readLocalFixture('openai-parallel-no-index.chunks.txt').trim().split('\n'));
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      const [first, second] = result.message.toolCalls;
      expect(first).toMatchObject({ name: 'read_file', arguments: '{"path":"a"}' });
      expect(first?.id).toMatch(/^call_[0-9a-f]{32}$/);
      expect(second).toEqual({ id: 'call_b', name: 'read_file', arguments: '{"path":"b"}' });
    });

    it('parallel calls told apart only by index, without ids, stay separate and get distinct generated ids', async () => {
      replayChunks(readLocalFixture('openai-parallel-index-no-id.chunks.txt').trim().split('\n'));
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result.message.toolCalls.map(({ name, arguments: args }) => ({ name, args }))).toEqual([
        { name: 'read_file', args: '{"path":"a.txt"}' },
        { name: 'list_dir', args: '{"dir":"src"}' },
      ]);
      const [first, second] = result.message.toolCalls;
      expect(first?.id).toMatch(/^call_[0-9a-f]{32}$/);
      expect(second?.id).toMatch(/^call_[0-9a-f]{32}$/);
      expect(first?.id).not.toBe(second?.id);
      expect(result).toMatchObject({ finishReason: 'tool-calls', usage: { inputTokens: 33, outputTokens: 18 } });
    });

    it('tool JSON cut off by the token limit ends with finishReason length and the raw partial arguments', async () => {
      replayChunks(readLocalFixture('openai-truncated-tool-json.chunks.txt').trim().split('\n'));
      const result = await backend(server.baseURL, { stream: true }).generate(ASK);
      expect(result.finishReason).toBe('length');
      expect(result.message.content).toBe('I will save it.');
      expect(result.message.toolCalls).toEqual([
        { id: 'call_w', name: 'write_file', arguments: '{"path":"report.md","content":"# Report\\n\\nThe first' },
      ]);
    });

    it('an event: error frame inside a 200 stream rejects instead of returning the partial text', async () => {
      server.reply({ headers: SSE_HEADERS, body: readLocalFixture('openai-error-in-stream.sse') });
      const error = await harnessRejection(backend(server.baseURL, { stream: true, maxRetries: 0 }).generate(ASK));
      expect(error.code).toBe('server-error');
      expect(error.message).toMatch(/Internal server error/);
    });
  });

  describe('request building', () => {
    const ok = () => openAIWire.reply({ text: ['{}'], finish: 'stop', usage: { input: 1, output: 1 } }, false);

    it('maps messages, images, tool calls, tool results, tools, tool_choice and sampling options', async () => {
      server.reply(ok());
      await backend(server.baseURL, { headers: { 'x-extra': '1' } }).generate({
        messages: [
          { role: 'system', content: 'sys' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image', data: 'AAAA', mediaType: 'image/png' },
              { type: 'image', data: 'https://x.test/a.jpg', mediaType: 'image/jpeg' },
            ],
          },
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              { id: 'c1', name: 'shot', arguments: '{}' },
              { id: 'c2', name: 'read', arguments: '{"p":1}' },
            ],
          },
          {
            role: 'tool',
            toolCallId: 'c1',
            toolName: 'shot',
            content: [
              { type: 'text', text: 'took it' },
              { type: 'image', data: 'BBBB', mediaType: 'image/png' },
            ],
          },
          { role: 'tool', toolCallId: 'c2', toolName: 'read', content: 'nope', isError: true },
        ],
        tools: [{ name: 'read', description: 'Read', inputSchema: { type: 'object' } }],
        toolChoice: { name: 'read' },
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 256,
      });
      const request = server.requests[0]!;
      expect(request.path).toBe('/v1/chat/completions');
      expect(request.headers.authorization).toBe('Bearer sk-test');
      expect(request.headers['x-extra']).toBe('1');
      expect(request.body).toMatchObject({
        model: 'gpt-test',
        temperature: 0.2,
        top_p: 0.9,
        max_tokens: 256,
        stream: false,
      });
      expect(request.body.tools).toEqual([
        { type: 'function', function: { name: 'read', description: 'Read', parameters: { type: 'object' } } },
      ]);
      expect(request.body.tool_choice).toEqual({ type: 'function', function: { name: 'read' } });
      expect(request.body.messages).toEqual([
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            { type: 'image_url', image_url: { url: 'https://x.test/a.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'shot', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'read', arguments: '{"p":1}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'took it' },
        { role: 'tool', tool_call_id: 'c2', content: 'Error: nope' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Images returned by the tool calls above:' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,BBBB' } },
          ],
        },
      ]);
    });

    it('steps response_format down json_schema → json_object → prompt-only when rejected, and remembers it', async () => {
      const reject = (text: string) => ({
        status: 400,
        body: JSON.stringify({ error: { message: text, type: 'invalid_request_error' } }),
      });
      server.reply(
        reject("Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."),
        reject('response_format json_object is not supported'),
        ok(),
        ok(),
      );
      const llm = backend(server.baseURL);
      const schema = { type: 'object', properties: { passed: { type: 'boolean' } } };
      await llm.generate({ ...ASK, responseFormat: { type: 'json', schema, name: 'verdict' } });
      expect(server.requests[0]?.body.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'verdict', schema },
      });
      expect(server.requests[1]?.body.response_format).toEqual({ type: 'json_object' });
      expect(server.requests[2]?.body).not.toHaveProperty('response_format');
      const lastMessage = (server.requests[2]?.body.messages as Array<{ content: string }> | undefined)?.at(-1);
      expect(lastMessage?.content).toMatch(/JSON Schema/);
      await llm.generate({ ...ASK, responseFormat: { type: 'json', schema } });
      expect(server.requests[3]?.body).not.toHaveProperty('response_format');
      expect(server.requests).toHaveLength(4);
    });

    it('a 400 unrelated to response_format is not retried with a downgrade', async () => {
      server.reply({ status: 400, body: JSON.stringify({ error: { message: 'messages must not be empty' } }) });
      const error = await harnessRejection(
        backend(server.baseURL).generate({ ...ASK, responseFormat: { type: 'json' } }),
      );
      expect(error.code).toBe('bad-request');
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]?.body.response_format).toEqual({ type: 'json_object' });
    });
  });

  describe('sampling and the output limit', () => {
    const ok = () => openAIWire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, false);
    const SAMPLED: GenerateRequest = { ...ASK, temperature: 0.2, topP: 0.9, maxOutputTokens: 300 };
    const openAIError = (message: string, param: string, code: string) => ({
      status: 400,
      body: JSON.stringify({ error: { message, type: 'invalid_request_error', param, code } }),
    });
    const temperatureUnsupported = () =>
      openAIError(
        "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.",
        'temperature',
        'unsupported_value',
      );
    const topPUnsupported = () =>
      openAIError("Unsupported parameter: 'top_p' is not supported with this model.", 'top_p', 'unsupported_parameter');

    it.each(['o1', 'o3-mini', 'o4-mini-2025-04-16', 'gpt-5', 'gpt-5-mini', 'gpt-5.1', 'gpt-5.2-pro', 'openai/o3'])(
      'a known reasoning model (%s) gets neither temperature nor top_p, and its limit as max_completion_tokens',
      async (model) => {
        server.reply(ok());
        await backend(server.baseURL, { model }).generate(SAMPLED);
        const body = server.requests[0]?.body;
        expect(body).not.toHaveProperty('temperature');
        expect(body).not.toHaveProperty('top_p');
        expect(body).not.toHaveProperty('max_tokens');
        expect(body).toMatchObject({ max_completion_tokens: 300 });
      },
    );

    it.each(['gpt-4.1', 'gpt-4o-mini', 'gpt-5-chat-latest', 'gpt-oss:20b', 'deepseek-reasoner', 'qwen3:8b'])(
      'any other model (%s) gets both temperature and top_p, and its limit as max_tokens',
      async (model) => {
        server.reply(ok());
        await backend(server.baseURL, { model }).generate(SAMPLED);
        expect(server.requests[0]?.body).toMatchObject({ temperature: 0.2, top_p: 0.9, max_tokens: 300 });
      },
    );

    it('api.openai.com gets max_completion_tokens for every model, and no limit field when the request has none', async () => {
      const agent = new MockAgent();
      agent.disableNetConnect();
      const bodies: Array<Record<string, unknown>> = [];
      agent
        .get('https://api.openai.com')
        .intercept({ path: '/v1/chat/completions', method: 'POST' })
        .reply(({ body }) => {
          bodies.push(JSON.parse(String(body)) as Record<string, unknown>);
          return {
            statusCode: 200,
            data: String(ok().body),
            responseOptions: { headers: { 'content-type': 'application/json' } },
          };
        })
        .times(2);
      const llm = openAICompatible({
        baseURL: 'https://api.openai.com/v1',
        apiKey: 'sk-test',
        model: 'gpt-4.1',
        dispatcher: agent,
      });
      await llm.generate(SAMPLED);
      await llm.generate(ASK);
      expect(bodies[0]).toMatchObject({ temperature: 0.2, top_p: 0.9, max_completion_tokens: 300 });
      expect(bodies[0]).not.toHaveProperty('max_tokens');
      expect(bodies[1]).not.toHaveProperty('max_completion_tokens');
      expect(bodies[1]).not.toHaveProperty('max_tokens');
      await agent.close();
    });

    it('a rejected temperature is dropped: the request is sent once more without it, and later requests leave it out', async () => {
      server.reply(temperatureUnsupported(), ok(), ok());
      const llm = backend(server.baseURL);
      expect((await llm.generate(SAMPLED)).message.content).toBe('ok');
      await llm.generate(SAMPLED);
      expect(server.requests).toHaveLength(3);
      expect(server.requests[0]?.body).toMatchObject({ temperature: 0.2, top_p: 0.9 });
      for (const request of server.requests.slice(1)) {
        expect(request.body).not.toHaveProperty('temperature');
        expect(request.body).toMatchObject({ top_p: 0.9, max_tokens: 300 });
      }
    });

    it('each rejected field is dropped in turn, also through stream()', async () => {
      server.reply(
        temperatureUnsupported(),
        topPUnsupported(),
        openAIWire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, true),
      );
      const parts = [];
      for await (const part of backend(server.baseURL).stream(SAMPLED)) parts.push(part);
      expect(parts.at(-1)).toMatchObject({ type: 'finish', result: { message: { content: 'ok' } } });
      expect(server.requests.map((r) => [r.body.temperature, r.body.top_p])).toEqual([
        [0.2, 0.9],
        [undefined, 0.9],
        [undefined, undefined],
      ]);
    });

    it('a 400 about a sampling field that was not sent, or about its value, is reported, not resent', async () => {
      server.reply(
        topPUnsupported(),
        openAIError(
          "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.",
          'temperature',
          'decimal_above_max_value',
        ),
      );
      const first = await harnessRejection(backend(server.baseURL).generate({ ...ASK, temperature: 0.2 }));
      const second = await harnessRejection(backend(server.baseURL).generate({ ...ASK, temperature: 3 }));
      expect([first.code, second.code]).toEqual(['bad-request', 'bad-request']);
      expect(server.requests).toHaveLength(2);
    });

    it('a server that rejects max_completion_tokens gets max_tokens, once and remembered; a second rejection is reported', async () => {
      const forbidden = {
        status: 400,
        body: JSON.stringify({
          object: 'error',
          message:
            "[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted', 'input': 300}]",
          type: 'BadRequestError',
          param: null,
          code: 400,
        }),
      };
      server.reply(forbidden, ok(), ok());
      const llm = backend(server.baseURL, { model: 'o3-mini' });
      await llm.generate(SAMPLED);
      await llm.generate(SAMPLED);
      expect(server.requests.map((r) => [r.body.max_completion_tokens, r.body.max_tokens])).toEqual([
        [300, undefined],
        [undefined, 300],
        [undefined, 300],
      ]);

      server.reply(
        { status: 400, body: readFixture('providers/openai/reasoning-model-legacy-parameter-error.json') },
        forbidden,
      );
      const error = await harnessRejection(backend(server.baseURL).generate(SAMPLED));
      expect(error.code).toBe('bad-request');
      expect(server.requests.slice(3).map((r) => [r.body.max_tokens, r.body.max_completion_tokens])).toEqual([
        [300, undefined],
        [undefined, 300],
      ]);
    });
  });

  describe('options and errors', () => {
    it('derives provider names from well-known base URLs', () => {
      const provider = (baseURL: string) => openAICompatible({ baseURL, model: 'm' }).provider;
      expect(provider('https://api.openai.com/v1')).toBe('openai');
      expect(provider('https://api.deepseek.com/v1')).toBe('deepseek');
      expect(provider('https://dashscope-intl.aliyuncs.com/compatible-mode/v1')).toBe('alibaba');
      expect(provider('https://open.bigmodel.cn/api/paas/v4')).toBe('zhipu');
      expect(provider('https://generativelanguage.googleapis.com/v1beta/openai')).toBe('google');
      expect(provider('http://localhost:11434/v1')).toBe('ollama');
      expect(provider('http://127.0.0.1:8000/v1')).toBe('openai-compatible');
      expect(openAICompatible({ baseURL: 'http://127.0.0.1:8000/v1', model: 'm', provider: 'vllm' }).provider).toBe(
        'vllm',
      );
    });

    it('reports contextWindow with the default when omitted', () => {
      expect(openAICompatible({ baseURL: 'http://127.0.0.1/v1', model: 'm' }).contextWindow).toBe(128_000);
      expect(
        openAICompatible({ baseURL: 'http://127.0.0.1/v1', model: 'm', contextWindow: 32_768 }).contextWindow,
      ).toBe(32_768);
    });

    it.each([
      [{ baseURL: 'not a url', model: 'm' }, /`baseURL`/],
      [{ baseURL: 'ftp://x.test', model: 'm' }, /`baseURL`/],
      [{ baseURL: 'http://x.test', model: '' }, /`model`/],
      [{ baseURL: 'http://x.test', model: 'm', contextWindow: 0 }, /`contextWindow`/],
      [{ baseURL: 'http://x.test', model: 'm', maxRetries: -1 }, /`maxRetries`/],
      [{ baseURL: 'http://x.test', model: 'm', dispatcher: {} }, /`dispatcher`/],
      [{ baseURL: 'http://x.test', model: 'm', sampling: 'never' }, /`sampling`/],
      [{ baseURL: 'http://x.test', model: 'm', supportsImages: 'yes' }, /`supportsImages`/],
    ])('rejects bad options with invalid-options naming the option (%#)', (options, pattern) => {
      let caught: unknown;
      try {
        openAICompatible(options as OpenAICompatibleOptions);
      } catch (error) {
        caught = error;
      }
      expect(HarnessError.isInstance(caught) && caught.code).toBe('invalid-options');
      expect((caught as Error).message).toMatch(pattern);
    });

    it('names OPENAI_API_KEY when api.openai.com rejects the key', async () => {
      const agent = new MockAgent();
      agent.disableNetConnect();
      agent
        .get('https://api.openai.com')
        .intercept({ path: '/v1/chat/completions', method: 'POST' })
        .reply(401, { error: { message: 'Incorrect API key provided' } });
      const error = await harnessRejection(
        openAICompatible({
          baseURL: 'https://api.openai.com/v1',
          apiKey: 'bad',
          model: 'gpt-4.1',
          dispatcher: agent,
        }).generate(ASK),
      );
      expect(error.code).toBe('authentication');
      expect(error.message).toMatch(/OPENAI_API_KEY/);
      expect(error.message).toMatch(/Incorrect API key provided/);
      await agent.close();
    });

    it("names the provider's key variable on 403, and says when no key was sent at all", async () => {
      const agent = new MockAgent();
      agent.disableNetConnect();
      const pool = agent.get('https://api.deepseek.com');
      pool
        .intercept({ path: '/v1/chat/completions', method: 'POST' })
        .reply(403, { error: { message: 'Authentication Fails' } });
      const withKey = await harnessRejection(
        openAICompatible({
          baseURL: 'https://api.deepseek.com/v1',
          apiKey: 'bad',
          model: 'deepseek-chat',
          dispatcher: agent,
          maxRetries: 3,
        }).generate(ASK),
      );
      expect(withKey).toMatchObject({ code: 'authentication', retryable: false });
      expect(withKey.message).toMatch(
        /HTTP 403.*Authentication Fails.*`apiKey` option.*process\.env\.DEEPSEEK_API_KEY/,
      );
      expect(withKey.message).not.toMatch(/no API key was sent/);
      await agent.close();

      server.reply({ status: 401, body: JSON.stringify({ error: { message: 'missing bearer token' } }) });
      const withoutKey = await harnessRejection(
        openAICompatible({ baseURL: `${server.baseURL}/v1`, model: 'm', maxRetries: 3 }).generate(ASK),
      );
      expect(withoutKey.code).toBe('authentication');
      expect(withoutKey.message).toMatch(/no API key was sent; pass this provider's key as the `apiKey` option/);
      expect(server.requests).toHaveLength(1);
    });

    it('maps a refused connection to a final connection error naming the URL', async () => {
      const port = Number(new URL(server.baseURL).port);
      await server.close();
      const error = await harnessRejection(
        openAICompatible({
          baseURL: `http://127.0.0.1:${port}/v1`,
          model: 'm',
          maxRetries: 1,
          retry: FAST_RETRY,
        }).generate(ASK),
      );
      expect(error.code).toBe('connection');
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/ECONNREFUSED/);
      expect(error.message).toContain(`http://127.0.0.1:${port}/v1/chat/completions`);
      server = await startLoopbackServer();
    });

    it('works through an injected MockAgent', async () => {
      const agent = new MockAgent();
      agent.disableNetConnect();
      agent
        .get('https://llm.example')
        .intercept({ path: '/v1/chat/completions', method: 'POST' })
        .reply(200, sseBody(readChunks('providers/alibaba/alibaba-tool-call.chunks.txt'), { done: true }), {
          headers: SSE_HEADERS,
        });
      const result: GenerateResult = await openAICompatible({
        baseURL: 'https://llm.example/v1',
        model: 'qwen3-max',
        stream: true,
        dispatcher: agent,
      }).generate(ASK);
      expect(result.message.toolCalls[0]?.name).toBe('weather');
      await agent.close();
    });
  });
});
