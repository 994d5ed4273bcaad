import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HarnessError } from '../../src/errors.js';
import { harnessRejection } from '../support/rejection.js';
import { ADAPTERS, collect, recordingRequest, type SharedOptions } from './support/adapters.js';
import { startLoopbackServer, type LoopbackServer } from './support/loopback-server.js';

const KEY = 'sk-CANARYkey0123456789abcdefABCDEF0123456789';
const HEADER_SECRET = 'hdr-CANARYsecret9876543210zyxwvu';
const CANARIES = [KEY, HEADER_SECRET, 'CANARYkey0123456789', 'CANARYsecret98765'];
const FAST = { minTimeoutMs: 1, maxTimeoutMs: 2 };

/** Every way an error can be looked at: message, stack, each cause (message and stack), inspect with hidden fields, JSON. */
function sinksOf(error: HarnessError): string[] {
  const sinks = [
    error.message,
    String(error.stack),
    inspect(error, { depth: Infinity, showHidden: true }),
    JSON.stringify(error),
  ];
  let cause: unknown = error.cause;
  for (let depth = 0; cause !== undefined && depth < 10; depth += 1) {
    sinks.push(inspect(cause, { depth: Infinity, showHidden: true }));
    if (cause instanceof Error) sinks.push(cause.message, String(cause.stack));
    cause = (cause as { cause?: unknown }).cause;
  }
  return sinks;
}

function expectNoCanary(sinks: string[], canaries: readonly string[] = CANARIES): void {
  for (const sink of sinks) for (const canary of canaries) expect(sink).not.toContain(canary);
}

describe.each(ADAPTERS)('$name never lets its credentials out', ({ make, wire }) => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => {
    await server.close();
  });
  const secretOptions: SharedOptions = { apiKey: KEY, headers: { 'x-gateway-api-key': HEADER_SECRET }, retry: FAST };
  const echo = `Incorrect API key provided: ${KEY}. Gateway key ${HEADER_SECRET}. Key starts ${KEY.slice(0, 20)}`;

  it.each([
    [
      'a 401 echoing the key',
      () => ({ status: 401, body: JSON.stringify({ error: { message: echo, type: 'invalid_request_error' } }) }),
    ],
    [
      'an HTML 500 page holding the key',
      () => ({
        status: 500,
        headers: { 'content-type': 'text/html' },
        body: `<html><body><pre>${echo}</pre></body></html>`,
      }),
    ],
    [
      'an error object in a 200 body',
      () => ({
        status: 200,
        body: JSON.stringify({ type: 'error', error: { message: echo, type: 'invalid_request_error', key: KEY } }),
      }),
    ],
    [
      'an HTML 200 page holding the key',
      () => ({ status: 200, headers: { 'content-type': 'text/html' }, body: `<html>${echo}</html>` }),
    ],
    ['JSON cut off after the key', () => ({ status: 200, body: `{"choices":[{"message":{"content":"${echo}` })],
  ])('%s: error, causes, stack, inspect and retry notices', async (_name, response) => {
    for (const mode of ['generate', 'generate stream', 'stream()'] as const) {
      server.reply(response(), response(), response());
      const { request, notices } = recordingRequest();
      const backend = make(server.baseURL, { ...secretOptions, maxRetries: 2, stream: mode === 'generate stream' });
      const error = await harnessRejection(
        mode === 'stream()' ? collect(backend.stream(request)) : backend.generate(request),
      );
      expect(error.message, mode).toMatch(/\[REDACTED\]/);
      expectNoCanary([...sinksOf(error), JSON.stringify(notices)]);
      server.requests.length = 0;
    }
  });

  it('an error in the middle of a stream', async () => {
    const partial = wire.partialStream();
    server.reply({ ...partial, body: `${partial.body}event: error\ndata: ${echo}\n\n` });
    const error = await harnessRejection(
      collect(
        make(server.baseURL, { ...secretOptions, maxRetries: 0 }).stream({
          messages: [{ role: 'user', content: 'Hi' }],
        }),
      ),
    );
    expectNoCanary(sinksOf(error));
    expect(error.message).toMatch(/\[REDACTED\]/);
  });

  it('an api key undici refuses to send (its TypeError quotes the header value)', async () => {
    const error = await harnessRejection(
      make(server.baseURL, { apiKey: `${KEY.slice(0, 20)}\n${KEY.slice(20)}`, maxRetries: 0 }).generate({
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(error.message).toMatch(/invalid header value/);
    expectNoCanary(sinksOf(error), [KEY.slice(0, 20), KEY.slice(20)]);
  });

  it('JSON.stringify and util.inspect of the backend show no secret', () => {
    const backend = make(server.baseURL, secretOptions);
    const shown = [
      JSON.stringify(backend),
      inspect(backend),
      inspect(backend, { showHidden: true, depth: Infinity }),
      String(Object.keys(backend)),
    ];
    expectNoCanary(shown);
    expect(JSON.parse(JSON.stringify(backend))).toMatchObject({
      provider: expect.any(String),
      modelId: expect.any(String),
      baseURL: expect.stringContaining('127.0.0.1'),
    });
    expect(inspect(backend)).toMatch(/Backend \{/);
  });
});
