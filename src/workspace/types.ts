/**
 * The workspace contract: one directory per run; every file path a tool receives is resolved inside it.
 * @module
 */

/** A file a tool created or changed. */
export interface ArtifactRecord {
  /** Workspace-relative path with forward slashes. */
  path: string;
  size: number;
  sha256: string;
  /** The tool that wrote it last. */
  tool: string;
  /** The executor scope (`subtask-1`, `synthesis`, …) that wrote it last. */
  scope?: string;
  updatedAt: number;
}

/** Who changed a file. */
export interface WriteOrigin {
  tool: string;
  scope?: string;
}

/** What {@link Workspace.appendFile} reports. */
export interface AppendResult {
  /** Size of the file in bytes after the append. */
  size: number;
}

/**
 * Refuses a write by throwing (a `HarnessError` saying why) when the absolute path it would land at is not allowed;
 * returns normally otherwise.
 */
export type WriteGuard = (absolutePath: string) => void;

/** Options of the writes of a {@link Workspace}. */
export interface WriteOptions {
  /**
   * A check of where the write lands. A workspace whose {@link Workspace.guardsWrites} is true applies it to the path
   * it resolved and again to the directory it then opened to write in, and writes through that very directory, so
   * a link swapped in after the check cannot redirect the write; another workspace may ignore it.
   */
  guard?: WriteGuard;
}

/** One run's working directory. */
export interface Workspace {
  /** Absolute, real path of the directory. */
  readonly root: string;
  /**
   * True when the writes apply {@link WriteOptions.guard} to the directory they write in (`LocalWorkspace`). A
   * wrapper that guards writes (the view the harness gives tools) checks the path beforehand on a workspace without
   * it, which a concurrent swap of a directory for a link can race.
   */
  readonly guardsWrites?: boolean;
  /**
   * Resolves a workspace-relative path to an absolute one inside the workspace.
   * Rejects `..`, absolute paths and symlinks leading outside with a HarnessError
   * of code `path-outside-workspace` whose message says why.
   */
  resolve(path: string, intent: 'read' | 'write'): Promise<string>;
  /** Reads a file inside the workspace; refuses a FIFO, socket or device (`invalid-input`) rather than block on it. */
  readFile(path: string): Promise<Buffer>;
  /**
   * Writes a file atomically (temp file + rename) and records it as an artifact. Refuses a directory, FIFO, socket or
   * device at the path; `LocalWorkspace` also never follows a link put in the way while it writes.
   */
  writeFile(
    path: string,
    data: string | Uint8Array,
    origin: WriteOrigin,
    options?: WriteOptions,
  ): Promise<ArtifactRecord>;
  /**
   * Appends to a file, creating it and its directories when missing; the harness keeps its logs this way (the
   * memory's full tool outputs under `.harness/outputs/`). Resolves the path as `writeFile` does, and refuses a
   * symbolic link as the file itself, anything that is not a regular file (a FIFO, socket or device) and a file with
   * other hard links (an append would change them too). Concurrent
   * appends to one file need not be ordered: callers that care wait for one append before the next.
   * @returns the file's size in bytes after the append (the caller finds where its data starts from it)
   */
  appendFile(
    path: string,
    data: string | Uint8Array,
    origin: WriteOrigin,
    options?: WriteOptions,
  ): Promise<AppendResult>;
  /**
   * Copies a file from outside the workspace (an attachment, by absolute path) into it, without recording it as an
   * artifact. `destination` is resolved as for `writeFile`; a source that is not a regular file is refused.
   * @returns the workspace-relative path of the copy
   */
  copyIn(
    sourceAbsolutePath: string,
    destination: string,
    origin?: WriteOrigin,
    options?: WriteOptions,
  ): Promise<string>;
  /** Records a file that something else (a process) created or changed; undefined when it does not exist. */
  recordArtifact(path: string, origin: WriteOrigin): Promise<ArtifactRecord | undefined>;
  /** Every recorded artifact, most recent last. */
  artifacts(): ArtifactRecord[];
  /** True when the path exists inside the workspace (false for escapes). */
  exists(path: string): Promise<boolean>;
  /**
   * A bounded, modality-aware preview of a file or directory (text, CSV, PDF, DOCX, XLSX, PPTX, images, archives);
   * refuses a FIFO, socket or device.
   */
  preview(path: string, options?: { maxChars?: number }): Promise<string>;
}

/** A Workspace object (it has `resolve` and `root`), as opposed to a path or workspace settings. @internal */
export function isWorkspace(value: unknown): value is Workspace {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { resolve?: unknown }).resolve === 'function' &&
    typeof (value as { root?: unknown }).root === 'string'
  );
}
