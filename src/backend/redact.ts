/**
 * Keeping an adapter's credentials out of everything it produces: error messages, `cause` chains, stacks, retry
 * notices, and how the backend object prints.
 * @module
 * @internal
 */

/** What a secret is replaced with. */
export const REDACTED = '[REDACTED]';

/** Header names whose values are credentials: `authorization`, `x-api-key`, `api-key`, `cookie`, `x-auth-token`, … */
const SECRET_HEADER = /auth|key|token|secret|passw|cookie|session|signature|credential/i;

/** Shorter values are not treated as secrets: replacing them would garble every message and protect nothing. */
const MIN_SECRET_LENGTH = 4;

/** A provider that echoes part of a key (its first or last characters) leaks that part: runs this long are matched. */
const FRAGMENT_LENGTH = 12;

/** How deep the redactor follows causes and nested values; deeper ones are dropped rather than kept unredacted. */
const MAX_DEPTH = 8;

/**
 * The secrets an adapter sends: the api key, the values of credential-carrying headers (also the token alone of
 * `Bearer …` / `Basic …`, and a Basic pair decoded), and a password in the base URL.
 * @internal
 */
export function credentialSecrets(input: {
  apiKey?: string | undefined;
  headers: Record<string, string>;
  url: string;
}): string[] {
  const secrets: string[] = [];
  if (input.apiKey) secrets.push(input.apiKey);
  for (const [name, value] of Object.entries(input.headers)) {
    if (!SECRET_HEADER.test(name)) continue;
    secrets.push(value);
    const scheme = /^\s*(bearer|basic|token)\s+(\S+)\s*$/i.exec(value);
    if (!scheme?.[2]) continue;
    secrets.push(scheme[2]);
    if (scheme[1]?.toLowerCase() === 'basic') {
      const decoded = Buffer.from(scheme[2], 'base64').toString('utf8');
      secrets.push(decoded, decoded.slice(decoded.indexOf(':') + 1));
    }
  }
  const url = new URL(input.url);
  if (url.password) secrets.push(url.password, decodeURIComponent(url.password));
  return secrets;
}

/** The URL as it may be shown: no user, password or query string. @internal */
export function displayUrl(url: string): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  shown.search = '';
  return shown.toString().replace(/\/$/, '');
}

/**
 * Replaces a fixed set of secrets wherever they appear. Errors are redacted in place (their class, code and fields
 * stay), so a caller's `instanceof` and `code` checks keep working; everything reachable from them is covered.
 * @internal
 */
export class Redactor {
  readonly #secrets: string[];
  /** Every run of {@link FRAGMENT_LENGTH} characters of a secret long enough to have fragments worth matching. */
  readonly #fragments = new Set<string>();

  constructor(secrets: Iterable<string>) {
    const unique = new Set<string>();
    for (const secret of secrets) {
      const trimmed = secret.trim();
      if (trimmed.length < MIN_SECRET_LENGTH) continue;
      unique.add(trimmed);
      // A key inside a JSON string or a URL is spelled differently.
      unique.add(JSON.stringify(trimmed).slice(1, -1));
      unique.add(encodeURIComponent(trimmed));
    }
    this.#secrets = [...unique].sort((a, b) => b.length - a.length);
    for (const secret of this.#secrets) {
      if (secret.length < FRAGMENT_LENGTH + 4) continue;
      for (let start = 0; start + FRAGMENT_LENGTH <= secret.length; start += 1)
        this.#fragments.add(secret.slice(start, start + FRAGMENT_LENGTH));
    }
  }

  /** `text` with every secret, and every long run of key characters taken from a secret, replaced. */
  text(text: string): string {
    if (this.#secrets.length === 0) return text;
    let out = text;
    for (const secret of this.#secrets) out = out.split(secret).join(REDACTED);
    return out.replace(/[A-Za-z0-9_\-+/=.~]{12,}/g, (run) => (this.#sharesFragment(run) ? REDACTED : run));
  }

  /** The same value with every string in it redacted; a deep copy (own enumerable fields), functions dropped. */
  value(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value !== 'object' || value === null) return typeof value === 'function' ? undefined : value;
    if (value instanceof Error) return this.error(value, depth);
    if (depth >= MAX_DEPTH) return REDACTED;
    if (Array.isArray(value)) return value.map((item) => this.value(item, depth + 1));
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[this.text(key)] = this.value(item, depth + 1);
    return copy;
  }

  /**
   * Redacts an error in place: its message, stack and own fields, its `cause` chain and an AggregateError's
   * `errors`. A value that cannot be rewritten is replaced by a redacted copy; the returned error is the one to throw.
   */
  error<E>(error: E, depth = 0): E {
    if (!(error instanceof Error)) return this.value(error, depth) as E;
    if (depth >= MAX_DEPTH) return new Error(REDACTED) as E;
    try {
      error.message = this.text(error.message);
      if (typeof error.stack === 'string') error.stack = this.text(error.stack);
      const record = error as unknown as Record<string, unknown>;
      for (const key of Object.keys(record)) record[key] = this.value(record[key], depth + 1);
      if ('cause' in error) error.cause = this.value(error.cause, depth + 1);
      if (error instanceof AggregateError)
        record.errors = error.errors.map((inner: unknown) => this.value(inner, depth + 1));
      return error;
    } catch {
      // A frozen or exotic error: keep only what can be rewritten.
      return new Error(this.text(String(error.message))) as E;
    }
  }

  #sharesFragment(run: string): boolean {
    for (let start = 0; start + FRAGMENT_LENGTH <= run.length; start += 1) {
      if (this.#fragments.has(run.slice(start, start + FRAGMENT_LENGTH))) return true;
    }
    return false;
  }
}
