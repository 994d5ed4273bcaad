/**
 * The secrets the harness derives each run's snapshot key from, kept out of the run's workspace: the host's own
 * (`snapshotKey`), a store's (beside its snapshots, e.g. in Redis), or a per-user key file made on first use. See
 * docs/durability.md, "Tamper-evident snapshots".
 * @module
 */
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, realpath, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HarnessError } from '../errors.js';
import { errnoCode } from '../workspace/file-errors.js';
import type { RunStore } from './types.js';

/** Bytes of a secret the harness makes; a `snapshotKey` of the host must have at least as many. */
export const SECRET_BYTES = 32;
/** The per-user key file's name in its directory (see {@link userSecretDir}). */
export const USER_SECRET_FILE = 'snapshot-secret';
/** A store directory's key file (`FileRunStore({ dir })`): hidden, and not a `.json` file the store would list. */
export const STORE_SECRET_FILE = '.snapshot-secret';

/** A secret and where it came from, in words (for messages); `file` when it is kept in a file. */
export interface SnapshotSecret {
  secret: Buffer;
  source: string;
  file?: string;
  /** Set when the secret lives only in this process: snapshots sealed with it cannot be resumed by another. */
  warning?: string;
}

/**
 * The secret of a run's snapshots: the host's `option` when given, else the store's (`RunStore.snapshotSecret`),
 * else the per-user key file.
 * @internal
 */
export async function snapshotSecret(
  option: string | Uint8Array | undefined,
  store: RunStore,
): Promise<SnapshotSecret> {
  if (option !== undefined) return { secret: Buffer.from(option), source: 'the snapshotKey option of createHarness' };
  const kept = await storeSecret(store);
  if (kept) return kept;
  return userSecret();
}

async function storeSecret(store: RunStore): Promise<SnapshotSecret | undefined> {
  if (typeof store.snapshotSecret !== 'function') return undefined;
  let secret: Uint8Array | undefined;
  try {
    secret = await store.snapshotSecret();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new HarnessError(
      'store-failed',
      `Could not get the snapshot secret from the run store: ${reason}. Check that the store is reachable.`,
      { cause: error },
    );
  }
  if (secret === undefined) return undefined;
  if (!(secret instanceof Uint8Array) || secret.byteLength < SECRET_BYTES) {
    throw new HarnessError(
      'invalid-options',
      `The run store's snapshotSecret() returned ${secret instanceof Uint8Array ? `${secret.byteLength} bytes` : typeof secret}; it must return at least ${SECRET_BYTES} random bytes.`,
    );
  }
  const file = (store as { secretFile?: string }).secretFile;
  return {
    secret: Buffer.from(secret),
    source: file ? `the store's key file ${file}` : "the run store's secret",
    ...(file ? { file } : {}),
  };
}

/**
 * Where the per-user key file lives: `$HORIZON_HARNESS_STATE_DIR`, else `$XDG_STATE_HOME/horizon-harness`, else
 * `~/.local/state/horizon-harness`.
 * @internal
 */
export function userSecretDir(): string {
  const env = process.env;
  if (env.HORIZON_HARNESS_STATE_DIR) return path.resolve(env.HORIZON_HARNESS_STATE_DIR);
  const base = env.XDG_STATE_HOME ? path.resolve(env.XDG_STATE_HOME) : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'horizon-harness');
}

/** The per-user secret, read once per process and directory. */
const userSecrets = new Map<string, Promise<SnapshotSecret>>();
/** The secret of a process that found no place for the per-user key file. */
let processSecret: Buffer | undefined;

async function userSecret(): Promise<SnapshotSecret> {
  const dir = userSecretDir();
  let found = userSecrets.get(dir);
  if (!found) {
    found = readUserSecret(dir);
    userSecrets.set(dir, found);
    // A failure is not kept: the directory may be fixed while the process runs.
    found.catch(() => userSecrets.delete(dir));
  }
  return found;
}

async function readUserSecret(dir: string): Promise<SnapshotSecret> {
  const file = path.join(dir, USER_SECRET_FILE);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await assertPrivateDir(dir);
  } catch (error) {
    if (HarnessError.isInstance(error)) throw error;
    processSecret ??= randomBytes(SECRET_BYTES);
    const reason = error instanceof Error ? error.message : String(error);
    return {
      secret: processSecret,
      source: 'a key of this process only',
      warning:
        `There is no place for the snapshot key file (${reason}): this run's snapshots are sealed with a key of this ` +
        'process only, so another process cannot resume the run (it refuses them as snapshot-tampered). Set ' +
        'HORIZON_HARNESS_STATE_DIR to a private directory, or pass snapshotKey to createHarness.',
    };
  }
  return { secret: await secretFile(file), source: `the key file ${file}`, file };
}

/**
 * The secret kept in `file` (hex), made with {@link SECRET_BYTES} random bytes when there is none. The file must be
 * a regular file of this user that no one else can read or write: another one is refused, never used.
 * @internal
 */
export async function secretFile(file: string): Promise<Buffer> {
  const existing = await readSecretFile(file);
  if (existing) return existing;
  await createSecretFile(file);
  const made = await readSecretFile(file);
  if (!made) throw badSecretFile(file, 'it vanished right after it was made');
  return made;
}

async function readSecretFile(file: string): Promise<Buffer | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    if (errnoCode(error) === 'ELOOP') throw badSecretFile(file, 'it is a symbolic link');
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw badSecretFile(file, 'it is not a regular file');
    if (process.platform !== 'win32') {
      if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) {
        throw badSecretFile(file, `it belongs to user ${stats.uid}, not to this process's user`);
      }
      if ((stats.mode & 0o077) !== 0) {
        throw badSecretFile(
          file,
          `others may read or write it (mode ${(stats.mode & 0o777).toString(8)}; it must be 600)`,
        );
      }
    }
    const text = (await handle.readFile({ encoding: 'utf8' })).trim();
    if (!/^[0-9a-f]+$/.test(text) || text.length < SECRET_BYTES * 2 || text.length % 2 !== 0) {
      throw badSecretFile(file, `it does not hold a key (at least ${SECRET_BYTES * 2} hex digits)`);
    }
    return Buffer.from(text, 'hex');
  } finally {
    await handle.close();
  }
}

/** Writes a new secret to a temp file and links it into place: a racing process's secret wins, never a mix. */
async function createSecretFile(file: string): Promise<void> {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
  const handle = await open(temporary, flags, 0o600);
  try {
    await handle.writeFile(`${randomBytes(SECRET_BYTES).toString('hex')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temporary, file);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** The per-user directory must be this user's and closed to others' writes: a key file there must not be swappable. */
async function assertPrivateDir(dir: string): Promise<void> {
  const stats = await lstat(dir);
  if (!stats.isDirectory()) throw badSecretFile(dir, 'it is not a directory');
  if (process.platform === 'win32') return;
  if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) {
    throw badSecretFile(dir, `the directory belongs to user ${stats.uid}, not to this process's user`);
  }
  if ((stats.mode & 0o022) !== 0) {
    throw badSecretFile(
      dir,
      `others may write into the directory (mode ${(stats.mode & 0o777).toString(8)}; make it 700)`,
    );
  }
}

function badSecretFile(where: string, what: string): HarnessError {
  return new HarnessError(
    'invalid-options',
    `Refusing the snapshot key at ${where}: ${what}. Fix it, or delete it to have a new key made (snapshots sealed ` +
      'with the old key can then no longer be resumed).',
  );
}

/**
 * Throws `invalid-options` when the key file lies inside the run's workspace, where the agent could read it.
 * @internal
 */
export async function assertOutsideWorkspace(secret: SnapshotSecret, workspaceRoot: string): Promise<void> {
  if (!secret.file) return;
  const [file, root] = await Promise.all([
    realpath(secret.file).catch(() => path.resolve(secret.file as string)),
    realpath(workspaceRoot).catch(() => path.resolve(workspaceRoot)),
  ]);
  const relative = path.relative(root, file);
  if (relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))) {
    throw new HarnessError(
      'invalid-options',
      `The snapshot key file ${file} lies inside the run's workspace ${root}, where the agent could read it and forge ` +
        'snapshots. Use a workspace that does not contain it, set HORIZON_HARNESS_STATE_DIR elsewhere, or pass ' +
        'snapshotKey to createHarness.',
    );
  }
}

function randomBytes(size: number): Buffer {
  return process.getBuiltinModule('node:crypto').randomBytes(size);
}
