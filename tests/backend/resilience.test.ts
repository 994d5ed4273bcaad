import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { harnessRejection } from '../support/rejection.js';
import { ADAPTERS, closedPort, collect, recordingRequest } from './support/adapters.js';
import { startLoopbackServer, type LoopbackServer } from './support/loopback-server.js';

const FAST = { minTimeoutMs: 1, maxTimeoutMs: 5 };
const HTML_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>Gateway says hello</h1></body></html>';

describe.each(ADAPTERS)('$name: failing fast, reporting retries, timing out, reading any 200', ({ make, wire }) => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => {
    await server.close();
  });
  const ok = (stream: boolean) =>
    wire.reply({ text: ['fine'], finish: 'stop', usage: { input: 2, output: 1 } }, stream);

  describe('a baseURL nobody listens on', () => {
    it('gives up after two quick retries, with sub-second reported delays and an error naming the URL', async () => {
      const baseURL = `http://127.0.0.1:${await closedPort()}`;
      const { request, notices } = recordingRequest();
      const error = await harnessRejection(make(baseURL).generate(request));
      expect(error.code).toBe('connection');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain(baseURL);
      expect(error.message).toMatch(/ECONNREFUSED/);
      expect(error.message).toMatch(/baseURL/);
      expect(notices.map((n) => n.attempt)).toEqual([1, 2]);
      expect(notices.every((n) => n.error.code === 'connection' && n.delayMs < 1_000)).toBe(true);
      expect(notices.reduce((sum, n) => sum + n.delayMs, 0)).toBeLessThan(1_000);
    });

    it('stream() fails the same way', async () => {
      const baseURL = `http://127.0.0.1:${await closedPort()}`;
      const { request, notices } = recordingRequest();
      const error = await harnessRejection(collect(make(baseURL, { retry: { connectDelayMs: 1 } }).stream(request)));
      expect(error.code).toBe('connection');
      expect(notices).toHaveLength(2);
    });

    it('the quick retries are configurable, capped by maxRetries, and maxRetries: 0 turns them off', async () => {
      const baseURL = `http://127.0.0.1:${await closedPort()}`;
      const five = recordingRequest();
      await harnessRejection(make(baseURL, { retry: { connectRetries: 5, connectDelayMs: 1 } }).generate(five.request));
      expect(five.notices.map((n) => n.delayMs)).toEqual([1, 2, 4, 8]);
      const more = recordingRequest();
      await harnessRejection(
        make(baseURL, { maxRetries: 9, retry: { connectRetries: 5, connectDelayMs: 1 } }).generate(more.request),
      );
      expect(more.notices).toHaveLength(5);
      const none = recordingRequest();
      await harnessRejection(make(baseURL, { maxRetries: 0 }).generate(none.request));
      expect(none.notices).toHaveLength(0);
    });
  });

  describe.each([false, true])('retry notices (stream: %s)', (stream) => {
    it('calls onRetry once per retry, before the wait, with the failed attempt, the delay and the error', async () => {
      server.reply(
        { status: 503, body: 'upstream unavailable', headers: { 'content-type': 'text/plain' } },
        wire.rateLimited('0'),
        ok(stream),
      );
      const { request, notices } = recordingRequest();
      const result = await make(server.baseURL, { stream, retry: FAST }).generate(request);
      expect(result.message.content).toBe('fine');
      expect(notices).toHaveLength(2);
      expect(notices[0]).toMatchObject({
        attempt: 1,
        error: { code: 'server-error', message: expect.stringMatching(/HTTP 503/) },
      });
      expect(notices[1]).toMatchObject({ attempt: 2, error: { code: 'rate-limited' } });
      expect(notices.every((n) => n.delayMs >= 0 && n.delayMs <= FAST.maxTimeoutMs)).toBe(true);
    });

    it('a throwing onRetry does not break the call', async () => {
      server.reply({ status: 500, body: 'boom' }, ok(stream));
      const result = await make(server.baseURL, { stream, retry: FAST }).generate({
        messages: [{ role: 'user', content: 'Hi' }],
        onRetry: () => {
          throw new Error('listener bug');
        },
      });
      expect(result.message.content).toBe('fine');
      expect(server.requests).toHaveLength(2);
    });

    it('retries an HTML page sent with status 200 like any transient failure', async () => {
      server.reply({ status: 200, headers: { 'content-type': 'text/html' }, body: HTML_PAGE }, ok(stream));
      const { request, notices } = recordingRequest();
      const result = await make(server.baseURL, { stream, retry: FAST }).generate(request);
      expect(result.message.content).toBe('fine');
      expect(notices).toHaveLength(1);
      expect(notices[0]?.error.code).toBe('invalid-response');
    });

    it('retries a truncated JSON body sent with status 200', async () => {
      const full = String(ok(false).body);
      server.reply(
        { status: 200, headers: { 'content-type': 'application/json' }, body: full.slice(0, full.length - 20) },
        ok(stream),
      );
      const { request, notices } = recordingRequest();
      const result = await make(server.baseURL, { stream, retry: FAST }).generate(request);
      expect(result.message.content).toBe('fine');
      expect(notices.map((n) => n.error.code)).toEqual(['invalid-response']);
    });

    it('says what came back when a 200 body is neither an event stream nor a completion', async () => {
      server.reply({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: HTML_PAGE });
      const error = await harnessRejection(
        make(server.baseURL, { stream, maxRetries: 0 }).generate({ messages: [{ role: 'user', content: 'Hi' }] }),
      );
      expect(error).toMatchObject({ code: 'invalid-response', retryable: true });
      expect(error.message).toMatch(/HTTP 200/);
      expect(error.message).toContain('text/html; charset=utf-8');
      expect(error.message).toContain('<!DOCTYPE html> <html><head><title>502 Bad Gateway');
      expect(error.message.length).toBeLessThan(600);
    });
  });

  describe('stream: true against a server that answers plain JSON', () => {
    const spec = {
      text: ['Reading it.'],
      toolCalls: [{ id: 'call_j', name: 'read_file', args: ['{"path":"a.txt"}'] }],
      finish: 'tool-calls' as const,
      usage: { input: 7, output: 4 },
    };

    it('generate() reads it as a normal completion', async () => {
      server.reply(wire.reply(spec, false));
      const result = await make(server.baseURL, { stream: true, maxRetries: 0 }).generate({
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(result.message.content).toBe('Reading it.');
      expect(result.message.toolCalls).toEqual([{ id: 'call_j', name: 'read_file', arguments: '{"path":"a.txt"}' }]);
      expect(result).toMatchObject({ finishReason: 'tool-calls', usage: { inputTokens: 7, outputTokens: 4 } });
      expect(server.requests[0]?.body.stream).toBe(true);
    });

    it('stream() yields the same parts a stream would', async () => {
      server.reply(wire.reply(spec, false));
      const parts = await collect(
        make(server.baseURL, { maxRetries: 0 }).stream({ messages: [{ role: 'user', content: 'Hi' }] }),
      );
      expect(parts.slice(0, -1)).toEqual([
        { type: 'text-delta', text: 'Reading it.' },
        { type: 'tool-call-delta', id: 'call_j', name: 'read_file', argumentsDelta: '{"path":"a.txt"}' },
      ]);
      expect(parts.at(-1)).toMatchObject({
        type: 'finish',
        result: { finishReason: 'tool-calls', message: { content: 'Reading it.' } },
      });
    });

    it('and the other way round: an event stream sent to a non-streaming request is read as a stream', async () => {
      server.reply(wire.reply(spec, true));
      const result = await make(server.baseURL, { stream: false, maxRetries: 0 }).generate({
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(result.message.content).toBe('Reading it.');
      expect(result.message.toolCalls).toEqual([{ id: 'call_j', name: 'read_file', arguments: '{"path":"a.txt"}' }]);
    });

    it('also without a content-type, and an error object in it is still the provider error', async () => {
      server.reply({ ...wire.reply(spec, false), headers: {} }, wire.errorInBody());
      const backend = make(server.baseURL, { stream: true, maxRetries: 0 });
      expect((await backend.generate({ messages: [{ role: 'user', content: 'Hi' }] })).message.content).toBe(
        'Reading it.',
      );
      const error = await harnessRejection(backend.generate({ messages: [{ role: 'user', content: 'Hi' }] }));
      expect(error.message).toMatch(/Model failed to produce output/);
    });
  });

  describe('timeouts', () => {
    it('firstByteTimeoutMs: a server that never sends headers, retried once by default', async () => {
      server.reply({ stall: true }, { stall: true }, ok(false));
      const { request, notices } = recordingRequest();
      const error = await harnessRejection(
        make(server.baseURL, { firstByteTimeoutMs: 100, retry: FAST }).generate(request),
      );
      expect(error).toMatchObject({ code: 'timeout', retryable: true });
      expect(error.message).toMatch(/firstByteTimeoutMs \(100 ms\)/);
      expect(notices).toHaveLength(1);
      expect(server.requests).toHaveLength(2);
    });

    it('idleTimeoutMs: a stream that goes silent mid-way', async () => {
      server.reply({ ...wire.partialStream(), hang: true });
      const seen: string[] = [];
      const error = await harnessRejection(
        (async () => {
          for await (const part of make(server.baseURL, { idleTimeoutMs: 100, maxRetries: 0 }).stream({
            messages: [{ role: 'user', content: 'Hi' }],
          })) {
            seen.push(part.type);
          }
        })(),
      );
      expect(error).toMatchObject({ code: 'timeout', retryable: true });
      expect(error.message).toMatch(/idleTimeoutMs \(100 ms\)/);
      expect(seen).toEqual(['text-delta']);
      await server.cancelled;
    });

    it('the total timeoutMs still bounds a stream that keeps trickling', async () => {
      server.reply({ ...wire.partialStream(), hang: true });
      const error = await harnessRejection(
        make(server.baseURL, { stream: true, timeoutMs: 150, maxRetries: 0 }).generate({
          messages: [{ role: 'user', content: 'Hi' }],
        }),
      );
      expect(error.code).toBe('timeout');
      expect(error.message).toMatch(/timeoutMs \(150 ms\)/);
      expect(error.message).not.toMatch(/idleTimeoutMs|firstByteTimeoutMs/);
    });
  });
});
