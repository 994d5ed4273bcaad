/**
 * Errors thrown by the harness. Check them with `instanceof HarnessError` (or {@link HarnessError.isInstance})
 * and `code`; `instanceof HarnessError` also holds for an error made by another copy of the library (the ESM and
 * the CommonJS build, or a bundled copy).
 * @module
 */

/** Stable error codes; a new code is a minor change, a renamed one a breaking change. */
export type HarnessErrorCode =
  /** An option passed to a constructor or `createHarness` is invalid. */
  | 'invalid-options'
  /** Bad input to a public method (e.g. an empty task). */
  | 'invalid-input'
  /** The provider rejected the credentials (HTTP 401/403). */
  | 'authentication'
  /** HTTP 429. */
  | 'rate-limited'
  /** HTTP 5xx or an overloaded provider. */
  | 'server-error'
  /** The connection failed or was reset. */
  | 'connection'
  /** The request exceeded the model's context window (HTTP 400 context-length). */
  | 'context-length-exceeded'
  /** Any other rejected request (HTTP 4xx). */
  | 'bad-request'
  /** The model or endpoint does not exist (HTTP 404). */
  | 'not-found'
  /** The provider reported an error inside a stream, or sent something unparseable. */
  | 'invalid-response'
  /** A request or run took longer than its timeout. */
  | 'timeout'
  /** The caller aborted through an `AbortSignal`. */
  | 'aborted'
  /** A request cannot fit the context window even after pruning. */
  | 'context-overflow'
  /** A scripted backend received a call its script does not cover. */
  | 'unscripted-call'
  /** A tool registration problem (e.g. a duplicate name). */
  | 'tool-registration'
  /** A tool is missing a required local program (python3, bwrap, …). */
  | 'tool-unavailable'
  /** A path leaves the workspace. */
  | 'path-outside-workspace'
  /** The workspace directory is in use by another run (of this process or another one). */
  | 'workspace-busy'
  /** A write reached a workspace after its run had ended. */
  | 'workspace-closed'
  /** `run()` was called on a harness after `harness.close()`. */
  | 'harness-closed'
  /** A command was refused by the command policy. */
  | 'policy-denied'
  /** A sandboxed command went past a resource limit of the sandbox (memory, the size of `/tmp`). */
  | 'resource-limit'
  /** A model reply could not be parsed even after a re-ask. */
  | 'malformed-reply'
  /** The run used up its iteration budget. */
  | 'budget-exhausted'
  /** The deliverable still had defects after the last repair. */
  | 'verification-failed'
  /**
   * No usable verdict could be obtained (the verify reply stayed malformed, or failed the deliverable without naming a
   * defect, also in a fresh call): the run ends `unverified`, its deliverable kept but unchecked.
   */
  | 'verification-unavailable'
  /** A run ended with an empty deliverable (no answer, no file), e.g. because every subtask failed. */
  | 'nothing-delivered'
  /** The next model call would take the run's cost past `limits.maxCost`. */
  | 'cost-limit'
  /** A run store could not save or load a snapshot (disk full, permission, connection); the last good one is intact. */
  | 'store-failed'
  /** `harness.resume()` found no snapshot for the run id in the store it looked in. */
  | 'run-not-found'
  /** A snapshot was made by another library version, other options or another mode; it was not applied. */
  | 'resume-incompatible'
  /** A snapshot fails its authentication: it was changed, or not written by the harness with this run's key. */
  | 'snapshot-tampered'
  /** A snapshot is cut short, malformed, too large or too deeply nested to be read; it was not applied. */
  | 'snapshot-corrupt'
  /** A subpath export (`horizon-harness/mcp`, `/otel`, `/bullmq`) was used without its optional peer dependency. */
  | 'missing-peer-dependency'
  /** Anything else; the `cause` holds the original error. */
  | 'internal';

const MARK = Symbol.for('horizon-harness.error');

/** Options of every {@link HarnessError}. */
export interface HarnessErrorOptions {
  cause?: unknown;
  retryable?: boolean;
}

/** The one error type of the library: a stable `code`, whether a retry may help, and the original `cause`. */
export class HarnessError extends Error {
  readonly [MARK] = true;
  readonly code: HarnessErrorCode;
  readonly retryable: boolean;

  constructor(code: HarnessErrorCode, message: string, options: HarnessErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }

  /** True for any HarnessError, also one created by another copy of the library. */
  static isInstance(error: unknown): error is HarnessError {
    return typeof error === 'object' && error !== null && MARK in error;
  }

  /**
   * `instanceof HarnessError` recognises every copy's errors by their mark, since a process may load the library
   * twice (ESM and CommonJS); subclasses keep the ordinary prototype check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was called on, a subclass included
    if (this !== HarnessError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return HarnessError.isInstance(value);
  }
}

/** An HTTP error from a provider; carries the status and, when the provider sent one, the retry delay. */
export class ProviderHttpError extends HarnessError {
  readonly status: number;
  readonly retryAfterMs: number | undefined;
  readonly body: string;

  constructor(
    code: HarnessErrorCode,
    message: string,
    details: { status: number; body: string; retryAfterMs?: number | undefined },
    options: HarnessErrorOptions = {},
  ) {
    super(code, message, options);
    this.status = details.status;
    this.body = details.body;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** Raised when a request still exceeds the context window after every reduction. */
export class ContextOverflowError extends HarnessError {
  readonly requestTokens: number;
  readonly budgetTokens: number;

  constructor(message: string, sizes: { requestTokens: number; budgetTokens: number }) {
    super('context-overflow', message);
    this.requestTokens = sizes.requestTokens;
    this.budgetTokens = sizes.budgetTokens;
  }
}

/** Wraps any thrown value as a HarnessError, keeping HarnessErrors as they are. */
export function toHarnessError(error: unknown, fallbackCode: HarnessErrorCode = 'internal'): HarnessError {
  if (HarnessError.isInstance(error)) return error;
  if (error instanceof Error && error.name === 'AbortError') {
    return new HarnessError('aborted', 'The operation was aborted.', { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new HarnessError(fallbackCode, message, { cause: error });
}
