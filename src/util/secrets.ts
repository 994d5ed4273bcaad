/**
 * The secrets the harness knows by value, and the redactor every exit uses: what a backend or a tool declared
 * ({@link declareSecrets}: an adapter's API key and credential headers, the values a shell or Python tool passes on
 * through `passEnv`), the values of secret-named environment variables, and secrets given by the host.
 * @module
 * @internal
 */
import { Redactor } from './redact.js';

/** How a declared secret is matched: `credential` whole and by long fragments (providers echo parts of keys), `value` whole. */
export type SecretKind = 'credential' | 'value';

interface SecretSource {
  kind: SecretKind;
  read: () => readonly string[];
}

/**
 * Who declared which secrets, shared by every copy of the library in the process (the ESM and the CommonJS build):
 * keyed weakly, so a backend's key is forgotten with the backend.
 */
const DECLARED = sharedDeclarations();

function sharedDeclarations(): WeakMap<object, SecretSource[]> {
  const global = globalThis as Record<symbol, WeakMap<object, SecretSource[]> | undefined>;
  const key = Symbol.for('horizon-harness.declared-secrets');
  global[key] ??= new WeakMap();
  return global[key];
}

/**
 * Records that `owner` (a backend, a tool) holds the secrets `read` returns; they are read each time a redactor
 * looks, so a value that changes is followed. The secrets never become a property of `owner`. @internal
 */
export function declareSecrets(owner: object, read: () => readonly string[], kind: SecretKind = 'credential'): void {
  const sources = DECLARED.get(owner) ?? [];
  sources.push({ kind, read });
  DECLARED.set(owner, sources);
}

/** The secrets `owner` declared of `kind`, or none. @internal */
export function declaredSecrets(owner: unknown, kind: SecretKind): string[] {
  if (typeof owner !== 'object' || owner === null) return [];
  return (DECLARED.get(owner) ?? []).flatMap((source) => (source.kind === kind ? source.read() : []));
}

/** Environment variable names whose values are secrets: `*KEY*`, `*TOKEN*`, `*SECRET*`, `PGPASS`, `DB_PWD`, `SENTRY_DSN`, `GITHUB_PAT`, … */
export const SECRET_ENV_NAME = /key|token|secret|pass|pwd|credential|auth|private|dsn|cookie|(^|_)pat(_|$)/i;

/**
 * The values of `env` whose names look secret ({@link SECRET_ENV_NAME}), except values that cannot be told from
 * ordinary text: shorter than 8 characters, a single word of letters, or an absolute path (`PWD`, `SSH_AUTH_SOCK`).
 * @internal
 */
export function secretsFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const secrets: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    const value = raw?.trim();
    if (!value || !SECRET_ENV_NAME.test(name)) continue;
    if (value.length < 8 || /^[A-Za-z]+$/.test(value) || /^\/\S*$/.test(value)) continue;
    secrets.push(value);
  }
  return secrets;
}

/** What a {@link SecretRedactor} redacts besides secret shapes. @internal */
export interface SecretRedactorOptions {
  /** Objects whose declared secrets are redacted, read on every use (a harness's backends and tools). */
  owners?: () => Iterable<unknown>;
  /** Secrets given by the host (matched whole and by long fragments). */
  secrets?: readonly string[];
  /** The environment whose secret-named values are redacted; read once, here. @defaultValue process.env */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * A {@link Redactor} over everything the harness knows to be secret: what `owners` declared, the host's `secrets`
 * (matched also by long fragments), the secret-named values of `env`, and secret shapes. It is rebuilt
 * only when the declared secrets change. @internal
 */
export class SecretRedactor {
  readonly #owners: () => Iterable<unknown>;
  readonly #given: readonly string[];
  readonly #fromEnv: readonly string[];
  #key: string | undefined;
  #redactor: Redactor | undefined;

  constructor(options: SecretRedactorOptions = {}) {
    this.#owners = options.owners ?? (() => []);
    this.#given = options.secrets ?? [];
    this.#fromEnv = secretsFromEnv(options.env ?? process.env);
  }

  /** `text` redacted. */
  text(text: string): string {
    return this.#current().text(text);
  }

  /** `value` redacted copy-on-write (see {@link Redactor.data}). */
  data<T>(value: T): T {
    return this.#current().data(value);
  }

  /** `error` redacted in place (see {@link Redactor.error}). */
  error<E>(error: E): E {
    return this.#current().error(error);
  }

  #current(): Redactor {
    const owners = [...this.#owners()];
    const credentials = owners.flatMap((owner) => declaredSecrets(owner, 'credential'));
    const values = owners.flatMap((owner) => declaredSecrets(owner, 'value'));
    const key = `${credentials.join('\u0000')}\u0001${values.join('\u0000')}`;
    if (this.#redactor === undefined || key !== this.#key) {
      this.#key = key;
      this.#redactor = new Redactor({
        credentials: [...credentials, ...this.#given],
        exact: [...values, ...this.#fromEnv],
      });
    }
    return this.#redactor;
  }
}
