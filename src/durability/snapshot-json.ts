/**
 * A run snapshot as JSON text, made cheaply: a loop's dialogue is most of a snapshot and changes by a message or two
 * between saves, so each message is serialised once and its text reused by every later save.
 * @module
 */
import type { Message } from '../backend/types.js';
import type { RunSnapshot } from './types.js';

// Messages are never changed once made (the harness replaces them instead), so a message object's JSON never changes.
const messageJson = new WeakMap<object, string>();

/** A random stand-in for a dialogue, drawn once per process: no text of a snapshot can contain it. */
let standIn: string | undefined;

/**
 * `JSON.stringify(snapshot)`, byte for byte, with the JSON of each message of a loop's `dialogue` cached by object:
 * the work per save is the new messages and the joining, not the whole dialogue again. Throws what `JSON.stringify`
 * throws (a value that is not plain JSON).
 */
export function snapshotJson(snapshot: RunSnapshot): string {
  const loops = snapshot.loops;
  if (!Array.isArray(loops) || !loops.some((loop) => Array.isArray(loop?.dialogue))) return JSON.stringify(snapshot);
  standIn ??= `\u0000dialogue-${process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex')}-`;
  const marks = loops.map((_, index) => `${standIn}${index}`);
  // Each dialogue is left out of the skeleton as its stand-in, then its cached text is spliced in where that stands.
  const skeleton = JSON.stringify({
    ...snapshot,
    loops: loops.map((loop, index) => (Array.isArray(loop?.dialogue) ? { ...loop, dialogue: marks[index] } : loop)),
  });
  let json = '';
  let copied = 0;
  for (const [index, loop] of loops.entries()) {
    if (!Array.isArray(loop?.dialogue)) continue;
    const quoted = JSON.stringify(marks[index]);
    const at = skeleton.indexOf(quoted, copied);
    json += skeleton.slice(copied, at) + dialogueJson(loop.dialogue);
    copied = at + quoted.length;
  }
  return json + skeleton.slice(copied);
}

function dialogueJson(dialogue: readonly Message[]): string {
  const parts = dialogue.map((message) => {
    if (typeof message !== 'object' || message === null) return JSON.stringify(message) ?? 'null';
    let json = messageJson.get(message);
    if (json === undefined) {
      json = JSON.stringify(message);
      messageJson.set(message, json);
    }
    return json;
  });
  return `[${parts.join(',')}]`;
}
