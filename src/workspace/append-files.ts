import { closeSync, lstatSync, realpathSync, writeSync, type Stats } from 'node:fs';
import path from 'node:path';
import { openForAppend } from './safe-fs.js';
import type { AppendResult, WriteGuard } from './types.js';

/** A file kept open for appends is closed once it has not been appended to for this long. */
export const APPEND_IDLE_CLOSE_MS = 30_000;

interface OpenFile {
  /** The path as asked for: the key of the kept files. */
  requested: string;
  /** Its absolute path, with no symbolic link anywhere on the way. */
  absPath: string;
  fd: number;
  dev: number;
  ino: number;
  /** Appends holding the descriptor; it is closed only when there are none. */
  users: number;
  /** No longer reused (idle, moved, failed or disposed); closed once its last user is done. */
  retired: boolean;
  idle: NodeJS.Timeout | undefined;
}

/**
 * The appends of a `LocalWorkspace`; the memory appends to one log at every step, so this is its hot path.
 *
 * The first append to a path resolves it as `writeFile` does and opens it as `safe-fs.ts` `openForAppend` does: its
 * directories are opened without following links (a link swapped in at any component is refused), and a link, a
 * directory, FIFO, socket, device or a file with other hard links is refused before and after opening, all
 * asynchronously. A file reached without any symbolic link then stays open, and each later append checks that its
 * path still has no link on the way, still names the open file and that the file has no other hard link, then
 * writes to it. That check and the write are synchronous system calls on purpose:
 * appending a few kilobytes to a local file takes microseconds, while each thread-pool round trip of an asynchronous
 * call costs far more on a busy machine (0.1–0.25 ms measured, per call). A kept file is closed after
 * {@link APPEND_IDLE_CLOSE_MS} without appends, when its path no longer names it, after a failed write, and by
 * `closeAll`.
 * @internal
 */
export class AppendFiles {
  readonly #open = new Map<string, OpenFile>();

  constructor(
    private readonly root: string,
    private readonly resolve: (requested: string, intent: 'read' | 'write') => Promise<string>,
  ) {}

  /**
   * Appends `bytes` to the file at `requested`; returns the file's size after the append. A `guard` is applied to the
   * path opened, to the directory it is opened in, and to a kept file's path before it is reused.
   */
  async append(requested: string, bytes: Uint8Array, guard?: WriteGuard): Promise<AppendResult> {
    const { file, size } = this.#reuse(requested, guard) ?? (await this.#openChecked(requested, guard));
    try {
      for (let written = 0; written < bytes.byteLength; ) {
        written += writeSync(file.fd, bytes, written, bytes.byteLength - written);
      }
      return { size: size + bytes.byteLength };
    } catch (error) {
      this.#retire(file);
      throw error;
    } finally {
      file.users -= 1;
      this.#settle(file);
    }
  }

  /** Closes every kept file (at once, or after the append still using it). */
  closeAll(): void {
    for (const file of [...this.#open.values()]) this.#retire(file);
  }

  /** The kept file of `requested` and its size, if its path still names it with no link on the way. */
  #reuse(requested: string, guard: WriteGuard | undefined): { file: OpenFile; size: number } | undefined {
    const file = this.#open.get(requested);
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
    // realpath gives back the path itself only when no component is a link; the inode says it is still the open file,
    // and a single link count that no hard link outside was added since.
    if (
      real === file.absPath &&
      stats?.isFile() &&
      stats.nlink === 1 &&
      stats.dev === file.dev &&
      stats.ino === file.ino
    ) {
      file.users += 1;
      return { file, size: stats.size };
    }
    this.#retire(file);
    return undefined;
  }

  /** Resolves, checks and opens `requested`; keeps it open when no link is on the way. */
  async #openChecked(requested: string, guard: WriteGuard | undefined): Promise<{ file: OpenFile; size: number }> {
    const resolved = await this.resolve(requested, 'write');
    const segments = requested.split(/[\\/]+/);
    const direct = resolved === path.join(this.root, ...segments);
    // `resolve` follows a link at the last component when it stays inside; an append must not.
    const absPath = direct ? resolved : await this.#unfollowed(segments);
    guard?.(absPath);
    const { fd, stats } = await openForAppend(this.root, absPath, requested, guard);
    const file: OpenFile = {
      requested,
      absPath,
      fd,
      dev: stats.dev,
      ino: stats.ino,
      users: 1,
      retired: true,
      idle: undefined,
    };
    // Only a path without links is kept: its later checks are then one realpath and one lstat.
    if (direct && !this.#open.has(requested)) {
      file.retired = false;
      this.#open.set(requested, file);
    }
    return { file, size: stats.size };
  }

  /** The path named by `segments` with its parent resolved but its last component not followed. */
  async #unfollowed(segments: string[]): Promise<string> {
    const names = segments.filter((segment) => segment !== '' && segment !== '.');
    const parent = names.length > 1 ? await this.resolve(names.slice(0, -1).join('/'), 'read') : this.root;
    return path.join(parent, names.at(-1) as string);
  }

  #retire(file: OpenFile): void {
    file.retired = true;
    if (this.#open.get(file.requested) === file) this.#open.delete(file.requested);
    this.#settle(file);
  }

  /** After a use: closes a retired file nobody holds, or restarts the idle countdown of a kept one. */
  #settle(file: OpenFile): void {
    if (file.users > 0) return;
    clearTimeout(file.idle);
    if (file.retired) {
      try {
        closeSync(file.fd);
      } catch {
        // Every write has returned, so a failed close loses nothing.
      }
      return;
    }
    file.idle = setTimeout(() => this.#retire(file), APPEND_IDLE_CLOSE_MS);
    file.idle.unref();
  }
}
