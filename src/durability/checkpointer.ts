/**
 * The link of one run to its store: builds each snapshot's header, serialises the saves and maps store errors.
 * @module
 */
import { HarnessError, toHarnessError } from '../errors.js';
import type { LoopCheckpoint, OptionsFingerprint, RunCheckpointer, RunSnapshot, RunStore } from './types.js';
import { LIBRARY_VERSION, SNAPSHOT_FORMAT } from './version.js';

/** What a run's checkpointer needs to know about the run. @internal */
export interface CheckpointerInit {
  store: RunStore;
  runId: string;
  mode: RunSnapshot['mode'];
  fingerprint: OptionsFingerprint;
  input: RunSnapshot['input'];
  /** Absolute path of the run's workspace. */
  workspace: string;
  /** The id of the run's data mark. */
  dataMark: string;
  now: () => number;
  /** Number of the last event the run emitted so far. */
  seq: () => number;
  /** Reports a snapshot that could not be saved when nothing can stop any more (the finished one). */
  warn: (message: string) => void;
}

type Progress = Parameters<RunCheckpointer['save']>[0];

/**
 * Saves a run's snapshots one after the other, each a deep copy of the state at the time of the call (so later
 * changes of the run's objects never reach a store that keeps references). After a failed save every later save
 * fails too: a run whose store failed must stop, and its last good snapshot stays what the store holds.
 * @internal
 */
export class StoreCheckpointer implements RunCheckpointer {
  readonly #init: CheckpointerInit;
  #queue: Promise<void> = Promise.resolve();
  #failure: HarnessError | undefined;
  #last: Progress | undefined;

  constructor(init: CheckpointerInit) {
    this.#init = init;
  }

  save(progress: Progress): Promise<void> {
    this.#last = progress;
    return this.#enqueue(this.#snapshot('running', progress));
  }

  async finish(result: unknown): Promise<void> {
    const progress = this.#last ?? { state: null, used: { iterations: 0, elapsedMs: 0 } };
    const { loop: _loop, ...rest } = progress;
    try {
      await this.#enqueue(this.#snapshot('finished', rest, result));
    } catch (error) {
      this.#init.warn(toHarnessError(error).message);
    }
  }

  #snapshot(status: RunSnapshot['status'], progress: Progress, result?: unknown): RunSnapshot {
    const i = this.#init;
    const snapshot: RunSnapshot = {
      format: SNAPSHOT_FORMAT,
      library: LIBRARY_VERSION,
      runId: i.runId,
      mode: i.mode,
      fingerprint: i.fingerprint,
      savedAt: i.now(),
      seq: i.seq(),
      status,
      input: i.input,
      workspace: i.workspace,
      dataMark: i.dataMark,
      used: progress.used,
      state: progress.state,
      ...(progress.loop ? { loop: progress.loop as LoopCheckpoint } : {}),
      ...(result === undefined ? {} : { result }),
    };
    // A copy made now: plain JSON, and immune to the run changing its objects while the store works.
    return JSON.parse(JSON.stringify(snapshot)) as RunSnapshot;
  }

  #enqueue(snapshot: RunSnapshot): Promise<void> {
    const save = this.#queue.then(async () => {
      if (this.#failure) throw this.#failure;
      try {
        await this.#init.store.save(this.#init.runId, snapshot);
      } catch (error) {
        this.#failure = storeFailed(this.#init.runId, 'save', error);
        throw this.#failure;
      }
    });
    this.#queue = save.catch(() => undefined);
    return save;
  }
}

/** The `store-failed` error of a store operation that threw, saying what to do about it. @internal */
export function storeFailed(runId: string, operation: 'save' | 'load', error: unknown): HarnessError {
  const cause = toHarnessError(error);
  // A store's own store-failed already says what failed and where; other errors are worded here.
  const what =
    cause.code === 'store-failed'
      ? cause.message
      : `Could not ${operation} the snapshot of run "${runId}": ${cause.message}.`;
  const todo =
    operation === 'save'
      ? ` The run stopped; its last good snapshot is intact, so harness.resume("${runId}") goes on from there once ` +
        'the store works again (disk space, permissions, connection).'
      : ' Check that the store is reachable and readable.';
  return new HarnessError('store-failed', `${what}${todo}`, { cause: error });
}
