/**
 * One run per workspace: a lock file `.harness/run.lock` that names the run holding the directory.
 * @module
 */
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HarnessError } from '../errors.js';
import { errnoCode } from './file-errors.js';

/** Where the lock lives, relative to the workspace root. */
export const LOCK_FILE = '.harness/run.lock';

/** What a lock file records about its holder. @internal */
export interface LockHolder {
  runId: string;
  pid: number;
  hostname: string;
  /** ISO time the run took the lock. */
  since: string;
  /** Random per lock, so a release never removes a lock another run took over. */
  token: string;
}

/** A held lock; `release` is idempotent. @internal */
export interface WorkspaceLock {
  readonly holder: LockHolder;
  release(): Promise<void>;
}

/** Roots locked in this process whose directory cannot carry a lock file (a Workspace object without a local root). */
const heldInProcess = new Map<string, string>();

/**
 * Locks the workspace at `root` for `runId`, or throws `workspace-busy` naming the run that holds it. A lock file
 * left by a process of this host that no longer exists is taken over. A root that is not a local directory (a
 * user's Workspace object backed by something else) is locked within this process only.
 * @internal
 */
export async function lockWorkspace(root: string, runId: string): Promise<WorkspaceLock> {
  const isDirectory = await stat(root).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDirectory) return lockInProcess(root, runId);
  try {
    return await lockDirectory(root, runId);
  } catch (error) {
    if (HarnessError.isInstance(error)) throw error;
    throw new HarnessError('invalid-options', `Cannot lock the workspace "${root}": ${String(error)}`, {
      cause: error,
    });
  }
}

function lockInProcess(root: string, runId: string): WorkspaceLock {
  const holder = heldInProcess.get(root);
  if (holder !== undefined) throw busy(root, `run "${holder}" of this process`);
  heldInProcess.set(root, runId);
  return {
    holder: newHolder(runId),
    release: async () => {
      if (heldInProcess.get(root) === runId) heldInProcess.delete(root);
    },
  };
}

async function lockDirectory(root: string, runId: string): Promise<WorkspaceLock> {
  const stateDir = await harnessDir(root);
  const lockPath = path.join(stateDir, path.basename(LOCK_FILE));
  const me = newHolder(runId);
  // A few rounds: each lost race against another taker re-reads who holds the lock now.
  for (let round = 0; round < 3; round++) {
    if (await tryCreate(stateDir, lockPath, me)) {
      let released = false;
      return {
        holder: me,
        release: async () => {
          if (released) return;
          released = true;
          await releaseFile(lockPath, me.token);
        },
      };
    }
    const current = await readHolder(lockPath);
    if (current === 'gone') continue;
    if (current === 'unreadable' || !isStale(current)) throw busy(root, describe(current), lockPath);
    await takeOver(lockPath, current);
  }
  throw busy(root, 'another run that is taking the lock at the same moment', lockPath);
}

/** `.harness/` inside the root, made when missing; a symbolic link there is refused rather than followed. */
async function harnessDir(root: string): Promise<string> {
  const dir = path.join(root, path.dirname(LOCK_FILE));
  await mkdir(dir).catch((error: unknown) => {
    if (errnoCode(error) !== 'EEXIST') throw error;
  });
  const info = await lstat(dir);
  if (!info.isDirectory()) {
    throw new HarnessError(
      'invalid-options',
      `"${dir}" is not a directory; the harness keeps its state there. Remove it.`,
    );
  }
  return dir;
}

/** Writes the holder to a private file and links it into place: the lock appears complete or not at all. */
async function tryCreate(stateDir: string, lockPath: string, me: LockHolder): Promise<boolean> {
  const draft = path.join(stateDir, `.run.lock.${me.token}.tmp`);
  const handle = await open(
    draft,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    await handle.writeFile(`${JSON.stringify(me)}\n`);
  } finally {
    await handle.close();
  }
  try {
    await link(draft, lockPath);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}

async function readHolder(lockPath: string): Promise<LockHolder | 'gone' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(lockPath, 'utf8');
  } catch (error) {
    return errnoCode(error) === 'ENOENT' ? 'gone' : 'unreadable';
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockHolder>;
    if (typeof parsed.pid === 'number' && typeof parsed.runId === 'string' && typeof parsed.token === 'string') {
      return parsed as LockHolder;
    }
  } catch {
    // Not ours: reported as unreadable below.
  }
  return 'unreadable';
}

/** Stale: taken by a process of this host that has exited. A lock of another host cannot be checked and is kept. */
function isStale(holder: LockHolder): boolean {
  if (holder.hostname !== os.hostname()) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return errnoCode(error) === 'ESRCH';
  }
}

/**
 * Moves the stale lock aside and checks that what moved is the lock judged stale; when a racing taker replaced it
 * in between, its live lock is put back.
 */
async function takeOver(lockPath: string, stale: LockHolder): Promise<void> {
  const aside = `${lockPath}.${crypto.randomUUID().slice(0, 8)}.stale`;
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return;
    throw error;
  }
  const moved = await readHolder(aside);
  if (typeof moved === 'object' && moved.token !== stale.token) await link(aside, lockPath).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

async function releaseFile(lockPath: string, token: string): Promise<void> {
  // The agent's code may have swapped `.harness` for a link meanwhile: release only through a real directory.
  const dir = await lstat(path.dirname(lockPath)).catch(() => undefined);
  if (!dir?.isDirectory()) return;
  const current = await readHolder(lockPath);
  if (typeof current === 'object' && current.token === token) await unlink(lockPath).catch(() => undefined);
}

function newHolder(runId: string): LockHolder {
  return {
    runId,
    pid: process.pid,
    hostname: os.hostname(),
    since: new Date().toISOString(),
    token: crypto.randomUUID(),
  };
}

function describe(holder: LockHolder | 'unreadable'): string {
  if (holder === 'unreadable') return 'an unknown holder (the lock file is not one the harness wrote)';
  const where =
    holder.pid === process.pid && holder.hostname === os.hostname()
      ? 'this process'
      : `process ${holder.pid} on ${holder.hostname}`;
  return `run "${holder.runId}" (${where}, since ${holder.since})`;
}

function busy(root: string, holder: string, lockPath?: string): HarnessError {
  return new HarnessError(
    'workspace-busy',
    `The workspace "${root}" is in use by ${holder}; one run per workspace. Give each run its own directory, ` +
      `or omit the workspace option for a fresh temporary one.` +
      (lockPath ? ` If no run is using it, delete "${lockPath}".` : ''),
  );
}
