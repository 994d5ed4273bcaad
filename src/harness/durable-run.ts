/**
 * The durable side of a run, as the harness sets it up: which store a run saves to, its checkpointer, event
 * numbering and data mark, and loading the snapshot `harness.resume()` goes on from.
 * @module
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { boundedStoreCall, StoreCheckpointer } from '../durability/checkpointer.js';
import { storeFailed } from '../durability/checkpointer.js';
import { FileRunStore } from '../durability/file-store.js';
import { journalPlaceOf, withJournal } from '../durability/journal-replay.js';
import { assertResumable, type ResumeTarget } from '../durability/snapshot-check.js';
import { snapshotCorrupt } from '../durability/snapshot-parse.js';
import { snapshotShapeProblem } from '../durability/snapshot-schema.js';
import type { SnapshotSeal } from '../durability/snapshot-seal.js';
import type { OptionsFingerprint, RunSnapshot, RunStore } from '../durability/types.js';
import { SNAPSHOT_FORMAT } from '../durability/version.js';
import { HarnessError, toHarnessError } from '../errors.js';
import { runEventSender, type HarnessEvents, type RunEventNumbering } from '../event-bus.js';
import { DataMark } from '../prompts/datamark.js';
import type { ToolRegistry } from '../tools/registry.js';

/** What a run needs to save snapshots and to number its events. @internal */
export interface RunDurability {
  numbering: RunEventNumbering;
  dataMark: DataMark;
  checkpointer: StoreCheckpointer | undefined;
}

/** What {@link runDurability} builds from. @internal */
export interface RunDurabilityInit {
  /** The run's store and the seal of its snapshots; undefined: the run keeps no snapshots. */
  store: { store: RunStore; seal: SnapshotSeal } | undefined;
  runId: string;
  mode: RunSnapshot['mode'];
  fingerprint: OptionsFingerprint;
  input: RunSnapshot['input'];
  workspace: string;
  bus: HarnessEvents;
  now: () => number;
  /** The snapshot a resumed run goes on from. */
  resume?: RunSnapshot | undefined;
  /** The data mark of a new run whose input was already marked with it (a continuing run's); absent: a fresh one. */
  dataMark?: DataMark | undefined;
  /** The `storeTimeoutMs` option: how long one save may take. */
  storeTimeoutMs: number;
  /** The run's signal (its caller's abort, `harness.close()`): a save in flight when it aborts is given up on. */
  signal: AbortSignal;
}

/** The numbering, data mark and checkpointer of one run (a resumed run's go on from its snapshot). @internal */
export function runDurability(init: RunDurabilityInit): RunDurability {
  const numbering: RunEventNumbering = init.resume ? { lastSeq: init.resume.seq, resumed: true } : { lastSeq: 0 };
  const dataMark = init.resume ? new DataMark(init.resume.dataMark) : (init.dataMark ?? DataMark.random());
  if (!init.store) return { numbering, dataMark, checkpointer: undefined };
  // Only for the warning about a finished snapshot that could not be saved, when the run's report is already made.
  const warn = runEventSender(init.bus, init.now, () => undefined, numbering);
  const checkpointer = new StoreCheckpointer({
    store: init.store.store,
    seal: init.store.seal,
    runId: init.runId,
    mode: init.mode,
    fingerprint: init.fingerprint,
    input: init.input,
    workspace: init.workspace,
    dataMark: dataMark.id,
    now: init.now,
    seq: () => numbering.lastSeq,
    warn: (message) => warn({ type: 'run-warning', runId: init.runId, code: 'snapshot-save-failed', message }),
    timeoutMs: init.storeTimeoutMs,
    signal: init.signal,
  });
  return { numbering, dataMark, checkpointer };
}

/**
 * The store a run saves to: the call's, else the harness's (`false`: none), else the file store in its workspace,
 * which needs the workspace to be a local directory: for a Workspace of your own whose root is not one, the run
 * keeps no snapshots and `warning` says so.
 * @internal
 */
export async function storeOfRun(
  given: RunStore | undefined,
  option: RunStore | false | undefined,
  workspaceRoot: string,
): Promise<{ store: RunStore | undefined; warning?: string }> {
  if (given) return { store: given };
  if (option === false) return { store: undefined };
  if (option) return { store: option };
  const local = await stat(workspaceRoot).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (local) return { store: FileRunStore.inWorkspace(workspaceRoot) };
  return {
    store: undefined,
    warning:
      `This run keeps no snapshots and cannot be resumed: its workspace root "${workspaceRoot}" is not a local ` +
      'directory, where the default store would keep them. Pass a `store` to createHarness or to run().',
  };
}

/** Where `harness.resume()` looks for a run's snapshot. @internal */
export interface SnapshotSource {
  store: RunStore;
  /** The place, in words, for a `run-not-found` message. */
  where: string;
}

/**
 * The store `harness.resume()` loads from: the call's, else the harness's, else the file store of the workspace
 * named (by the call, or by the harness's `workspace` directory). Throws `run-not-found` when there is none to look in.
 * @internal
 */
export function resumeSource(
  runId: string,
  given: RunStore | undefined,
  option: RunStore | false | undefined,
  workspace: string | undefined,
): SnapshotSource {
  if (given) return { store: given, where: 'the store passed to resume()' };
  if (option) return { store: option, where: "the harness's store" };
  if (workspace !== undefined) {
    const root = path.resolve(workspace);
    return {
      store: FileRunStore.inWorkspace(root),
      where: `the workspace "${root}" (${path.join(root, '.harness', 'run.json')})`,
    };
  }
  const why =
    option === false
      ? 'this harness keeps no snapshots (store: false)'
      : 'the default store keeps snapshots in the run’s workspace (.harness/run.json) and no workspace was given';
  throw new HarnessError(
    'run-not-found',
    `Cannot resume run "${runId}": ${why}. Pass { workspace: "<the run's directory>" }, or the store the run saved ` +
      'to as `store` (of createHarness or of this call).',
  );
}

/** What a loaded snapshot is checked against before a resume uses it. @internal */
export interface SnapshotCheck {
  /** The seal of the run's snapshots. */
  seal: SnapshotSeal;
  /** What the resuming harness is (run, mode, options). */
  target: ResumeTarget;
  /** The harness's tools: they, not the snapshot, say which journaled calls are read-only. */
  registry: ToolRegistry;
}

/**
 * The run's snapshot from `source`, checked as untrusted input: its seal (`snapshot-tampered` unless the harness wrote
 * it with this run's key), its header (`resume-incompatible` for another format, version, mode or options), then its
 * exact shape and the paths in it (`snapshot-corrupt`). Rejects with `run-not-found` when there is none,
 * `store-failed` when the store fails or does not answer within `bound.timeoutMs`, and with the stop's own error
 * (`aborted`) when `bound.signal` aborts first. The read-only flag of each journaled tool call is taken from the harness's
 * tools. Nothing of a refused snapshot is applied.
 * @internal
 */
export async function loadSnapshot(
  runId: string,
  source: SnapshotSource,
  check: SnapshotCheck,
  bound: { timeoutMs: number; signal: AbortSignal },
): Promise<RunSnapshot> {
  let loaded: unknown;
  try {
    loaded = await boundedStoreCall(() => source.store.load(runId), { runId, operation: 'load', ...bound });
  } catch (error) {
    if (bound.signal.aborted) throw toHarnessError(error);
    if (HarnessError.isInstance(error) && error.code === 'snapshot-corrupt') throw error;
    throw storeFailed(runId, 'load', error);
  }
  if (loaded === undefined || loaded === null) {
    throw new HarnessError(
      'run-not-found',
      `Cannot resume run "${runId}": there is no snapshot of it in ${source.where}. Check the run id and where its ` +
        'snapshots were saved (a run started with store: false has none).',
    );
  }
  const where = placeOf(source, runId);
  if (typeof loaded !== 'object' || Array.isArray(loaded)) throw snapshotCorrupt(where, 'it is not a JSON object');
  const raw = loaded as Record<string, unknown>;
  // A snapshot of another format has no seal to check: it is refused for its format alone.
  if (raw.format !== SNAPSHOT_FORMAT) assertResumable(raw, check.target);
  check.seal.check(raw, runId, where);
  assertResumable(raw, check.target);
  const problem = snapshotShapeProblem(raw);
  if (problem) throw snapshotCorrupt(where, problem);
  // The saves since the snapshot, as its store journaled them: checked as strictly, then the whole checked again.
  const journal = journalPlaceOf(source.store, runId, source.where);
  const current = await withJournal(raw, source.store, check.seal, journal, bound);
  const replayed = current === raw ? undefined : snapshotShapeProblem(current);
  if (replayed) throw snapshotCorrupt(journal, replayed);
  return withJournalFlagsOf(current, check.registry);
}

/** Where the run's snapshot is, for messages: the file of a file store, else the store as `resume()` named it. */
function placeOf(source: SnapshotSource, runId: string): string {
  if (source.store instanceof FileRunStore) return source.store.pathOf(runId);
  const keyOf = (source.store as { keyOf?: unknown }).keyOf;
  if (typeof keyOf === 'function') return `key "${String(keyOf.call(source.store, runId))}" of ${source.where}`;
  return source.where;
}

/**
 * The snapshot with each journaled call's `readOnly` flag as the harness's tools have it now (an unknown tool counts
 * as read-only, as when the call was journaled: a call of it runs nothing): a snapshot never decides which calls
 * may be run again.
 */
function withJournalFlagsOf(snapshot: RunSnapshot, registry: ToolRegistry): RunSnapshot {
  if (!snapshot.loops) return snapshot;
  const loops = snapshot.loops.map((loop) => ({
    ...loop,
    toolCalls: loop.toolCalls.map((entry) => ({ ...entry, readOnly: registry.get(entry.toolName)?.readOnly ?? true })),
  }));
  return { ...snapshot, loops };
}
