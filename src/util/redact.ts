/**
 * The one redactor: it replaces known secret values, long fragments of credentials and secret-shaped text
 * ({@link SECRET_SHAPES}) in strings, in data (copy-on-write, for events) and in errors (in place, cause chains
 * included). Every place where text leaves the process goes through it.
 * @module
 * @internal
 */
import { REDACTED, redactSecretShapes } from './secret-patterns.js';

export { REDACTED } from './secret-patterns.js';

/** Shorter values are not treated as secrets: replacing them would garble every message and protect nothing. */
const MIN_SECRET_LENGTH = 4;

/** A provider that echoes part of a key (its first or last characters) leaks that part: runs this long are matched. */
const FRAGMENT_LENGTH = 12;

/** How deep the redactor follows an error's causes and fields; deeper ones are dropped rather than kept unredacted. */
const MAX_ERROR_DEPTH = 8;

/** How deep data (an event) may nest; anything deeper is replaced rather than kept unredacted. */
const MAX_DATA_DEPTH = 64;

/**
 * Texts up to this long are remembered with their redaction: an event's keys, ids, names and kinds come back in every
 * event of every run, and redacting each again would run every pattern over it each time.
 */
const MEMO_MAX_LENGTH = 128;
/** The remembered texts are forgotten all at once past this many, so the memo stays small (well under 2 MB). */
const MEMO_MAX_ENTRIES = 2_048;

/** The secrets a {@link Redactor} knows by value. @internal */
export interface RedactorSecrets {
  /** Matched whole and by every run of 12 of their characters (API keys, which providers echo in part). */
  credentials?: Iterable<string>;
  /** Matched whole, also as spelled inside JSON strings and URLs. */
  exact?: Iterable<string>;
}

/** Adds `secret` and its spellings inside a JSON string and a URL to `into`. */
function addSpellings(into: Set<string>, secret: string): void {
  const trimmed = secret.trim();
  if (trimmed.length < MIN_SECRET_LENGTH) return;
  into.add(trimmed);
  into.add(JSON.stringify(trimmed).slice(1, -1));
  into.add(encodeURIComponent(trimmed));
}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * Replaces secrets wherever they appear. Errors are redacted in place (their class, code and fields stay), so a
 * caller's `instanceof` and `code` checks keep working; everything reachable from them is covered. Data is redacted
 * copy-on-write: what holds no secret comes back as the same object.
 * @internal
 */
export class Redactor {
  readonly #secrets: string[];
  /** Every run of {@link FRAGMENT_LENGTH} characters of a credential long enough to have fragments worth matching. */
  readonly #fragments = new Set<string>();

  /** `secrets`: credentials (an iterable is taken as credentials), values matched whole, or both. */
  constructor(secrets: Iterable<string> | RedactorSecrets = {}) {
    const { credentials = [], exact = [] } = isIterable(secrets) ? { credentials: secrets } : secrets;
    const unique = new Set<string>();
    const fragmentSources = new Set<string>();
    for (const secret of credentials) {
      addSpellings(unique, secret);
      addSpellings(fragmentSources, secret);
    }
    for (const secret of exact) addSpellings(unique, secret);
    this.#secrets = [...unique].sort((a, b) => b.length - a.length);
    for (const secret of fragmentSources) {
      if (secret.length < FRAGMENT_LENGTH + 4) continue;
      for (let start = 0; start + FRAGMENT_LENGTH <= secret.length; start += 1)
        this.#fragments.add(secret.slice(start, start + FRAGMENT_LENGTH));
    }
  }

  /** Short texts already redacted, and what they became: the secrets never change for a redactor. */
  readonly #memo = new Map<string, string>();

  /** `text` with every known secret, every long run of a credential's characters and every secret shape replaced. */
  text(text: string): string {
    if (text.length > MEMO_MAX_LENGTH) return this.#redact(text);
    let out = this.#memo.get(text);
    if (out === undefined) {
      out = this.#redact(text);
      if (this.#memo.size >= MEMO_MAX_ENTRIES) this.#memo.clear();
      this.#memo.set(text, out);
    }
    return out;
  }

  #redact(text: string): string {
    let out = text;
    for (const secret of this.#secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    if (this.#fragments.size > 0)
      out = out.replace(/[A-Za-z0-9_\-+/=.~]{12,}/g, (run) => (this.#sharesFragment(run) ? REDACTED : run));
    return redactSecretShapes(out);
  }

  /**
   * `value` with every string in it (keys included) redacted: arrays and plain objects are copied where something
   * changed and returned as they are otherwise; errors are redacted in place; other values are returned as they are.
   */
  data<T>(value: T, depth = 0): T {
    if (typeof value === 'string') return this.text(value) as T;
    if (typeof value !== 'object' || value === null) return value;
    if (value instanceof Error) return this.error(value);
    if (depth >= MAX_DATA_DEPTH) return REDACTED as T;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      value.forEach((item, index) => {
        const redacted = this.data(item, depth + 1);
        if (redacted === item) return;
        copy ??= [...value];
        copy[index] = redacted;
      });
      return (copy ?? value) as T;
    }
    if (!isPlainObject(value)) return value;
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      const redactedKey = this.text(key);
      const redacted = this.data(item, depth + 1);
      if (redactedKey === key && redacted === item) continue;
      copy ??= { ...(value as Record<string, unknown>) };
      if (redactedKey !== key) delete copy[key];
      copy[redactedKey] = redacted;
    }
    return (copy ?? value) as T;
  }

  /**
   * Redacts an error in place: its message, stack and own fields, its `cause` chain and an AggregateError's
   * `errors`. A value that cannot be rewritten is replaced by a redacted copy; the returned error is the one to throw.
   */
  error<E>(error: E, depth = 0): E {
    if (!(error instanceof Error)) return this.#scrub(error, depth) as E;
    if (depth >= MAX_ERROR_DEPTH) return new Error(REDACTED) as E;
    try {
      error.message = this.text(error.message);
      if (typeof error.stack === 'string') error.stack = this.text(error.stack);
      const record = error as unknown as Record<string, unknown>;
      for (const key of Object.keys(record)) record[key] = this.#scrub(record[key], depth + 1);
      if ('cause' in error) error.cause = this.#scrub(error.cause, depth + 1);
      if (error instanceof AggregateError)
        record.errors = error.errors.map((inner: unknown) => this.#scrub(inner, depth + 1));
      return error;
    } catch {
      // A frozen or exotic error: keep only what can be rewritten.
      return new Error(this.text(String(error.message))) as E;
    }
  }

  /**
   * What an error holds, made safe: a deep copy of own enumerable fields with strings redacted and functions
   * dropped; objects of any class become plain copies (a `Headers` or a socket must not keep a credential).
   */
  #scrub(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value !== 'object' || value === null) return typeof value === 'function' ? undefined : value;
    if (value instanceof Error) return this.error(value, depth);
    if (depth >= MAX_ERROR_DEPTH) return REDACTED;
    if (Array.isArray(value)) return value.map((item) => this.#scrub(item, depth + 1));
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[this.text(key)] = this.#scrub(item, depth + 1);
    return copy;
  }

  #sharesFragment(run: string): boolean {
    for (let start = 0; start + FRAGMENT_LENGTH <= run.length; start += 1) {
      if (this.#fragments.has(run.slice(start, start + FRAGMENT_LENGTH))) return true;
    }
    return false;
  }
}

function isIterable(value: unknown): value is Iterable<string> {
  return typeof value === 'object' && value !== null && Symbol.iterator in value;
}
