/**
 * Stopping a run: its abort controller, time limit, stop reasons, and how a thrown error becomes a stage failure.
 * @module
 */
import { HarnessError, toHarnessError, type HarnessErrorCode } from '../../errors.js';

/** Why a run stopped before its end; `budget`: a limit of what the run may spend (iterations, or cost). */
export type StopReason = 'aborted' | 'timeout' | 'budget';

/**
 * Backend errors that no retry, attempt or later stage can cure: wrong credentials, a request the provider rejects
 * as malformed, an unknown model or endpoint, and a backend that cannot be reached even after the adapter's own
 * retries. They end the run at once, naming the stage where they happened.
 */
export const FATAL_ERROR_CODES: ReadonlySet<HarnessErrorCode> = new Set<HarnessErrorCode>([
  'authentication',
  'bad-request',
  'not-found',
  'connection',
]);

/** Raised inside a run to end it early; caught by the run itself. */
export class StopRun extends Error {
  constructor(
    readonly reason: StopReason | 'error',
    readonly error: { code: string; message: string },
    readonly stage: string,
  ) {
    super(error.message);
  }
}

/** One run's stop state: its signal for every loop, its clock and its limits. */
export class RunControl {
  /** Aborted when the run stops; every loop and model call of the run gets its signal. */
  readonly controller = new AbortController();
  private reason: StopReason | undefined;
  /** Set when a limit other than the iteration budget stopped the run (see {@link RunControl.stopAtLimit}). */
  private limitError: { code: HarnessErrorCode; message: string } | undefined;
  private readonly startedMono = performance.now();

  /**
   * @param limits the run's limits; its iteration budget is `maxRunIterations` when set (the pipeline's optional cap),
   * else `maxIterations` (managed mode's budget)
   * @param elapsedBeforeMs time the run already used before this process took it up (a resumed run's), counted
   * against `limits.timeoutMs`
   */
  constructor(
    private readonly limits: { timeoutMs: number; maxIterations: number; maxRunIterations?: number | undefined },
    private readonly elapsedBeforeMs = 0,
  ) {}

  /** Why the run stopped, when it did. */
  get stopped(): StopReason | undefined {
    return this.reason;
  }

  /** Watches the caller's signal and the time limit; returns the function that stops watching. */
  watch(signal: AbortSignal | undefined): () => void {
    const onAbort = () => this.stop('aborted');
    if (signal?.aborted) this.stop('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    // setTimeout fires at once for delays beyond 2^31-1 ms, so longer limits are clamped (about 24 days).
    const timer = setTimeout(() => this.stop('timeout'), Math.min(this.timeLeft(), 2 ** 31 - 1));
    return () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
  }

  /** Stops the run (the first reason wins) and aborts everything in flight. */
  stop(reason: StopReason): void {
    if (this.reason) return;
    this.reason = reason;
    if (reason !== 'budget') this.controller.abort(new HarnessError(reason, this.message()));
  }

  /**
   * Stops the run cleanly, like used-up iterations (nothing in flight is aborted; each loop ends at its next model
   * call), for another spending limit, e.g. `cost-limit`; its error becomes the run's. The first stop wins.
   */
  stopAtLimit(error: { code: HarnessErrorCode; message: string }): void {
    if (this.reason) return;
    this.limitError = error;
    this.stop('budget');
  }

  /** Milliseconds the run has left (at least 1). */
  timeLeft(): number {
    const elapsed = this.elapsedBeforeMs + (performance.now() - this.startedMono);
    return Math.max(1, Math.floor(this.limits.timeoutMs - elapsed));
  }

  /** Throws the stop when the run has stopped. */
  check(stage: string): void {
    if (this.reason) throw this.asStop(undefined, stage);
  }

  /** Throws at once when a loop failed for a cause no retry can cure (see {@link FATAL_ERROR_CODES}). */
  failFast(error: { code: HarnessErrorCode; message: string } | undefined, stage: string): void {
    if (error && FATAL_ERROR_CODES.has(error.code)) throw new StopRun('error', error, stage);
  }

  /** Runs a stage call; a stop, abort or timeout becomes the run's stop, any other throw a stage failure. */
  async guard<T>(stage: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw this.asStop(error, stage);
    }
  }

  /** The stop a thrown error means: the run's own stop when it has stopped, else a failure of `stage`. */
  asStop(error: unknown, stage: string): StopRun {
    if (error instanceof StopRun) return error;
    if (this.reason) {
      const code: HarnessErrorCode =
        this.reason === 'budget' ? (this.limitError?.code ?? 'budget-exhausted') : this.reason;
      return new StopRun(this.reason, { code, message: this.message() }, stage);
    }
    const harnessError = toHarnessError(error);
    return new StopRun('error', { code: harnessError.code, message: harnessError.message }, stage);
  }

  /** What the stop means, in words. */
  message(): string {
    switch (this.reason) {
      case 'aborted':
        return 'The run was aborted by its AbortSignal.';
      case 'timeout':
        return `The run exceeded limits.timeoutMs (${this.limits.timeoutMs} ms).`;
      case 'budget':
        if (this.limitError) return this.limitError.message;
        if (this.limits.maxRunIterations !== undefined) {
          return `The run used up limits.maxRunIterations (${this.limits.maxRunIterations} ReAct iterations over all its loops).`;
        }
        return `The run used up limits.maxIterations (${this.limits.maxIterations} ReAct iterations).`;
      default:
        return 'The attempt did not complete.';
    }
  }
}
