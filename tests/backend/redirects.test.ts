import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { harnessRejection } from '../support/rejection.js';
import { ADAPTERS, collect } from './support/adapters.js';
import { startLoopbackServer, type LoopbackServer } from './support/loopback-server.js';

const KEY = 'sk-CANARYredirectKey0123456789abcdef';
const HEADER_SECRET = 'hdr-CANARYredirect9876543210';
const PROMPT = 'PROMPT-CANARY: the plan of the secret project';

describe.each(ADAPTERS)('$name and redirects', ({ make, wire }) => {
  // Two loopback servers on different ports are two origins.
  let endpoint: LoopbackServer;
  let elsewhere: LoopbackServer;
  beforeEach(async () => {
    [endpoint, elsewhere] = await Promise.all([startLoopbackServer(), startLoopbackServer()]);
  });
  afterEach(async () => {
    await Promise.all([endpoint.close(), elsewhere.close()]);
  });
  const options = { apiKey: KEY, headers: { 'x-gateway-token': HEADER_SECRET }, maxRetries: 2 };
  const answer = (text: string) => wire.reply({ text: [text], finish: 'stop', usage: { input: 1, output: 1 } }, false);
  const request = { messages: [{ role: 'user' as const, content: PROMPT }] };

  it.each([307, 308, 301, 302, 303])(
    'a %i to another origin is refused: nothing reaches it, and the error says what to set',
    async (status) => {
      for (const mode of ['generate', 'stream()'] as const) {
        endpoint.reply({ status, headers: { location: `${elsewhere.baseURL}/v1/messages` }, body: 'moved' });
        elsewhere.reply(answer('should never be asked'));
        const backend = make(endpoint.baseURL, options);
        const error = await harnessRejection(
          mode === 'stream()' ? collect(backend.stream(request)) : backend.generate(request),
        );
        expect(error.code, mode).toBe('invalid-options');
        expect(error.retryable).toBe(false);
        expect(error.message).toContain(elsewhere.baseURL);
        expect(error.message).toMatch(/another origin.*set `baseURL`/s);
        expect(elsewhere.requests, mode).toHaveLength(0);
        expect(endpoint.requests, mode).toHaveLength(1);
        endpoint.requests.length = 0;
      }
    },
  );

  it('a 307 within the origin is followed with the same method, body and headers', async () => {
    endpoint.reply({ status: 307, headers: { location: '/moved' }, body: '' });
    endpoint.reply(answer('hello from the new path'));
    const result = await make(endpoint.baseURL, options).generate(request);
    expect(result.message.content).toBe('hello from the new path');
    expect(endpoint.requests).toHaveLength(2);
    expect(endpoint.requests[1]?.path).toBe('/moved');
    expect(JSON.stringify(endpoint.requests[1]?.body)).toContain(PROMPT);
    expect(endpoint.requests[1]?.headers['x-gateway-token']).toBe(HEADER_SECRET);
  });

  it('a redirect loop within the origin ends with an error, not a hang', async () => {
    for (let hop = 0; hop < 10; hop += 1) endpoint.reply({ status: 307, headers: { location: '/again' }, body: '' });
    const error = await harnessRejection(make(endpoint.baseURL, { ...options, maxRetries: 0 }).generate(request));
    expect(error.code).toBe('invalid-options');
    expect(error.message).toMatch(/more than 5 times/);
  });
});
