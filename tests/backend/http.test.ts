import { afterEach, describe, expect, it, vi } from 'vitest';
import { withRetry } from '../../src/backend/http.js';
import { httpError, inBodyError, networkError, retryAfterMs } from '../../src/backend/http-errors.js';
import { HarnessError, ProviderHttpError } from '../../src/errors.js';

const ctx = { provider: 'acme', credentialHint: 'set ACME_KEY or pass the `apiKey` option' };
const retry = { maxRetries: 3, minTimeoutMs: 0, maxTimeoutMs: 0, maxRetryAfterMs: 60_000 };

describe('HTTP error mapping', () => {
  it.each([
    [429, '{"error":{"message":"slow down"}}', 'rate-limited', true],
    [500, 'oops', 'server-error', true],
    [503, '', 'server-error', true],
    [529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', 'server-error', true],
    [401, '{"error":{"message":"bad key"}}', 'authentication', false],
    [403, 'forbidden', 'authentication', false],
    [400, '{"error":{"code":"context_length_exceeded","message":"too long"}}', 'context-length-exceeded', false],
    [400, '{"error":{"message":"This model\'s maximum context length is 8192 tokens"}}', 'context-length-exceeded', false],
    [400, '{"type":"error","error":{"message":"prompt is too long: 201000 tokens > 200000 maximum"}}', 'context-length-exceeded', false],
    [413, '{"error":{"message":"Request has too many tokens"}}', 'context-length-exceeded', false],
    [400, '{"error":{"message":"messages: field required"}}', 'bad-request', false],
    [404, 'model not found', 'not-found', false],
  ])('HTTP %i %s → %s', (status, body, code, retryable) => {
    const error = httpError(status, body, undefined, ctx);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.status).toBe(status);
  });

  it('names the credential fix on 401 and 403', () => {
    expect(httpError(401, '{"error":{"message":"bad key"}}', undefined, ctx).message).toMatch(/bad key.*ACME_KEY/);
    expect(httpError(403, 'forbidden', undefined, ctx).message).toMatch(/HTTP 403\): forbidden\. Fix: set ACME_KEY or pass the `apiKey` option/);
  });

  it('reads Retry-After as seconds, as an HTTP date, as retry-after-ms, and Google retryDelay', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }), '', now)).toBe(3_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }), '', now)).toBe(10_000);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }), '', now)).toBe(250);
    expect(retryAfterMs(undefined, '{"details":[{"retryDelay": "1.5s"}]}', now)).toBe(1_500);
    expect(retryAfterMs(new Headers(), '{}', now)).toBeUndefined();
  });

  it('maps in-stream error objects by type', () => {
    expect(inBodyError({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, ctx)).toMatchObject({ code: 'server-error', retryable: true });
    expect(inBodyError({ error: { message: 'slow', type: 'rate_limit_error' } }, ctx)).toMatchObject({ code: 'rate-limited', retryable: true });
    expect(inBodyError({ error: { message: 'weird' } }, ctx)).toMatchObject({ code: 'invalid-response', retryable: false });
  });

  it('maps socket failures to retryable connection errors', () => {
    const failure = new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
    expect(networkError(failure, ctx, 'http://x')).toMatchObject({ code: 'connection', retryable: true });
    expect(networkError(new Error('something else'), ctx, 'http://x')).toMatchObject({ code: 'internal', retryable: false });
  });
});

describe('withRetry', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const rateLimited = (wait: number) =>
    new ProviderHttpError('rate-limited', 'slow down', { status: 429, body: '', retryAfterMs: wait }, { retryable: true });

  it('waits the Retry-After the server asked for before the next attempt', async () => {
    vi.useFakeTimers();
    let attempts = 0;
    const result = withRetry(
      async () => {
        attempts += 1;
        if (attempts === 1) throw rateLimited(5_000);
        return 'done';
      },
      retry,
      undefined,
    );
    await vi.advanceTimersByTimeAsync(4_999);
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(2);
    await expect(result).resolves.toBe('done');
    expect(attempts).toBe(2);
  });

  it('backs off exponentially when no Retry-After is given', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0);
    let attempts = 0;
    const result = withRetry(
      async () => {
        attempts += 1;
        if (attempts < 3) throw new HarnessError('server-error', 'down', { retryable: true });
        return attempts;
      },
      { ...retry, minTimeoutMs: 100, maxTimeoutMs: 10_000 },
      undefined,
    );
    await vi.advanceTimersByTimeAsync(99);
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(199);
    expect(attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toBe(3);
    vi.restoreAllMocks();
  });

  it('never retries a non-retryable error', async () => {
    let attempts = 0;
    const error = await withRetry(
      async () => {
        attempts += 1;
        throw new HarnessError('bad-request', 'no');
      },
      retry,
      undefined,
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'bad-request' });
    expect(attempts).toBe(1);
  });

  it('stops waiting and reports aborted when the caller aborts during a backoff', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    let attempts = 0;
    const result = withRetry(
      async () => {
        attempts += 1;
        throw rateLimited(30_000);
      },
      retry,
      controller.signal,
    ).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort();
    expect(await result).toMatchObject({ code: 'aborted' });
    expect(attempts).toBe(1);
  });
});
