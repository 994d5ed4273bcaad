/**
 * The workspace as a run's tools see it: everything but writes into the harness's own `.harness/` folder.
 * @module
 */
import path from 'node:path';
import { HarnessError } from '../errors.js';
import type { AppendResult, ArtifactRecord, Workspace, WriteOrigin } from './types.js';

/** The harness's own folder in every workspace: snapshots, the lock, saved answers and outputs, the task state. */
export const HARNESS_STATE_DIR = '.harness';

/**
 * Wraps a run's workspace for its tools. Reads pass through (the memory layer points the model at full outputs
 * saved under `.harness/outputs/`); a write under `.harness/` is refused with `path-outside-workspace`, so a model
 * steered by injected text cannot forge the run's snapshot — a resumed managed run would otherwise take forged
 * records as audited — or replace the lock, answers or task state. The sandbox mounts the folder read-only for the
 * same reason.
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

  async resolve(requested: string, intent: 'read' | 'write'): Promise<string> {
    const absolute = await this.#inner.resolve(requested, intent);
    if (intent === 'write' && isHarnessState(this.#inner.root, absolute)) {
      throw new HarnessError(
        'path-outside-workspace',
        `"${requested}" is inside ${HARNESS_STATE_DIR}/, the harness's own state (snapshots, saved outputs, the task ` +
          'state); tools can read it but not write there. Write your file elsewhere in the workspace.',
      );
    }
    return absolute;
  }

  readFile(requested: string): Promise<Buffer> {
    return this.#inner.readFile(requested);
  }

  async writeFile(requested: string, data: string | Uint8Array, origin: WriteOrigin): Promise<ArtifactRecord> {
    await this.resolve(requested, 'write');
    return this.#inner.writeFile(requested, data, origin);
  }

  async appendFile(requested: string, data: string | Uint8Array, origin: WriteOrigin): Promise<AppendResult> {
    await this.resolve(requested, 'write');
    return this.#inner.appendFile(requested, data, origin);
  }

  async copyIn(sourceAbsolutePath: string, destination: string, origin?: WriteOrigin): Promise<string> {
    await this.resolve(destination, 'write');
    return this.#inner.copyIn(sourceAbsolutePath, destination, origin);
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
}

/** Compared without case: on a case-insensitive file system `.HARNESS/` is the same folder. */
function isHarnessState(root: string, absolute: string): boolean {
  const [first] = path.relative(root, absolute).split(path.sep);
  return first?.toLowerCase() === HARNESS_STATE_DIR;
}
