/**
 * Options fingerprints: the options that change a run's course as flat strings, and their hash. Pure functions.
 * @module
 */
import type { OptionsFingerprint } from './types.js';

/** A fingerprint of `fields`: the fields as given, plus a hash of them in key order. */
export function makeFingerprint(fields: Record<string, string>): OptionsFingerprint {
  const sorted = Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { hash: shortHash(JSON.stringify(sorted)), fields: sorted };
}

/**
 * `value` as dotted fields under `prefix` (`memory.compressAt: "0.9"`): plain objects are walked, everything else is
 * written as JSON. Functions, symbols and undefined are left out: they cannot be compared across processes.
 */
export function flattenFields(
  prefix: string,
  value: unknown,
  into: Record<string, string> = {},
): Record<string, string> {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return into;
  if (isPlainObject(value)) {
    for (const [key, inner] of Object.entries(value)) flattenFields(`${prefix}.${key}`, inner, into);
    return into;
  }
  into[prefix] = JSON.stringify(value);
  return into;
}

/** A short, stable hash of a text (16 hex digits of its SHA-256), e.g. of a prompt override. */
export function shortHash(text: string): string {
  return process.getBuiltinModule('node:crypto').createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** Every field whose value differs between two fingerprints, as `name: saved X, now Y` (absent fields say so). */
export function fingerprintDifferences(saved: OptionsFingerprint, current: OptionsFingerprint): string[] {
  const names = [...new Set([...Object.keys(saved.fields), ...Object.keys(current.fields)])].sort();
  return names.flatMap((name) => {
    const before = saved.fields[name];
    const now = current.fields[name];
    if (before === now) return [];
    return [`${name}: snapshot ${before ?? '(not set)'}, now ${now ?? '(not set)'}`];
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
