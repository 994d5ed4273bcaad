/**
 * Small HTTP helpers shared by the web tools: undici fetch with timeout, abort and error mapping.
 * @internal
 * @module
 */
import type { Dispatcher, Response } from 'undici';
import type { z } from 'zod';
import { HarnessError, ProviderHttpError, type HarnessErrorCode } from '../../../errors.js';
import { describeIssues } from '../../../util/did-you-mean.js';
import { undici } from '../../../util/undici.js';

/** Default per-request timeout of the web tools. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

/** Options of {@link httpFetch}. */
export interface HttpFetchOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  dispatcher?: Dispatcher | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  redirect?: 'follow' | 'manual';
  /** Name used in error messages (`serper`, `visit`, …). */
  label: string;
  /**
   * {@link fetchJson} only: largest response body read; a longer one is abandoned as `invalid-response`.
   * @defaultValue 16 MiB (`DEFAULT_MAX_RESPONSE_BYTES`)
   */
  maxBytes?: number;
}

/** Default bound of a JSON response body (16 MiB): far above any search or metadata page, far below what hurts memory. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** A response plus the helpers to cancel it; `done()` must be called once the body is consumed or abandoned. */
export interface HttpResponse {
  response: Response;
  /** Signal that aborts when the timeout fires or the caller aborts; pass it to body readers. */
  signal: AbortSignal;
  /** Clears the timeout. */
  done(): void;
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Maps an HTTP status to the library's error code. */
export function statusCode(status: number): HarnessErrorCode {
  if (status === 401 || status === 403) return 'authentication';
  if (status === 429) return 'rate-limited';
  if (status >= 500) return 'server-error';
  return 'bad-request';
}

/** Builds the ProviderHttpError for a non-2xx response, reading at most 2 000 characters of its body. */
export async function httpError(label: string, response: Response): Promise<ProviderHttpError> {
  let body = '';
  try {
    body = (await response.text()).slice(0, 2_000);
  } catch {
    // The body is only context for the error; an unreadable one leaves it empty.
  }
  const code = statusCode(response.status);
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  const hint =
    code === 'authentication'
      ? ' Check the API key.'
      : code === 'rate-limited'
        ? ` Rate limited${retryAfterMs === undefined ? '' : `; retry after ${Math.ceil(retryAfterMs / 1000)} s`}.`
        : '';
  const detail = body.replace(/\s+/g, ' ').trim().slice(0, 300);
  return new ProviderHttpError(
    code,
    `${label}: HTTP ${response.status}${detail ? ` (${detail})` : ''}.${hint}`,
    { status: response.status, body, retryAfterMs },
    { retryable: code === 'rate-limited' || code === 'server-error' },
  );
}

/** Fetches with undici, a timeout and the caller's signal; throws HarnessError on timeout, abort or connection failure. */
export async function httpFetch(url: string, options: HttpFetchOptions): Promise<HttpResponse> {
  // Loaded before the clock starts: the first request of a process must not spend its timeout importing undici.
  const { fetch } = await undici();
  const timeout = new AbortController();
  const timer = setTimeout(
    () =>
      timeout.abort(
        new HarnessError('timeout', `${options.label}: no complete response within ${options.timeoutMs} ms.`),
      ),
    options.timeoutMs,
  );
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  const done = (): void => clearTimeout(timer);
  try {
    const response = await fetch(url, {
      method: options.method ?? 'GET',
      headers: options.headers,
      body: options.body,
      signal,
      redirect: options.redirect ?? 'follow',
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    return { response, signal, done };
  } catch (error) {
    done();
    throw abortReason(signal, options.label) ?? toConnectionError(options.label, url, error);
  }
}

/** The HarnessError explaining why `signal` aborted, or undefined when it did not. */
export function abortReason(signal: AbortSignal, label: string): HarnessError | undefined {
  if (!signal.aborted) return undefined;
  const reason: unknown = signal.reason;
  if (HarnessError.isInstance(reason)) return reason;
  return new HarnessError('aborted', `${label}: the request was aborted.`, { cause: reason });
}

function toConnectionError(label: string, url: string, error: unknown): HarnessError {
  if (HarnessError.isInstance(error)) return error;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  return new HarnessError('connection', `${label}: could not reach ${new URL(url).origin} (${message}).`, {
    cause: error,
    retryable: true,
  });
}

/** GET/POST returning parsed JSON; non-2xx and unparseable bodies become HarnessErrors. */
export async function fetchJson(url: string, options: HttpFetchOptions): Promise<unknown> {
  const { response, signal, done } = await httpFetch(url, {
    ...options,
    headers: { accept: 'application/json', ...options.headers },
  });
  try {
    if (!response.ok) throw await httpError(options.label, response);
    const text = await readTextCapped(response, options.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES, options.label);
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      const type = response.headers.get('content-type') ?? 'no Content-Type';
      const start = text.slice(0, 80);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what tells binary data apart
      const shown = /[\ufffd\u0000-\u0008\u000e-\u001f]/.test(start)
        ? 'binary data'
        : `it starts with ${JSON.stringify(start)}`;
      throw new HarnessError(
        'invalid-response',
        `${options.label}: the response is not JSON (${type}; ${shown}). Check the base URL and the API key.`,
        { cause: error },
      );
    }
  } catch (error) {
    throw abortReason(signal, options.label) ?? error;
  } finally {
    done();
  }
}

/** Reads a body as UTF-8 text, cancelling the stream and throwing `invalid-response` once it passes `maxBytes`. */
async function readTextCapped(response: Response, maxBytes: number, label: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  const tooLarge = (): HarnessError =>
    new HarnessError(
      'invalid-response',
      `${label}: the response is larger than ${maxBytes} bytes and was abandoned. Ask for fewer results, or raise maxResponseBytes.`,
    );
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = (await reader.read()) as { done: boolean; value: Uint8Array };
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Joins a base URL and a path without doubling or dropping slashes. */
export function joinUrl(baseURL: string, path: string): string {
  return `${baseURL.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/** Parses options with a zod schema; the first problem becomes `HarnessError('invalid-options')` naming the option. */
export function parseOptions<S extends z.ZodType>(schema: S, value: unknown, label: string): z.output<S> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === 'unrecognized_keys') {
    throw new HarnessError('invalid-options', `${label}: ${describeIssues([issue], { schema }).join('; ')}.`);
  }
  const field = issue?.path.join('.') || 'options';
  throw new HarnessError('invalid-options', `${label}: option "${field}" ${issue?.message ?? 'is invalid'}.`);
}

/** The value as a plain object, or an empty one. */
export function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The value as an array, or an empty one. */
export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The value as a trimmed non-empty string, or undefined. */
export function text(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The value as a finite number, or undefined. */
export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
