import { mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import { AppendFiles } from './append-files.js';
import { ArtifactRegistry } from './artifact-registry.js';
import { errnoCode, fileError } from './file-errors.js';
import { makeDirectory } from './make-directory.js';
import { fitChars } from './preview/bounded-text.js';
import { previewFile } from './preview/preview-file.js';
import { resolveInside } from './resolve-inside.js';
import { assertSafeWorkspaceDir } from './unsafe-directory.js';
import { hashRegularFile, readRegularFile, readSourceFile, withCheckedEntry, writeAtomically } from './safe-fs.js';
import type { AppendResult, ArtifactRecord, Workspace, WriteOptions, WriteOrigin } from './types.js';

/** Options of {@link LocalWorkspace.create}. */
export const LocalWorkspaceOptionsSchema = z.object({
  /** The workspace directory; created when missing. A fresh temporary directory when absent. */
  dir: z.string().min(1).optional(),
  /**
   * Default size bound of {@link LocalWorkspace.preview}.
   * @defaultValue `DEFAULTS.filePreviewChars` (10 000)
   */
  previewChars: z.number().int().min(200).max(1_000_000).default(DEFAULTS.filePreviewChars),
});

/** What callers pass to {@link LocalWorkspace.create}. */
export type LocalWorkspaceOptions = z.input<typeof LocalWorkspaceOptionsSchema> & {
  /** Clock for `updatedAt` of artifact records; `Date.now` when absent. */
  now?: () => number;
};

/**
 * A workspace in a local directory: every path is resolved inside it (no `..`, no absolute paths, no symbolic
 * links leading out), files are then opened without following links and only when they are regular files
 * (`safe-fs.ts`), writes are atomic, and every file a tool writes is recorded as an artifact. A write's `guard` is
 * applied to the resolved path and to the directory then opened without following links, which is the one written
 * in: a link swapped in between cannot move a guarded write.
 *
 * @example
 * ```ts
 * const workspace = await LocalWorkspace.create({ dir: './run-1' });
 * await workspace.writeFile('notes/plan.md', '# Plan', { tool: 'me' });
 * console.log(await workspace.preview('notes/plan.md'));
 * ```
 */
export class LocalWorkspace implements Workspace {
  /** Absolute, real path of the directory. */
  readonly root: string;
  /** True when the directory was created by {@link LocalWorkspace.create} as a temporary directory. */
  readonly temporary: boolean;
  readonly #previewChars: number;
  readonly #now: () => number;
  readonly #registry = new ArtifactRegistry();
  readonly #appends: AppendFiles;
  /** Writes apply {@link WriteOptions.guard} to the directory they write in. */
  readonly guardsWrites = true;

  private constructor(root: string, temporary: boolean, previewChars: number, now: () => number) {
    this.root = root;
    this.temporary = temporary;
    this.#previewChars = previewChars;
    this.#now = now;
    this.#appends = new AppendFiles(root, (requested, intent) => this.resolve(requested, intent));
  }

  /** Opens (and creates when missing) a workspace directory, or a fresh temporary one when `dir` is absent. */
  static async create(options: LocalWorkspaceOptions = {}): Promise<LocalWorkspace> {
    const parsed = LocalWorkspaceOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const option = issue?.path.join('.') || 'options';
      throw new HarnessError(
        'invalid-options',
        `Invalid LocalWorkspace option "${option}": ${issue?.message ?? 'invalid value'}. ` +
          'dir must be a non-empty path; previewChars an integer from 200 to 1000000.',
      );
    }
    const { dir, previewChars } = parsed.data;
    let directory: string;
    if (dir === undefined) {
      directory = await mkdtemp(path.join(os.tmpdir(), 'horizon-workspace-'));
    } else {
      directory = path.resolve(dir);
      assertSafeWorkspaceDir(directory);
      try {
        await makeDirectory(directory);
      } catch (error) {
        throw new HarnessError(
          'invalid-options',
          `Cannot create the workspace directory "${directory}": ${String(error)}`,
          {
            cause: error,
          },
        );
      }
      if (!(await stat(directory)).isDirectory()) {
        throw new HarnessError('invalid-options', `The workspace path "${directory}" exists and is not a directory.`);
      }
    }
    return new LocalWorkspace(await realpath(directory), dir === undefined, previewChars, options.now ?? Date.now);
  }

  /** Resolves a workspace-relative path inside the workspace; refuses escapes with `path-outside-workspace`. */
  resolve(requested: string, intent: 'read' | 'write'): Promise<string> {
    return resolveInside(this.root, requested, intent);
  }

  /** The workspace-relative, forward-slash form of an absolute path inside the workspace. */
  relative(absPath: string): string {
    return path.relative(this.root, absPath).split(path.sep).join('/');
  }

  /** Reads a regular file inside the workspace; refuses a FIFO, socket or device (see `safe-fs.ts`). */
  async readFile(requested: string): Promise<Buffer> {
    return readRegularFile(this.root, await this.resolve(requested, 'read'), requested);
  }

  /**
   * Writes a file atomically (temp file in the same directory, then rename), creating directories, and records it.
   * `options.guard` is applied to the resolved path and to the directory written in.
   */
  async writeFile(
    requested: string,
    data: string | Uint8Array,
    origin: WriteOrigin,
    options: WriteOptions = {},
  ): Promise<ArtifactRecord> {
    const absPath = await this.#resolveGuarded(requested, options);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    await writeAtomically(this.root, absPath, bytes, requested, { guard: options.guard });
    return this.#registry.record({
      path: this.relative(absPath),
      size: bytes.byteLength,
      // node:crypto on first use rather than with the package.
      sha256: process.getBuiltinModule('node:crypto').createHash('sha256').update(bytes).digest('hex'),
      tool: origin.tool,
      ...(origin.scope === undefined ? {} : { scope: origin.scope }),
      updatedAt: this.#now(),
    });
  }

  /**
   * Appends to a file, creating it and its directories when missing. The path is resolved as for `writeFile`; a
   * symbolic link as the file itself is refused rather than followed, and so is anything that is not a regular file
   * (checked before opening, so a FIFO cannot block the call, and again on the open file) and a file with other hard
   * links. A file reached without
   * any symbolic link then stays open: the next appends check that its path still names it and write to it with
   * synchronous system calls (microseconds for a local file), until it has been idle for 30 s or `dispose` closes it.
   * Appended files are not recorded as artifacts: hashing a growing log at every append would cost more than the
   * append, so `origin` is not used here. `options.guard` is applied to the file's path and to the directory it is
   * opened in, and again before each append to a kept file.
   * @returns the file's size in bytes after the append
   */
  async appendFile(
    requested: string,
    data: string | Uint8Array,
    _origin?: WriteOrigin,
    options: WriteOptions = {},
  ): Promise<AppendResult> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    try {
      return await this.#appends.append(requested, bytes, options.guard);
    } catch (error) {
      throw fileError(error, requested);
    }
  }

  /**
   * Copies a file from outside (an attachment) into the workspace, atomically, without recording it as an artifact
   * (so `origin` is not used here). `options.guard` is applied as for `writeFile`.
   * @returns the workspace-relative path of the copy
   */
  async copyIn(
    sourceAbsPath: string,
    destination: string,
    _origin?: WriteOrigin,
    options: WriteOptions = {},
  ): Promise<string> {
    const absPath = await this.#resolveGuarded(destination, options);
    let bytes: Buffer;
    try {
      bytes = await readSourceFile(sourceAbsPath);
    } catch (error) {
      throw new HarnessError(
        'invalid-input',
        `Cannot read the file to copy into the workspace, "${sourceAbsPath}": ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    await writeAtomically(this.root, absPath, bytes, destination, { guard: options.guard });
    return this.relative(absPath);
  }

  /** Resolves a path for writing and applies the write's guard to it. */
  async #resolveGuarded(requested: string, options: WriteOptions): Promise<string> {
    const absPath = await this.resolve(requested, 'write');
    options.guard?.(absPath);
    return absPath;
  }

  /** Records a file that something else (a process) created or changed; undefined when it is not a file. */
  async recordArtifact(requested: string, origin: WriteOrigin): Promise<ArtifactRecord | undefined> {
    const absPath = await this.resolve(requested, 'read');
    try {
      const file = await hashRegularFile(this.root, absPath, requested);
      if (!file) return undefined;
      return this.#registry.record({
        path: this.relative(absPath),
        size: file.size,
        sha256: file.sha256,
        tool: origin.tool,
        ...(origin.scope === undefined ? {} : { scope: origin.scope }),
        updatedAt: this.#now(),
      });
    } catch (error) {
      if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return undefined;
      throw fileError(error, requested);
    }
  }

  /** Every recorded artifact, most recent last. */
  artifacts(): ArtifactRecord[] {
    return this.#registry.list();
  }

  /** True when the path exists inside the workspace (false for escapes). */
  async exists(requested: string): Promise<boolean> {
    try {
      await stat(await this.resolve(requested, 'read'));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A bounded, modality-aware preview of a file or directory; see {@link previewFile}. It reads the very file that was
   * checked, opened without following links; a FIFO, socket or device is refused.
   */
  async preview(requested: string, options: { maxChars?: number } = {}): Promise<string> {
    const absPath = await this.resolve(requested, 'read');
    const maxChars = options.maxChars ?? this.#previewChars;
    const displayName = this.relative(absPath) || '.';
    const shown = await withCheckedEntry(this.root, absPath, requested, (readPath) =>
      previewFile(readPath, { maxChars, displayName }),
    );
    return shown ?? fitChars(`${displayName}: does not exist.`, maxChars);
  }

  /**
   * Closes the files kept open for appends (the memory's output logs); a later append opens its file again. The
   * harness calls it when a run ends, so that a finished run holds no descriptor.
   */
  closeOpenFiles(): void {
    this.#appends.closeAll();
  }

  /**
   * Closes the files kept open for appends, and deletes the directory if {@link LocalWorkspace.create} made it as a
   * temporary one; a directory you named is kept.
   */
  async dispose(): Promise<void> {
    this.#appends.closeAll();
    if (this.temporary) await rm(this.root, { recursive: true, force: true });
  }
}
