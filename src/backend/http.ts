/**
 * The HTTP plumbing shared by the adapters: one POST with its timeouts and abort, and the dispatcher that carries
 * the per-request first-byte and idle timeouts.
 * @module
 * @internal
 */
import type { Dispatcher, Response } from 'undici';
import { HarnessError, ProviderHttpError } from '../errors.js';
import { errorCodes, httpError, networkError, type ErrorContext } from './http-errors.js';
import { undici } from '../util/undici.js';
import { displayUrl } from './redact.js';

/** The three timeouts of one request, in ms (`0` turns the first-byte or idle one off). @internal */
export interface RequestTimeouts {
  /** The whole request, body included. */
  timeoutMs: number;
  /** Until the response headers arrive (undici's `headersTimeout`). */
  firstByteTimeoutMs: number;
  /** The longest silence while the body arrives, before its first byte too (undici's `bodyTimeout`). */
  idleTimeoutMs: number;
}

/** Everything one POST needs. @internal */
export interface PostSettings extends RequestTimeouts {
  url: string;
  headers: Record<string, string>;
  /** The dispatcher of every request, made on the first one. */
  dispatcher: () => Promise<Dispatcher>;
  errors: ErrorContext;
}

/**
 * `injected` (or a new undici Agent) with the first-byte and idle timeouts set on every request it dispatches, so
 * they hold for a caller's proxy agent too; undici reports them as `UND_ERR_HEADERS_TIMEOUT` / `UND_ERR_BODY_TIMEOUT`.
 * @internal
 */
export async function timedDispatcher(
  injected: Dispatcher | undefined,
  timeouts: Omit<RequestTimeouts, 'timeoutMs'>,
): Promise<Dispatcher> {
  const base = injected ?? new (await undici()).Agent();
  return base.compose(
    (dispatch) => (options, handler) =>
      dispatch(
        { ...options, headersTimeout: timeouts.firstByteTimeoutMs, bodyTimeout: timeouts.idleTimeoutMs },
        handler,
      ),
  );
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
    const codes = errorCodes(error);
    const { provider } = this.settings.errors;
    if (codes.includes('UND_ERR_HEADERS_TIMEOUT')) {
      return new HarnessError(
        'timeout',
        `${provider} sent no response headers within firstByteTimeoutMs (${this.settings.firstByteTimeoutMs} ms); raise the \`firstByteTimeoutMs\` option if the model needs longer to start (a non-streamed answer arrives whole, so its headers come only at the end: \`stream: true\` helps).`,
        { retryable: true, cause: error },
      );
    }
    if (codes.includes('UND_ERR_BODY_TIMEOUT')) {
      return new HarnessError(
        'timeout',
        `${provider} sent nothing for idleTimeoutMs (${this.settings.idleTimeoutMs} ms) while its response was arriving; raise the \`idleTimeoutMs\` option if the model pauses longer (e.g. long hidden reasoning).`,
        { retryable: true, cause: error },
      );
    }
    return networkError(error, this.settings.errors, displayUrl(this.settings.url));
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private timeoutError(cause?: unknown): HarnessError {
    return new HarnessError(
      'timeout',
      `${this.settings.errors.provider} did not finish answering within timeoutMs (${this.settings.timeoutMs} ms); raise the \`timeoutMs\` option if the model needs longer.`,
      { retryable: true, cause },
    );
  }

  private abortedError(cause?: unknown): HarnessError {
    return new HarnessError('aborted', `The request to ${this.settings.errors.provider} was aborted by the caller.`, {
      cause,
    });
  }
}

/** More same-origin hops than this are a loop, not an endpoint that moved. */
const MAX_REDIRECTS = 5;

/** HTTP statuses that redirect. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Sends `post` to the endpoint and follows a redirect only when it stays on the endpoint's origin and keeps the
 * method and body (307, 308): credentials and the prompt never go to another origin. Any other redirect is refused
 * with an error naming where it pointed and what to set instead.
 */
async function followWithinOrigin(settings: PostSettings, post: (url: string) => Promise<Response>): Promise<Response> {
  const origin = new URL(settings.url).origin;
  let url = settings.url;
  for (let hop = 0; ; hop += 1) {
    const response = await post(url);
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null) return response;
    await response.body?.cancel();
    const target = new URL(location, url);
    const { provider } = settings.errors;
    if (target.origin !== origin) {
      throw new HarnessError(
        'invalid-options',
        `${provider} redirected the request (HTTP ${response.status}) from ${origin} to another origin, ${target.origin}; the harness never sends credentials or prompts across origins. If ${displayUrl(target.href)} is the right endpoint, set \`baseURL\` to it.`,
      );
    }
    if (response.status !== 307 && response.status !== 308) {
      throw new HarnessError(
        'invalid-options',
        `${provider} redirected the request with HTTP ${response.status} to ${displayUrl(target.href)}, which would turn the POST into a GET; set \`baseURL\` to the endpoint the server names.`,
      );
    }
    if (hop >= MAX_REDIRECTS) {
      throw new HarnessError(
        'invalid-options',
        `${provider} redirected the request more than ${MAX_REDIRECTS} times (last to ${displayUrl(target.href)}); set \`baseURL\` to the final endpoint.`,
      );
    }
    url = target.href;
  }
}

/** An open 2xx response and the scope that must be disposed once its body is read. @internal */
export interface OpenResponse {
  response: Response;
  scope: RequestScope;
}

/** Sends one POST; resolves with the open 2xx response, rejects with a mapped HarnessError otherwise. @internal */
export async function postJson(
  settings: PostSettings,
  body: unknown,
  signal: AbortSignal | undefined,
): Promise<OpenResponse> {
  // Loaded before the request's clock starts: the first call of a process must not spend its timeout importing undici.
  const [{ fetch }, dispatcher] = await Promise.all([undici(), settings.dispatcher()]);
  const scope = new RequestScope(settings, signal);
  try {
    const json = JSON.stringify(body);
    const response = await followWithinOrigin(settings, (url) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...settings.headers },
        body: json,
        signal: scope.controller.signal,
        dispatcher,
        // Redirects are judged here: undici would carry `x-api-key`, custom headers and the prompt to any origin.
        redirect: 'manual',
      }),
    );
    if (!response.ok) {
      const text = await response.text();
      throw httpError(response.status, text, response.headers as unknown as Headers, settings.errors);
    }
    return { response, scope };
  } catch (error) {
    scope.dispose();
    throw ProviderHttpError.isInstance(error) || isRefusedRedirect(error) ? error : scope.mapError(error);
  }
}

/** A redirect {@link followWithinOrigin} refused (nothing else in a POST throws 'invalid-options'). */
const isRefusedRedirect = (error: unknown): boolean =>
  HarnessError.isInstance(error) && error.code === 'invalid-options';

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
