/**
 * The environment of sandboxed and host commands: an allow-list, never the parent's environment, so that the
 * harness's secrets (`GITHUB_PAT`, `SENTRY_DSN`, `REDIS_URL`, `PGPASS`, …) never reach agent-written code whatever
 * their names.
 * @module
 */
import os from 'node:os';
import { SECRET_ENV_NAME } from '../../../util/secrets.js';

/** Names copied from the harness's environment into every command's environment. */
export const INHERITED_ENV_NAMES: readonly string[] = Object.freeze(['PATH', 'LANG', 'LANGUAGE', 'TZ']);
/** Locale variables (`LC_ALL`, `LC_CTYPE`, …) are copied too. */
const LOCALE_NAME = /^LC_[A-Z_]+$/;

/** Options of {@link commandEnv}. */
export interface CommandEnvOptions {
  /** The workspace root: `HOME` points there, so programs write their dot-files into the workspace. */
  workspaceRoot: string;
  /** True inside bubblewrap: `TMPDIR` and the caches live in the sandbox's private `/tmp`. */
  sandboxed: boolean;
  /** `HOME`, where a program writes its dot-files. @defaultValue the workspace root */
  home?: string;
  /** More names the host chooses to pass on from its own environment (values as they are, secrets included). */
  passEnv?: readonly string[];
  /** Variables set explicitly (after everything else). */
  env?: Record<string, string>;
  /** The harness's environment. @defaultValue process.env */
  parentEnv?: NodeJS.ProcessEnv;
}

/** Builds the allow-listed environment of a command: `PATH`, `LANG`, `LANGUAGE`, `LC_*`, `TZ`, `HOME`, `TMPDIR`, `passEnv`, `env`. */
export function commandEnv(options: CommandEnvOptions): Record<string, string> {
  const parent = options.parentEnv ?? process.env;
  const passed = new Set(options.passEnv ?? []);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (INHERITED_ENV_NAMES.includes(name) || LOCALE_NAME.test(name) || passed.has(name)) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.HOME = options.home ?? options.workspaceRoot;
  if (options.sandboxed) {
    Object.assign(env, { TMPDIR: '/tmp', MPLCONFIGDIR: '/tmp/.matplotlib', XDG_CACHE_HOME: '/tmp/.cache' });
  } else {
    env.TMPDIR = os.tmpdir();
  }
  return { ...env, ...options.env };
}

/**
 * The values a command tool hands to the code it runs that the harness must keep out of what it emits: every value of
 * a `passEnv` name (the host chose to pass it; it may be a secret whatever its name), and the explicit `env` values
 * whose names look secret.
 */
export function secretsPassedOn(options: Pick<CommandEnvOptions, 'passEnv' | 'env' | 'parentEnv'>): string[] {
  const parent = options.parentEnv ?? process.env;
  const passed = (options.passEnv ?? []).flatMap((name) => parent[name] ?? []);
  const explicit = Object.entries(options.env ?? {}).flatMap(([name, value]) =>
    SECRET_ENV_NAME.test(name) ? [value] : [],
  );
  return [...passed, ...explicit];
}
