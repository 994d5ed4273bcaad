/**
 * Reading a run's journal at resume: the lines appended since its snapshot, read as untrusted input like the snapshot
 * itself. The text is bounded in size, nesting and number of objects before any line is parsed; every complete line
 * must carry the run's journal seal and the exact shape this version writes; the lines that follow the snapshot must
 * come in order with none left out. A last line cut short (a crash in the middle of an append) was never stored and
 * is ignored; sealed lines of an earlier snapshot (a crash between a new snapshot and the journal's reset) are too.
 * @module
 */
import { HarnessError, toHarnessError } from '../errors.js';
import { boundedStoreCall, keepsJournal, storeFailed } from './checkpointer.js';
import { isChanged, type JournalEntry, JournalEntrySchema } from './journal-entry.js';
import {
  checkNesting,
  MAX_SNAPSHOT_BYTES,
  parseCheckedObject,
  snapshotCorrupt,
  snapshotTooLarge,
} from './snapshot-parse.js';
import type { SnapshotSeal } from './snapshot-seal.js';
import type { LoopCheckpoint, RunSnapshot, RunStore } from './types.js';

const NEWLINE = 0x0a;

/** The run's snapshot and what its journal added, and how many entries that was. @internal */
export interface Replayed {
  snapshot: RunSnapshot;
  /** Entries applied (those that follow the snapshot). */
  applied: number;
  /** Whether a last line cut short was ignored. */
  torn: boolean;
}

/**
 * `snapshot` (sealed and checked already) with the entries of the journal `text` applied, the journal read from
 * `where` (for messages). Throws `snapshot-corrupt` for a journal over `limit` bytes, too deep, with a complete line
 * that is not a JSON object or not an entry of this version, and `snapshot-tampered` for a line without the run's
 * journal seal, or entries out of order or with a gap. Nothing of a refused journal is applied.
 * @internal
 */
export function replayJournal(
  snapshot: RunSnapshot,
  text: string,
  where: string,
  seal: SnapshotSeal,
  limit = MAX_SNAPSHOT_BYTES,
): Replayed {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > limit) throw snapshotTooLarge(where, bytes.length, limit);
  checkNesting(bytes, where);
  const entries: JournalEntry[] = [];
  let start = 0;
  let line = 0;
  for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
    line += 1;
    const entry = sealedEntry(bytes.subarray(start, end), `${where}, line ${line}`, seal, snapshot.runId);
    start = end + 1;
    // A sealed entry of an earlier snapshot: this run's own, made void by the snapshot saved after it.
    if (entry.base !== snapshot.mac) continue;
    if (entry.n !== entries.length) {
      throw tampered(
        snapshot.runId,
        `${where}, line ${line}`,
        `entry ${entry.n} comes where entry ${entries.length} belongs: entries were removed, repeated or reordered`,
      );
    }
    entries.push(entry);
  }
  if (entries.length > 0 && snapshot.status === 'finished') {
    throw snapshotCorrupt(
      where,
      'it holds entries after the snapshot of a finished run, which the harness never writes',
    );
  }
  let current = snapshot;
  for (const [index, entry] of entries.entries()) current = applyEntry(current, entry, `${where}, entry ${index}`);
  return { snapshot: current, applied: entries.length, torn: start < bytes.length };
}

/** The complete line `bytes` as an entry: parsed with bounds, its seal checked, then its shape. */
function sealedEntry(bytes: Buffer, where: string, seal: SnapshotSeal, runId: string): JournalEntry {
  const value = parseCheckedObject(bytes, where);
  if (!seal.lineIsSealed(value)) {
    throw tampered(runId, where, typeof value.mac === 'string' ? 'its seal does not match' : 'it has no seal');
  }
  const { mac: _mac, ...bare } = value;
  const parsed = JournalEntrySchema.safeParse(bare);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw snapshotCorrupt(where, `field "${issue?.path.join('.') || '(the entry)'}": ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data as JournalEntry;
}

/** `snapshot` as `entry` changed it. */
function applyEntry(snapshot: RunSnapshot, entry: JournalEntry, where: string): RunSnapshot {
  const before = new Map((snapshot.loops ?? []).map((loop) => [loop.scope, loop]));
  const loops = entry.loops.map((loop): LoopCheckpoint => {
    const previous = before.get(loop.scope);
    if (!isChanged(loop)) {
      if (!previous) throw snapshotCorrupt(where, `it keeps loop "${loop.scope}", which is not in progress`);
      return previous;
    }
    const { keep, append, ...rest } = loop;
    const kept = previous?.dialogue ?? [];
    if (keep > kept.length) {
      throw snapshotCorrupt(where, `it keeps ${keep} messages of loop "${loop.scope}", which has ${kept.length}`);
    }
    return { ...rest, dialogue: [...kept.slice(0, keep), ...append] };
  });
  const { loops: _loops, mac: _mac, ...header } = snapshot;
  return {
    ...header,
    savedAt: entry.savedAt,
    seq: entry.seq,
    used: entry.used,
    ...('state' in entry ? { state: entry.state } : {}),
    ...(loops.length ? { loops } : {}),
  };
}

function tampered(runId: string, where: string, what: string): HarnessError {
  return new HarnessError(
    'snapshot-tampered',
    `The journal of run "${runId}" at ${where} was not written by the harness for this run, or was changed since ` +
      `(${what}). Nothing of the run's state was applied. Code that can write there may have forged it: check what ` +
      'ran in the workspace. If the harness did write it, the resuming process has another key: give it the same ' +
      'snapshotKey (or store) as the process that started the run.',
  );
}

/** Where a store's journal of a run is, for messages: the file store's file, else the store's key, else `fallback`. */
export function journalPlaceOf(store: RunStore, runId: string, fallback: string): string {
  for (const method of ['journalPathOf', 'journalKeyOf'] as const) {
    const placeOf = (store as unknown as Record<string, unknown>)[method];
    if (typeof placeOf === 'function') {
      const place = String(placeOf.call(store, runId));
      return method === 'journalKeyOf' ? `Redis key "${place}"` : place;
    }
  }
  return `the journal in ${fallback}`;
}

/**
 * The checked snapshot `snapshot` of run `runId` with its journal in `store` applied (see {@link replayJournal}): the
 * journal loaded within `bound` (its failure is `store-failed`, its stop the stop's error); `snapshot` as it is when
 * the store keeps no journal or has none of the run.
 * @internal
 */
export async function withJournal(
  snapshot: RunSnapshot,
  store: RunStore,
  seal: SnapshotSeal,
  where: string,
  bound: { timeoutMs: number; signal: AbortSignal },
): Promise<RunSnapshot> {
  if (!keepsJournal(store)) return snapshot;
  const { runId } = snapshot;
  let text: string | undefined;
  try {
    text = await boundedStoreCall(() => store.loadJournal(runId), { runId, operation: 'load', ...bound });
  } catch (error) {
    if (bound.signal.aborted) throw toHarnessError(error);
    if (HarnessError.isInstance(error) && error.code === 'snapshot-corrupt') throw error;
    throw storeFailed(runId, 'load', error);
  }
  if (text === undefined || text === null) return snapshot;
  if (typeof text !== 'string') throw snapshotCorrupt(where, 'the store returned a journal that is not text');
  return replayJournal(snapshot, text, where, seal).snapshot;
}
