/**
 * The journal files of the file run store: appended to at every save between two snapshots, each append flushed with
 * one `fdatasync`, so declaring a side-effecting tool call costs one durable append instead of a whole snapshot.
 * @module
 */
import {
  constants,
  close as closeCallback,
  fdatasync as fdatasyncCallback,
  ftruncate as ftruncateCallback,
  realpathSync,
  writeSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode } from '../workspace/file-errors.js';
import { type KeptFile, KeptFiles } from '../workspace/kept-files.js';
import { openNoFollowDir } from '../workspace/no-follow-dir.js';
import { openForAppend } from '../workspace/safe-fs.js';

// Not `import { promisify } from 'node:util'`: an ESM import of a builtin reads every export.
const { promisify } = process.getBuiltinModule('node:util');
const fdatasync = promisify(fdatasyncCallback);
const closeFd = promisify(closeCallback);
const ftruncate = promisify(ftruncateCallback);

/**
 * Appends to journal files and resets them, for one store. The first append to a journal opens it as the workspace's
 * appends do (`openForAppend`: every directory on the way opened without following links; a link, a non-regular file
 * or a file with other hard links refused), and keeps it open while the run goes on: each later append first checks,
 * with two synchronous calls of microseconds, that the path still names the open file with no link on the way (else
 * the journal is opened afresh with every check), then writes the lines with one synchronous `write` and flushes them
 * with one `fdatasync`, the one durable operation of the append. A kept journal is closed after
 * 30 s without appends (as {@link KeptFiles} keeps files), after a failed append, and when it is reset or removed.
 * @internal
 */
export class JournalFiles {
  readonly #kept = new KeptFiles();

  /** Appends `bytes` to the journal at `absPath` (inside `root`) and resolves once they are on disk. */
  async append(root: string, absPath: string, requested: string, bytes: Uint8Array): Promise<void> {
    const journal = this.#kept.reuse(absPath)?.file ?? (await this.#openChecked(root, absPath, requested));
    try {
      for (let written = 0; written < bytes.byteLength; ) {
        written += writeSync(journal.fd, bytes, written, bytes.byteLength - written);
      }
      await fdatasync(journal.fd);
    } catch (error) {
      this.#kept.retire(journal);
      throw error;
    } finally {
      this.#kept.release(journal);
    }
  }

  /**
   * Empties the journal at `absPath` once a new snapshot replaced what it recorded, through the kept descriptor or the
   * file opened as for an append (never anything outside `root`, never through a link); nothing when there is none.
   * The file stays, so the next append needs no new directory entry. The kept descriptor is closed unless `keepOpen`
   * (the run goes on). No flush: should the reset be lost in a crash, the lines that come back name an earlier
   * snapshot, and a resume ignores them.
   */
  async reset(root: string, absPath: string, requested: string, keepOpen: boolean): Promise<void> {
    let journal = this.#kept.reuse(absPath)?.file;
    if (!journal) {
      const segments = path.relative(root, absPath).split(path.sep);
      if (!(await this.#exists(root, segments, requested))) return;
      journal = await this.#openChecked(root, absPath, requested);
    }
    try {
      // Through the thread pool: truncating a file of blocks is file-system work (ext4 frees them in its journal) that
      // blocked the event loop for milliseconds per reset with many runs saving at once.
      await ftruncate(journal.fd, 0);
    } catch (error) {
      this.#kept.retire(journal);
      throw error;
    } finally {
      if (!keepOpen) this.#kept.retire(journal);
      this.#kept.release(journal);
    }
  }

  /** Closes the kept descriptor of the journal at `absPath`, if any (its run stopped, or its snapshot failed). */
  release(absPath: string): void {
    this.#kept.retireKey(absPath);
  }

  /** Removes the journal at `absPath` (inside `root`); nothing happens when there is none. */
  async remove(root: string, absPath: string, requested: string): Promise<void> {
    this.release(absPath);
    const segments = path.relative(root, path.dirname(absPath)).split(path.sep).filter(Boolean);
    let dir: Awaited<ReturnType<typeof openNoFollowDir>>;
    try {
      dir = await openNoFollowDir(root, segments, requested, { create: false });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    try {
      if (await dir.lstat(path.basename(absPath))) await dir.unlinkIfInside(path.basename(absPath));
    } finally {
      await dir.close().catch(() => undefined);
    }
  }

  /** Whether an entry stands at `segments` below `root`, looked up without following links. */
  async #exists(root: string, segments: string[], requested: string): Promise<boolean> {
    let dir: Awaited<ReturnType<typeof openNoFollowDir>>;
    try {
      dir = await openNoFollowDir(root, segments.slice(0, -1), requested, { create: false });
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    try {
      return (await dir.lstat(segments.at(-1) as string)) !== undefined;
    } finally {
      await dir.close().catch(() => undefined);
    }
  }

  /**
   * Opens the journal as the workspace's appends are opened, creating it when missing, and flushes its directory:
   * the lines a later `fdatasync` makes durable must not be lost with a directory entry that was not.
   */
  async #openChecked(root: string, absPath: string, requested: string): Promise<KeptFile> {
    const { fd, stats } = await openForAppend(root, absPath, requested);
    try {
      await syncDirectory(path.dirname(absPath));
    } catch (error) {
      await closeFd(fd).catch(() => undefined);
      throw error;
    }
    // Kept only when its path is its real path: later checks compare the two.
    return this.#kept.adopt(absPath, absPath, fd, stats, realpathSync.native(absPath) === absPath);
  }
}

/** Flushes a directory's entries to disk; skipped where directories cannot be opened (Windows). */
async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0));
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems cannot sync a directory (EINVAL); the entry is then as durable as they make it.
    if (errnoCode(error) !== 'EINVAL') throw error;
  } finally {
    await handle.close();
  }
}

function isMissing(error: unknown): boolean {
  const code = errnoCode(error) ?? errnoCode((error as { cause?: unknown } | undefined)?.cause);
  return code === 'ENOENT' || code === 'ENOTDIR';
}
