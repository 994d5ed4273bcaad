/**
 * AI SDK errors as {@link HarnessError}s with the codes the shipped adapters use. Recognised by the AI SDK's own marks
 * (`Symbol.for('vercel.ai.error.AI_…')`), so `@ai-sdk/provider` is never loaded at run time.
 * @module
 * @internal
 */
import { HarnessError, toHarnessError } from '../errors.js';
import { httpError, inBodyError, networkError, type ErrorContext } from '../backend/http-errors.js';

/** Whether `error` is the AI SDK error named `name` (e.g. `AI_APICallError`), by the mark the AI SDK sets on it. */
function isAiSdkError(error: unknown, name: string): error is Error & Record<string, unknown> {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[Symbol.for(`vercel.ai.error.${name}`)] === true
  );
}

/** The fields of the AI SDK's `APICallError` that the mapping reads. */
interface ApiCallErrorFields {
  url?: unknown;
  statusCode?: unknown;
  responseHeaders?: unknown;
  responseBody?: unknown;
}

/**
 * Maps what a model call threw (or an `error` stream part carried) to a HarnessError: an HTTP failure by its status
 * and body as the HTTP adapters do (401/403 `authentication`, 429 `rate-limited` with the `Retry-After` delay, 5xx
 * `server-error`, a too-long prompt `context-length-exceeded`, other 4xx `bad-request`), a failure to connect as
 * `connection`, a missing key as `authentication`, an unparseable answer as a retryable `invalid-response`, a
 * feature the provider lacks as `bad-request`, and anything after the caller aborted as `aborted`.
 * @internal
 */
export function aiSdkError(error: unknown, context: ErrorContext, signal: AbortSignal | undefined): HarnessError {
  if (signal?.aborted) {
    return HarnessError.isInstance(error) && error.code === 'aborted'
      ? error
      : new HarnessError('aborted', 'The request was aborted by the caller.', { cause: error });
  }
  if (HarnessError.isInstance(error)) return error;
  if (isAiSdkError(error, 'AI_APICallError')) return apiCallError(error as ApiCallErrorFields & Error, context);
  if (isAiSdkError(error, 'AI_LoadAPIKeyError')) {
    return new HarnessError(
      'authentication',
      `${context.provider} has no API key: ${error.message} Fix: ${context.credentialHint}.`,
      { cause: error },
    );
  }
  if (
    isAiSdkError(error, 'AI_JSONParseError') ||
    isAiSdkError(error, 'AI_TypeValidationError') ||
    isAiSdkError(error, 'AI_InvalidResponseDataError') ||
    isAiSdkError(error, 'AI_EmptyResponseBodyError') ||
    isAiSdkError(error, 'AI_NoContentGeneratedError')
  ) {
    return unreadable(error, context);
  }
  if (isAiSdkError(error, 'AI_UnsupportedFunctionalityError') || isAiSdkError(error, 'AI_InvalidPromptError')) {
    return new HarnessError('bad-request', `${context.provider} cannot take this request: ${error.message}`, {
      cause: error,
    });
  }
  // Anything else thrown is fetch's own failure (a refused connection, a body cut mid-stream) or a bug.
  if (error instanceof Error && error.name !== 'AbortError') return networkError(error, context, 'its endpoint');
  if (error instanceof Error) return toHarnessError(error);
  // An `error` stream part usually carries the provider's own error object ({ message, type, code }).
  return inBodyError(error, context);
}

function apiCallError(error: ApiCallErrorFields & Error, context: ErrorContext): HarnessError {
  const status = typeof error.statusCode === 'number' ? error.statusCode : undefined;
  const url = typeof error.url === 'string' ? error.url : 'its endpoint';
  // No status: the request never got an answer (the AI SDK wraps fetch's failure as the cause).
  if (status === undefined) return networkError(error.cause ?? error, context, url);
  const body = typeof error.responseBody === 'string' ? error.responseBody : error.message;
  // A 2xx the provider package could not parse (a garbled or cut answer): another attempt may well read.
  if (status >= 200 && status < 300) return unreadable(error, context);
  const headers = new Headers();
  if (typeof error.responseHeaders === 'object' && error.responseHeaders !== null) {
    for (const [name, value] of Object.entries(error.responseHeaders)) {
      if (typeof value === 'string') headers.set(name, value);
    }
  }
  return httpError(status, body, headers, context);
}

function unreadable(error: Error, context: ErrorContext): HarnessError {
  const message = `${context.provider} sent an answer that could not be read: ${error.message}`;
  return new HarnessError('invalid-response', message, { retryable: true, cause: error });
}
