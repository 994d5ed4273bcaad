/**
 * Writes values one at a time, in order, keeping only the newest while a write is in progress: for state saved often
 * where each save replaces the one before (snapshots), so a slow store falls at most one write behind.
 * @module
 */

/**
 * Hands each value to `write`, never two writes at once. Values given while a write is in progress collapse into the
 * newest, written next; the promise of every value resolves once it, or a newer value, is written. After a write
 * rejects, every later value rejects with that error without being written: nothing newer is recorded over a gap.
 * @internal
 */
export class LatestWriter<T> {
  /** The write in progress (settled when none is). */
  #writing: Promise<void> = Promise.resolve();
  /** The write that will take {@link LatestWriter.#pending}, queued behind the one in progress. */
  #next: Promise<void> | undefined;
  #pending: { value: T } | undefined;
  #failure: { error: unknown } | undefined;
  #closed = false;

  constructor(private readonly write: (value: T) => Promise<void>) {}

  /** Whether a write has failed (every later value is then refused). */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  /** Settles (never rejects) once every value given so far is written or refused. */
  idle(): Promise<void> {
    return this.#writing;
  }

  /**
   * Writes nothing more: a value waiting behind the write in progress is dropped, and later ones are ignored (their
   * promises resolve). The write in progress, if any, still ends.
   */
  close(): void {
    this.#closed = true;
  }

  /** Queues `value`; resolves once it (or a newer value) is written, rejects with the failed write's error. */
  push(value: T): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure.error);
    this.#pending = { value };
    if (this.#next) return this.#next;
    const next = this.#writing.then(() => {
      // From here on, a value starts the write after this one.
      this.#next = undefined;
      const newest = this.#pending as { value: T };
      this.#pending = undefined;
      return this.#writeOne(newest.value);
    });
    this.#next = next;
    this.#writing = next.catch(() => undefined);
    return next;
  }

  async #writeOne(value: T): Promise<void> {
    if (this.#failure) throw this.#failure.error;
    if (this.#closed) return;
    try {
      await this.write(value);
    } catch (error) {
      this.#failure = { error };
      throw error;
    }
  }
}
