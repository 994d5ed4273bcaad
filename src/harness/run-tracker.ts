/**
 * The runs of a harness still in flight, and `close()`: abort them, wait for them, then clean up once.
 * @module
 */
import { setMaxListeners } from 'node:events';
import { HarnessError } from '../errors.js';

/** Runs in flight and the harness's closed state. @internal */
export class RunTracker {
  readonly #closing = new AbortController();
  readonly #runs = new Set<Promise<unknown>>();
  #closed: Promise<unknown> | undefined;

  constructor() {
    // Every run in flight listens to the closing signal (and lets go when it ends): a host running more than ten at
    // once is using the harness as designed, not leaking, so Node's leak warning must not fire for it.
    setMaxListeners(0, this.#closing.signal);
  }

  /** Throws `harness-closed` once `close` has been called. */
  assertOpen(): void {
    if (this.#closed) {
      throw new HarnessError(
        'harness-closed',
        'This harness was closed with harness.close() and starts no more runs. Create a new one with createHarness().',
      );
    }
  }

  /** Counts a run as in flight until it settles; returns it unchanged. */
  track<T>(run: Promise<T>): Promise<T> {
    this.#runs.add(run);
    const forget = () => this.#runs.delete(run);
    run.then(forget, forget);
    return run;
  }

  /**
   * A signal for one run that aborts when the caller's does or when the harness closes. `dispose` stops listening
   * to the caller's signal, which may outlive the run.
   */
  signalFor(callerSignal: AbortSignal | undefined): { signal: AbortSignal; dispose: () => void } {
    const controller = new AbortController();
    const abort = () => controller.abort();
    if (callerSignal?.aborted || this.#closing.signal.aborted) abort();
    callerSignal?.addEventListener('abort', abort, { once: true });
    this.#closing.signal.addEventListener('abort', abort, { once: true });
    return {
      signal: controller.signal,
      dispose: () => {
        callerSignal?.removeEventListener('abort', abort);
        this.#closing.signal.removeEventListener('abort', abort);
      },
    };
  }

  /** Refuses new runs, aborts those in flight, waits for every one to settle, then runs `cleanup` (once). */
  close<T>(cleanup: () => Promise<T>): Promise<T> {
    this.#closed ??= (async () => {
      this.#closing.abort();
      await Promise.allSettled([...this.#runs]);
      return cleanup();
    })();
    return this.#closed as Promise<T>;
  }
}
