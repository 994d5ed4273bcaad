/**
 * When and how long the HTTP adapters wait before sending a failed request again, and the loop that does it.
 * @module
 * @internal
 */
import { HarnessError, toHarnessError } from '../errors.js';
import type { RetryNotice } from './types.js';

/** Retry settings after option parsing (see `RetryOptionsSchema` for each field's meaning). @internal */
export interface RetrySettings {
  maxRetries: number;
  minTimeoutMs: number;
  maxTimeoutMs: number;
  maxRetryAfterMs: number;
  maxTotalDelayMs: number;
  connectRetries: number;
  connectDelayMs: number;
  timeoutRetries: number;
}

/**
 * How a failure is retried: `unreachable` (nothing answered at that address: a few quick retries), `timeout` (the
 * server went silent: one patient retry), `transient` (429, 5xx, overload, a reset or a garbled 200: patient
 * retries), or `final` (a retry cannot help).
 * @internal
 */
export type FailureKind = 'unreachable' | 'timeout' | 'transient' | 'final';

/** Marks a connection failure where nothing answered at the address (refused, unknown host, no route). @internal */
export const UNREACHABLE = Symbol.for('horizon-harness.unreachable');

/** The retry class of an error. @internal */
export function failureKind(error: HarnessError): FailureKind {
  if ((error as unknown as Record<symbol, unknown>)[UNREACHABLE] === true) return 'unreachable';
  if (!error.retryable) return 'final';
  return error.code === 'timeout' ? 'timeout' : 'transient';
}

/** What the retries of one call have used so far. @internal */
export interface RetryState {
  retries: Record<Exclude<FailureKind, 'final'>, number>;
  waitedMs: number;
}

/** The state of a call that has not retried yet. @internal */
export function freshRetryState(): RetryState {
  return { retries: { unreachable: 0, timeout: 0, transient: 0 }, waitedMs: 0 };
}

/**
 * How long to wait before the next attempt, or `undefined` when the error is to be thrown: after `maxRetries` retries
 * of any kind, after `connectRetries` for an unreachable address, after `timeoutRetries` for a timeout. Quick, doubling delays
 * for an unreachable address; otherwise exponential backoff with jitter (half to all of `minTimeoutMs × 2^n`, at most
 * `maxTimeoutMs`), never shorter than the server's `Retry-After`; and never past `maxTotalDelayMs` of waiting in all.
 * @internal
 */
export function nextRetryDelay(
  error: HarnessError,
  state: RetryState,
  settings: RetrySettings,
  random: () => number = Math.random,
): number | undefined {
  const kind = failureKind(error);
  if (kind === 'final') return undefined;
  const done = state.retries[kind];
  const total = state.retries.unreachable + state.retries.timeout + state.retries.transient;
  const kindLimit =
    kind === 'unreachable'
      ? settings.connectRetries
      : kind === 'timeout'
        ? settings.timeoutRetries
        : Number.POSITIVE_INFINITY;
  if (total >= settings.maxRetries || done >= kindLimit) return undefined;
  let delay: number;
  if (kind === 'unreachable') {
    delay = settings.connectDelayMs * 2 ** done;
  } else {
    const base = Math.min(settings.maxTimeoutMs, settings.minTimeoutMs * 2 ** done);
    delay = Math.round(base * (0.5 + random() / 2));
    const retryAfter = (error as { retryAfterMs?: unknown }).retryAfterMs;
    if (typeof retryAfter === 'number') {
      if (retryAfter > settings.maxRetryAfterMs) return undefined;
      delay = Math.max(delay, retryAfter);
    }
  }
  if (state.waitedMs + delay > settings.maxTotalDelayMs) return undefined;
  state.retries[kind] = done + 1;
  state.waitedMs += delay;
  return delay;
}

/** What {@link withRetry} needs besides the attempt. @internal */
export interface RetryHooks {
  signal?: AbortSignal | undefined;
  /** The request's retry listener; a throwing listener is ignored. */
  onRetry?: ((notice: RetryNotice) => void) | undefined;
  /** Makes an error safe to show (the adapter's credential redaction); applied to every failure, also the last. */
  redact: (error: HarnessError) => HarnessError;
}

/**
 * Runs `attempt` until it succeeds or {@link nextRetryDelay} says stop, telling `onRetry` before each wait. The thrown
 * error is always a redacted HarnessError; after the caller aborted it is `aborted`, and nothing is retried.
 * @internal
 */
export async function withRetry<T>(attempt: () => Promise<T>, settings: RetrySettings, hooks: RetryHooks): Promise<T> {
  const { signal } = hooks;
  const state = freshRetryState();
  for (let number = 1; ; number += 1) {
    try {
      return await attempt();
    } catch (thrown) {
      const error = hooks.redact(asHarnessError(thrown, signal));
      if (signal?.aborted) throw error;
      const delayMs = nextRetryDelay(error, state, settings);
      if (delayMs === undefined) throw error;
      notify(hooks.onRetry, { attempt: number, delayMs, error: { code: error.code, message: error.message } });
      try {
        await sleep(delayMs, signal);
      } catch (abort) {
        throw hooks.redact(
          new HarnessError('aborted', 'The request was aborted by the caller while waiting to retry.', {
            cause: abort,
          }),
        );
      }
    }
  }
}

function asHarnessError(thrown: unknown, signal: AbortSignal | undefined): HarnessError {
  if (signal?.aborted && !(HarnessError.isInstance(thrown) && thrown.code === 'aborted')) {
    return new HarnessError('aborted', 'The request was aborted by the caller.', { cause: thrown });
  }
  return toHarnessError(thrown);
}

function notify(listener: RetryHooks['onRetry'], notice: RetryNotice): void {
  try {
    listener?.(notice);
  } catch {
    // A listener's bug must not fail the model call it observes.
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
