/**
 * The link of one run to its store: builds each snapshot's header, serialises the saves, bounds every store operation
 * in time and by the run's stop, and maps store errors.
 * @module
 */
import { HarnessError, toHarnessError } from '../errors.js';
import type { LoopCheckpoint, OptionsFingerprint, RunCheckpointer, RunSnapshot, RunStore } from './types.js';
import { LatestWriter } from '../util/latest-writer.js';
import { JournalPosition, recordStateText } from './journal-entry.js';
import { snapshotChunks } from './snapshot-json.js';
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
  /** How long one save may take before it counts as failed (the `storeTimeoutMs` option). */
  timeoutMs: number;
  /** The run's own signal (its caller's abort, `harness.close()`): see {@link StoreCheckpointer.stopOn}. */
  signal?: AbortSignal | undefined;
  /** Seals each snapshot right before it is written (saves collapsed into a newer one are never sealed). */
  seal: SnapshotSeal;
}

type Progress = Parameters<RunCheckpointer['save']>[0];
type JournalAppend = NonNullable<RunStore['appendJournal']>;

/**
 * The journal is compacted into a new snapshot once it would hold more than this, or more than the snapshot itself
 * if that is larger: small enough for a resume to read at once, large enough to spare a small run most rewrites.
 */
export const JOURNAL_MIN_BYTES = 256 * 1024;

/**
 * Milliseconds a run that was stopped (by `limits.timeoutMs`) waits at most for its finished snapshot: a working store
 * saves it in far less, one that does not answer must not hold the stopped run for `storeTimeoutMs`.
 */
export const STOPPED_RUN_FINISH_MS = 1_000;

/** Whether `store` keeps a journal: it has both journal methods (see {@link RunStore.appendJournal}). @internal */
export function keepsJournal(
  store: RunStore,
): store is RunStore & Required<Pick<RunStore, 'appendJournal' | 'loadJournal'>> {
  return typeof store.appendJournal === 'function' && typeof store.loadJournal === 'function';
}

/**
 * Saves a run's snapshots one at a time, in order: as a line appended to the run's journal when the store keeps one,
 * between whole snapshots (see `#write`). Each save records the state at the time of the call: the mode's
 * state is copied then, and a loop checkpoint is already a copy the loop never changes (its messages are immutable),
 * so later changes of the run's objects never reach the store. While one snapshot is being written, later saves
 * collapse into the newest: a store only ever falls one write behind, and a save resolves once its state, or a newer
 * one, is stored. After a failed save every later save fails too: a run whose store failed must stop, and its last
 * good snapshot stays what the store holds.
 *
 * No save holds the run past its limits: one that has not settled within `timeoutMs` fails, and one still in flight
 * when the run stops (see {@link StoreCheckpointer.stopOn}) is given up on, failing like any other, so nothing is
 * written after it (the store may still complete it: a write a store has begun cannot be called back).
 * @internal
 */
export class StoreCheckpointer implements RunCheckpointer {
  readonly #init: CheckpointerInit;
  readonly #writer: LatestWriter<RunSnapshot>;
  /** Aborted once the run has stopped. */
  readonly #stopped = new AbortController();
  #last: Progress | undefined;
  /** What the store holds when it keeps a journal and has a snapshot of this run's: where the next entry goes. */
  #position: JournalPosition | undefined;

  constructor(init: CheckpointerInit) {
    this.#init = init;
    this.#writer = new LatestWriter(async (snapshot) => {
      try {
        await this.#write(snapshot);
      } catch (error) {
        throw storeFailed(init.runId, 'save', error);
      }
    });
    if (init.signal) this.stopOn(init.signal);
  }

  /**
   * Gives up, once `signal` aborts, on the save in flight or waiting (it rejects with `store-failed` at once, and so
   * does every later one): the run has stopped (abort, `harness.close()`, its time limit) and must not wait for a
   * store that does not answer. With no save in flight, nothing is lost: the finished snapshot is saved as usual.
   */
  stopOn(signal: AbortSignal): void {
    const stop = () => this.#stopped.abort(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
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

  /**
   * Stores `snapshot`: as one entry appended to the run's journal when the store keeps one and the entry belongs
   * there (see `#entryOf`), else as a whole snapshot, which starts the journal afresh.
   */
  async #write(snapshot: RunSnapshot): Promise<void> {
    const { store, runId, seal, timeoutMs } = this.#init;
    // Any save but the finished one ends with the run's stop. The finished snapshot is saved after the run ended:
    // bounded by the store timeout when it ended on its own, by a short grace when a stop (its time limit) ended it,
    // so that a store that does not answer cannot hold a stopped run past its limits by more than that.
    const finished = snapshot.status === 'finished';
    const signal = finished ? undefined : this.#stopped.signal;
    const bound = {
      runId,
      operation: 'save' as const,
      timeoutMs: finished && this.#stopped.signal.aborted ? Math.min(timeoutMs, STOPPED_RUN_FINISH_MS) : timeoutMs,
      signal,
    };
    const append = this.#entryOf(snapshot);
    if (append) {
      await boundedStoreCall(() => (store.appendJournal as JournalAppend)(runId, [append.line]), bound);
      append.appended();
      return;
    }
    const sealed = seal.seal(snapshot) as RunSnapshot & { mac: string };
    // Until the new snapshot is stored, no entry may follow it: a failed save ends the writes anyway.
    this.#position = undefined;
    await boundedStoreCall(() => store.save(runId, sealed), bound);
    if (keepsJournal(store) && sealed.status === 'running') {
      const bytes = snapshotChunks(sealed).reduce((sum, chunk) => sum + chunk.length, 0);
      this.#position = new JournalPosition(sealed, bytes);
    }
  }

  /**
   * The sealed journal line that records `snapshot`, if it is to be appended: the store keeps a journal and holds a
   * snapshot of this run's (written by this checkpointer), no loop ended since (a stage boundary: the journal is
   * compacted into a snapshot there), and the journal stays below the size of its snapshot (at least
   * {@link JOURNAL_MIN_BYTES}), so a resume never reads more than about twice a snapshot.
   */
  #entryOf(snapshot: RunSnapshot): { line: string; appended: () => void } | undefined {
    const position = this.#position;
    if (!position || snapshot.status !== 'running') return undefined;
    const next = position.next(snapshot);
    if (!next) return undefined;
    const line = this.#init.seal.sealLine(next.entry);
    const bytes = Buffer.byteLength(line) + 1;
    if (position.bytes + bytes > Math.max(JOURNAL_MIN_BYTES, position.snapshotBytes)) return undefined;
    return { line, appended: () => next.appended(bytes) };
  }

  #snapshot(status: RunSnapshot['status'], progress: Progress, result?: unknown): RunSnapshot {
    const i = this.#init;
    // The mode's state is small and changed in place by the run: copied now, as plain JSON, whose text the journal
    // compares with the state it recorded last.
    const stateText = JSON.stringify(progress.state);
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
      used: { ...progress.used },
      state: stateText === undefined ? undefined : JSON.parse(stateText),
      ...(progress.loops?.length ? { loops: progress.loops as LoopCheckpoint[] } : {}),
      ...(result === undefined ? {} : { result: plainCopy(result) }),
    };
    recordStateText(snapshot, stateText ?? '');
    return snapshot;
  }
}

/** What bounds one store operation: see {@link boundedStoreCall}. @internal */
export interface StoreCallBound {
  runId: string;
  operation: 'save' | 'load';
  /** The `storeTimeoutMs` option. */
  timeoutMs: number;
  /** The run's stop (or the resume's caller's signal). */
  signal?: AbortSignal | undefined;
}

/**
 * Runs one store operation bounded in time and by `signal`: rejects with `store-failed` once it has not settled within
 * `timeoutMs`, and when `signal` aborts first (a load then rejects with the stop's own error), so a store that stops answering (a stalled Redis whose client queues
 * commands forever, a hung network file system) cannot hold a run or a resume for good. The operation itself is not
 * cancelled (a store cannot take back a write it began); its later outcome is ignored.
 * @internal
 */
export function boundedStoreCall<T>(operation: () => Promise<T>, bound: StoreCallBound): Promise<T> {
  const { runId, timeoutMs, signal } = bound;
  const what = bound.operation === 'save' ? 'saving the snapshot' : 'loading the snapshot';
  if (signal?.aborted) return Promise.reject(stoppedError(runId, bound, signal));
  return new Promise<T>((resolve, reject) => {
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      settle();
      reject(stoppedError(runId, bound, signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      settle();
      reject(
        new HarnessError(
          'store-failed',
          `The store did not finish ${what} of run "${runId}" within storeTimeoutMs (${timeoutMs} ms); it counts as ` +
            'failed (a stalled connection or disk).',
          { retryable: true },
        ),
      );
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    let running: Promise<T>;
    try {
      running = operation();
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}

/**
 * Why an operation ended when `signal` aborted: a save in flight is given up on (`store-failed`, so that nothing is
 * written after it); a load ends with the stop itself (a resume aborted or closed while it loads).
 */
function stoppedError(runId: string, bound: StoreCallBound, signal: AbortSignal): HarnessError {
  const reason = toHarnessError(signal.reason ?? new HarnessError('aborted', 'The operation was aborted.'));
  if (bound.operation === 'load') return reason;
  return new HarnessError(
    'store-failed',
    `The store had not finished saving the snapshot of run "${runId}" when the run stopped (${reason.message}); ` +
      'the save was given up on.',
    { cause: reason },
  );
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
