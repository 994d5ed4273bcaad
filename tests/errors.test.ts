import { describe, expect, it } from 'vitest';
import { ContextOverflowError, HarnessError, ProviderHttpError, toHarnessError } from '../src/errors.js';

describe('HarnessError', () => {
  it('carries code, retryable, cause and its class name', () => {
    const cause = new Error('root');
    const error = new HarnessError('rate-limited', 'slow down', { cause, retryable: true });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: 'rate-limited', retryable: true, message: 'slow down', name: 'HarnessError' });
    expect(error.cause).toBe(cause);
    expect(new HarnessError('internal', 'x').retryable).toBe(false);
  });

  it('instanceof and isInstance recognise an error from another copy of the library', () => {
    // What a second bundled copy produces: a different class with the same registered symbol mark.
    class ForeignHarnessError extends Error {
      readonly code = 'timeout';
    }
    const foreign = Object.assign(new ForeignHarnessError('late'), { [Symbol.for('horizon-harness.error')]: true });
    expect(foreign instanceof HarnessError).toBe(true);
    expect(HarnessError.isInstance(foreign)).toBe(true);
    expect(new Error('plain') instanceof HarnessError).toBe(false);
    expect(HarnessError.isInstance(new Error('plain'))).toBe(false);
    expect(HarnessError.isInstance({ code: 'timeout' })).toBe(false);
    expect(HarnessError.isInstance(null)).toBe(false);
  });

  it('subclasses keep their data and stay HarnessErrors', () => {
    const http = new ProviderHttpError(
      'server-error',
      'boom',
      { status: 503, body: 'x', retryAfterMs: 200 },
      { retryable: true },
    );
    expect(HarnessError.isInstance(http)).toBe(true);
    expect(http instanceof HarnessError && http instanceof ProviderHttpError).toBe(true);
    expect(new HarnessError('internal', 'x') instanceof ProviderHttpError).toBe(false);
    expect(http).toMatchObject({
      name: 'ProviderHttpError',
      status: 503,
      retryAfterMs: 200,
      body: 'x',
      retryable: true,
    });
    const overflow = new ContextOverflowError('too big', { requestTokens: 10, budgetTokens: 5 });
    expect(overflow).toMatchObject({
      code: 'context-overflow',
      requestTokens: 10,
      budgetTokens: 5,
      name: 'ContextOverflowError',
    });
  });

  it('toHarnessError keeps HarnessErrors, maps AbortError and wraps anything else', () => {
    const own = new HarnessError('timeout', 'late');
    expect(toHarnessError(own)).toBe(own);
    const abort = new DOMException('stop', 'AbortError');
    expect(toHarnessError(abort).code).toBe('aborted');
    const wrapped = toHarnessError(new TypeError('bad'), 'connection');
    expect(wrapped).toMatchObject({ code: 'connection', message: 'bad' });
    expect(wrapped.cause).toBeInstanceOf(TypeError);
    expect(toHarnessError('text').message).toBe('text');
  });
});
