/**
 * Maps HTTP failures, network failures and in-stream error objects to {@link HarnessError}s.
 * @module
 * @internal
 */
import { HarnessError, ProviderHttpError, type HarnessErrorCode } from '../errors.js';
import { UNREACHABLE } from './retry.js';

/** What an adapter tells the error mapper about itself. @internal */
export interface ErrorContext {
  /** Provider name used in messages. */
  provider: string;
  /** How to fix a rejected key, e.g. "set OPENAI_API_KEY or pass the `apiKey` option". */
  credentialHint: string;
}

const CONTEXT_LENGTH_PATTERNS = [
  /context[_ ]length[_ ]exceeded/i,
  /maximum context length/i,
  /context window/i,
  /prompt is too long/i,
  /too many tokens/i,
  /input is too long/i,
  /reduce the length of the messages/i,
];

/** Reads `{ error: { message, type, code } }`, `{ message }`, `[ { error } ]` and plain-text bodies. @internal */
export function describeErrorBody(bodyText: string): { message: string; type?: string; code?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return { message: bodyText.trim().slice(0, 500) };
  }
  if (Array.isArray(parsed)) parsed = parsed[0];
  return describeErrorObject(parsed) ?? { message: bodyText.trim().slice(0, 500) };
}

/** The message/type/code of an error object as providers nest it. @internal */
export function describeErrorObject(value: unknown): { message: string; type?: string; code?: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const inner =
    typeof record.error === 'object' && record.error !== null ? (record.error as Record<string, unknown>) : record;
  const message =
    typeof inner.message === 'string'
      ? inner.message
      : typeof record.error === 'string'
        ? record.error
        : typeof record.message === 'string'
          ? record.message
          : undefined;
  if (message === undefined) return undefined;
  const metadata = inner.metadata as Record<string, unknown> | undefined;
  const upstream = typeof metadata?.raw === 'string' ? ` (${metadata.raw})` : '';
  const result: { message: string; type?: string; code?: string } = { message: message + upstream };
  if (typeof inner.type === 'string') result.type = inner.type;
  else if (typeof inner.status === 'string') result.type = inner.status;
  if (typeof inner.code === 'string' || typeof inner.code === 'number') result.code = String(inner.code);
  return result;
}

function isContextLength(text: string): boolean {
  return CONTEXT_LENGTH_PATTERNS.some((pattern) => pattern.test(text));
}

/** Parses `Retry-After` (seconds or HTTP date), `retry-after-ms`, or a Google `RetryInfo.retryDelay` in the body. @internal */
export function retryAfterMs(
  headers: Headers | undefined,
  bodyText: string,
  now: number = Date.now(),
): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const header = headers?.get('retry-after');
  if (header) {
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(header);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const delay = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(bodyText);
  if (delay?.[1]) return Math.round(Number(delay[1]) * 1000);
  return undefined;
}

/** Turns a non-2xx response into a {@link ProviderHttpError} with a stable code. @internal */
export function httpError(
  status: number,
  bodyText: string,
  headers: Headers | undefined,
  context: ErrorContext,
): ProviderHttpError {
  const described = describeErrorBody(bodyText);
  const detail = described.message || `HTTP ${status}`;
  const details = { status, body: bodyText, retryAfterMs: retryAfterMs(headers, bodyText) };
  const make = (code: HarnessErrorCode, message: string, retryable: boolean) =>
    new ProviderHttpError(code, message, details, { retryable });

  if (status === 401 || status === 403) {
    return make(
      'authentication',
      `${context.provider} rejected the credentials (HTTP ${status}): ${detail}. Fix: ${context.credentialHint}.`,
      false,
    );
  }
  if (status === 429) {
    return make('rate-limited', `${context.provider} is rate-limiting requests (HTTP 429): ${detail}`, true);
  }
  if (status === 408) return make('timeout', `${context.provider} timed out the request (HTTP 408): ${detail}`, true);
  if (status >= 500) {
    return make('server-error', `${context.provider} failed with HTTP ${status}: ${detail}`, true);
  }
  if (isContextLength(`${described.code ?? ''} ${detail}`)) {
    return make(
      'context-length-exceeded',
      `${context.provider} rejected the request as longer than the model's context window (HTTP ${status}): ${detail}`,
      false,
    );
  }
  if (status === 404) {
    return make(
      'not-found',
      `${context.provider} found no such model or endpoint (HTTP 404): ${detail}. Check the model name and the base URL.`,
      false,
    );
  }
  return make('bad-request', `${context.provider} rejected the request (HTTP ${status}): ${detail}`, false);
}

/** Maps an error object found inside a 200 response (a stream frame or a JSON body) to a HarnessError. @internal */
export function inBodyError(value: unknown, context: ErrorContext): HarnessError {
  const described = describeErrorObject(value) ?? { message: JSON.stringify(value).slice(0, 500) };
  const kind = `${described.type ?? ''} ${described.code ?? ''}`.toLowerCase();
  const message = `${context.provider} reported an error inside the response: ${described.message}`;
  if (/overloaded|server_error|api_error|internal|unavailable|529|5\d\d/.test(kind)) {
    return new HarnessError('server-error', message, { retryable: true, cause: value });
  }
  if (/rate_limit|resource_exhausted|429/.test(kind))
    return new HarnessError('rate-limited', message, { retryable: true, cause: value });
  if (isContextLength(`${kind} ${described.message}`))
    return new HarnessError('context-length-exceeded', message, { cause: value });
  return new HarnessError('invalid-response', message, { cause: value });
}

/** Nothing answered at the address: retrying at once cannot help, the configuration (or the server) must change. */
const UNREACHABLE_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing listens on that host and port',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (DNS lookup failed)',
  EAI_NONAME: 'the host name does not resolve',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
  EHOSTDOWN: 'the host is down',
  ENETDOWN: 'the network is down',
  ETIMEDOUT: 'the connection attempt timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection attempt timed out',
  EPROTO: 'the TLS handshake failed: is it http:// or https://?',
  ERR_SSL_WRONG_VERSION_NUMBER: 'the TLS handshake failed: is it http:// or https://?',
  DEPTH_ZERO_SELF_SIGNED_CERT: "the server's TLS certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "the server's TLS certificate chain is self-signed",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the server's TLS certificate cannot be verified",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the server's TLS certificate cannot be verified",
  CERT_HAS_EXPIRED: "the server's TLS certificate has expired",
  ERR_TLS_CERT_ALTNAME_INVALID: "the server's TLS certificate is for another host name",
};

/** The connection broke after it was made: a new attempt may well succeed. */
const BROKEN_CONNECTION_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** The `code`s along an error's `cause` chain (also inside an AggregateError's `errors`). @internal */
export function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  const visit = (current: unknown, depth: number) => {
    if (depth >= 6 || typeof current !== 'object' || current === null) return;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    if (current instanceof AggregateError) for (const inner of current.errors) visit(inner, depth + 1);
    visit((current as { cause?: unknown }).cause, depth + 1);
  };
  visit(error, 0);
  return codes;
}

/**
 * Maps a thrown network error (undici `fetch failed`, `terminated`, socket errors) to a `connection` error: not
 * retryable and marked {@link UNREACHABLE} when nothing answered at `url` (the retry policy still makes a couple of
 * quick attempts), retryable when an established connection broke.
 * @internal
 */
export function networkError(error: unknown, context: ErrorContext, url: string): HarnessError {
  if (HarnessError.isInstance(error)) return error;
  const codes = errorCodes(error);
  const unreachable = codes.find((code) => code in UNREACHABLE_CODES);
  if (unreachable !== undefined) {
    const failure = new HarnessError(
      'connection',
      `Could not connect to ${context.provider} at ${url}: ${unreachable} (${UNREACHABLE_CODES[unreachable]}). Check the \`baseURL\` option (scheme, host, port and path) and that the server is running and reachable from this machine.`,
      { cause: error },
    );
    Object.defineProperty(failure, UNREACHABLE, { value: true });
    return failure;
  }
  const broken = codes.find((code) => BROKEN_CONNECTION_CODES.has(code));
  const isUndiciFailure =
    error instanceof TypeError && /fetch failed|terminated|other side closed/i.test(error.message);
  const reason = broken ?? (error instanceof Error ? error.message : String(error));
  if (broken !== undefined || isUndiciFailure) {
    return new HarnessError('connection', `The connection to ${context.provider} at ${url} broke (${reason}).`, {
      retryable: true,
      cause: error,
    });
  }
  return new HarnessError('internal', `Request to ${context.provider} failed: ${reason}`, { cause: error });
}
