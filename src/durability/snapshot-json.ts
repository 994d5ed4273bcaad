/**
 * A run snapshot as UTF-8 JSON, made cheaply: a loop's dialogue is most of a snapshot and changes by a message or two
 * between saves, so each message is encoded once and its bytes reused by every later save, which writes them as they
 * are (no joined copy of the whole dialogue).
 * @module
 */
import type { Message } from '../backend/types.js';
import type { RunSnapshot } from './types.js';

// Messages are never changed once made (the harness replaces them instead), so a message object's JSON never changes.
const messageBytes = new WeakMap<object, Buffer>();
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** The bytes of sealed snapshots, made when they were sealed (see {@link registerChunks}). */
const sealedBytes = new WeakMap<object, Buffer[]>();

/** A random stand-in for a dialogue, drawn once per process: no text of a snapshot can contain it. */
let standIn: string | undefined;

/**
 * The UTF-8 bytes of `JSON.stringify(snapshot)`, exactly, as consecutive chunks: the JSON of each message of a
 * loop's `dialogue` is encoded once per message object and shared by every save. Throws what `JSON.stringify`
 * throws (a value that is not plain JSON).
 */
export function snapshotChunks(snapshot: RunSnapshot): Buffer[] {
  const sealed = sealedBytes.get(snapshot);
  if (sealed) return sealed;
  const loops = snapshot.loops;
  if (!Array.isArray(loops) || !loops.some((loop) => Array.isArray(loop?.dialogue))) {
    return [Buffer.from(JSON.stringify(snapshot), 'utf8')];
  }
  standIn ??= `\u0000dialogue-${process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex')}-`;
  const marks = loops.map((_, index) => `${standIn}${index}`);
  // Each dialogue is left out of the skeleton as its stand-in, then its cached bytes go where that stands.
  const skeleton = JSON.stringify({
    ...snapshot,
    loops: loops.map((loop, index) => (Array.isArray(loop?.dialogue) ? { ...loop, dialogue: marks[index] } : loop)),
  });
  const chunks: Buffer[] = [];
  let copied = 0;
  for (const [index, loop] of loops.entries()) {
    if (!Array.isArray(loop?.dialogue)) continue;
    const quoted = JSON.stringify(marks[index]);
    const at = skeleton.indexOf(quoted, copied);
    chunks.push(Buffer.from(skeleton.slice(copied, at), 'utf8'), ...dialogueChunks(loop.dialogue));
    copied = at + quoted.length;
  }
  chunks.push(Buffer.from(skeleton.slice(copied), 'utf8'));
  return chunks;
}

/**
 * Records `chunks` as the bytes of `snapshot`, which must be exactly those of `JSON.stringify(snapshot)`: the seal
 * splices its `mac` into bytes it already encoded, and the store's save then reuses them. A snapshot object is never
 * changed after it was made, so its bytes never change either.
 * @internal
 */
export function registerChunks(snapshot: RunSnapshot, chunks: Buffer[]): void {
  sealedBytes.set(snapshot, chunks);
}

/** {@link snapshotChunks} joined into one string: for stores that take the JSON text whole. */
export function snapshotJson(snapshot: RunSnapshot): string {
  return Buffer.concat(snapshotChunks(snapshot)).toString('utf8');
}

function dialogueChunks(dialogue: readonly Message[]): Buffer[] {
  const chunks: Buffer[] = [OPEN];
  for (const [index, message] of dialogue.entries()) {
    if (index > 0) chunks.push(COMMA);
    if (typeof message !== 'object' || message === null) {
      chunks.push(Buffer.from(JSON.stringify(message) ?? 'null', 'utf8'));
      continue;
    }
    let bytes = messageBytes.get(message);
    if (bytes === undefined) {
      bytes = Buffer.from(JSON.stringify(message), 'utf8');
      messageBytes.set(message, bytes);
    }
    chunks.push(bytes);
  }
  chunks.push(CLOSE);
  return chunks;
}
