/**
 * Appending lines in batches, one append at a time.
 * @module
 */

/**
 * Collects lines and appends them in batches: the lines of one turn of the event loop, or all those that came while
 * the previous append was under way, go out in one `append`. Adding a line never waits, so the event log never holds
 * a step back. After a failed append it drops every later line: `onError` hears of the failure once.
 * @internal
 */
export class LineBatcher {
  #pending: string[] = [];
  #draining: Promise<void> | undefined;
  #failed = false;

  constructor(
    private readonly append: (text: string) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Queues `line` for the next batch. */
  add(line: string): void {
    if (this.#failed) return;
    this.#pending.push(line);
    this.#draining ??= this.#drain();
  }

  /** Resolves once every line added so far is appended (or dropped after a failure). Never rejects. */
  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  async #drain(): Promise<void> {
    // The rest of this turn's events join the batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.#pending.length > 0 && !this.#failed) {
        const batch = this.#pending.join('');
        this.#pending = [];
        await this.append(batch);
      }
    } catch (error) {
      this.#failed = true;
      this.#pending = [];
      this.onError(error);
    } finally {
      this.#draining = undefined;
    }
  }
}
