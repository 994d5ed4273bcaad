/**
 * The one place an HTTP adapter keeps its endpoint and credentials: it sends a body with retries, reports each retry
 * to the request, and redacts the credentials from every error it lets out. Secrets live in private fields and the
 * object prints without them.
 * @module
 * @internal
 */
import type { Dispatcher } from 'undici';
import { toHarnessError, type HarnessError } from '../errors.js';
import { postJson, timedDispatcher, type OpenResponse, type PostSettings, type RequestTimeouts } from './http.js';
import type { ErrorContext } from './http-errors.js';
import { Redactor } from '../util/redact.js';
import { declareSecrets } from '../util/secrets.js';
import { credentialSecrets, displayUrl } from './redact.js';
import { withRetry, type RetrySettings } from './retry.js';
import type { GenerateRequest } from './types.js';

// Not imported by name: an ESM import of node:util reads every export, which loads its argument parser and MIME module.
const { inspect } = process.getBuiltinModule('node:util');

/** What a transport is built from. @internal */
export interface HttpTransportInput extends RequestTimeouts {
  url: string;
  /** Every request header, credentials included. */
  headers: Record<string, string>;
  /** The api key, also when it is sent inside a header value. */
  apiKey?: string | undefined;
  /** The backend the credentials belong to: they are declared as its secrets, for the harness's redaction. */
  owner: object;
  dispatcher?: Dispatcher | undefined;
  retry: RetrySettings;
  errors: ErrorContext;
}

/** An adapter's POST endpoint with its credentials; see the module comment. @internal */
export class HttpTransport {
  readonly errors: ErrorContext;
  /** The endpoint without user, password or query string. */
  readonly url: string;
  readonly #post: PostSettings;
  readonly #retry: RetrySettings;
  readonly #redactor: Redactor;

  constructor(input: HttpTransportInput) {
    const { url, headers, apiKey, dispatcher, retry, errors, owner, ...timeouts } = input;
    this.errors = errors;
    this.url = displayUrl(url);
    this.#retry = retry;
    const secrets = credentialSecrets({ apiKey, headers, url });
    this.#redactor = new Redactor(secrets);
    declareSecrets(owner, () => secrets);
    let timed: Promise<Dispatcher> | undefined;
    const { firstByteTimeoutMs, idleTimeoutMs } = timeouts;
    this.#post = {
      url,
      headers,
      errors,
      ...timeouts,
      dispatcher: () => {
        timed ??= timedDispatcher(dispatcher, { firstByteTimeoutMs, idleTimeoutMs });
        return timed;
      },
    };
  }

  /**
   * POSTs `body` and hands the open 2xx response to `read`, retrying failures of either as the retry settings say and
   * telling `request.onRetry` before each wait. Rejects with a redacted HarnessError.
   */
  send<T>(body: unknown, request: GenerateRequest, read: (open: OpenResponse) => Promise<T>): Promise<T> {
    return withRetry(async () => read(await postJson(this.#post, body, request.signal)), this.#retry, {
      signal: request.signal,
      onRetry: request.onRetry,
      redact: (error) => this.redact(error),
    });
  }

  /** `error` as a HarnessError with the credentials removed from it and from everything it holds. */
  redact(error: unknown): HarnessError {
    return this.#redactor.error(toHarnessError(error));
  }

  toJSON(): { url: string } {
    return { url: this.url };
  }

  [inspect.custom](): string {
    return `HttpTransport { url: '${this.url}' }`;
  }
}

/** How an HTTP backend prints (`toJSON`, `util.inspect`): what identifies it, never a credential. @internal */
export interface BackendView {
  provider: string;
  modelId: string;
  contextWindow: number;
  baseURL: string;
  supportsImages?: boolean;
}

/** The {@link BackendView} of a backend whose base URL (already shown without credentials) is `baseURL`. @internal */
export function backendView(
  backend: { provider: string; modelId: string; contextWindow: number; supportsImages?: boolean | undefined },
  baseURL: string,
): BackendView {
  const { provider, modelId, contextWindow, supportsImages } = backend;
  return { provider, modelId, contextWindow, baseURL, ...(supportsImages !== undefined ? { supportsImages } : {}) };
}
