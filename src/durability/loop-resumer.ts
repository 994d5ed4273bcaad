/**
 * The executor hooks of a durable run: every loop saves its state through the run, and the loop a snapshot stopped
 * in goes on from that state.
 * @module
 */
import type { ExecutorLike, ExecutorRunInput } from '../executor/types.js';
import type { LoopCheckpoint } from './types.js';

/**
 * Wraps a run's executors so that each loop they run gets `onCheckpoint` (saving the loop's state with the run's),
 * and the first loop of the snapshot's purpose and scope gets `resumeFrom`. An executor that ignores the hooks runs
 * its loops from the start, as before.
 * @internal
 */
export class LoopResumer {
  #pending: LoopCheckpoint | undefined;
  readonly #save: (loop: LoopCheckpoint) => Promise<void>;

  constructor(pending: LoopCheckpoint | undefined, save: (loop: LoopCheckpoint) => Promise<void>) {
    this.#pending = pending;
    this.#save = save;
  }

  /** `executor` with the run's hooks added to every loop it runs. */
  wrap(executor: ExecutorLike): ExecutorLike {
    return { run: (input) => executor.run(this.#withHooks(input)) };
  }

  #withHooks(input: ExecutorRunInput): ExecutorRunInput {
    const pending = this.#pending;
    // Loops run one after another: once any loop starts, the saved one can no longer be the next.
    this.#pending = undefined;
    const resumeFrom =
      input.resumeFrom ??
      (pending && pending.purpose === input.purpose && pending.scope === input.scope ? pending : undefined);
    const own = input.onCheckpoint;
    return {
      ...input,
      ...(resumeFrom ? { resumeFrom } : {}),
      onCheckpoint: async (checkpoint) => {
        await this.#save(checkpoint);
        await own?.(checkpoint);
      },
    };
  }
}
