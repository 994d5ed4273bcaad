/**
 * The link of one run to its store: builds each snapshot's header, serialises the saves and maps store errors.
 * @module
 */
import { HarnessError, toHarnessError } from '../errors.js';
import type { LoopCheckpoint, OptionsFingerprint, RunCheckpointer, RunSnapshot, RunStore } from './types.js';
import { LatestWriter } from '../util/latest-writer.js';
import type { SnapshotSeal } from './snapshot-seal.js';
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
  /** Seals each snapshot right before it is written (saves collapsed into a newer one are never sealed). */
  seal: SnapshotSeal;
}

type Progress = Parameters<RunCheckpointer['save']>[0];

/**
 * Saves a run's snapshots one at a time, in order. Each save records the state at the time of the call: the mode's
 * state is copied then, and a loop checkpoint is already a copy the loop never changes (its messages are immutable),
 * so later changes of the run's objects never reach the store. While one snapshot is being written, later saves
 * collapse into the newest: a store only ever falls one write behind, and a save resolves once its state, or a newer
 * one, is stored. After a failed save every later save fails too: a run whose store failed must stop, and its last
 * good snapshot stays what the store holds.
 * @internal
 */
export class StoreCheckpointer implements RunCheckpointer {
  readonly #init: CheckpointerInit;
  readonly #writer: LatestWriter<RunSnapshot>;
  #last: Progress | undefined;

  constructor(init: CheckpointerInit) {
    this.#init = init;
    this.#writer = new LatestWriter(async (snapshot) => {
      try {
        await init.store.save(init.runId, init.seal.seal(snapshot));
      } catch (error) {
        throw storeFailed(init.runId, 'save', error);
      }
    });
  }

  save(progress: Progress): Promise<void> {
    if (!this.#writer.failed) this.#last = progress;
    return this.#writer.push(this.#snapshot('running', progress));
  }

  async finish(result: unknown): Promise<void> {
    const progress = this.#last ?? { state: null, used: { iterations: 0, elapsedMs: 0 } };
    const { loops: _loops, ...rest } = progress;
    try {
      await this.#writer.push(this.#snapshot('finished', rest, result));
    } catch (error) {
      this.#init.warn(toHarnessError(error).message);
    }
  }

  idle(): Promise<void> {
    return this.#writer.idle();
  }

  #snapshot(status: RunSnapshot['status'], progress: Progress, result?: unknown): RunSnapshot {
    const i = this.#init;
    return {
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
      used: { ...progress.used },
      // The mode's state is small and changed in place by the run: copied now, as plain JSON.
      state: plainCopy(progress.state),
      ...(progress.loops?.length ? { loops: progress.loops as LoopCheckpoint[] } : {}),
      ...(result === undefined ? {} : { result: plainCopy(result) }),
    };
  }
}

/** A deep copy as plain JSON (undefined when the value is). */
function plainCopy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
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
