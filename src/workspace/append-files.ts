import { writeSync } from 'node:fs';
import path from 'node:path';
import { openForAppend } from './safe-fs.js';
import { type KeptFile, KeptFiles } from './kept-files.js';
import type { AppendResult, WriteGuard } from './types.js';

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
 * call costs far more on a busy machine (0.1–0.25 ms measured, per call). Files are kept as {@link KeptFiles} keeps
 * them: closed after 30 s without appends, when their path no longer names them, after a failed write, and by
 * `closeAll`.
 * @internal
 */
export class AppendFiles {
  readonly #kept = new KeptFiles();

  constructor(
    private readonly root: string,
    private readonly resolve: (requested: string, intent: 'read' | 'write') => Promise<string>,
  ) {}

  /**
   * Appends `bytes` to the file at `requested`; returns the file's size after the append. A `guard` is applied to the
   * path opened, to the directory it is opened in, and to a kept file's path before it is reused.
   */
  async append(requested: string, bytes: Uint8Array, guard?: WriteGuard): Promise<AppendResult> {
    const { file, size } = this.#kept.reuse(requested, guard) ?? (await this.#openChecked(requested, guard));
    try {
      for (let written = 0; written < bytes.byteLength; ) {
        written += writeSync(file.fd, bytes, written, bytes.byteLength - written);
      }
      return { size: size + bytes.byteLength };
    } catch (error) {
      this.#kept.retire(file);
      throw error;
    } finally {
      this.#kept.release(file);
    }
  }

  /** Closes every kept file (at once, or after the append still using it). */
  closeAll(): void {
    this.#kept.closeAll();
  }

  /** Resolves, checks and opens `requested`; keeps it open when no link is on the way. */
  async #openChecked(requested: string, guard: WriteGuard | undefined): Promise<{ file: KeptFile; size: number }> {
    const resolved = await this.resolve(requested, 'write');
    const segments = requested.split(/[\\/]+/);
    const direct = resolved === path.join(this.root, ...segments);
    // `resolve` follows a link at the last component when it stays inside; an append must not.
    const absPath = direct ? resolved : await this.#unfollowed(segments);
    guard?.(absPath);
    const { fd, stats } = await openForAppend(this.root, absPath, requested, guard);
    // Only a path without links is kept: its later checks are then one realpath and one lstat.
    const file = this.#kept.adopt(requested, absPath, fd, stats, direct);
    return { file, size: stats.size };
  }

  /** The path named by `segments` with its parent resolved but its last component not followed. */
  async #unfollowed(segments: string[]): Promise<string> {
    const names = segments.filter((segment) => segment !== '' && segment !== '.');
    const parent = names.length > 1 ? await this.resolve(names.slice(0, -1).join('/'), 'read') : this.root;
    return path.join(parent, names.at(-1) as string);
  }
}
