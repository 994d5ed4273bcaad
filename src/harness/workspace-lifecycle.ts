/**
 * The workspaces of a harness's runs: opened and locked when a run starts, sealed and unlocked when it ends, and
 * the temporary ones removed by `harness.close()` as the `workspace` option says.
 * @module
 */
import type { RunResult } from '../contracts/work.js';
import { stat } from 'node:fs/promises';
import { HarnessError, toHarnessError } from '../errors.js';
import { LocalWorkspace } from '../workspace/local-workspace.js';
import { SealableWorkspace } from '../workspace/sealable-workspace.js';
import { isWorkspace, type Workspace } from '../workspace/types.js';
import { assertSafeWorkspaceDir } from '../workspace/unsafe-directory.js';
import { lockWorkspace } from '../workspace/workspace-lock.js';

/** Where runs work and what `harness.close()` removes; see the `workspace` option of `createHarness`. */
export interface WorkspaceSettings {
  /** A directory to run in (created when missing; never removed). Absent: a fresh temporary directory per run. */
  dir?: string;
  /**
   * What `harness.close()` does with the temporary workspaces the harness created (a named `dir` is never removed):
   * absent → removes those of succeeded runs and keeps the others for inspection; `true` → keeps them all;
   * `false` → removes them all, failed runs' too.
   */
  keep?: boolean;
}

/** The `workspace` option: a directory path, a {@link Workspace} of your own, or {@link WorkspaceSettings}. */
export type WorkspaceOption = string | Workspace | WorkspaceSettings;

/** What `harness.close()` resolves to. */
export interface CloseResult {
  /** Temporary workspaces the harness created and has now deleted. */
  removed: string[];
  /** Every other workspace its runs used, still on disk: kept temporary ones, named directories, your Workspaces. */
  kept: string[];
}

/** A run's hold on its workspace. @internal */
export interface WorkspaceLease {
  /** The handle the run's components use; it refuses writes once `end` has been called. */
  readonly workspace: Workspace;
  /**
   * Seals the workspace, waits for the writes under way, then unlocks it; `status` decides what `close()` does with
   * a temporary one (undefined: the run rejected). Only the first call counts; never throws.
   */
  end(status: RunResult['status'] | undefined): Promise<void>;
  /**
   * Appends to one of the harness's own files in the workspace (the event log), also after `end`: the log's last
   * line, `run-finish`, comes once the workspace is sealed and unlocked. A file appended to after `end` is closed again
   * at once.
   */
  appendOwn(path: string, text: string): Promise<void>;
}

/** Who writes the harness's own files. */
const HARNESS_ORIGIN = { tool: 'harness' } as const;

/** A temporary directory the harness made: the only kind it ever removes. */
interface TemporaryWorkspace {
  workspace: LocalWorkspace;
  succeeded: boolean;
}

/** Opens, locks, seals and finally removes the workspaces of one harness's runs. @internal */
export class RunWorkspaces {
  readonly #option: WorkspaceOption | undefined;
  readonly #temporary: TemporaryWorkspace[] = [];
  /** Roots of named directories and of your Workspaces: never removed, listed as kept. */
  readonly #others = new Set<string>();

  /** Throws `invalid-options` when the directory the option names is one no run may work in (see {@link assertSafeWorkspaceDir}). */
  constructor(option: WorkspaceOption | undefined) {
    this.#option = option;
    const root = this.namedRoot();
    if (root !== undefined) assertSafeWorkspaceDir(root);
  }

  /** The workspace of a new run, locked for it; throws `invalid-options` or `workspace-busy`. */
  async open(runId: string): Promise<WorkspaceLease> {
    const { workspace, created } = await this.#create();
    return this.#lease(workspace, created, runId);
  }

  /**
   * The workspace of a run being resumed: the directory it worked in (never created here), locked again for it (a
   * lock left by a dead process of this host is taken over). Your own Workspace object (the `workspace` option) is
   * used as it is. Throws `invalid-input` when the directory is missing and `workspace-busy` when a live run holds
   * it. `harness.close()` never removes it.
   */
  async reopen(root: string, runId: string): Promise<WorkspaceLease> {
    if (isWorkspace(this.#option)) return this.#lease(this.#option, undefined, runId);
    const isDirectory = await stat(root).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDirectory) {
      throw new HarnessError(
        'invalid-input',
        `Cannot resume run "${runId}": its workspace "${root}" is missing or not a directory. A run resumes in the ` +
          'directory it worked in; workers that resume each other’s runs need that same path on every machine (a ' +
          'shared or mounted volume), or pass the directory’s current path as `workspace`.',
      );
    }
    const opened = await LocalWorkspace.create({ dir: root });
    return this.#lease(opened, opened, runId);
  }

  async #lease(workspace: Workspace, created: LocalWorkspace | undefined, runId: string): Promise<WorkspaceLease> {
    let lock: Awaited<ReturnType<typeof lockWorkspace>>;
    try {
      lock = await lockWorkspace(workspace.root, runId);
    } catch (error) {
      if (created?.temporary) await created.dispose().catch(() => undefined);
      throw error;
    }
    const sealable = new SealableWorkspace(workspace, runId);
    let ended: Promise<void> | undefined;
    const appendOwn = async (file: string, text: string): Promise<void> => {
      await workspace.appendFile(file, text, HARNESS_ORIGIN);
      if (ended) created?.closeOpenFiles();
    };
    const end = async (status: RunResult['status'] | undefined): Promise<void> => {
      await sealable.seal();
      await lock.release().catch(() => undefined);
      // A finished run holds no descriptor: the append handles it left open close now, not when they go idle (30 s)
      // or at harness.close(). A named directory is done with; a temporary one stays until close() removes it.
      if (created && !created.temporary) await created.dispose().catch(() => undefined);
      created?.closeOpenFiles();
      if (created?.temporary) this.#temporary.push({ workspace: created, succeeded: status === 'succeeded' });
      else this.#others.add(workspace.root);
    };
    return { workspace: sealable, end: (status) => (ended ??= end(status)), appendOwn };
  }

  /** The directory every run works in, when the `workspace` option names one (or is a Workspace object). */
  namedRoot(): string | undefined {
    const option = this.#option;
    if (isWorkspace(option)) return option.root;
    return typeof option === 'string' ? option : option?.dir;
  }

  /** Deletes the temporary workspaces the `keep` setting allows, and lists what it kept and removed. */
  async cleanup(): Promise<CloseResult> {
    const keep = typeof this.#option === 'object' && 'keep' in this.#option ? this.#option.keep : undefined;
    const removed: string[] = [];
    const kept: string[] = [];
    for (const { workspace, succeeded } of this.#temporary.splice(0)) {
      const remove = keep === false || (keep === undefined && succeeded);
      // A directory that cannot be deleted (permissions changed by the agent's code) is reported as kept.
      if (
        remove &&
        (await workspace.dispose().then(
          () => true,
          () => false,
        ))
      )
        removed.push(workspace.root);
      else kept.push(workspace.root);
    }
    kept.push(...this.#others);
    this.#others.clear();
    return { removed, kept };
  }

  async #create(): Promise<{ workspace: Workspace; created?: LocalWorkspace }> {
    const option = this.#option;
    if (isWorkspace(option)) return { workspace: option };
    const dir = typeof option === 'string' ? option : option?.dir;
    try {
      const created = await LocalWorkspace.create(dir === undefined ? {} : { dir });
      return { workspace: created, created };
    } catch (error) {
      throw new HarnessError(
        'invalid-options',
        `Could not create the workspace${dir ? ` at "${dir}"` : ''}: ${toHarnessError(error).message}`,
        { cause: error },
      );
    }
  }
}
