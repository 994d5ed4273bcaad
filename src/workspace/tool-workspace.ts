/**
 * The workspace as a run's tools see it: everything but writes into the harness's own `.harness/` folder.
 * @module
 */
import path from 'node:path';
import { HarnessError } from '../errors.js';
import type { AppendResult, ArtifactRecord, Workspace, WriteGuard, WriteOptions, WriteOrigin } from './types.js';

/** The harness's own folder in every workspace: snapshots, the lock, saved answers and outputs, the task state. */
export const HARNESS_STATE_DIR = '.harness';

/**
 * Wraps a run's workspace for its tools. Reads pass through (the memory layer points the model at full outputs
 * saved under `.harness/outputs/`); a write under `.harness/` is refused with `path-outside-workspace`, so a model
 * steered by injected text cannot forge the run's snapshot — a resumed managed run would otherwise take forged
 * records as audited — or replace the lock, answers or task state. The sandbox mounts the folder read-only for the
 * same reason.
 *
 * The check travels with the write as its guard: a workspace that guards writes (`LocalWorkspace`) applies it to
 * the path it resolves and to the very directory it then writes through, so code swapping a directory for a link to
 * `.harness/` meanwhile cannot move the write there. On a workspace that does not, the path is checked beforehand,
 * which such a swap can race.
 * @internal
 */
export class ToolWorkspace implements Workspace {
  readonly #inner: Workspace;

  constructor(inner: Workspace) {
    this.#inner = inner;
  }

  get root(): string {
    return this.#inner.root;
  }

  get guardsWrites(): boolean {
    return this.#inner.guardsWrites === true;
  }

  /**
   * Resolves a path; for writing, refuses one under `.harness/`. A tool that writes by the absolute path returned
   * (rather than through `writeFile`) writes where that path leads at the time, after the check.
   */
  async resolve(requested: string, intent: 'read' | 'write'): Promise<string> {
    const absolute = await this.#inner.resolve(requested, intent);
    if (intent === 'write') this.#guard(requested)(absolute);
    return absolute;
  }

  readFile(requested: string): Promise<Buffer> {
    return this.#inner.readFile(requested);
  }

  async writeFile(
    requested: string,
    data: string | Uint8Array,
    origin: WriteOrigin,
    options?: WriteOptions,
  ): Promise<ArtifactRecord> {
    return this.#inner.writeFile(requested, data, origin, await this.#guarded(requested, options));
  }

  async appendFile(
    requested: string,
    data: string | Uint8Array,
    origin: WriteOrigin,
    options?: WriteOptions,
  ): Promise<AppendResult> {
    return this.#inner.appendFile(requested, data, origin, await this.#guarded(requested, options));
  }

  async copyIn(
    sourceAbsolutePath: string,
    destination: string,
    origin?: WriteOrigin,
    options?: WriteOptions,
  ): Promise<string> {
    return this.#inner.copyIn(sourceAbsolutePath, destination, origin, await this.#guarded(destination, options));
  }

  recordArtifact(requested: string, origin: WriteOrigin): Promise<ArtifactRecord | undefined> {
    return this.#inner.recordArtifact(requested, origin);
  }

  artifacts(): ArtifactRecord[] {
    return this.#inner.artifacts();
  }

  exists(requested: string): Promise<boolean> {
    return this.#inner.exists(requested);
  }

  preview(requested: string, options?: { maxChars?: number }): Promise<string> {
    return this.#inner.preview(requested, options);
  }

  /** The write's options with this view's guard added; checked beforehand when the inner workspace cannot. */
  async #guarded(requested: string, options: WriteOptions | undefined): Promise<WriteOptions> {
    const own = this.#guard(requested);
    const outer = options?.guard;
    const guard: WriteGuard = outer
      ? (absolute) => {
          own(absolute);
          outer(absolute);
        }
      : own;
    if (!this.guardsWrites) guard(await this.#inner.resolve(requested, 'write'));
    return { ...options, guard };
  }

  /** Refuses an absolute path under `.harness/` of this workspace, naming `requested`. */
  #guard(requested: string): WriteGuard {
    const root = this.#inner.root;
    return (absolute) => {
      if (!isHarnessState(root, absolute)) return;
      throw new HarnessError(
        'path-outside-workspace',
        `"${requested}" is inside (or leads into) ${HARNESS_STATE_DIR}/, the harness's own state (snapshots, saved outputs, the task ` +
          'state); tools can read it but not write there. Write your file elsewhere in the workspace.',
      );
    };
  }
}

/** Compared without case: on a case-insensitive file system `.HARNESS/` is the same folder. */
function isHarnessState(root: string, absolute: string): boolean {
  const [first] = path.relative(root, absolute).split(path.sep);
  return first?.toLowerCase() === HARNESS_STATE_DIR;
}
