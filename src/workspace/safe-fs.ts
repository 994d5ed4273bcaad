/**
 * The file operations of a `LocalWorkspace` that must never reach outside it nor block on a special file: every
 * directory on the way is opened without following links ({@link openNoFollowDir}), and anything that is not a
 * regular file or a directory (a FIFO, socket or device) is refused before a blocking open.
 * @internal
 */
import {
  close as closeCallback,
  constants,
  fchmod as fchmodCallback,
  fstat as fstatCallback,
  fsync as fsyncCallback,
  open as openCallback,
  read as readCallback,
  readFile as readFileCallback,
  type Stats,
  writev as writevCallback,
} from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { HarnessError } from '../errors.js';
import { errnoCode, fileError } from './file-errors.js';
import { openNoFollowDir, type NoFollowDir } from './no-follow-dir.js';
import type { WriteGuard } from './types.js';

// Not `import { promisify } from 'node:util'`: an ESM import of a builtin reads every export, which would load
// util's argument parser and MIME module with the package.
const { promisify } = process.getBuiltinModule('node:util');
const openFd = promisify(openCallback);
const closeFd = promisify(closeCallback);
const fstatFd = promisify(fstatCallback);
const fchmodFd = promisify(fchmodCallback);
const fsyncFd = promisify(fsyncCallback);
const readFd = promisify(readCallback);
const writevFd = promisify(writevCallback);
/** At most this many buffers go to one `writev` (the smallest IOV_MAX of the platforms Node runs on). */
const MAX_WRITEV_BUFFERS = 1024;
const readWholeFd = promisify(readFileCallback) as (fd: number) => Promise<Buffer>;

/** The `code` of the cause of {@link notRegularFile} refusals (BSD's "inappropriate file type"). */
const NOT_REGULAR_CODE = 'EFTYPE';

/** Refuses a FIFO, socket or device where a regular file is expected; `action` says what was refused. */
function notRegularFile(requested: string, action: string): HarnessError {
  return new HarnessError(
    'invalid-input',
    `"${requested}" is not a regular file (a FIFO, socket or device); ${action} it is not allowed. Use another path.`,
    { cause: Object.assign(new Error('not a regular file'), { code: NOT_REGULAR_CODE }) },
  );
}

function isDirectoryError(requested: string): HarnessError {
  return fileError(Object.assign(new Error('is a directory'), { code: 'EISDIR' }), requested);
}

function missingError(requested: string): HarnessError {
  return fileError(Object.assign(new Error('missing'), { code: 'ENOENT' }), requested);
}

/** The components of `absPath` (from `resolveInside`) below `root`; empty for the root itself. */
function segmentsOf(root: string, absPath: string): string[] {
  const relative = path.relative(root, absPath);
  return relative === '' ? [] : relative.split(path.sep);
}

/**
 * Opens the parent directory of `absPath` without following links, runs `use` on it, and closes it. With a `guard`,
 * the place the opened directory is now (its real path) must pass it before `use` runs: what `use` writes goes
 * through that very directory, so a link swapped in after the path was checked cannot move the write elsewhere.
 */
async function inParent<T>(
  root: string,
  absPath: string,
  requested: string,
  create: boolean,
  use: (dir: NoFollowDir, name: string) => Promise<T>,
  guard?: WriteGuard,
): Promise<T> {
  const segments = segmentsOf(root, absPath);
  const name = segments.pop();
  if (name === undefined) throw isDirectoryError(requested);
  const dir = await openNoFollowDir(root, segments, requested, { create });
  try {
    if (guard) guard(path.join(await dir.location(), name));
    return await use(dir, name);
  } finally {
    await dir.close().catch(() => undefined);
  }
}

/** What is at `name` in `dir`, checked before opening it: a regular file's stats, or a refusal. */
async function expectRegular(dir: NoFollowDir, name: string, requested: string, action: string): Promise<Stats> {
  const stats = await dir.lstat(name);
  if (!stats) throw missingError(requested);
  if (stats.isDirectory()) throw isDirectoryError(requested);
  if (!stats.isFile()) throw notRegularFile(requested, action);
  return stats;
}

/** Opens the regular file `name` of `dir` for reading; refuses anything else, before and after opening. */
async function openRegularForReading(
  dir: NoFollowDir,
  name: string,
  requested: string,
): Promise<{ fd: number; stats: Stats }> {
  await expectRegular(dir, name, requested, 'reading');
  const fd = await dir.openFile(name, constants.O_RDONLY).catch((error: unknown) => {
    throw errnoCode(error) === 'ENXIO' ? notRegularFile(requested, 'reading') : fileError(error, requested);
  });
  try {
    const stats = await fstatFd(fd);
    if (stats.isDirectory()) throw isDirectoryError(requested);
    if (!stats.isFile()) throw notRegularFile(requested, 'reading');
    return { fd, stats };
  } catch (error) {
    await closeFd(fd);
    throw error;
  }
}

/** Reads the regular file at `absPath` (inside `root`). */
export function readRegularFile(root: string, absPath: string, requested: string): Promise<Buffer> {
  return inParent(root, absPath, requested, false, async (dir, name) => {
    const { fd } = await openRegularForReading(dir, name, requested);
    try {
      return await readWholeFd(fd);
    } catch (error) {
      throw fileError(error, requested);
    } finally {
      await closeFd(fd);
    }
  });
}

/**
 * Runs `use` with a path that names the very file or directory at `absPath` while it is held open (on Linux,
 * `/proc/self/fd/<n>`), so a reader that opens it by path (a preview) reads what was checked. Undefined when nothing
 * is there; refuses a FIFO, socket or device.
 */
export async function withCheckedEntry<T>(
  root: string,
  absPath: string,
  requested: string,
  use: (readPath: string, stats: Stats) => Promise<T>,
): Promise<T | undefined> {
  try {
    const segments = segmentsOf(root, absPath);
    if (segments.length > 0) {
      const file = await inParent(root, absPath, requested, false, async (dir, name) => {
        const stats = await dir.lstat(name);
        if (!stats) throw missingError(requested);
        if (stats.isDirectory()) return undefined;
        const opened = await openRegularForReading(dir, name, requested);
        try {
          return { value: await use(dir.pathOf(opened.fd, name), opened.stats) };
        } finally {
          await closeFd(opened.fd);
        }
      });
      if (file) return file.value;
    }
    const dir = await openNoFollowDir(root, segments, requested, { create: false });
    try {
      return await use(dir.readPath, await stat(dir.readPath));
    } finally {
      await dir.close().catch(() => undefined);
    }
  } catch (error) {
    const code = HarnessError.isInstance(error) ? errnoCode(error.cause) : undefined;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * Writes `bytes` (one buffer, or several written one after the other) to `absPath` (inside `root`) atomically: a new temp file in the same directory, then a rename over
 * the name, both through the directory opened without following links; missing directories are created the same way.
 * An existing file keeps its permissions; a directory, FIFO, socket or device at the name is refused. With `durable`,
 * the temp file is flushed to disk before the rename and the directory after it, so the new content survives a
 * power loss or kernel crash once the promise resolves. A `guard` is applied to the directory written in (see
 * {@link inParent}).
 */
export function writeAtomically(
  root: string,
  absPath: string,
  bytes: Uint8Array | readonly Uint8Array[],
  requested: string,
  options: { durable?: boolean; guard?: WriteGuard | undefined } = {},
): Promise<void> {
  return inParent(
    root,
    absPath,
    requested,
    true,
    async (dir, name) => {
      const existing = await dir.lstat(name);
      if (existing?.isDirectory()) {
        throw new HarnessError('invalid-input', `"${requested}" is a directory; choose a file name inside it.`);
      }
      if (existing && !existing.isFile()) throw notRegularFile(requested, 'writing to');
      const temporary = `.${name}.${crypto.randomUUID().slice(0, 8)}.tmp`;
      let created = false;
      try {
        const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
        const fd = await dir.openFile(temporary, flags, 0o666);
        created = true;
        try {
          await writeChunks(fd, Array.isArray(bytes) ? (bytes as readonly Uint8Array[]) : [bytes as Uint8Array]);
          // Overwriting keeps the file's permissions (an executable script stays executable).
          if (existing) await fchmodFd(fd, existing.mode & 0o7777);
          if (options.durable) await fsyncFd(fd);
        } finally {
          await closeFd(fd);
        }
        await dir.rename(temporary, name);
        if (options.durable) await syncDirectory(dir.readPath);
      } catch (error) {
        // Only the temp file this call created, and only while its directory is still inside the workspace.
        if (created) await dir.unlinkIfInside(temporary);
        throw fileError(error, requested);
      }
    },
    options.guard,
  );
}

/** Writes `chunks` one after the other at the file's position, however the system splits the writes. */
async function writeChunks(fd: number, chunks: readonly Uint8Array[]): Promise<void> {
  let pending = chunks.filter((chunk) => chunk.byteLength > 0);
  while (pending.length > 0) {
    let { bytesWritten } = await writevFd(fd, pending.slice(0, MAX_WRITEV_BUFFERS));
    let done = 0;
    while (done < pending.length && bytesWritten >= (pending[done] as Uint8Array).byteLength) {
      bytesWritten -= (pending[done] as Uint8Array).byteLength;
      done += 1;
    }
    pending = pending.slice(done);
    if (bytesWritten > 0) pending[0] = (pending[0] as Uint8Array).subarray(bytesWritten);
  }
}

/** Flushes a directory's entries (a rename in it) to disk; skipped where directories cannot be opened (Windows). */
async function syncDirectory(readPath: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fd = await openFd(readPath, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
  try {
    await fsyncFd(fd);
  } catch (error) {
    // Some file systems cannot sync a directory (EINVAL); the rename is then as durable as they make it.
    if (errnoCode(error) !== 'EINVAL') throw error;
  } finally {
    await closeFd(fd);
  }
}

/**
 * Opens `absPath` (inside `root`) for appending, creating it and its directories when missing. Refuses a link, a
 * directory, FIFO, socket or device, and a file with other hard links (an append would change them too). A `guard`
 * is applied to the directory the file is opened in (see {@link inParent}).
 * @returns the open descriptor and the file's stats at opening; the caller closes it
 */
export function openForAppend(
  root: string,
  absPath: string,
  requested: string,
  guard?: WriteGuard,
): Promise<{ fd: number; stats: Stats }> {
  return inParent(
    root,
    absPath,
    requested,
    true,
    async (dir, name) => {
      const existing = await dir.lstat(name);
      if (existing) refuseUnlessAppendable(existing, requested);
      const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;
      const fd = await dir.openFile(name, flags, 0o666).catch((error: unknown) => {
        throw errnoCode(error) === 'ENXIO' ? notRegularFile(requested, 'appending to') : error;
      });
      try {
        const stats = await fstatFd(fd);
        refuseUnlessAppendable(stats, requested);
        return { fd, stats };
      } catch (error) {
        await closeFd(fd);
        throw error;
      }
    },
    guard,
  );
}

/** Refuses what an append must not write to: see {@link openForAppend}. */
function refuseUnlessAppendable(stats: Stats, requested: string): void {
  if (stats.isSymbolicLink()) {
    throw new HarnessError(
      'invalid-input',
      `"${requested}" is a symbolic link; appending through it is not allowed. Use another path.`,
    );
  }
  if (!stats.isFile()) throw notRegularFile(requested, 'appending to');
  if (stats.nlink > 1) {
    throw new HarnessError(
      'invalid-input',
      `"${requested}" has other hard links (${stats.nlink} names); appending would change them too, so it is not allowed. Use another path.`,
    );
  }
}

/**
 * Reads a file from outside the workspace (an attachment, by absolute path): follows links, as the caller named it,
 * but refuses anything that is not a regular file before reading, without blocking on a FIFO.
 */
export async function readSourceFile(sourceAbsPath: string): Promise<Buffer> {
  const fd = await openFd(sourceAbsPath, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stats = await fstatFd(fd);
    if (!stats.isFile()) throw notRegularFile(sourceAbsPath, 'copying');
    return await readWholeFd(fd);
  } finally {
    await closeFd(fd);
  }
}

/**
 * The size and SHA-256 of the regular file at `absPath` (inside `root`), read through a descriptor opened without
 * following links; undefined when nothing is there or it is not a regular file (a directory, FIFO, socket, device).
 */
export async function hashRegularFile(
  root: string,
  absPath: string,
  requested: string,
): Promise<{ size: number; sha256: string } | undefined> {
  try {
    return await inParent(root, absPath, requested, false, async (dir, name) => {
      if (!(await dir.lstat(name))?.isFile()) return undefined;
      const { fd, stats } = await openRegularForReading(dir, name, requested);
      try {
        // node:crypto on first use rather than with the package.
        const hash = process.getBuiltinModule('node:crypto').createHash('sha256');
        const buffer = Buffer.alloc(Math.min(Math.max(stats.size, 1), 1024 * 1024));
        for (let position = 0; ; ) {
          const { bytesRead } = await readFd(fd, buffer, 0, buffer.byteLength, position);
          if (bytesRead === 0) return { size: position, sha256: hash.digest('hex') };
          hash.update(buffer.subarray(0, bytesRead));
          position += bytesRead;
        }
      } finally {
        await closeFd(fd);
      }
    });
  } catch (error) {
    const code = HarnessError.isInstance(error) ? errnoCode(error.cause) : errnoCode(error);
    // Gone, under a file, or swapped for a FIFO after the check: not a file this call can record.
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' || code === NOT_REGULAR_CODE) return undefined;
    throw error;
  }
}
