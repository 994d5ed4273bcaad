/**
 * `createHarness` and the `Harness`: validated options, listeners, and one {@link PipelineRun} per `run()`.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { HarnessError, toHarnessError } from '../errors.js';
import { HarnessEvents, type HarnessEvent, type HarnessEventType, type HarnessListener } from '../events.js';
import type { RunResult } from '../pipeline/types.js';
import { parseMemoryOptions } from '../memory/options.js';
import { ToolRegistry } from '../tools/registry.js';
import { LocalWorkspace } from '../workspace/local-workspace.js';
import type { Workspace } from '../workspace/types.js';
import { normalizeInput, type RunInput } from './input.js';
import { parseHarnessOptions, type HarnessOptions, type ResolvedHarnessOptions } from './options.js';
import { runManagedMode } from './managed-entry.js';
import { PipelineRun } from './pipeline-run.js';

export type { RunInput } from './input.js';

/**
 * A configured pipeline. Each `run` gets its own workspace, memory, executors and event log; the harness keeps
 * only its options and its listeners, so two harnesses never share anything.
 */
export class Harness {
  private readonly options: ResolvedHarnessOptions;
  private readonly registry: ToolRegistry;
  private readonly events = new HarnessEvents();
  private readonly now: () => number;
  private readonly generateId: () => string;

  constructor(options: HarnessOptions) {
    this.options = parseHarnessOptions(options);
    // Each run builds its own MemoryManager from these; checking them here makes a bad value fail at createHarness, not at run().
    if (this.options.memory !== undefined) parseMemoryOptions(this.options.memory);
    const tools = this.options.tools;
    this.registry =
      tools instanceof ToolRegistry ? tools : new ToolRegistry(tools, { toolTimeoutMs: this.options.limits.toolTimeoutMs });
    this.now = this.options.now ?? Date.now;
    this.generateId = this.options.generateId ?? (() => `run-${randomUUID()}`);
  }

  /** Calls `listener` for every event of `type` from every run of this harness. Returns a function that removes it. */
  on<T extends HarnessEventType>(type: T, listener: HarnessListener<T>): () => void {
    return this.events.on(type, listener);
  }

  /** Calls `listener` for every event of every type. Returns a function that removes it. */
  onAny(listener: (event: HarnessEvent) => void): () => void {
    return this.events.onAny(listener);
  }

  /**
   * Runs one request in the configured mode (the pipeline, or managed mode). Resolves with the result also when the run is aborted, times out, exhausts
   * its iteration budget or a stage fails; rejects only on invalid input or when the workspace cannot be created.
   */
  async run(input: RunInput): Promise<RunResult> {
    const normalized = normalizeInput(input);
    const workspace = await this.openWorkspace();
    const init = {
      options: this.options,
      registry: this.registry,
      bus: this.events,
      now: this.now,
      runId: normalized.runId ?? this.generateId(),
      task: normalized.task,
      attachments: normalized.attachments,
      signal: normalized.signal,
      workspace,
    };
    return this.options.mode === 'managed' ? runManagedMode(init) : new PipelineRun(init).execute();
  }

  private async openWorkspace(): Promise<Workspace> {
    const option = this.options.workspace;
    if (option !== undefined && typeof option !== 'string') return option;
    try {
      return await LocalWorkspace.create(option === undefined ? {} : { dir: option });
    } catch (error) {
      throw new HarnessError(
        'invalid-options',
        `Could not create the workspace${option ? ` at "${option}"` : ''}: ${toHarnessError(error).message}`,
        { cause: error },
      );
    }
  }
}

/**
 * Creates a harness: the OneDayAgent pipeline wired with default components, any of which can be replaced.
 *
 * @example
 * ```ts
 * const harness = createHarness({ backend, tools: builtinTools() });
 * harness.on('subtask-finish', (e) => console.log(e.record.title, e.record.status));
 * const result = await harness.run('Compare three note-taking apps and write compare.md');
 * console.log(result.status, result.deliverable.files, result.report);
 * ```
 */
export function createHarness(options: HarnessOptions): Harness {
  return new Harness(options);
}
