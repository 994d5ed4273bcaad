/**
 * Reading a snapshot's JSON text as untrusted input: its size, nesting and number of objects are bounded before
 * `JSON.parse` sees it (a file of millions of small objects otherwise takes the process's heap), and keys that could
 * reach an object's prototype are refused. Every refusal is a `snapshot-corrupt` error naming where the text came from.
 * @module
 */
import { HarnessError } from '../errors.js';

/**
 * Largest snapshot a store writes or reads: 64 MiB. A snapshot holds bounded dialogues (the memory layer keeps each
 * to its window) and small state; the size of one is in docs/durability.md.
 */
export const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;
/** Deepest nesting of objects and arrays in a snapshot (its own shapes need about ten levels). */
export const MAX_SNAPSHOT_DEPTH = 64;
/** Most objects and arrays in one snapshot (a large one holds tens of thousands). */
export const MAX_SNAPSHOT_CONTAINERS = 1_000_000;

/** Keys whose own property on a parsed object could reach the prototype chain when the object is copied or merged. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x7b, 0x5b]);
const CLOSERS = new Set([0x7d, 0x5d]);

/** The `snapshot-corrupt` error for the snapshot at `where`, saying `what` is wrong with it. @internal */
export function snapshotCorrupt(where: string, what: string, cause?: unknown): HarnessError {
  return new HarnessError(
    'snapshot-corrupt',
    `The run snapshot at ${where} cannot be used: ${what}. Nothing of it was applied. It was cut short, damaged or ` +
      'not written by the harness: restore it from a backup, or delete it and start the run again.',
    cause === undefined ? {} : { cause },
  );
}

/** The `snapshot-corrupt` error of a snapshot larger than {@link MAX_SNAPSHOT_BYTES}. @internal */
export function snapshotTooLarge(where: string, bytes: number, limit = MAX_SNAPSHOT_BYTES): HarnessError {
  return snapshotCorrupt(where, `it is ${bytes} bytes, over the limit of ${limit} bytes (checked before reading it)`);
}

/**
 * Parses the snapshot text `bytes` read from `where`: refuses more than `limit` bytes, nesting deeper than
 * {@link MAX_SNAPSHOT_DEPTH}, more than {@link MAX_SNAPSHOT_CONTAINERS} objects and arrays (all counted in one pass
 * over the bytes, before parsing), text that is not JSON or not a JSON object, and `__proto__` keys, and
 * `constructor` or `prototype` keys holding an object (the shape a prototype-pollution gadget needs; as keys of
 * maps, such as a file named `constructor` among the files written, they hold lists or numbers).
 * @internal
 */
export function parseSnapshotText(bytes: Buffer, where: string, limit = MAX_SNAPSHOT_BYTES): Record<string, unknown> {
  if (bytes.length > limit) throw snapshotTooLarge(where, bytes.length, limit);
  checkNesting(bytes, where);
  return parseCheckedObject(bytes, where);
}

/**
 * Parses one JSON object of text whose nesting and number of objects were already bounded (by
 * {@link checkNesting} over the text it is part of), refusing prototype keys as {@link parseSnapshotText} does.
 * @internal
 */
export function parseCheckedObject(bytes: Buffer, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'), refusePrototypeKeys);
  } catch (error) {
    if (HarnessError.isInstance(error)) throw snapshotCorrupt(where, error.message);
    const reason = error instanceof Error ? error.message : String(error);
    throw snapshotCorrupt(where, `it is not valid JSON (${reason})`, error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw snapshotCorrupt(where, 'it is not a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * One pass over the bytes, outside strings: the depth of nesting and the number of objects and arrays, bounded by
 * {@link MAX_SNAPSHOT_DEPTH} and {@link MAX_SNAPSHOT_CONTAINERS} (over all the JSON texts `bytes` holds, one after
 * the other, as a journal does).
 * @internal
 */
export function checkNesting(bytes: Buffer, where: string): void {
  let depth = 0;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (OPENERS.has(byte)) {
      depth++;
      containers++;
      if (depth > MAX_SNAPSHOT_DEPTH) {
        throw snapshotCorrupt(where, `it nests deeper than ${MAX_SNAPSHOT_DEPTH} levels`);
      }
      if (containers > MAX_SNAPSHOT_CONTAINERS) {
        throw snapshotCorrupt(where, `it holds more than ${MAX_SNAPSHOT_CONTAINERS} objects and arrays`);
      }
    } else if (CLOSERS.has(byte)) {
      depth--;
    }
  }
}

function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (PROTOTYPE_KEYS.has(key) && (key === '__proto__' || isPlainObject(value))) {
    throw new HarnessError('snapshot-corrupt', `it holds a "${key}" key, which the harness never writes`);
  }
  return value;
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
