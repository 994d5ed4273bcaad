import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { GenerateRequest, LlmBackend, StreamPart } from '../../src/backend/types.js';
import { DEFAULTS } from '../../src/defaults.js';
import type { ProviderHttpError } from '../../src/errors.js';
import { startLoopbackServer, type LoopbackServer } from './support/loopback-server.js';
import type { WireFormat } from './support/wire-formats.js';
import { harnessRejection } from '../support/rejection.js';

/** What the suite asks an adapter factory for. */
export interface ConformanceContext {
  baseURL: string;
  stream: boolean;
  maxRetries?: number;
  timeoutMs?: number;
  /** A Retry-After longer than this is not waited for. */
  maxRetryAfterMs?: number;
  sampling?: 'auto' | 'omit';
  supportsImages?: boolean;
}

/** Builds the adapter under test; it must use tiny backoff delays. */
export type MakeBackend = (context: ConformanceContext) => LlmBackend;

/** Backoff delays small enough for tests. */
export const FAST_RETRY = { minTimeoutMs: 1, maxTimeoutMs: 5 };

/** The adapter options (shared by both shipped adapters) that a conformance context asks for. */
export function adapterOptions({
  stream,
  maxRetries,
  timeoutMs,
  maxRetryAfterMs,
  sampling,
  supportsImages,
}: ConformanceContext) {
  return {
    stream,
    ...(maxRetries !== undefined ? { maxRetries } : {}),
    ...(timeoutMs ? { timeoutMs } : {}),
    ...(sampling !== undefined ? { sampling } : {}),
    ...(supportsImages !== undefined ? { supportsImages } : {}),
    retry: { ...FAST_RETRY, ...(maxRetryAfterMs !== undefined ? { maxRetryAfterMs } : {}) },
  };
}

const ASK: GenerateRequest = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
  ],
  tools: [
    {
      name: 'read_file',
      description: 'Read a file',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
    },
  ],
};

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

/** The contract every HTTP adapter must keep, run against a loopback server speaking `wire`. */
export function runBackendConformance(name: string, makeBackend: MakeBackend, wire: WireFormat): void {
  describe(`${name} conformance`, () => {
    let server: LoopbackServer;
    beforeEach(async () => {
      server = await startLoopbackServer();
    });
    afterEach(async () => {
      await server.close();
    });

    for (const stream of [false, true]) {
      describe(stream ? 'streaming' : 'non-streaming', () => {
        it('returns text, usage and finish reason', async () => {
          server.reply(
            wire.reply({ text: ['Hel', 'lo', ' there'], finish: 'stop', usage: { input: 12, output: 3 } }, stream),
          );
          const result = await makeBackend({ baseURL: server.baseURL, stream }).generate(ASK);
          expect(result.message).toMatchObject({ role: 'assistant', content: 'Hello there', toolCalls: [] });
          expect(result.finishReason).toBe('stop');
          expect(result.usage).toMatchObject({ inputTokens: 12, outputTokens: 3 });
          expect(server.requests[0]?.body.stream).toBe(stream);
        });

        it('returns one tool call with its arguments assembled', async () => {
          server.reply(
            wire.reply(
              {
                toolCalls: [{ id: 'call_a', name: 'read_file', args: ['{"pa', 'th":"a.', 'txt"}'] }],
                finish: 'tool-calls',
                usage: { input: 5, output: 9 },
              },
              stream,
            ),
          );
          const result = await makeBackend({ baseURL: server.baseURL, stream }).generate(ASK);
          expect(result.finishReason).toBe('tool-calls');
          expect(result.message.toolCalls).toEqual([
            { id: 'call_a', name: 'read_file', arguments: '{"path":"a.txt"}' },
          ]);
        });

        it('returns parallel tool calls in order', async () => {
          server.reply(
            wire.reply(
              {
                text: ['Reading both.'],
                toolCalls: [
                  { id: 'call_1', name: 'read_file', args: ['{"path":', '"a"}'] },
                  { id: 'call_2', name: 'read_file', args: ['{"path":"b"}'] },
                ],
                finish: 'tool-calls',
                usage: { input: 5, output: 9 },
              },
              stream,
            ),
          );
          const result = await makeBackend({ baseURL: server.baseURL, stream }).generate(ASK);
          expect(result.message.content).toBe('Reading both.');
          expect(result.message.toolCalls).toEqual([
            { id: 'call_1', name: 'read_file', arguments: '{"path":"a"}' },
            { id: 'call_2', name: 'read_file', arguments: '{"path":"b"}' },
          ]);
        });

        it("sends the request's temperature, topP and maxOutputTokens as the provider's fields", async () => {
          const ok = () => wire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, stream);
          server.reply(ok(), ok());
          const backend = makeBackend({ baseURL: server.baseURL, stream });
          await backend.generate({
            ...ASK,
            temperature: DEFAULTS.temperature,
            topP: DEFAULTS.topP,
            maxOutputTokens: 1234,
          });
          await backend.generate({ ...ASK, temperature: 0.3, topP: 0.5, maxOutputTokens: 77 });
          expect(server.requests[0]?.body).toMatchObject({
            temperature: 1,
            top_p: 0.95,
            [wire.outputLimitField]: 1234,
          });
          expect(server.requests[1]?.body).toMatchObject({ temperature: 0.3, top_p: 0.5, [wire.outputLimitField]: 77 });
        });

        it("sampling: 'omit' sends neither temperature nor top_p", async () => {
          server.reply(wire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, stream));
          await makeBackend({ baseURL: server.baseURL, stream, sampling: 'omit' }).generate({
            ...ASK,
            temperature: 1,
            topP: 0.95,
            maxOutputTokens: 10,
          });
          expect(server.requests[0]?.body).not.toHaveProperty('temperature');
          expect(server.requests[0]?.body).not.toHaveProperty('top_p');
          expect(server.requests[0]?.body).toMatchObject({ [wire.outputLimitField]: 10 });
        });

        it('fails at once on 401 with a message naming the key to fix', async () => {
          server.reply(
            wire.authError(),
            wire.reply({ text: ['never'], finish: 'stop', usage: { input: 1, output: 1 } }, stream),
          );
          const error = await harnessRejection(
            makeBackend({ baseURL: server.baseURL, stream, maxRetries: 3 }).generate(ASK),
          );
          expect(error.code).toBe('authentication');
          expect(error.retryable).toBe(false);
          expect(error.message).toMatch(/`apiKey` option/);
          expect(server.requests).toHaveLength(1);
        });

        it('fails at once on 403 too, naming the key to fix', async () => {
          server.reply(
            { ...wire.authError(), status: 403 },
            wire.reply({ text: ['never'], finish: 'stop', usage: { input: 1, output: 1 } }, stream),
          );
          const error = await harnessRejection(
            makeBackend({ baseURL: server.baseURL, stream, maxRetries: 3 }).generate(ASK),
          );
          expect(error).toMatchObject({ code: 'authentication', retryable: false });
          expect(error.message).toMatch(/HTTP 403.*`apiKey` option/);
          expect(server.requests).toHaveLength(1);
        });

        it('cancels a request still waiting for response headers when the caller aborts', async () => {
          server.reply({ stall: true });
          const controller = new AbortController();
          const pending = makeBackend({ baseURL: server.baseURL, stream, maxRetries: 3 }).generate({
            ...ASK,
            signal: controller.signal,
          });
          await vi.waitFor(() => expect(server.requests).toHaveLength(1));
          controller.abort();
          expect((await harnessRejection(pending)).code).toBe('aborted');
          await server.cancelled;
          expect(server.requests).toHaveLength(1);
        });

        it('maps a context-length 400 to its own code without retrying', async () => {
          server.reply(wire.contextLengthError());
          const error = await harnessRejection(
            makeBackend({ baseURL: server.baseURL, stream, maxRetries: 3 }).generate(ASK),
          );
          expect(error.code).toBe('context-length-exceeded');
          expect(error.retryable).toBe(false);
          expect(server.requests).toHaveLength(1);
        });

        it('retries a 429 that carries Retry-After, then succeeds', async () => {
          server.reply(
            wire.rateLimited('0'),
            wire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, stream),
          );
          const result = await makeBackend({ baseURL: server.baseURL, stream, maxRetries: 2 }).generate(ASK);
          expect(result.message.content).toBe('ok');
          expect(server.requests).toHaveLength(2);
        });

        it('does not wait for a Retry-After longer than allowed and reports it', async () => {
          server.reply(
            wire.rateLimited('120'),
            wire.reply({ text: ['never'], finish: 'stop', usage: { input: 1, output: 1 } }, stream),
          );
          const error = await harnessRejection(
            makeBackend({ baseURL: server.baseURL, stream, maxRetries: 2, maxRetryAfterMs: 1_000 }).generate(ASK),
          );
          expect(error.code).toBe('rate-limited');
          expect(error.retryable).toBe(true);
          expect((error as ProviderHttpError).retryAfterMs).toBe(120_000);
          expect(server.requests).toHaveLength(1);
        });

        it('retries a 5xx and a connection reset, then succeeds', async () => {
          server.reply(
            { status: 503, body: 'upstream unavailable', headers: { 'content-type': 'text/plain' } },
            { reset: true },
            wire.reply({ text: ['back'], finish: 'stop', usage: { input: 1, output: 1 } }, stream),
          );
          const result = await makeBackend({ baseURL: server.baseURL, stream, maxRetries: 3 }).generate(ASK);
          expect(result.message.content).toBe('back');
          expect(server.requests).toHaveLength(3);
        });

        it('gives up after maxRetries with the last retryable error', async () => {
          server.reply({ status: 500, body: '{"error":{"message":"boom"}}' }, { status: 502, body: 'bad gateway' });
          const error = await harnessRejection(
            makeBackend({ baseURL: server.baseURL, stream, maxRetries: 1 }).generate(ASK),
          );
          expect(error.code).toBe('server-error');
          expect((error as ProviderHttpError).status).toBe(502);
          expect(server.requests).toHaveLength(2);
        });

        it('cancels the HTTP request when the caller aborts, and never retries', async () => {
          server.reply({ hang: true, headers: { 'content-type': stream ? 'text/event-stream' : 'application/json' } });
          const controller = new AbortController();
          const pending = makeBackend({ baseURL: server.baseURL, stream, maxRetries: 3 }).generate({
            ...ASK,
            signal: controller.signal,
          });
          await vi.waitFor(() => expect(server.requests).toHaveLength(1));
          controller.abort();
          const error = await harnessRejection(pending);
          expect(error.code).toBe('aborted');
          await server.cancelled;
          expect(server.requests).toHaveLength(1);
        });

        it('times out a request that hangs and cancels it', async () => {
          server.reply({ hang: true, headers: { 'content-type': stream ? 'text/event-stream' : 'application/json' } });
          const error = await harnessRejection(
            makeBackend({ baseURL: server.baseURL, stream, maxRetries: 0, timeoutMs: 150 }).generate(ASK),
          );
          expect(error.code).toBe('timeout');
          expect(error.retryable).toBe(true);
          await server.cancelled;
        });
      });
    }

    it("waits the server's Retry-After before retrying", async () => {
      server.reply(
        wire.rateLimited('7'),
        wire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, false),
      );
      const realSetTimeout = globalThis.setTimeout;
      const delays: number[] = [];
      // Record every timer; the 7 s wait itself is shortened so the test does not sleep.
      const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
        fn: () => void,
        ms?: number,
        ...rest: unknown[]
      ) => {
        delays.push(ms ?? 0);
        return Reflect.apply(realSetTimeout, globalThis, [fn, ms === 7_000 ? 0 : ms, ...rest]) as ReturnType<
          typeof setTimeout
        >;
      }) as typeof setTimeout);
      try {
        const result = await makeBackend({ baseURL: server.baseURL, stream: false, maxRetries: 1 }).generate(ASK);
        expect(result.message.content).toBe('ok');
      } finally {
        spy.mockRestore();
      }
      expect(server.requests).toHaveLength(2);
      expect(delays).toContain(7_000);
    });

    it('reports supportsImages as given, and leaves it undefined when not given', () => {
      expect(makeBackend({ baseURL: server.baseURL, stream: false }).supportsImages).toBeUndefined();
      expect(makeBackend({ baseURL: server.baseURL, stream: false, supportsImages: true }).supportsImages).toBe(true);
      expect(makeBackend({ baseURL: server.baseURL, stream: false, supportsImages: false }).supportsImages).toBe(false);
    });

    it("stream() sends the request's maxOutputTokens and sampling too", async () => {
      server.reply(wire.reply({ text: ['ok'], finish: 'stop', usage: { input: 1, output: 1 } }, true));
      await collect(
        makeBackend({ baseURL: server.baseURL, stream: false }).stream!({
          ...ASK,
          temperature: 0.7,
          topP: 0.9,
          maxOutputTokens: 4321,
        }),
      );
      expect(server.requests[0]?.body).toMatchObject({
        stream: true,
        temperature: 0.7,
        top_p: 0.9,
        [wire.outputLimitField]: 4321,
      });
    });

    it('stream() yields deltas that add up to the result and ends with exactly one finish', async () => {
      server.reply(
        wire.reply(
          {
            text: ['a', 'b', 'c'],
            toolCalls: [{ id: 'call_x', name: 'read_file', args: ['{"path"', ':"x"}'] }],
            finish: 'tool-calls',
            usage: { input: 4, output: 6 },
          },
          true,
        ),
      );
      const backend = makeBackend({ baseURL: server.baseURL, stream: false });
      const parts = await collect(backend.stream!(ASK));
      expect(parts.filter((p) => p.type === 'finish')).toHaveLength(1);
      const last = parts.at(-1);
      expect(last?.type).toBe('finish');
      const text = parts.flatMap((p) => (p.type === 'text-delta' ? [p.text] : [])).join('');
      const args = parts.flatMap((p) => (p.type === 'tool-call-delta' ? [p.argumentsDelta] : [])).join('');
      expect(text).toBe('abc');
      expect(args).toBe('{"path":"x"}');
      expect(parts.find((p) => p.type === 'tool-call-delta')).toMatchObject({ id: 'call_x', name: 'read_file' });
      if (last?.type !== 'finish') throw new Error('no finish');
      expect(last.result.message.content).toBe(text);
      expect(last.result.message.toolCalls).toEqual([{ id: 'call_x', name: 'read_file', arguments: '{"path":"x"}' }]);
      expect(last.result.usage).toMatchObject({ inputTokens: 4, outputTokens: 6 });
    });

    it('rejects when an error arrives inside a stream that began with HTTP 200', async () => {
      server.reply(wire.errorInStream(), wire.errorInStream());
      const backend = makeBackend({ baseURL: server.baseURL, stream: true, maxRetries: 0 });
      const error = await harnessRejection(backend.generate(ASK));
      expect(error.code).toBe('server-error');
      const seen: StreamPart[] = [];
      const streamed = await harnessRejection(
        (async () => {
          for await (const part of backend.stream!(ASK)) seen.push(part);
        })(),
      );
      expect(streamed.code).toBe('server-error');
      expect(seen).toEqual([{ type: 'text-delta', text: 'partial ' }]);
    });

    it('stream(): aborting mid-body rejects with aborted and cancels the HTTP request', async () => {
      server.reply({ ...wire.partialStream(), hang: true });
      const controller = new AbortController();
      const seen: StreamPart[] = [];
      const error = await harnessRejection(
        (async () => {
          for await (const part of makeBackend({ baseURL: server.baseURL, stream: false }).stream!({
            ...ASK,
            signal: controller.signal,
          })) {
            seen.push(part);
            if (part.type === 'text-delta') controller.abort();
          }
        })(),
      );
      expect(error.code).toBe('aborted');
      expect(seen).toEqual([{ type: 'text-delta', text: 'partial ' }]);
      await server.cancelled;
    });

    it('stream(): a consumer that stops reading early frees the HTTP request', async () => {
      server.reply({ ...wire.partialStream(), hang: true });
      for await (const part of makeBackend({ baseURL: server.baseURL, stream: false }).stream!(ASK)) {
        expect(part).toEqual({ type: 'text-delta', text: 'partial ' });
        break;
      }
      await server.cancelled;
    });

    it('stream(): times out a body that stops mid-way and cancels it', async () => {
      server.reply({ ...wire.partialStream(), hang: true });
      const error = await harnessRejection(
        collect(makeBackend({ baseURL: server.baseURL, stream: false, timeoutMs: 150 }).stream!(ASK)),
      );
      expect(error).toMatchObject({ code: 'timeout', retryable: true });
      await server.cancelled;
    });

    it('rejects a plain-text `event: error` frame inside a 200 stream with the provider text', async () => {
      const partial = wire.partialStream();
      server.reply({ ...partial, body: `${partial.body}event: error\ndata: upstream exploded\n\n` });
      const error = await harnessRejection(
        makeBackend({ baseURL: server.baseURL, stream: true, maxRetries: 0 }).generate(ASK),
      );
      expect(error.code).toBe('invalid-response');
      expect(error.message).toMatch(/reported an error inside the response: upstream exploded/);
    });

    it('rejects a 200 JSON body that carries an error object', async () => {
      server.reply(wire.errorInBody());
      const error = await harnessRejection(
        makeBackend({ baseURL: server.baseURL, stream: false, maxRetries: 0 }).generate(ASK),
      );
      expect(error.code).toBe('invalid-response');
      expect(error.message).toMatch(/Model failed to produce output/);
    });

    it('ends with finishReason "length" when cut off inside a tool call, keeping the partial text', async () => {
      server.reply(
        wire.reply(
          {
            text: ['Let me write'],
            toolCalls: [{ id: 'call_t', name: 'read_file', args: ['{"path": "no', 'tes/lo'] }],
            finish: 'length',
            usage: { input: 3, output: 50 },
          },
          true,
        ),
      );
      const result = await makeBackend({ baseURL: server.baseURL, stream: true }).generate(ASK);
      expect(result.finishReason).toBe('length');
      expect(result.message.content).toBe('Let me write');
      expect(result.message.toolCalls).toEqual([{ id: 'call_t', name: 'read_file', arguments: '{"path": "notes/lo' }]);
    });

    it('rejects a stream that closes before the model finished', async () => {
      const full = wire.reply({ text: ['abc'], finish: 'stop', usage: { input: 1, output: 1 } }, true);
      const body = String(full.body);
      const truncated = body.slice(0, body.indexOf('abc') + 10).replace(/\n[^\n]*$/, '\n\n');
      server.reply({ ...full, body: truncated });
      const error = await harnessRejection(
        makeBackend({ baseURL: server.baseURL, stream: true, maxRetries: 0 }).generate(ASK),
      );
      expect(error.code).toBe('invalid-response');
    });
  });
}
