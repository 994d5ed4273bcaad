/**
 * A run snapshot as JSON text, made cheaply: a loop's dialogue is most of a snapshot and changes by a message or two
 * between saves, so each message is serialised once and its text reused by every later save.
 * @module
 */
import type { Message } from '../backend/types.js';
import type { RunSnapshot } from './types.js';

// Messages are never changed once made (the harness replaces them instead), so a message object's JSON never changes.
const messageJson = new WeakMap<object, string>();

/**
 * `JSON.stringify(snapshot)`, byte for byte, with the JSON of each message of a loop's `dialogue` cached by object:
 * the work per save is the new messages and the joining, not the whole dialogue again. Throws what `JSON.stringify`
 * throws (a value that is not plain JSON).
 */
export function snapshotJson(snapshot: RunSnapshot): string {
  const dialogues: Message[][] = [];
  // A random stand-in no text of the snapshot can contain: each dialogue is left out of the skeleton, then spliced in.
  const nonce = `\u0000dialogue-${process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex')}-`;
  const skeleton = JSON.stringify(snapshot, (key, value: unknown) => {
    if (key !== 'dialogue' || !Array.isArray(value)) return value;
    dialogues.push(value as Message[]);
    return `${nonce}${dialogues.length - 1}`;
  });
  if (dialogues.length === 0) return skeleton;
  const quotedNonce = JSON.stringify(nonce).slice(0, -1);
  const stand = new RegExp(`${escapeRegExp(quotedNonce)}(\\d+)"`, 'g');
  return skeleton.replace(stand, (_, index: string) => dialogueJson(dialogues[Number(index)] as Message[]));
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

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
