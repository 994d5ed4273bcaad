/**
 * Directories of a workspace opened without following symbolic links, so that what is opened, created or renamed in
 * them cannot land outside the workspace even while code running in it swaps a directory for a link.
 *
 * Node has no `openat`, so each directory is opened and its entries are named relative to the open descriptor:
 *
 * - **Linux (`/proc/self/fd` present)**: every component is opened with `O_DIRECTORY | O_NOFOLLOW` through
 *   `/proc/self/fd/<parent>/<name>`. The kernel resolves `/proc/self/fd/<n>` to the very directory that descriptor
 *   holds (not to whatever its old path names now), so this is `openat(parent, name, O_NOFOLLOW)`: a link at any
 *   component is refused, never followed. Files, `mkdir`, `rename` and `unlink` go through the same descriptor path.
 *   Each opened directory and file is also checked (`readlink /proc/self/fd/<n>`) to still lie inside the workspace
 *   before it is written or renamed in: that catches a directory moved (not linked) out of the workspace during the
 *   walk. Moving one out between that check and the write needs write access to the place outside it is moved to,
 *   which the sandbox does not give.
 * - **Elsewhere (macOS, Windows, Linux without /proc)**: a weaker check that narrows the window but does not close
 *   it. Components are walked by path with `lstat` (a link is refused), files are opened with `O_NOFOLLOW`, and after
 *   opening, a fresh `lstat` walk must find every directory still a real directory and the file's path naming the
 *   opened file (device and inode) before a byte is written; the rename checks the walk again. A swap timed between
 *   those checks and the open, write or rename can still put a file outside: with the race test forced onto this
 *   path, about 300 files and directories landed outside in ~24 000 writes (none through descriptor paths). It
 *   matters only while other code changes the workspace during a run; the harness sandboxes code only with
 *   bubblewrap, on Linux, and elsewhere the code it runs is on the host and can write anywhere anyway.
 * @internal
 */
import {
  close as closeCallback,
  constants,
  existsSync,
  open as openCallback,
  fstat as fstatCallback,
  type Stats,
} from 'node:fs';
import { lstat, mkdir, open, readlink, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { HarnessError } from '../errors.js';
import { errnoCode, fileError } from './file-errors.js';
import { isInside } from './resolve-inside.js';

// Not `import { promisify } from 'node:util'`: an ESM import of a builtin reads every export, which would load
// util's argument parser and MIME module with the package.
const { promisify } = process.getBuiltinModule('node:util');

/** True where directories can be opened and their entries named through `/proc/self/fd` (see the module comment). */
export const DESCRIPTOR_PATHS = process.platform === 'linux' && existsSync('/proc/self/fd');

const openFd = promisify(openCallback);
const closeFd = promisify(closeCallback);
const fstatFd = promisify(fstatCallback);

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// O_NONBLOCK: a FIFO swapped in opens at once (and is then refused) instead of blocking a thread-pool thread.
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const DIRECTORY_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | NOFOLLOW | NONBLOCK;

/** A directory inside the workspace, reached without following any link. */
export interface NoFollowDir {
  /**
   * Opens the entry `name` of this directory with `flags`, never following a link there and never blocking on a
   * FIFO, and checks the opened file lies inside the workspace. Returns a raw descriptor: appends keep it open and
   * close it synchronously.
   */
  openFile(name: string, flags: number, mode?: number): Promise<number>;
  /** A path that names the file open at `fd` (opened by `openFile` as `name`), for reading it by path. */
  pathOf(fd: number, name: string): string;
  /** `lstat` of the entry `name` (not followed); undefined when it does not exist. */
  lstat(name: string): Promise<Stats | undefined>;
  /** Renames the entry `from` to `to`, both in this directory, after checking it is still inside the workspace. */
  rename(from: string, to: string): Promise<void>;
  /** Removes the entry `name` if this directory is still inside the workspace; never anything elsewhere. */
  unlinkIfInside(name: string): Promise<void>;
  /** A path that names this very directory, for reading it (a directory listing). */
  readonly readPath: string;
  /** Where this directory is now: the real path of the open directory (on Linux), else the path walked. */
  location(): Promise<string>;
  close(): Promise<void>;
}

function linkRefusal(requested: string, walked: string): HarnessError {
  return new HarnessError(
    'path-outside-workspace',
    `Refused path "${requested}": "${walked}" is a symbolic link (or became one while in use); workspace files are ` +
      'opened without following links. Use a path without it, such as "notes/report.md".',
  );
}

function movedOutRefusal(requested: string): HarnessError {
  return new HarnessError(
    'path-outside-workspace',
    `Refused path "${requested}": its directory left the workspace while in use; nothing was written. Use a path inside the workspace.`,
  );
}

/** Why opening `walked` as a directory failed: a link, a file, or another file-system error. */
async function directoryError(error: unknown, at: string, requested: string, walked: string): Promise<HarnessError> {
  if (errnoCode(error) === 'ENOTDIR' || errnoCode(error) === 'ELOOP') {
    const stats = await lstat(at).catch(() => undefined);
    if (stats?.isSymbolicLink()) return linkRefusal(requested, walked);
  }
  return fileError(error, requested);
}

/** Opens the directory `segments` below `root`, creating missing ones when asked; see the module comment. */
export function openNoFollowDir(
  root: string,
  segments: readonly string[],
  requested: string,
  options: { create: boolean },
): Promise<NoFollowDir> {
  return DESCRIPTOR_PATHS
    ? openByDescriptor(root, segments, requested, options.create)
    : openByPath(root, segments, requested, options.create);
}

/** The real path of the file or directory open at `fd`, which must lie inside `root`. */
async function checkInside(root: string, fd: number, requested: string): Promise<string> {
  const real = await readlink(`/proc/self/fd/${fd}`);
  if (!isInside(root, real)) throw movedOutRefusal(requested);
  return real;
}

async function openByDescriptor(
  root: string,
  segments: readonly string[],
  requested: string,
  create: boolean,
): Promise<NoFollowDir> {
  let dir = await open(root, DIRECTORY_FLAGS);
  try {
    for (let index = 0; index < segments.length; index += 1) {
      const at = `/proc/self/fd/${dir.fd}/${segments[index]}`;
      const walked = segments.slice(0, index + 1).join('/');
      let next: FileHandle;
      try {
        next = await open(at, DIRECTORY_FLAGS);
      } catch (error) {
        if (!(create && errnoCode(error) === 'ENOENT')) throw await directoryError(error, at, requested, walked);
        // mkdir never follows a link at its last component; the open after it refuses a link swapped in meanwhile.
        await mkdir(at).catch((mkdirError: unknown) => {
          if (errnoCode(mkdirError) !== 'EEXIST') throw mkdirError;
        });
        next = await open(at, DIRECTORY_FLAGS).catch(async (openError: unknown) => {
          throw await directoryError(openError, at, requested, walked);
        });
      }
      // Not awaited: nothing uses the parent any more, and each await is a thread-pool round trip.
      void dir.close().catch(() => undefined);
      dir = next;
    }
    await checkInside(root, dir.fd, requested);
  } catch (error) {
    await dir.close().catch(() => undefined);
    throw error;
  }
  return descriptorDir(root, dir, requested);
}

function descriptorDir(root: string, dir: FileHandle, requested: string): NoFollowDir {
  const entry = (name: string): string => `/proc/self/fd/${dir.fd}/${name}`;
  return {
    readPath: `/proc/self/fd/${dir.fd}`,
    location: () => checkInside(root, dir.fd, requested),
    async openFile(name, flags, mode = 0o666) {
      const fd = await openEntry(entry(name), flags, mode, requested);
      try {
        await checkInside(root, fd, requested);
        return fd;
      } catch (error) {
        await closeFd(fd);
        throw error;
      }
    },
    pathOf: (fd) => `/proc/self/fd/${fd}`,
    lstat: (name) => lstat(entry(name)).catch(missingAsUndefined),
    async rename(from, to) {
      await checkInside(root, dir.fd, requested);
      await rename(entry(from), entry(to));
    },
    async unlinkIfInside(name) {
      const inside = await checkInside(root, dir.fd, requested).then(
        () => true,
        () => false,
      );
      if (inside) await unlink(entry(name)).catch(() => undefined);
    },
    close: () => dir.close(),
  };
}

async function openEntry(at: string, flags: number, mode: number, requested: string): Promise<number> {
  try {
    return await openFd(at, flags | NOFOLLOW | NONBLOCK, mode);
  } catch (error) {
    if (errnoCode(error) === 'ELOOP') throw linkRefusal(requested, requested);
    throw error;
  }
}

function missingAsUndefined(error: unknown): undefined {
  if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return undefined;
  throw error;
}

/** Every component of `segments` below `root` is a real directory now, not a link; throws otherwise. */
async function checkWalk(
  root: string,
  segments: readonly string[],
  requested: string,
  create: boolean,
): Promise<string> {
  let current = root;
  for (let index = 0; index < segments.length; index += 1) {
    current = path.join(current, segments[index] as string);
    let stats = await lstat(current).catch(missingAsUndefined);
    if (!stats && create) {
      await mkdir(current).catch((error: unknown) => {
        if (errnoCode(error) !== 'EEXIST') throw fileError(error, requested);
      });
      stats = await lstat(current).catch(missingAsUndefined);
    }
    const walked = segments.slice(0, index + 1).join('/');
    if (stats?.isSymbolicLink()) throw linkRefusal(requested, walked);
    if (!stats) throw fileError(Object.assign(new Error('missing'), { code: 'ENOENT' }), requested);
    if (!stats.isDirectory())
      throw fileError(Object.assign(new Error('not a directory'), { code: 'ENOTDIR' }), requested);
  }
  return current;
}

async function openByPath(
  root: string,
  segments: readonly string[],
  requested: string,
  create: boolean,
): Promise<NoFollowDir> {
  const directory = await checkWalk(root, segments, requested, create);
  const entry = (name: string): string => path.join(directory, name);
  return {
    readPath: directory,
    location: () => checkWalk(root, segments, requested, false),
    async openFile(name, flags, mode = 0o666) {
      const fd = await openEntry(entry(name), flags, mode, requested);
      try {
        // Weaker than descriptor paths: the path must still lead, link-free, to the file that was opened.
        await checkWalk(root, segments, requested, false);
        const [opened, named] = await Promise.all([fstatFd(fd), lstat(entry(name))]);
        if (opened.dev !== named.dev || opened.ino !== named.ino) throw linkRefusal(requested, requested);
        return fd;
      } catch (error) {
        await closeFd(fd);
        throw error;
      }
    },
    pathOf: (_fd, name) => entry(name),
    lstat: (name) => lstat(entry(name)).catch(missingAsUndefined),
    async rename(from, to) {
      await checkWalk(root, segments, requested, false);
      await rename(entry(from), entry(to));
    },
    async unlinkIfInside(name) {
      const inside = await checkWalk(root, segments, requested, false).then(
        () => true,
        () => false,
      );
      if (inside) await unlink(entry(name)).catch(() => undefined);
    },
    close: async () => undefined,
  };
}
