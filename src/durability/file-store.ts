/**
 * The file run store: one run's snapshot in its workspace (`.harness/run.json`, the default store), or many runs'
 * snapshots in one directory, each with its journal beside it (`.harness/run.journal`, `<runId>.journal`). Saves are
 * atomic and durable (temp file, fsync, rename, fsync of the directory), journal appends durable (one `fdatasync`),
 * and every file is reached without following symbolic links, so code running in the workspace cannot redirect a
 * save, an append or a load elsewhere.
 * @module
 */
import { lstatSync } from 'node:fs';
import { mkdir, open, readdir, realpath, unlink } from 'node:fs/promises';
import path from 'node:path';
import { HarnessError } from '../errors.js';
import { errnoCode } from '../workspace/file-errors.js';
import { openNoFollowDir } from '../workspace/no-follow-dir.js';
import { withCheckedEntry, writeAtomically } from '../workspace/safe-fs.js';
import { JournalFiles } from './file-journal.js';
import { encodeRunId, runIdOf } from './run-file-name.js';
import { assertRunId, isRunId } from './run-id.js';
import { snapshotChunks } from './snapshot-json.js';
import { MAX_SNAPSHOT_BYTES, parseSnapshotText, snapshotCorrupt, snapshotTooLarge } from './snapshot-parse.js';
import { secretFile, STORE_SECRET_FILE } from './snapshot-secret.js';
import type { RunSnapshot, RunStore } from './types.js';

/** Options of {@link FileRunStore}. */
export interface FileRunStoreOptions {
  /** The directory that holds one `<runId>.json` per run; created when missing. */
  dir: string;
  /**
   * The largest snapshot the store writes or reads, in bytes: a larger one is refused before it is read
   * (`snapshot-corrupt`) or written (`store-failed`). @defaultValue 64 MiB
   */
  maxSnapshotBytes?: number;
}

/** Marks the options of {@link FileRunStore.inWorkspace}; not part of the public options. */
const IN_WORKSPACE = Symbol('in-workspace');

const WORKSPACE_DIR = '.harness';
const NEWLINE = Buffer.from('\n');
const WORKSPACE_FILE = 'run.json';
const JOURNAL_EXTENSION = '.journal';
/** File names stay well below the usual 255-byte limit (upper-case letters and dots are encoded as `%xx`). */
const MAX_ENCODED_ID = 200;
const WRITE_TODO = 'Check that the directory is writable and the disk not full.';
const READ_TODO = 'Check that the file and its directory are readable.';

/**
 * Keeps run snapshots as JSON files. `FileRunStore.inWorkspace(root)` is the default store of a run: its one
 * snapshot at `<root>/.harness/run.json`. `new FileRunStore({ dir })` keeps many runs as `<dir>/<runId>.json`, the
 * run id encoded so that no id can name a file outside `dir`.
 *
 * `save` writes a temp file in the same directory, flushes it, renames it over the snapshot and flushes the
 * directory: after a crash `load` finds the previous or the new snapshot, never a mix; it then empties the run's
 * journal, to which `appendJournal` appends the saves made until the next snapshot (see {@link RunStore.appendJournal}). Every failure (permission,
 * disk full, a symbolic link, an unreadable or non-JSON file) rejects with `store-failed`, naming the path; after a
 * failed save the previous snapshot is intact.
 *
 * @example
 * ```ts
 * const store = new FileRunStore({ dir: '/var/lib/my-app/runs' });
 * const harness = createHarness({ backend, store });
 * ```
 */
export class FileRunStore implements RunStore {
  private readonly dir: string;
  private readonly inWorkspace: boolean;
  private readonly maxBytes: number;
  // The directory with links resolved once: the no-follow walk starts from a real directory.
  private realDir: Promise<string> | undefined;
  private readonly journals = new JournalFiles();

  constructor(options: FileRunStoreOptions) {
    const dir = (options as Partial<FileRunStoreOptions> | undefined)?.dir;
    if (typeof dir !== 'string' || dir.trim() === '') {
      throw new HarnessError(
        'invalid-options',
        'FileRunStore needs a "dir": the directory to keep run snapshots in, e.g. { dir: "./runs" }.',
      );
    }
    const max = options.maxSnapshotBytes ?? MAX_SNAPSHOT_BYTES;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new HarnessError('invalid-options', 'FileRunStore maxSnapshotBytes must be a positive integer (bytes).');
    }
    this.dir = path.resolve(dir);
    this.inWorkspace = (options as { [IN_WORKSPACE]?: boolean })[IN_WORKSPACE] === true;
    this.maxBytes = max;
  }

  /** The default store of a run: its one snapshot at `<root>/.harness/run.json`, inside its workspace. */
  static inWorkspace(root: string): FileRunStore {
    return new FileRunStore({ dir: root, [IN_WORKSPACE]: true } as FileRunStoreOptions);
  }

  /** The absolute path of the run's snapshot file. */
  pathOf(runId: string): string {
    return path.join(this.dir, this.fileOf(runId));
  }

  /**
   * The absolute path of the run's journal: `.harness/run.journal` in the workspace, `<runId>.journal` beside the
   * snapshot in a store directory.
   */
  journalPathOf(runId: string): string {
    return path.join(this.dir, this.journalOf(runId));
  }

  /**
   * Where the store keeps the secret its runs' snapshot keys are derived from: `<dir>/.snapshot-secret`; none for
   * the store in a workspace, whose agent could read it there (the per-user key file is used instead).
   */
  get secretFile(): string | undefined {
    return this.inWorkspace ? undefined : path.join(this.dir, STORE_SECRET_FILE);
  }

  /**
   * The secret of the store's snapshot keys, made on first use (32 random bytes, hex, in a file only this user may
   * read: see {@link FileRunStore.secretFile}); undefined for the store in a workspace.
   */
  async snapshotSecret(): Promise<Uint8Array | undefined> {
    if (this.inWorkspace) return undefined;
    try {
      return await secretFile(path.join(await this.root(true), STORE_SECRET_FILE));
    } catch (error) {
      if (HarnessError.isInstance(error)) throw error;
      throw this.failure('Could not read or make the snapshot secret', STORE_SECRET_FILE, error, WRITE_TODO);
    }
  }

  /** Replaces the run's snapshot atomically; `snapshot.runId` must be `runId`. */
  async save(runId: string, snapshot: RunSnapshot): Promise<void> {
    const file = this.fileOf(runId);
    if (snapshot?.runId !== runId) {
      throw new HarnessError(
        'invalid-input',
        `The snapshot passed to FileRunStore.save("${runId}") is of run "${String(snapshot?.runId)}"; save each run's snapshot under its own id.`,
      );
    }
    let bytes: Buffer[];
    try {
      bytes = [...snapshotChunks(snapshot), NEWLINE];
    } catch (error) {
      throw this.failure(`Could not save the snapshot of run "${runId}": it is not plain JSON`, file, error);
    }
    const size = bytes.reduce((sum, chunk) => sum + chunk.length, 0);
    if (size > this.maxBytes) {
      throw this.failure(
        `Refused to save the snapshot of run "${runId}": it is ${size} bytes, over the store's limit of ${this.maxBytes}`,
        file,
        undefined,
        'A resume would refuse to read it. Raise maxSnapshotBytes of FileRunStore if runs this large are expected.',
      );
    }
    const journal = this.journalOf(runId);
    let root: string | undefined;
    try {
      root = await this.root(true);
      await writeAtomically(root, path.join(root, file), bytes, file, { durable: true });
    } catch (error) {
      // The run stops on a failed save: its journal is not appended to any more.
      if (root !== undefined) this.journals.release(path.join(root, journal));
      throw this.failure(
        `Could not save the snapshot of run "${runId}"`,
        file,
        error,
        `Any previous snapshot there is intact. ${WRITE_TODO}`,
      );
    }
    try {
      // A finished run appends nothing more: its journal is closed, not kept open.
      await this.journals.reset(root, path.join(root, journal), journal, snapshot.status === 'running');
    } catch (error) {
      throw this.failure(
        `Saved the snapshot of run "${runId}" but could not reset its journal`,
        journal,
        error,
        WRITE_TODO,
      );
    }
  }

  /**
   * Appends `lines` to the run's journal, each followed by a newline, and flushes them to disk with one `fdatasync`
   * (see {@link RunStore.appendJournal}). The journal lives beside the snapshot and is reached the same way, without
   * following links.
   */
  async appendJournal(runId: string, lines: readonly string[]): Promise<void> {
    const journal = this.journalOf(runId);
    const bytes = Buffer.from(lines.map((line) => `${line}\n`).join(''), 'utf8');
    try {
      const root = await this.root(true);
      await this.journals.append(root, path.join(root, journal), journal, bytes);
    } catch (error) {
      throw this.failure(`Could not append to the journal of run "${runId}"`, journal, error, WRITE_TODO);
    }
  }

  /**
   * The run's journal as text, or `undefined` when there is none: read as untrusted input, its size checked against
   * the store's `maxSnapshotBytes` before it is read (`snapshot-corrupt` when larger).
   */
  async loadJournal(runId: string): Promise<string | undefined> {
    const bytes = await this.readBounded(this.journalOf(runId));
    return bytes?.toString('utf8');
  }

  /** The run's last snapshot, or `undefined` when there is none (in the workspace store: none of that run). */
  async load(runId: string): Promise<RunSnapshot | undefined> {
    const file = this.fileOf(runId);
    const snapshot = await this.read(file);
    if (!snapshot || snapshot.runId === runId) return snapshot;
    // The workspace keeps one run's snapshot: another run's is simply not this one's.
    if (this.inWorkspace) return undefined;
    throw this.failure(
      `The snapshot file of run "${runId}" holds run "${snapshot.runId}"`,
      file,
      undefined,
      'Files in the store directory must not be renamed; move it back or delete it.',
    );
  }

  /** The ids of the runs with a snapshot (files of a crashed save, and foreign files, are not listed). */
  async list(): Promise<string[]> {
    if (this.inWorkspace) {
      const snapshot = await this.read(path.join(WORKSPACE_DIR, WORKSPACE_FILE));
      return snapshot ? [snapshot.runId] : [];
    }
    let names: string[];
    try {
      names = await readdir(await this.root(false));
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return [];
      throw this.failure('Could not list the run snapshots', '', error, READ_TODO);
    }
    return names.flatMap((name) => {
      const runId = runIdOf(name);
      return runId === undefined || !isRunId(runId) ? [] : [runId];
    });
  }

  /** Removes the run's snapshot; nothing happens when there is none (or, in the workspace, it is another run's). */
  async delete(runId: string): Promise<void> {
    const file = this.fileOf(runId);
    if (this.inWorkspace) {
      // An unreadable snapshot is removed too: deleting is how one gets rid of it.
      const current = await this.read(file).catch(() => undefined);
      if (current && current.runId !== runId) return;
    }
    let root: string;
    try {
      root = await this.root(false);
      const segments = path.dirname(file) === '.' ? [] : [path.dirname(file)];
      const dir = await openNoFollowDir(root, segments, file, { create: false });
      try {
        await unlink(path.join(dir.readPath, path.basename(file))).catch((error: unknown) => {
          if (!isMissing(error)) throw error;
        });
      } finally {
        await dir.close().catch(() => undefined);
      }
    } catch (error) {
      if (isMissing(error)) return;
      throw this.failure(`Could not delete the snapshot of run "${runId}"`, file, error, WRITE_TODO);
    }
    const journal = this.journalOf(runId);
    try {
      await this.journals.remove(root, path.join(root, journal), journal);
    } catch (error) {
      throw this.failure(`Could not delete the journal of run "${runId}"`, journal, error, WRITE_TODO);
    }
  }

  /** The snapshot's path relative to the store's directory. */
  private fileOf(runId: string): string {
    assertRunId(runId, 'FileRunStore');
    if (this.inWorkspace) return path.join(WORKSPACE_DIR, WORKSPACE_FILE);
    const encoded = encodeRunId(runId);
    if (encoded.length > MAX_ENCODED_ID) {
      throw new HarnessError(
        'invalid-input',
        `Run id "${runId.slice(0, 40)}…" is too long for a file name (${encoded.length} characters encoded, at most ${MAX_ENCODED_ID}); use a shorter id.`,
      );
    }
    return `${encoded}.json`;
  }

  /** The run's journal file, relative to the store's directory: its snapshot file's name with `.journal`. */
  private journalOf(runId: string): string {
    const file = this.fileOf(runId);
    return `${file.slice(0, -path.extname(file).length)}${JOURNAL_EXTENSION}`;
  }

  /**
   * Reads and parses a snapshot file as untrusted input (size checked before reading, then bounded parsing, see
   * {@link parseSnapshotText}); `undefined` when there is none. A file that cannot be a snapshot is `snapshot-corrupt`.
   */
  private async read(file: string): Promise<RunSnapshot | undefined> {
    const where = path.join(this.dir, file);
    const bytes = await this.readBounded(file);
    if (bytes === undefined) return undefined;
    const value = parseSnapshotText(bytes, where, this.maxBytes);
    if (typeof value.runId !== 'string') throw snapshotCorrupt(where, 'it has no "runId"');
    return value as unknown as RunSnapshot;
  }

  /**
   * The bytes of `file` (relative to the store's directory), reached without following links, its size checked
   * against `maxSnapshotBytes` before it is read (`snapshot-corrupt` when larger); `undefined` when there is none.
   */
  private async readBounded(file: string): Promise<Buffer | undefined> {
    const where = path.join(this.dir, file);
    try {
      const root = await this.root(false);
      return await withCheckedEntry(root, path.join(root, file), file, async (readPath, stats) => {
        if (stats.isDirectory()) throw snapshotCorrupt(where, 'a directory stands there');
        if (stats.size > this.maxBytes) throw snapshotTooLarge(where, stats.size, this.maxBytes);
        return readAtMost(readPath, this.maxBytes, where);
      });
    } catch (error) {
      if (isMissing(error)) return undefined;
      if (HarnessError.isInstance(error) && error.code === 'snapshot-corrupt') throw error;
      throw this.failure('Could not read a run snapshot', file, error, READ_TODO);
    }
  }

  /** The store's directory, links resolved; `create` makes it (and its parents) when missing. */
  private root(create: boolean): Promise<string> {
    if (this.realDir) return this.realDir;
    const resolving = (async () => {
      if (create && !this.inWorkspace) await mkdir(this.dir, { recursive: true });
      return realpath(this.dir);
    })();
    // A missing directory may appear later: only a resolved one is kept.
    resolving.then(
      (real) => {
        this.realDir = Promise.resolve(real);
      },
      () => undefined,
    );
    return resolving;
  }

  private failure(what: string, file: string, cause: unknown, todo?: string): HarnessError {
    const where = path.join(this.dir, file);
    if (cause !== undefined && linkOnTheWay(where)) {
      return new HarnessError(
        'store-failed',
        `${what} (${where}): a symbolic link stands there or at its directory, and the store never follows one, so ` +
          'code running in the workspace cannot redirect it. Remove the link (and check what planted it).',
        { cause },
      );
    }
    const reason = cause === undefined ? '' : `: ${cause instanceof Error ? cause.message : String(cause)}`;
    return new HarnessError('store-failed', `${what} (${where})${reason}.${todo ? ` ${todo}` : ''}`, { cause });
  }
}

/** Reads at most `limit` bytes of the file at `readPath`; one that grew past it since its size was checked is refused. */
async function readAtMost(readPath: string, limit: number, where: string): Promise<Buffer> {
  const handle = await open(readPath, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, limit + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limit) throw snapshotTooLarge(where, total, limit);
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

/** Nothing at the path. */
function isMissing(error: unknown): boolean {
  const code = errnoCode(HarnessError.isInstance(error) ? error.cause : error);
  return code === 'ENOENT';
}

/** Whether a symbolic link stands at `where` or its directory. */
function linkOnTheWay(where: string): boolean {
  // Only to word the message: the refusal itself came from the no-follow open.
  return [where, path.dirname(where)].some((at) => {
    try {
      return lstatSync(at).isSymbolicLink();
    } catch {
      return false;
    }
  });
}
