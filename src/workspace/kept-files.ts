/**
 * Files kept open between appends: the workspace's appends (the memory appends to one log at every step) and the run
 * store's journals share this, so each later append to a file costs two synchronous checks of microseconds instead
 * of opening it again with every check.
 * @module
 */
import { closeSync, lstatSync, realpathSync, type Stats } from 'node:fs';

/** A file kept open for appends is closed once it has not been appended to for this long. */
export const KEPT_FILE_IDLE_CLOSE_MS = 30_000;

/** One open file: its descriptor, the inode it was opened as, and how many operations hold it now. @internal */
export interface KeptFile {
  /** What the file is kept under. */
  readonly key: string;
  /** Its absolute path, with no symbolic link anywhere on the way when it is kept. */
  readonly absPath: string;
  readonly fd: number;
  readonly dev: number;
  readonly ino: number;
  /** Operations holding the descriptor; it is closed only when there are none. */
  users: number;
  /** No longer reused (idle, moved, failed or closed); closed once its last user is done. */
  retired: boolean;
  idle: NodeJS.Timeout | undefined;
}

/**
 * The files kept open, by key. A file is reused only while its path still names it: no link on the way (realpath
 * gives back the path itself), the same inode, a regular file with a single link (no hard link added outside since).
 * A kept file is closed after {@link KEPT_FILE_IDLE_CLOSE_MS} without use, when its path no longer names it, when an
 * operation on it failed, and by {@link KeptFiles.closeAll}.
 * @internal
 */
export class KeptFiles {
  readonly #open = new Map<string, KeptFile>();

  /**
   * The kept file of `key`, held for one operation (give it back with {@link KeptFiles.release}), and its size, if its
   * path still names it; else it is retired and the caller opens the file afresh. `guard` is applied to its path first.
   */
  reuse(key: string, guard?: (absPath: string) => void): { file: KeptFile; size: number } | undefined {
    const file = this.#open.get(key);
    if (!file) return undefined;
    guard?.(file.absPath);
    let real: string | undefined;
    let stats: Stats | undefined;
    try {
      real = realpathSync.native(file.absPath);
      stats = lstatSync(file.absPath);
    } catch {
      // Moved or removed: it is opened afresh, with every check.
    }
    if (
      real === file.absPath &&
      stats?.isFile() &&
      stats.nlink === 1 &&
      stats.dev === file.dev &&
      stats.ino === file.ino
    ) {
      clearTimeout(file.idle);
      file.users += 1;
      return { file, size: stats.size };
    }
    this.retire(file);
    return undefined;
  }

  /**
   * Takes a file the caller has just opened and checked, held for its first operation; it is kept under `key` for
   * later ones when `keep` (its path has no link on the way) and no other file is kept under that key.
   */
  adopt(key: string, absPath: string, fd: number, stats: { dev: number; ino: number }, keep: boolean): KeptFile {
    const file: KeptFile = {
      key,
      absPath,
      fd,
      dev: stats.dev,
      ino: stats.ino,
      users: 1,
      retired: true,
      idle: undefined,
    };
    if (keep && !this.#open.has(key)) {
      file.retired = false;
      this.#open.set(key, file);
    }
    return file;
  }

  /** Gives back a file held for one operation. */
  release(file: KeptFile): void {
    file.users -= 1;
    this.#settle(file);
  }

  /** Stops reusing `file`: it is closed once no operation holds it. */
  retire(file: KeptFile): void {
    file.retired = true;
    if (this.#open.get(file.key) === file) this.#open.delete(file.key);
    this.#settle(file);
  }

  /** Retires the file kept under `key`, if any. */
  retireKey(key: string): void {
    const file = this.#open.get(key);
    if (file) this.retire(file);
  }

  /** Retires every kept file (closed at once, or after the operation still holding it). */
  closeAll(): void {
    for (const file of [...this.#open.values()]) this.retire(file);
  }

  /** After a use: closes a retired file nobody holds, or restarts the idle countdown of a kept one. */
  #settle(file: KeptFile): void {
    if (file.users > 0) return;
    clearTimeout(file.idle);
    if (file.retired) {
      try {
        closeSync(file.fd);
      } catch {
        // Every operation on it has returned, so a failed close loses nothing.
      }
      return;
    }
    file.idle = setTimeout(() => this.retire(file), KEPT_FILE_IDLE_CLOSE_MS);
    file.idle.unref();
  }
}
