/**
 * The executor hooks of a durable run: every loop saves its state through the run, the run keeps the latest state of
 * every loop in progress (several when subtasks run in parallel) for each snapshot, and each loop a snapshot stopped
 * in goes on from its saved state.
 * @module
 */
import type { Durability, ExecutorLike, ExecutorRunInput } from '../contracts/executor.js';
import type { LoopCheckpoint } from './types.js';

/**
 * Wraps a run's executors so that each loop they run gets `onCheckpoint` (recording the loop's latest state, then
 * saving the run), and a loop of the purpose and scope of a saved loop gets `resumeFrom` (scopes are unique within a
 * run, so no later loop can take a saved state that is not its own; once a loop of another purpose starts, the saved
 * ones left are dropped, their stage being over). An executor that ignores the hooks runs its
 * loops from the start, as before.
 * @internal
 */
export class LoopResumer {
  /** Saved loops not yet taken up. */
  #pending: LoopCheckpoint[];
  /** The latest state of each loop in progress, by scope; a saved loop not yet taken up counts as in progress. */
  readonly #latest = new Map<string, LoopCheckpoint>();
  readonly #save: (loop: LoopCheckpoint) => Promise<void>;
  readonly #durability: Durability;

  /**
   * @param pending the loops of the snapshot the run goes on from
   * @param save saves the run (with {@link LoopResumer.inProgress}) after a loop's state changed; resolves once stored
   * @param durability how much of each loop waits for its saves (a loop's own `durability` input wins)
   */
  constructor(
    pending: readonly LoopCheckpoint[],
    save: (loop: LoopCheckpoint) => Promise<void>,
    durability: Durability,
  ) {
    this.#pending = [...pending];
    for (const loop of pending) this.#latest.set(loop.scope, loop);
    this.#save = save;
    this.#durability = durability;
  }

  /** The latest state of every loop in progress, in the order they started: what each snapshot carries. */
  inProgress(): LoopCheckpoint[] {
    return [...this.#latest.values()];
  }

  /** `executor` with the run's hooks added to every loop it runs. */
  wrap(executor: ExecutorLike): ExecutorLike {
    return {
      run: async (input) => {
        const loop = { ended: false };
        try {
          return await executor.run(this.#withHooks(input, loop));
        } finally {
          // An ended loop is in the run's state (a record, a deliverable), no longer in its snapshots.
          loop.ended = true;
          this.#latest.delete(input.scope);
        }
      },
    };
  }

  #withHooks(input: ExecutorRunInput, loop: { ended: boolean }): ExecutorRunInput {
    // A loop of another purpose means the stage of the other saved loops is over: none of them can be taken up.
    for (const other of this.#pending) if (other.purpose !== input.purpose) this.#latest.delete(other.scope);
    const saved = this.#pending.find((other) => other.purpose === input.purpose && other.scope === input.scope);
    this.#pending = this.#pending.filter((other) => other !== saved && other.purpose === input.purpose);
    const resumeFrom = input.resumeFrom ?? saved;
    const own = input.onCheckpoint;
    return {
      ...input,
      ...(resumeFrom ? { resumeFrom } : {}),
      durability: input.durability ?? this.#durability,
      onCheckpoint: async (checkpoint) => {
        // A save that lands after its loop returned would bring back a loop that is over.
        if (loop.ended) return;
        this.#latest.set(checkpoint.scope, checkpoint);
        await this.#save(checkpoint);
        await own?.(checkpoint);
      },
    };
  }
}
