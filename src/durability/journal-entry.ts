/**
 * The run journal's entries: between two snapshots, each save of a run whose store keeps a journal is one line
 * appended to it instead of a whole snapshot written again. An entry holds what changed since the previous save, and
 * names the snapshot it follows by that snapshot's seal; a resume applies the entries of its snapshot in order (see
 * journal-replay.ts).
 * @module
 */
import { z } from 'zod';
import type { Message } from '../backend/types.js';
import { LoopCheckpointSchema, MessageSchema } from './snapshot-schema.js';
import type { LoopCheckpoint, RunSnapshot } from './types.js';

/** Marks a journal line of this shape (and of no other version). */
export const JOURNAL_FORMAT = 1 as const;

/** A loop of the entry whose checkpoint is the one the previous save recorded: only its scope. */
interface UnchangedLoop {
  scope: string;
}

/**
 * A loop whose checkpoint changed: every field but the dialogue, which is given as the number of messages kept from
 * the loop's previous dialogue (0 for a loop new since the previous save, or one whose dialogue was rewritten) and the
 * messages that follow them.
 */
export type ChangedLoop = Omit<LoopCheckpoint, 'dialogue'> & { keep: number; append: Message[] };

/** One journal line before its seal (the seal adds `mac` as its last field). */
export interface JournalEntry {
  journal: typeof JOURNAL_FORMAT;
  /** The seal (`mac`) of the snapshot this entry follows. */
  base: string;
  /** The entry's place after that snapshot: 0, 1, 2, … with none left out. */
  n: number;
  savedAt: number;
  seq: number;
  used: RunSnapshot['used'];
  /** The mode's state, when it changed since the previous save. */
  state?: unknown;
  /** Every loop in progress, in order; a loop missing here has ended. */
  loops: Array<UnchangedLoop | ChangedLoop>;
}

const count = z.number().int().min(0);
const ChangedLoopSchema = LoopCheckpointSchema.omit({ dialogue: true }).extend({
  keep: count,
  append: z.array(MessageSchema),
});

/** The exact shape of an entry, as this version writes them (strict: an unknown field is refused). @internal */
export const JournalEntrySchema = z.strictObject({
  journal: z.literal(JOURNAL_FORMAT),
  base: z.string().regex(/^[0-9a-f]{64}$/),
  n: count,
  savedAt: z.number(),
  seq: count,
  used: z.strictObject({ iterations: count, elapsedMs: z.number().min(0) }),
  state: z.unknown().optional(),
  loops: z.array(z.union([z.strictObject({ scope: z.string() }), ChangedLoopSchema])),
});

/** The JSON text of each snapshot's `state`, as the checkpointer made it: not encoded again to compare. */
const stateTexts = new WeakMap<RunSnapshot, string>();

/** Records `text` as the JSON of `snapshot.state` (the text it was copied from). @internal */
export function recordStateText(snapshot: RunSnapshot, text: string): void {
  stateTexts.set(snapshot, text);
}

function stateTextOf(snapshot: RunSnapshot): string {
  return stateTexts.get(snapshot) ?? JSON.stringify(snapshot.state) ?? '';
}

/** Whether an entry's loop carries a changed checkpoint. */
export function isChanged(loop: UnchangedLoop | ChangedLoop): loop is ChangedLoop {
  return 'keep' in loop;
}

/**
 * What the store holds of a run, as its journal writer knows it: the snapshot the journal follows, and each loop and
 * state as last recorded (the snapshot and the entries after it), so that the next entry holds only what changed.
 * @internal
 */
export class JournalPosition {
  /** The seal of the snapshot the entries follow. */
  readonly base: string;
  /** Entries appended after it. */
  entries = 0;
  /** Bytes of those entries. */
  bytes = 0;
  /** The snapshot's own size: the journal is compacted into a new snapshot once it holds more. */
  readonly snapshotBytes: number;
  /** The checkpoint object of each loop as last recorded, by scope, in the order the loops started. */
  #loops = new Map<string, LoopCheckpoint>();
  #state: string;

  constructor(snapshot: RunSnapshot & { mac: string }, snapshotBytes: number) {
    this.base = snapshot.mac;
    this.snapshotBytes = snapshotBytes;
    for (const loop of snapshot.loops ?? []) this.#loops.set(loop.scope, loop);
    this.#state = stateTextOf(snapshot);
  }

  /**
   * The entry that takes the store from what it holds to `snapshot`, and `appended`, to call once it is stored (as
   * `bytes` bytes); undefined when a loop recorded before has ended since (a stage is over: the run compacts its
   * journal into a new snapshot there).
   */
  next(snapshot: RunSnapshot): { entry: JournalEntry; appended: (bytes: number) => void } | undefined {
    const loops = snapshot.loops ?? [];
    const scopes = new Set(loops.map((loop) => loop.scope));
    for (const scope of this.#loops.keys()) if (!scopes.has(scope)) return undefined;
    const state = stateTextOf(snapshot);
    const entry: JournalEntry = {
      journal: JOURNAL_FORMAT,
      base: this.base,
      n: this.entries,
      savedAt: snapshot.savedAt,
      seq: snapshot.seq,
      used: { ...snapshot.used },
      ...(state === this.#state ? {} : { state: snapshot.state }),
      loops: loops.map((loop) => this.#loopEntry(loop)),
    };
    const appended = (bytes: number) => {
      this.entries += 1;
      this.bytes += bytes;
      this.#state = state;
      this.#loops = new Map(loops.map((loop) => [loop.scope, loop]));
    };
    return { entry, appended };
  }

  #loopEntry(loop: LoopCheckpoint): UnchangedLoop | ChangedLoop {
    const before = this.#loops.get(loop.scope);
    if (before === loop) return { scope: loop.scope };
    const { dialogue, ...rest } = loop;
    // Messages are never changed once made: the dialogue recorded last is kept as far as the same objects go.
    let keep = 0;
    const previous = before?.dialogue ?? [];
    while (keep < previous.length && keep < dialogue.length && previous[keep] === dialogue[keep]) keep += 1;
    return { ...rest, keep, append: dialogue.slice(keep) };
  }
}
