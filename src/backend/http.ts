/**
 * The HTTP plumbing shared by the adapters: one POST with timeout and abort, and retries with p-retry.
 * @module
 * @internal
 */
import pRetry from 'p-retry';
import { fetch, type Dispatcher, type Response } from 'undici';
import { HarnessError, ProviderHttpError, toHarnessError } from '../errors.js';
import { httpError, networkError, type ErrorContext } from './http-errors.js';

/** Backoff settings after option parsing. @internal */
export interface RetrySettings {
  maxRetries: number;
  minTimeoutMs: number;
  maxTimeoutMs: number;
  /** A `Retry-After` longer than this is not waited for: the error is returned instead. */
  maxRetryAfterMs: number;
}

/** Everything one POST needs. @internal */
export interface PostSettings {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  dispatcher: Dispatcher;
  errors: ErrorContext;
}

/**
 * One in-flight request: owns the AbortController that both the per-request timeout and the caller's
 * signal trigger, so either one really cancels the undici request, also while the body is streaming.
 * @internal
 */
export class RequestScope {
  readonly controller = new AbortController();
  private timedOut = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort: () => void;

  constructor(
    private readonly settings: PostSettings,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(this.timeoutError());
    }, settings.timeoutMs);
    this.onCallerAbort = () => this.controller.abort(this.abortedError());
    if (callerSignal?.aborted) this.onCallerAbort();
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /** Maps anything thrown while fetching or reading the body to the HarnessError the caller should see. */
  mapError(error: unknown): HarnessError {
    if (this.timedOut) return this.timeoutError(error);
    if (this.callerSignal?.aborted) return this.abortedError(error);
    return networkError(error, this.settings.errors, this.settings.url);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private timeoutError(cause?: unknown): HarnessError {
    return new HarnessError(
      'timeout',
      `${this.settings.errors.provider} did not answer within ${this.settings.timeoutMs} ms; raise the \`timeoutMs\` option if the model needs longer.`,
      { retryable: true, cause },
    );
  }

  private abortedError(cause?: unknown): HarnessError {
    return new HarnessError('aborted', `The request to ${this.settings.errors.provider} was aborted by the caller.`, { cause });
  }
}

/** An open 2xx response and the scope that must be disposed once its body is read. @internal */
export interface OpenResponse {
  response: Response;
  scope: RequestScope;
}

/** Sends one POST; resolves with the open 2xx response, rejects with a mapped HarnessError otherwise. @internal */
export async function postJson(settings: PostSettings, body: unknown, signal: AbortSignal | undefined): Promise<OpenResponse> {
  const scope = new RequestScope(settings, signal);
  try {
    const response = await fetch(settings.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...settings.headers },
      body: JSON.stringify(body),
      signal: scope.controller.signal,
      dispatcher: settings.dispatcher,
    });
    if (!response.ok) {
      const text = await response.text();
      throw httpError(response.status, text, response.headers as unknown as Headers, settings.errors);
    }
    return { response, scope };
  } catch (error) {
    scope.dispose();
    throw ProviderHttpError.isInstance(error) ? error : scope.mapError(error);
  }
}

/** Reads a whole JSON body under the request's scope. @internal */
export async function readJson(open: OpenResponse, errors: ErrorContext): Promise<unknown> {
  let text: string;
  try {
    text = await open.response.text();
  } catch (error) {
    throw open.scope.mapError(error);
  } finally {
    open.scope.dispose();
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HarnessError('invalid-response', `${errors.provider} sent a body that is not JSON: ${text.slice(0, 200)}`, { cause: error });
  }
}

/** The body of an open response as bytes, with read errors mapped through the scope; disposes the scope at the end. @internal */
export async function* bodyBytes(open: OpenResponse): AsyncGenerator<Uint8Array> {
  const body = open.response.body;
  try {
    if (body === null) return;
    for await (const chunk of body) yield chunk;
  } catch (error) {
    throw open.scope.mapError(error);
  } finally {
    open.scope.dispose();
    // Stopping early (a consumer broke out, or a frame carried an error) must free the socket.
    if (!open.scope.controller.signal.aborted) open.scope.controller.abort();
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

/**
 * Runs `attempt` with exponential backoff and jitter, retrying only errors marked `retryable`,
 * waiting at least the server's `Retry-After` when it sent one, never retrying after the caller aborted.
 * @internal
 */
export async function withRetry<T>(attempt: () => Promise<T>, retry: RetrySettings, signal: AbortSignal | undefined): Promise<T> {
  try {
    return await pRetry(attempt, {
      retries: retry.maxRetries,
      minTimeout: retry.minTimeoutMs,
      maxTimeout: retry.maxTimeoutMs,
      factor: 2,
      randomize: true,
      ...(signal ? { signal } : {}),
      shouldRetry: ({ error }) => {
        if (!HarnessError.isInstance(error) || !error.retryable) return false;
        const wait = (error as Partial<ProviderHttpError>).retryAfterMs;
        return wait === undefined || wait <= retry.maxRetryAfterMs;
      },
      onFailedAttempt: async ({ error, retriesLeft }) => {
        const wait = (error as Partial<ProviderHttpError>).retryAfterMs;
        if (retriesLeft > 0 && HarnessError.isInstance(error) && error.retryable && wait !== undefined && wait <= retry.maxRetryAfterMs) {
          await sleep(wait, signal);
        }
      },
    });
  } catch (error) {
    if (signal?.aborted && !(HarnessError.isInstance(error) && error.code === 'aborted')) {
      return Promise.reject(new HarnessError('aborted', 'The request was aborted by the caller.', { cause: error }));
    }
    throw toHarnessError(error);
  }
}
