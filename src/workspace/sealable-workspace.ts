/**
 * The handle a run's components get to its workspace: it refuses writes once the run has ended.
 * @module
 */
import { HarnessError } from '../errors.js';
import type { AppendResult, ArtifactRecord, Workspace, WriteOptions, WriteOrigin } from './types.js';

/**
 * How long {@link SealableWorkspace.seal} waits for writes that began before the run ended. Local writes take
 * milliseconds; the bound only keeps a write that never returns from holding the run's end forever.
 */
const SEAL_WAIT_MS = 10_000;

/**
 * Wraps a workspace for one run. Reads pass through at any time; writes (`writeFile`, `appendFile`, `copyIn`, and
 * `resolve` for writing) are refused with `workspace-closed` after {@link SealableWorkspace.seal}, so a tool that
 * ignores its abort signal cannot change the files of a run that has already ended.
 * @internal
 */
export class SealableWorkspace implements Workspace {
  readonly #inner: Workspace;
  readonly #runId: string;
  readonly #inFlight = new Set<Promise<unknown>>();
  #sealed = false;

  constructor(inner: Workspace, runId: string) {
    this.#inner = inner;
    this.#runId = runId;
  }

  get root(): string {
    return this.#inner.root;
  }

  get guardsWrites(): boolean {
    return this.#inner.guardsWrites === true;
  }

  /** Refuses every later write and waits (bounded) for the writes already under way, so none lands afterwards. */
  async seal(): Promise<void> {
    this.#sealed = true;
    if (this.#inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SEAL_WAIT_MS);
      timer.unref();
    });
    await Promise.race([Promise.allSettled([...this.#inFlight]), bound]);
    clearTimeout(timer);
  }

  resolve(requested: string, intent: 'read' | 'write'): Promise<string> {
    if (intent === 'write') return this.#write(requested, () => this.#inner.resolve(requested, intent));
    return this.#inner.resolve(requested, intent);
  }

  readFile(requested: string): Promise<Buffer> {
    return this.#inner.readFile(requested);
  }

  writeFile(
    requested: string,
    data: string | Uint8Array,
    origin: WriteOrigin,
    options?: WriteOptions,
  ): Promise<ArtifactRecord> {
    return this.#write(requested, () => this.#inner.writeFile(requested, data, origin, options));
  }

  appendFile(
    requested: string,
    data: string | Uint8Array,
    origin: WriteOrigin,
    options?: WriteOptions,
  ): Promise<AppendResult> {
    return this.#write(requested, () => this.#inner.appendFile(requested, data, origin, options));
  }

  copyIn(source: string, destination: string, origin?: WriteOrigin, options?: WriteOptions): Promise<string> {
    return this.#write(destination, () => this.#inner.copyIn(source, destination, origin, options));
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

  #write<T>(requested: string, write: () => Promise<T>): Promise<T> {
    if (this.#sealed) {
      return Promise.reject(
        new HarnessError(
          'workspace-closed',
          `Cannot write "${requested}": run "${this.#runId}" has ended and its workspace "${this.root}" accepts no more ` +
            'writes. A tool still working after its run stopped should stop when ctx.signal aborts.',
        ),
      );
    }
    let pending: Promise<T>;
    try {
      pending = write();
    } catch (error) {
      return Promise.reject(error);
    }
    this.#inFlight.add(pending);
    const forget = () => this.#inFlight.delete(pending);
    pending.then(forget, forget);
    return pending;
  }
}
