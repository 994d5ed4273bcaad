/**
 * Settling awaited work early when a signal aborts.
 * @module
 * @internal
 */

/**
 * Resolves or rejects like `work`, or rejects with `reason()` as soon as `signal` aborts — also when the work
 * ignores the signal. The work's own later rejection is then swallowed, so it never goes unhandled.
 * @internal
 */
export function raceSignal<T>(work: Promise<T>, signal: AbortSignal | undefined, reason: () => unknown): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(reason());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      reject(reason());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
