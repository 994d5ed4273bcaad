import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { httpError, inBodyError, networkError, retryAfterMs } from '../../src/backend/http-errors.js';
import { commonFields, parseOptions, retrySettings, RetryOptionsSchema } from '../../src/backend/options.js';
import { freshRetryState, nextRetryDelay, withRetry, type RetrySettings } from '../../src/backend/retry.js';
import { HarnessError, ProviderHttpError } from '../../src/errors.js';

const ctx = { provider: 'acme', credentialHint: 'set ACME_KEY or pass the `apiKey` option' };
const retry: RetrySettings = {
  maxRetries: 3,
  minTimeoutMs: 0,
  maxTimeoutMs: 0,
  maxRetryAfterMs: 60_000,
  maxTotalDelayMs: 600_000,
  connectRetries: 2,
  connectDelayMs: 0,
  timeoutRetries: 1,
};

describe('HTTP error mapping', () => {
  it.each([
    [429, '{"error":{"message":"slow down"}}', 'rate-limited', true],
    [500, 'oops', 'server-error', true],
    [503, '', 'server-error', true],
    [529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', 'server-error', true],
    [401, '{"error":{"message":"bad key"}}', 'authentication', false],
    [403, 'forbidden', 'authentication', false],
    [400, '{"error":{"code":"context_length_exceeded","message":"too long"}}', 'context-length-exceeded', false],
    [
      400,
      '{"error":{"message":"This model\'s maximum context length is 8192 tokens"}}',
      'context-length-exceeded',
      false,
    ],
    [
      400,
      '{"type":"error","error":{"message":"prompt is too long: 201000 tokens > 200000 maximum"}}',
      'context-length-exceeded',
      false,
    ],
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
    expect(httpError(403, 'forbidden', undefined, ctx).message).toMatch(
      /HTTP 403\): forbidden\. Fix: set ACME_KEY or pass the `apiKey` option/,
    );
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
    expect(
      inBodyError({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, ctx),
    ).toMatchObject({ code: 'server-error', retryable: true });
    expect(inBodyError({ error: { message: 'slow', type: 'rate_limit_error' } }, ctx)).toMatchObject({
      code: 'rate-limited',
      retryable: true,
    });
    expect(inBodyError({ error: { message: 'weird' } }, ctx)).toMatchObject({
      code: 'invalid-response',
      retryable: false,
    });
  });

  it('maps a broken connection to a retryable connection error, an unreachable address to a final one', () => {
    const failure = new TypeError('fetch failed', {
      cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    });
    expect(networkError(failure, ctx, 'http://x')).toMatchObject({ code: 'connection', retryable: true });
    const unknownHost = new TypeError('fetch failed', {
      cause: Object.assign(new Error('getaddrinfo ENOTFOUND nope.invalid'), { code: 'ENOTFOUND' }),
    });
    const mapped = networkError(unknownHost, ctx, 'http://nope.invalid/v1');
    expect(mapped).toMatchObject({ code: 'connection', retryable: false });
    expect(mapped.message).toMatch(
      /http:\/\/nope\.invalid\/v1: ENOTFOUND \(the host name does not resolve\)\. Check the `baseURL` option/,
    );
    expect(networkError(new Error('something else'), ctx, 'http://x')).toMatchObject({
      code: 'internal',
      retryable: false,
    });
  });
});

describe('withRetry', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  const rateLimited = (wait: number) =>
    new ProviderHttpError(
      'rate-limited',
      'slow down',
      { status: 429, body: '', retryAfterMs: wait },
      { retryable: true },
    );
  const hooks = (signal?: AbortSignal) => ({ signal, redact: (error: HarnessError) => error });

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
      hooks(),
    );
    await vi.advanceTimersByTimeAsync(4_999);
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(2);
    await expect(result).resolves.toBe('done');
    expect(attempts).toBe(2);
  });

  it('backs off exponentially when no Retry-After is given', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(1);
    let attempts = 0;
    const result = withRetry(
      async () => {
        attempts += 1;
        if (attempts < 3) throw new HarnessError('server-error', 'down', { retryable: true });
        return attempts;
      },
      { ...retry, minTimeoutMs: 100, maxTimeoutMs: 10_000 },
      hooks(),
    );
    await vi.advanceTimersByTimeAsync(99);
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(199);
    expect(attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toBe(3);
  });

  it('never retries a non-retryable error', async () => {
    let attempts = 0;
    const error = await withRetry(
      async () => {
        attempts += 1;
        throw new HarnessError('bad-request', 'no');
      },
      retry,
      hooks(),
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
      hooks(controller.signal),
    ).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort();
    expect(await result).toMatchObject({ code: 'aborted' });
    expect(attempts).toBe(1);
  });
});

describe('the default retry policy', () => {
  const defaults = retrySettings(
    parseOptions('test', z.object({ maxRetries: commonFields.maxRetries, retry: RetryOptionsSchema }), {}),
  );
  const serverError = new HarnessError('server-error', 'HTTP 500', { retryable: true });

  /** Every delay the policy grants for `error` repeated until it says stop, with the jitter at its largest. */
  function delaysFor(error: HarnessError, settings: RetrySettings = defaults): number[] {
    const state = freshRetryState();
    const delays: number[] = [];
    for (
      let delay = nextRetryDelay(error, state, settings, () => 1);
      delay !== undefined;
      delay = nextRetryDelay(error, state, settings, () => 1)
    ) {
      delays.push(delay);
    }
    return delays;
  }

  it('gives an HTTP 500 four retries and at most 15 s of waiting in all', () => {
    expect(delaysFor(serverError)).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it('jitter takes up to half of each delay off, never adds to it', () => {
    const state = freshRetryState();
    expect(nextRetryDelay(serverError, state, defaults, () => 0)).toBe(500);
  });

  it('gives an unreachable address two quick retries, a timeout one', () => {
    const refused = networkError(
      new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      }),
      ctx,
      'http://x',
    );
    expect(delaysFor(refused)).toEqual([250, 500]);
    expect(delaysFor(new HarnessError('timeout', 'silent', { retryable: true }))).toEqual([1_000]);
  });

  it('maxRetries caps the retries of every kind together', () => {
    const state = freshRetryState();
    const settings = { ...defaults, maxRetries: 2 };
    expect(nextRetryDelay(new HarnessError('timeout', 'silent', { retryable: true }), state, settings)).toBeDefined();
    expect(nextRetryDelay(serverError, state, settings)).toBeDefined();
    expect(nextRetryDelay(serverError, state, settings)).toBeUndefined();
  });

  it('honours Retry-After up to maxRetryAfterMs, and stops before maxTotalDelayMs of waiting', () => {
    const limited = (ms: number) =>
      new ProviderHttpError('rate-limited', 'slow', { status: 429, body: '', retryAfterMs: ms }, { retryable: true });
    expect(delaysFor(limited(30_000))).toEqual([30_000, 30_000, 30_000]);
    expect(delaysFor(limited(61_000))).toEqual([]);
    expect(delaysFor(limited(30_000), { ...defaults, maxRetries: 0 })).toEqual([]);
  });
});
